"""Property: every fix the tree recommends, on every test config, keeps the file loadable,
changes only the patched keys (comments and interpolations kept) and breaks no rule."""

from __future__ import annotations

import difflib
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis_budget import examples

from assistant.config import check_config, config_from_text, load_config, patched_text
from assistant.config.loader import ExperimentConfig, set_dotted
from assistant.models import Inference, LogReport
from assistant.tree import decide

CONFIGS = sorted((Path(__file__).parent / "fixtures" / "configs").glob("*.yaml"))
GIB = 1024**3

PHASES = [
    ("training", "cuda_oom"),
    ("generation", "cuda_oom"),
    ("generation", "kv_cache"),
    ("generation", "nccl"),
    ("weight_update", "cuda_oom"),
    ("weight_update", "nccl"),
    ("model_loading", "cuda_oom"),
    ("host_memory", "host_oom"),
    ("unknown", "cuda_oom"),
    ("unknown", "nccl"),
]
TAGS = [
    "decode",
    "prefill",
    "startup_kv_pool",
    "cuda_graph",
    "sampler",
    "weights_load",
    "optimizer_step",
]


@st.composite
def reports(draw: st.DrawFn) -> LogReport:
    phase, kind = draw(st.sampled_from(PHASES))
    facts: dict = {"signature_tags": draw(st.lists(st.sampled_from(TAGS), max_size=2, unique=True))}
    server = draw(st.sampled_from([None, "sglang", "vllm"]))
    if server:
        facts["server"] = server
    if draw(st.booleans()):
        facts["expandable_segments"] = True
    metrics = {}
    if draw(st.booleans()):
        total = 80 * GIB
        metrics = {
            "total_capacity_bytes": total,
            "tried_to_allocate_bytes": draw(st.integers(1, 2 * total)),
            "reserved_unallocated_bytes": draw(st.integers(0, total // 2)),
        }
    inferences = []
    if draw(st.booleans()):
        inferences.append(Inference("held-by-other-processes", 0.5, {"en": ""}))
    return LogReport(True, phase, kind, 0.9, metrics=metrics, inferences=inferences, facts=facts)


ANSWERS = st.fixed_dictionaries(
    {},
    optional={
        "multi_turn": st.sampled_from(["yes", "no"]),
        "longest_conversation_tokens": st.integers(512, 65536).map(str),
        "attention_heads": st.sampled_from(["8", "12", "25", "28", "40", "64"]),
        "shared_fileroot": st.sampled_from(["yes", "no"]),
        "can_add_gpus": st.sampled_from(["yes", "no"]),
        "is_vlm": st.sampled_from(["yes", "no"]),
    },
)


def assert_patch_is_safe(config: ExperimentConfig, patch: dict, known: dict | None = None) -> None:
    new_text = patched_text(config, patch)
    reloaded = config_from_text(new_text)
    expected = config.with_patch(patch).data
    assert reloaded.data == expected  # loadable, and every other key unchanged
    removed = [
        line[2:]
        for line in difflib.ndiff(config.text.splitlines(), new_text.splitlines())
        if line.startswith("- ")
    ]
    # only lines holding a patched key (or, for a key added to a flow mapping such as
    # ``env_vars: {}``, the line of its parent) were rewritten
    names = {part for key in patch for part in key.split(".") if not part.isdigit()}
    for line in removed:
        assert any(name in line for name in names), line
    assert new_text.count("${") >= config.text.count("${")
    comments = [line.split("#", 1)[1] for line in config.text.splitlines() if "#" in line]
    assert all(comment in new_text for comment in comments)
    before = {w.id for w in check_config(config, known=known)}
    after = {w.id for w in check_config(reloaded, known=known)}
    assert after <= before, after - before


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(CONFIGS), reports(), ANSWERS)
def test_every_fix_on_every_fixture_is_safe(path: Path, report: LogReport, answers: dict) -> None:
    config = load_config(str(path))
    flags = {k: (v, "flag") for k, v in answers.items()}
    decision = decide(report, config, flags, "en", True)
    assert decision.recommendations, "a memory failure always gets a recommendation"
    for recommendation in decision.recommendations:
        if recommendation.patch:
            assert_patch_is_safe(config, recommendation.patch)


TEMPLATE = """\
# generated
cluster:
  n_nodes: {nodes}
  n_gpus_per_node: 8
  fileroot: {fileroot}   # where checkpoints go
rollout:
  backend: "sglang:d{rd}"
  max_concurrent_rollouts: {conc}
gconfig:
  max_new_tokens: {new_tokens}  # per sample
actor:
  backend: 'fsdp:d{ad}'
  path: ${{model}}
  gradient_checkpointing: {ckpt}
  mb_spec:
    max_tokens_per_mb: {mb}
  optimizer:
    type: {opt}
sglang:
  mem_fraction_static: {frac}
train_dataset:
  max_length: {max_length}
model: Qwen/Qwen2.5-{size}B
"""


@st.composite
def generated_configs(draw: st.DrawFn) -> ExperimentConfig:
    rd = draw(st.sampled_from([1, 2, 3, 4, 6]))
    ad = draw(st.sampled_from([1, 2, 4])) if rd <= 4 else 2
    values = {
        "nodes": draw(st.sampled_from([1, 2])),
        "fileroot": draw(st.sampled_from(["/tmp/areal", "/mnt/nfs/areal"])),
        "rd": rd,
        "ad": ad,
        "conc": draw(st.integers(1, 512)),
        "new_tokens": draw(st.integers(128, 16384)),
        "ckpt": draw(st.sampled_from(["true", "false"])),
        "mb": draw(st.integers(256, 65536)),
        "opt": draw(st.sampled_from(["adam", "sgd", "adam_bf16"])),
        "frac": draw(st.sampled_from([0.3, 0.5, 0.8, 0.9, 0.95])),
        "max_length": draw(st.integers(128, 16384)),
        "size": draw(st.sampled_from([0.5, 1.5, 7, 14, 72])),
    }
    return config_from_text(TEMPLATE.format(**values), "generated.yaml")


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(generated_configs(), reports(), ANSWERS)
def test_every_fix_on_generated_configs_is_safe(
    config: ExperimentConfig, report: LogReport, answers: dict
) -> None:
    flags = {k: (v, "flag") for k, v in answers.items()}
    decision = decide(report, config, flags, "en", True)
    # an answer the user gave is kept (the fix says when the config casts doubt on it)
    known = {"shared_fileroot": True} if answers.get("shared_fileroot") == "yes" else None
    for recommendation in decision.recommendations:
        if recommendation.patch:
            assert_patch_is_safe(config, recommendation.patch, known)
    # The floor holds every sample the run can produce: one prompt plus its generation
    # (max_length + max_new_tokens) and, for multi-turn runs, the longest conversation
    # (which already counts the prompt and every turn): the larger of the two.
    floor = config.get("train_dataset.max_length") + config.get("gconfig.max_new_tokens")
    if answers.get("multi_turn") == "yes":
        floor = max(floor, int(answers.get("longest_conversation_tokens", 0)))
    for recommendation in decision.recommendations:
        value = recommendation.patch.get("actor.mb_spec.max_tokens_per_mb")
        assert value is None or value >= floor  # never below the floor


def test_set_dotted_replaces_scalars_on_the_way() -> None:
    data = {"a": 1}
    set_dotted(data, "a.b", 2)
    assert data == {"a": {"b": 2}}
