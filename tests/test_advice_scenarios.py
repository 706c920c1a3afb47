"""Advice that follows the evidence: one test per scenario of issue 11.

Logs are fixtures under tests/fixtures/advice/ (modelled on real AReaL, SGLang
and PyTorch output); configs are small AReaL-shaped YAML texts written here.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from assistant.config import config_from_text, load_config
from assistant.logs import read_and_classify
from assistant.pipeline import conclude

ADVICE = Path(__file__).parent / "fixtures" / "advice"
CONFIGS = Path(__file__).parent / "fixtures" / "configs"

RL_CONFIG = """\
cluster: {n_nodes: 1, n_gpus_per_node: 8, fileroot: /data/exp}
enable_offload: false
rollout:
  backend: "sglang:d4"
  max_concurrent_rollouts: 128
gconfig:
  max_new_tokens: 1024
actor:
  backend: "fsdp:d4"
  path: Qwen/Qwen2.5-7B-Instruct
  gradient_checkpointing: true
  mb_spec:
    max_tokens_per_mb: 16384
  optimizer:
    type: adam
  scheduling_spec:
    - task_type: worker
      gpu: 1
      env_vars: {}
sglang:
  mem_fraction_static: 0.8
"""


def diagnose(log: str, cfg_text: str | None = None, answers: dict | None = None):
    report = read_and_classify([str(ADVICE / log)])
    config = config_from_text(cfg_text, "experiment.yaml") if cfg_text else None
    flags = {k: (v, "flag") for k, v in (answers or {}).items()}
    return conclude(report, config=config, answers=flags, lang="en", use_defaults=True)


def fixes(diagnosis) -> list[str]:
    return [r.fix for r in diagnosis.decision.recommendations]


# --- 1. the stage inside the phase ------------------------------------------------------


def test_optimizer_state_creation_is_answered_with_optimizer_fixes_not_the_micro_batch():
    diagnosis = diagnose("optimizer_step_per_rank.log", RL_CONFIG)
    assert diagnosis.report.phase == "training"
    assert diagnosis.report.stage == "optimizer_state_init"
    assert fixes(diagnosis)[0] == "optimizer-state-dtype"
    assert "micro-batch" not in fixes(diagnosis)  # it does not change the optimizer states


def test_stage_is_in_the_json_and_the_text(run_cli):
    path = str(ADVICE / "optimizer_step_per_rank.log")
    data = json.loads(run_cli("diagnose", path, "--format", "json", "--non-interactive").stdout)
    assert data["stage"] == "optimizer_state_init"
    text = run_cli("diagnose", path, "--non-interactive").stdout
    assert "Where in the phase: optimizer step: creating the optimizer states" in text


def test_stage_is_a_condition_path_of_the_tree():
    from assistant.tree.conditions import Condition, Group, Not, Term
    from assistant.tree.engine import tree

    def paths(condition: Condition) -> list[str]:
        if isinstance(condition, Term):
            return [condition.path]
        if isinstance(condition, Not):
            return paths(condition.item)
        assert isinstance(condition, Group)
        return [path for item in condition.items for path in paths(item)]

    assert "stage" in [path for plan in tree().plans for path in paths(plan.when)]


# --- 2. inferences and fixes agree ------------------------------------------------------


def test_fragmentation_inference_drives_a_recommendation_with_a_patch():
    diagnosis = diagnose("optimizer_step_per_rank.log", RL_CONFIG)
    ids = [i.id for i in diagnosis.report.inferences]
    assert "fragmentation" in ids  # 15.90 GiB cached vs a 2.00 GiB request
    frag = next(r for r in diagnosis.decision.recommendations if r.fix == "fragmentation")
    key = "actor.scheduling_spec.0.env_vars.PYTORCH_CUDA_ALLOC_CONF"
    assert frag.patch == {key: "expandable_segments:True"}
    assert frag.env == {"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"}


def test_fragmentation_cut_off_lives_in_data_only():
    source = (Path(__file__).parent.parent / "knowledge" / "tree.yaml").read_text()
    assert "fragmentation_share_of_total" not in source
    inferences = Path(__file__).parent.parent / "knowledge" / "inferences.yaml"
    assert "min_times_request" in inferences.read_text()


def test_environment_line_printed_once_and_no_request_for_a_config(run_cli, tmp_path):
    cfg = tmp_path / "experiment.yaml"
    cfg.write_text(RL_CONFIG)
    out = run_cli(
        "diagnose",
        str(ADVICE / "optimizer_step_per_rank.log"),
        "--config",
        str(cfg),
        "--non-interactive",
    ).stdout
    block = out.split("Allocator Fragmentation", 1)[1].split("#3", 1)[0]
    assert block.count("PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True") == 1
    assert "(--config)" not in out


# --- 3. missing keys never end the advice -----------------------------------------------


def test_missing_max_length_asks_longest_prompt_and_first_fix_still_has_a_patch():
    cfg = RL_CONFIG.replace("gradient_checkpointing: true", "gradient_checkpointing: false")
    report = read_and_classify([str(ADVICE / "colocated_other_process.log")])
    diagnosis = conclude(report, config=config_from_text(cfg), lang="en", use_defaults=True)
    asked = {q.id for q in diagnosis.decision.questions}
    assert "longest_prompt_tokens" in asked
    first = diagnosis.decision.recommendations[0]
    assert first.patch or first.fix == "foreign-process"
    assert diagnosis.decision.patch  # something to write
    assert any("is not the first fix here" in s.why for s in diagnosis.decision.skipped)
    answered = conclude(
        report,
        config=config_from_text(cfg),
        answers={"longest_prompt_tokens": ("2000", "flag")},
        lang="en",
    )
    mb = next(r for r in answered.decision.recommendations if r.fix == "micro-batch")
    assert mb.patch == {"actor.mb_spec.max_tokens_per_mb": 3024}  # 2000 + 1024


def test_sft_config_floor_is_max_length():
    sft = """\
actor:
  backend: "fsdp:d8"
  path: Qwen/Qwen2.5-7B
  gradient_checkpointing: true
  mb_spec: {max_tokens_per_mb: 16384}
  optimizer: {type: adam}
train_dataset:
  type: sft
  max_length: 4096
"""
    report = read_and_classify([str(ADVICE / "colocated_other_process.log")])
    decision = conclude(report, config=config_from_text(sft), lang="en").decision
    mb = next(r for r in decision.recommendations if r.fix == "micro-batch")
    assert mb.patch == {"actor.mb_spec.max_tokens_per_mb": 4096}
    assert "SFT" in mb.why


def test_patch_out_writes_a_file_when_any_fix_has_a_patch(run_cli, tmp_path):
    cfg = tmp_path / "experiment.yaml"
    cfg.write_text(
        RL_CONFIG.replace("gradient_checkpointing: true", "gradient_checkpointing: false")
    )
    out = tmp_path / "patched.yaml"
    result = run_cli(
        "diagnose",
        str(ADVICE / "colocated_other_process.log"),
        "--config",
        str(cfg),
        "--non-interactive",
        "--patch-out",
        str(out),
    )
    assert result.exit_code == 0
    assert out.exists() and out.read_text() != cfg.read_text()


# --- 4. the guide's order unless the log says otherwise ---------------------------------


def test_decode_with_a_full_pool_reduces_concurrency_first_and_names_the_status_line():
    diagnosis = diagnose("sglang_decode_pool_full.log", RL_CONFIG)
    assert diagnosis.report.stage == "decode"
    assert diagnosis.report.facts["running_req"] == 251
    assert diagnosis.report.facts["token_usage"] == 0.97
    first = diagnosis.decision.recommendations[0]
    assert first.fix == "reduce-concurrency"
    assert "251 requests running, token usage 0.97" in first.why
    assert first.patch == {"rollout.max_concurrent_rollouts": 96}


def test_sglang_fraction_first_only_with_the_evidence_named():
    # the same decode failure, but the server's status line shows a pool with room
    report = read_and_classify([str(ADVICE / "sglang_decode_pool_full.log")])
    report = replace(report, facts={**report.facts, "token_usage": 0.41})
    diagnosis = conclude(report, config=config_from_text(RL_CONFIG), lang="en")
    first = diagnosis.decision.recommendations[0]
    assert first.fix == "sglang-fraction-lower"
    assert "outside SGLang's preallocated KV pool" in first.why
    assert "token usage 0.41" in first.why


# --- weight update on the inference side ------------------------------------------------


def test_inference_side_weight_update_failure_is_not_answered_with_the_trainer_buffer():
    diagnosis = diagnose("sglang_update_online.log", RL_CONFIG)
    assert diagnosis.report.phase == "weight_update"
    assert diagnosis.report.stage == "inference_side"
    assert fixes(diagnosis)[0] == "sglang-fraction-lower"
    assert "wu-chunk-buffer" not in fixes(diagnosis)[:1]


# --- 6. the training backend decides the optimizer fix ----------------------------------


def test_megatron_gets_bf16_states_and_sgd_is_never_the_patch():
    cfg = load_config(str(CONFIGS / "agent_megatron.yaml"))
    report = read_and_classify([str(ADVICE / "optimizer_step_per_rank.log")])
    decision = conclude(report, config=cfg, lang="en").decision
    names = [r.fix for r in decision.recommendations]
    assert "optimizer-state-dtype-megatron" in names
    mega = next(r for r in decision.recommendations if r.fix == "optimizer-state-dtype-megatron")
    assert mega.patch.get("actor.optimizer.type") == "adam_bf16"
    assert "precision-aware" in mega.why
    assert "sgd" not in json.dumps(decision.patch)
    assert not any("sgd" in o for o in decision.cli_overrides)


def test_sgd_alone_is_recommended_but_never_written():
    from assistant.models import LogReport
    from assistant.tree import decide

    cfg = config_from_text(
        "actor:\n  backend: 'megatron:d1'\n  dtype: bfloat16\n  optimizer: {type: adam_bf16}\n"
    )
    report = LogReport(True, "training", "cuda_oom", 0.9, stage="optimizer_update")
    decision = decide(report, cfg, {}, "en", True)
    assert "light-optimizer" in [r.fix for r in decision.recommendations]
    assert "sgd" not in json.dumps(decision.patch)


# --- memory held by another process: colocation and "most" ------------------------------


def test_colocated_run_blames_its_own_server_not_stale_processes():
    cfg = RL_CONFIG.replace("enable_offload: false", "enable_offload: true")
    diagnosis = diagnose("colocated_other_process.log", cfg)
    first = diagnosis.decision.recommendations[0]
    assert first.fix == "colocated-sglang"
    assert "stop stale runs" not in first.why
    assert "9%" in first.why  # 7.10 GiB of 79.19 GiB
    assert first.patch == {"sglang.mem_fraction_static": 0.7}


def test_most_is_said_only_when_the_figures_show_it():
    diagnosis = diagnose("colocated_other_process.log", RL_CONFIG)
    first = diagnosis.decision.recommendations[0]
    assert first.fix == "foreign-process"
    assert "Most of" not in first.why and "most of it" in first.why


# --- multi-turn floor: check and diagnose agree -----------------------------------------


MULTI_TURN = """\
rollout: {backend: "sglang:d4", max_concurrent_rollouts: 64, agent: {type: tool}}
gconfig: {max_new_tokens: 1024, max_tokens: 20000}
actor:
  backend: "fsdp:d4"
  mb_spec: {max_tokens_per_mb: 16384}
train_dataset: {max_length: 2048}
"""


def test_multi_turn_floor_is_not_counted_twice_and_check_agrees(run_cli, tmp_path):
    report = read_and_classify([str(ADVICE / "colocated_other_process.log")])
    decision = conclude(report, config=config_from_text(MULTI_TURN), lang="en").decision
    skipped = {s.fix: s.why for s in decision.skipped}
    assert "20000" in skipped["micro-batch"] and "21024" not in skipped["micro-batch"]
    assert "micro-batch-below-floor" in [w.id for w in decision.warnings]
    cfg = tmp_path / "mt.yaml"
    cfg.write_text(MULTI_TURN)
    checked = run_cli("check", "--config", str(cfg))
    assert checked.exit_code == 1 and "micro-batch-below-floor" in checked.stdout


@pytest.mark.parametrize("answer", ["yes", "no"])
def test_shared_fileroot_answer_is_shown_as_given(answer):
    cfg = "cluster: {n_nodes: 2, n_gpus_per_node: 8, fileroot: /tmp/areal}\n"
    diagnosis = diagnose("sglang_update_online.log", cfg, {"shared_fileroot": answer})
    (question,) = [q for q in diagnosis.decision.questions if q.id == "shared_fileroot"]
    assert (question.answer, question.source) == (answer, "flag")
