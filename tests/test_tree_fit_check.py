"""Advice checked against the arithmetic: the tree estimates the config as patched;
a patch that still does not fit carries the next fix, or says that nothing within
these GPUs fits and how many GPUs would."""

from __future__ import annotations

from typing import Any

from assistant.config import check_config, config_from_text
from assistant.memory.estimate import estimate_config
from assistant.models import LogReport
from assistant.tree import decide

GIB = 1 << 30
TOTAL = 79 * GIB + GIB // 4  # an H100 80GB as PyTorch prints it (79.25 GiB)


def report(**metrics: Any) -> LogReport:
    figures = {"total_capacity_bytes": TOTAL, "tried_to_allocate_bytes": 2 * GIB} | metrics
    return LogReport(True, "training", "cuda_oom", 0.9, metrics=figures, facts={})


CONFIG = """\
cluster: {{n_nodes: 1, n_gpus_per_node: 8}}
rollout: {{backend: "sglang:d4"}}
gconfig: {{n_samples: 4, max_new_tokens: {new}}}
train_dataset: {{batch_size: 64, max_length: 1024}}
actor:
  backend: "fsdp:d4"
  path: Qwen/Qwen2.5-{size}-Instruct
  dtype: bfloat16
  gradient_checkpointing: false
  mb_spec: {{max_tokens_per_mb: {mb}}}
  optimizer: {{type: adam, lr: 1.0e-6}}
"""


def first_fix(text: str, answers: dict[str, str] | None = None):
    cfg = config_from_text(text)
    flags = {k: (v, "flag") for k, v in (answers or {}).items()}
    decision = decide(report(), cfg, flags, "en", True)
    return cfg, decision.recommendations[0], decision


def fits(cfg, patch: dict[str, Any]) -> bool:
    result = estimate_config(cfg.with_patch(patch), gpu_bytes=TOTAL, gpu_source="log")
    return bool(result["engines"]["actor"]["fits"])


def test_a_micro_batch_that_alone_does_not_fit_carries_the_next_fix() -> None:
    """A 12000-token floor on 7B without checkpointing: the micro-batch alone still
    needs far more than the GPU, so gradient checkpointing joins the patch."""
    text = CONFIG.format(size="7B", new=11000, mb=32768)
    cfg, first, _ = first_fix(text)
    assert first.section == "train-micro-batch"
    assert first.patch["actor.mb_spec.max_tokens_per_mb"] == 12024
    assert not fits(cfg, {"actor.mb_spec.max_tokens_per_mb": 12024})
    assert first.patch["actor.gradient_checkpointing"] is True
    assert fits(cfg, first.patch)
    assert "this change alone still needs" in first.why
    assert "[train-grad-checkpointing]" in first.why


def test_the_recommended_patch_applied_fits_by_estimate() -> None:
    cfg, first, decision = first_fix(CONFIG.format(size="7B", new=3072, mb=16384))
    assert "engine-does-not-fit" in {w.id for w in decision.warnings}
    assert fits(cfg, decision.flat_patch)
    assert "engine-does-not-fit" not in {
        w.id for w in check_config(cfg.with_patch(decision.flat_patch), known={"gpu_bytes": TOTAL})
    }


def test_a_patch_that_fits_on_its_own_stays_as_it_is() -> None:
    text = CONFIG.format(size="1.5B", new=3072, mb=16384)
    _, first, _ = first_fix(text)
    assert first.patch == {"actor.mb_spec.max_tokens_per_mb": 4096}
    assert "alone still needs" not in first.why


def test_when_nothing_fits_within_the_gpus_it_says_so_and_how_many_would() -> None:
    """Qwen2.5-72B on fsdp:d4: about 1.1 TB of fp32 storage, gradients and states
    before any activation; no change within 4 GPUs fits."""
    text = CONFIG.format(size="72B", new=3072, mb=16384)
    cfg, first, _ = first_fix(text)
    assert first.patch == {"actor.mb_spec.max_tokens_per_mb": 4096}  # nothing useless added
    assert "no config change within these GPUs fits" in first.why
    assert "More GPUs would" in first.why and "instead of 4" in first.why
    zh = decide(report(), cfg, {}, "zh", True).recommendations[0].why
    assert "在现有 GPU 内没有任何配置修改能放得下" in zh
