"""The decision tree on synthetic reports: plans, guards, questions and patches."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from assistant.config import check_config, config_from_text, load_config
from assistant.config.loader import ExperimentConfig
from assistant.errors import UserError
from assistant.models import Decision, Inference, LogReport
from assistant.tree import decide

CONFIGS = Path(__file__).parent / "fixtures" / "configs"
GIB = 1024**3


def report(phase: str, kind: str = "cuda_oom", **facts: Any) -> LogReport:
    metrics = facts.pop("metrics", {})
    inferences = [Inference(i, None, {"en": i}) for i in facts.pop("inferences", [])]
    return LogReport(True, phase, kind, 0.9, metrics=metrics, inferences=inferences, facts=facts)


def config(name: str) -> ExperimentConfig:
    return load_config(str(CONFIGS / name))


def run(
    rep: LogReport,
    cfg: ExperimentConfig | None,
    answers: dict[str, str] | None = None,
    *,
    lang: str = "en",
    defaults: bool = True,
) -> Decision:
    flags = {k: (v, "flag") for k, v in (answers or {}).items()}
    return decide(rep, cfg, flags, lang, defaults)


def fixes(decision: Decision) -> list[str]:
    return [r.fix for r in decision.recommendations]


def skipped(decision: Decision) -> dict[str, str]:
    return {s.fix: s.why for s in decision.skipped}


def question(decision: Decision, qid: str) -> tuple[Any, str | None]:
    (found,) = [q for q in decision.questions if q.id == qid]
    return found.answer, found.source


# --- training ---------------------------------------------------------------------------


def test_training_first_fix_is_the_micro_batch_floor_from_the_users_numbers() -> None:
    decision = run(report("training"), config("grpo_fsdp.yaml"))
    first = decision.recommendations[0]
    assert first.section == "train-micro-batch"
    assert first.patch == {"actor.mb_spec.max_tokens_per_mb": 4096}  # 1024 + 3072
    assert decision.patch == {"actor": {"mb_spec": {"max_tokens_per_mb": 4096}}}
    assert decision.cli_overrides == ["actor.mb_spec.max_tokens_per_mb=4096"]
    assert "16384 -> 4096" in first.why
    assert first.title and first.title != "train-micro-batch"


def test_micro_batch_at_its_floor_moves_on_to_the_next_fix() -> None:
    cfg = config_from_text(
        "gconfig: {max_new_tokens: 1024}\ntrain_dataset: {max_length: 1024}\n"
        "actor:\n  mb_spec:\n    max_tokens_per_mb: 2048\n"
    )
    decision = run(report("training"), cfg)
    assert "already at its floor (2048 = 1024 + 1024)" in skipped(decision)["micro-batch"]
    assert decision.recommendations[0].section == "train-grad-checkpointing"
    assert decision.cli_overrides == ["actor.gradient_checkpointing=true"]


def test_gradient_checkpointing_already_on_is_skipped_with_reason() -> None:
    decision = run(report("training"), config("agent_megatron.yaml"))
    assert skipped(decision)["grad-checkpointing"] == "actor.gradient_checkpointing is already true"


def test_multi_turn_from_config_uses_longest_conversation() -> None:
    decision = run(report("training"), config("agent_megatron.yaml"))
    assert question(decision, "multi_turn") == ("yes", "config")
    assert question(decision, "longest_conversation_tokens") == (24576, "config")
    # gconfig.max_tokens already counts the prompt and every turn: nothing is added to
    # it, and it is above one single-turn sample (max_length 2048 + max_new_tokens 2048)
    first = decision.recommendations[0]
    assert first.patch["actor.mb_spec.max_tokens_per_mb"] == 24576
    # by the estimate 24576 tokens alone do not fit the 80 GiB GPU: the patch carries
    # the next fixes until it does, and says so
    assert first.patch["actor.optimizer.type"] == "adam_bf16"
    assert "this change alone still needs" in first.why
    patched = config("agent_megatron.yaml").with_patch(first.patch)
    assert "engine-does-not-fit" not in {w.id for w in check_config(patched)}


def test_multi_turn_answer_opens_the_next_question() -> None:
    cfg = config("grpo_fsdp.yaml")
    first = run(report("training"), cfg, {"multi_turn": "yes"}, defaults=False)
    # Qwen2.5-7B's 28 heads come from the bundled table: not asked
    assert [q.id for q in first.open_questions] == ["longest_conversation_tokens"]
    assert first.recommendations[0].patch == {}  # floor unknown until answered
    second = run(
        report("training"), cfg, {"multi_turn": "是", "longest_conversation_tokens": "6000"}
    )
    # the longest conversation counts the prompt and all turns: nothing is added to it
    assert second.recommendations[0].patch == {"actor.mb_spec.max_tokens_per_mb": 6000}
    assert question(second, "multi_turn") == ("yes", "flag")


def test_open_questions_have_no_source_and_defaults_say_so() -> None:
    cfg = config("grpo_fsdp.yaml")
    open_run = run(report("training"), cfg, defaults=False)
    assert question(open_run, "multi_turn") == (None, None)
    assert open_run.recommendations[0].patch == {"actor.mb_spec.max_tokens_per_mb": 4096}
    default_run = run(report("training"), cfg)
    assert question(default_run, "multi_turn") == ("no", "default")
    assert default_run.open_questions == []


def test_answers_from_user_keep_their_source() -> None:
    decision = decide(
        report("training"), config("grpo_fsdp.yaml"), {"multi_turn": ("n", "user")}, "en", False
    )
    assert question(decision, "multi_turn") == ("no", "user")


def test_context_parallel_only_when_it_divides_the_heads() -> None:
    cfg = config_from_text(
        "cluster: {n_nodes: 1, n_gpus_per_node: 8}\nrollout: {backend: 'sglang:d4'}\n"
        "actor:\n  backend: fsdp:d4\n  gradient_checkpointing: true\n"
    )
    ok = run(report("training"), cfg, {"attention_heads": "40"})
    shard = [r for r in ok.recommendations if r.fix == "train-shard"][0]
    assert shard.patch == {"actor.backend": "fsdp:d2c2"}
    odd = run(report("training"), cfg, {"attention_heads": "25"})
    assert "divides the model's 25 attention heads" in skipped(odd)["train-shard"]
    unknown = run(report("training"), cfg)
    assert "attention_heads=N" in skipped(unknown)["train-shard"]


def test_attention_heads_read_from_a_local_model_folder(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text(json.dumps({"num_attention_heads": 12}))
    cfg = config_from_text(f"actor:\n  path: {tmp_path}\n  backend: fsdp:d6\n")
    decision = run(report("training"), cfg)
    assert question(decision, "attention_heads") == (12, "config")
    shard = [r for r in decision.recommendations if r.fix == "train-shard"][0]
    assert shard.patch == {"actor.backend": "fsdp:d3c2"}


def test_megatron_shards_with_pipeline_stages() -> None:
    cfg = config_from_text("actor:\n  backend: megatron:d4t2\n  gradient_checkpointing: true\n")
    decision = run(report("training"), cfg)
    shard = [r for r in decision.recommendations if r.fix == "train-shard"][0]
    assert shard.patch == {"actor.backend": "megatron:d2p2t2"}
    assert all(q.id != "attention_heads" for q in decision.questions)


def test_hybrid_layout_is_left_to_the_user() -> None:
    decision = run(report("training"), config("moe_hybrid.yaml"))
    assert "hand-tuned" in skipped(decision)["train-shard"]


def test_single_gpu_trainer_needs_more_gpus() -> None:
    cfg = config_from_text("actor:\n  backend: fsdp:d1\n  gradient_checkpointing: true\n")
    decision = run(report("training"), cfg, {"attention_heads": "32"})
    assert "can_add_gpus=yes" in skipped(decision)["train-shard"]


def test_optimizer_step_oom_proposes_the_bf16_trio_and_the_arithmetic() -> None:
    cfg = config("grpo_fsdp.yaml")
    decision = run(report("training", signature_tags=["optimizer_step"]), cfg)
    first = decision.recommendations[0]
    assert first.section == "optimizer-state-dtype"
    # the bf16 trio alone still leaves 84 GiB of activations (16384 tokens, no
    # checkpointing): by the estimate it does not fit, so checkpointing joins the patch
    assert first.patch == {
        "actor.optimizer_dtype": "bfloat16",
        "actor.optimizer.type": "adam_bf16",
        "actor.gradient_checkpointing": True,
    }
    assert "about 84 GB with fp32 states, about 56 GB" in first.why  # Qwen2.5-7B: 12N, 8N
    assert question(decision, "model_params_b") == (7, "config")
    assert [w.id for w in check_config(cfg)] == ["engine-does-not-fit"]
    assert check_config(cfg.with_patch(first.patch)) == []  # fits by the estimate
    arithmetic = [r for r in decision.recommendations if r.section == "x-optimizer-memory"][0]
    assert "21 GB per GPU" in arithmetic.why  # 84 GB over fsdp:d4


def test_trio_fixes_the_adam_bf16_warning() -> None:
    cfg = config("legacy_alloc.yaml")
    decision = run(report("training", signature_tags=["optimizer_step"]), cfg)
    assert [w.id for w in decision.warnings] == ["adam-with-bf16-optimizer-dtype"]
    trio = decision.recommendations[0]
    assert trio.patch == {"actor.optimizer.type": "adam_bf16"}
    assert check_config(cfg.with_patch(trio.patch)) == []


def test_model_size_from_the_log_wins_over_asking() -> None:
    decision = run(report("training", signature_tags=["optimizer_step"], model_params_b=72), None)
    assert question(decision, "model_params_b") == (72, "log")


def test_light_optimizer_and_per_layer_step_respect_each_other() -> None:
    cfg = config_from_text(
        "actor:\n  gradient_checkpointing: true\n  fsdp: {per_layer_optim_step: true}\n"
    )
    decision = run(report("training"), cfg)
    assert "needs adam" in skipped(decision)["light-optimizer"]
    assert "already true" in skipped(decision)["per-layer-optim"]


# --- model loading ----------------------------------------------------------------------


def test_model_loading_efficient_load_and_its_guards() -> None:
    decision = run(report("model_loading"), config("grpo_fsdp.yaml"))
    assert decision.recommendations[0].patch == {"actor.fsdp.memory_efficient_load": True}
    assert "VLM" not in decision.recommendations[0].why
    scratch = config_from_text("actor:\n  init_from_scratch: true\n")
    assert "init_from_scratch" in skipped(run(report("model_loading"), scratch))["efficient-load"]


def test_vlm_caveat_from_the_model_name_or_the_answer() -> None:
    vlm = config_from_text("actor:\n  path: Qwen/Qwen2.5-VL-7B-Instruct\n")
    decision = run(report("model_loading"), vlm)
    assert question(decision, "is_vlm") == ("yes", "config")
    assert "no rank-0 broadcast" in decision.recommendations[0].why
    answered = run(report("model_loading"), None, {"is_vlm": "true"})
    assert "no rank-0 broadcast" in answered.recommendations[0].why


# --- generation: which way mem_fraction_static moves ------------------------------------


def test_runtime_sglang_oom_lowers_mem_fraction() -> None:
    decision = run(
        report("generation", server="sglang", signature_tags=["decode"]), config("grpo_fsdp.yaml")
    )
    assert decision.recommendations[0].patch == {"sglang.mem_fraction_static": 0.75}
    assert fixes(decision)[:2] == ["sglang-fraction-lower", "reduce-concurrency"]


def test_startup_kv_failure_raises_mem_fraction_and_never_lowers_it() -> None:
    rep = report("generation", "kv_cache", server="sglang", signature_tags=["startup_kv_pool"])
    decision = run(rep, config("grpo_fsdp.yaml"))
    assert decision.recommendations[0].patch == {"sglang.mem_fraction_static": 0.9}
    assert "would make it worse" in skipped(decision)["sglang-fraction-lower"]
    assert all(r.fix != "sglang-fraction-lower" for r in decision.recommendations)


def test_fraction_at_the_ceiling_is_not_raised() -> None:
    cfg = config_from_text("sglang: {mem_fraction_static: 0.95}\n")
    rep = report("generation", "kv_cache", signature_tags=["startup_kv_pool"])
    assert "already 0.95" in skipped(run(rep, cfg))["sglang-fraction-raise"]


def test_kv_pool_exhausted_at_runtime_cuts_concurrency_first() -> None:
    rep = report("generation", "kv_cache", server="sglang", signature_tags=["decode"])
    decision = run(rep, config("grpo_fsdp.yaml"))
    assert decision.recommendations[0].patch == {"rollout.max_concurrent_rollouts": 96}
    assert "KV pool itself filled up" in skipped(decision)["sglang-fraction-lower"]


def test_vllm_runtime_and_startup_move_utilization_opposite_ways() -> None:
    cfg = config("agent_megatron.yaml")
    runtime = run(report("generation", server="vllm", signature_tags=["sampler"]), cfg)
    assert runtime.recommendations[0].patch == {"vllm.gpu_memory_utilization": 0.8}
    metrics = {"kv_cache_tokens": 23648, "max_seq_len": 29000}
    startup = run(report("generation", "kv_cache", server="vllm", metrics=metrics), cfg)
    assert startup.recommendations[0].patch == {"vllm.gpu_memory_utilization": 0.95}
    assert "would make it worse" in skipped(startup)["vllm-utilization-lower"]
    # the multi-turn floor (24576 + 2048) does not fit a 23648-token KV cache
    assert "would cut generations short" in skipped(startup)["vllm-shorter-context"]
    single_turn = config_from_text("vllm: {max_model_len: 29000}\n")
    shorter = run(report("generation", "kv_cache", server="vllm", metrics=metrics), single_turn)
    assert [r.patch for r in shorter.recommendations if r.fix == "vllm-shorter-context"] == [
        {"vllm.max_model_len": 23552}
    ]


def test_server_comes_from_the_config_when_the_log_does_not_say() -> None:
    decision = run(report("generation"), config("agent_megatron.yaml"))
    assert decision.recommendations[0].section == "x-vllm-memory"


def test_weights_load_tag_yields_to_later_activity() -> None:
    rep = report("generation", server="vllm", signature_tags=["sampler", "weights_load"])
    assert run(rep, None).recommendations[0].fix == "vllm-utilization-lower"


def test_weights_that_do_not_fit_need_tensor_parallelism() -> None:
    rep = report("generation", signature_tags=["weights_load"])
    decision = run(rep, config("grpo_fsdp.yaml"))
    assert decision.recommendations[0].patch == {"rollout.backend": "sglang:d2t2"}
    legacy = run(rep, config("legacy_alloc.yaml"))
    assert legacy.recommendations[0].patch == {"allocation_mode": "sglang:d2t2+d4"}


def test_concurrency_cut_written_where_the_file_keeps_it() -> None:
    decision = run(report("generation"), config("legacy_alloc.yaml"))
    cut = [r for r in decision.recommendations if r.fix == "reduce-concurrency"][0]
    assert cut.patch == {"max_concurrent_rollouts": 72}


def test_oversized_request_skips_fraction_and_concurrency() -> None:
    metrics = {"tried_to_allocate_bytes": 100 * GIB, "total_capacity_bytes": 80 * GIB}
    decision = run(report("generation", server="sglang", metrics=metrics), config("grpo_fsdp.yaml"))
    assert fixes(decision)[:2] == ["rollout-more-tp", "oversized-request"]
    assert "no memory fraction" in skipped(decision)["sglang-fraction-lower"]
    assert "fewer concurrent requests" in skipped(decision)["reduce-concurrency"]


def test_cuda_graph_capture() -> None:
    vllm = run(report("generation", server="vllm", signature_tags=["cuda_graph"]), None)
    assert vllm.recommendations[0].patch == {"vllm.enforce_eager": True}
    sglang = run(report("generation", server="sglang", signature_tags=["cuda_graph"]), None)
    assert sglang.recommendations[0].patch == {"sglang.disable_cuda_graph": True}


# --- evidence that comes first in any phase ---------------------------------------------


def test_memory_held_by_other_processes_comes_first() -> None:
    rep = report(
        "training",
        inferences=["held-by-other-processes"],
        metrics={"other_processes_bytes": 20 * GIB},
    )
    decision = run(rep, config("grpo_fsdp.yaml"))
    assert decision.recommendations[0].section == "x-foreign-process"
    assert "20.0 GiB" in decision.recommendations[0].why
    assert "Most of" not in decision.recommendations[0].why  # no figure shows "most"
    # the first fix is not a config change; with a config and a known phase the patch
    # is the first fix that has one, and says so (patch_from); without a config none
    assert decision.patch == {"actor": {"mb_spec": {"max_tokens_per_mb": 4096}}}
    assert decision.patch_from == 1
    assert run(rep, None).patch == {}


FRAGMENTED = {
    "tried_to_allocate_bytes": 2 * GIB,
    "total_capacity_bytes": 80 * GIB,
    "reserved_unallocated_bytes": 30 * GIB,
}


def test_fragmentation_suggests_expandable_segments() -> None:
    decision = run(report("training", metrics=FRAGMENTED), None)
    first = decision.recommendations[0]
    assert first.section == "x-fragmentation"
    assert first.env == {"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"}
    kept = run(report("training", metrics=FRAGMENTED, alloc_conf="max_split_size_mb:128"), None)
    assert kept.recommendations[0].env["PYTORCH_CUDA_ALLOC_CONF"] == (
        "max_split_size_mb:128,expandable_segments:True"
    )


@pytest.mark.parametrize(
    ("unallocated_gib", "tried_gib"),
    [(0.5, 0.1), (30, 40), (5, 2)],  # churn below 1 GiB; less than the request; < 3x
)
def test_ordinary_cache_is_not_fragmentation(unallocated_gib: float, tried_gib: float) -> None:
    metrics = dict(
        FRAGMENTED,
        reserved_unallocated_bytes=int(unallocated_gib * GIB),
        tried_to_allocate_bytes=int(tried_gib * GIB),
    )
    assert "fragmentation" not in fixes(run(report("training", metrics=metrics), None))


@pytest.mark.parametrize(
    ("facts", "cfg_text", "reason"),
    [
        ({"expandable_segments": True}, None, "already sets expandable_segments"),
        ({"sleep_mode": True}, None, "custom allocator"),
        ({"alloc_conf": "backend:cudaMallocAsync"}, None, "custom allocator"),
        (
            {},
            "actor:\n  scheduling_spec:\n    - env_vars:\n"
            "        PYTORCH_CUDA_ALLOC_CONF: expandable_segments:True\n",
            "already sets expandable_segments",
        ),
        ({}, "vllm: {enable_sleep_mode: true}\n", "custom allocator"),
    ],
)
def test_expandable_segments_guards(facts: dict, cfg_text: str | None, reason: str) -> None:
    cfg = config_from_text(cfg_text) if cfg_text else None
    decision = run(report("training", metrics=FRAGMENTED, **facts), cfg)
    assert reason in skipped(decision)["fragmentation"]
    assert decision.recommendations[0].section != "x-fragmentation"


def test_host_memory() -> None:
    decision = run(
        report("host_memory", "host_oom"),
        config_from_text("actor: {fsdp: {memory_efficient_load: true}}\n"),
    )
    assert fixes(decision) == ["host-memory", "host-efficient-load-off"]
    assert decision.recommendations[1].patch == {"actor.fsdp.memory_efficient_load": False}


def test_unknown_phase_starts_with_the_core_parameters() -> None:
    assert run(report("unknown"), None).recommendations[0].section == "core-parameters"
    assert run(report("unknown", "nccl"), None).recommendations[0].section == "core-parameters"
    assert run(report("unknown", server="vllm"), None).recommendations[0].section == "x-vllm-memory"


# --- weight update ----------------------------------------------------------------------


def test_disk_update_only_after_the_fileroot_is_confirmed_shared() -> None:
    cfg = config("agent_megatron.yaml")  # two nodes
    unconfirmed = run(report("weight_update"), cfg)
    assert "shared_fileroot=yes" in skipped(unconfirmed)["wu-disk"]
    assert unconfirmed.recommendations[0].section == "wu-chunk-buffer"
    assert "weight_chunked_mem_mb=512" in (unconfirmed.recommendations[0].code_change or "")
    assert unconfirmed.patch == {}
    confirmed = run(report("weight_update"), cfg, {"shared_fileroot": "yes"})
    assert confirmed.cli_overrides == ["actor.weight_update_mode=disk"]


def test_single_node_shares_its_fileroot() -> None:
    decision = run(report("weight_update"), config("grpo_fsdp.yaml"))
    assert question(decision, "shared_fileroot") == ("yes", "config")
    assert decision.recommendations[0].section == "wu-disk"


def test_shared_fileroot_answer_is_kept_and_the_doubt_said() -> None:
    cfg = config_from_text("cluster: {n_nodes: 2, n_gpus_per_node: 8, fileroot: /tmp/x}\n")
    decision = run(report("weight_update"), cfg, {"shared_fileroot": "yes"})
    first = decision.recommendations[0]
    assert first.fix == "wu-disk"
    assert "You answered that cluster.fileroot is shared" in first.why
    assert "/tmp/x" in first.why
    assert decision.cli_overrides == ["actor.weight_update_mode=disk"]


def test_shared_fileroot_no_is_not_told_to_answer_yes() -> None:
    cfg = config_from_text("cluster: {n_nodes: 2, n_gpus_per_node: 8, fileroot: /shared/x}\n")
    decision = run(report("weight_update"), cfg, {"shared_fileroot": "no"})
    why = skipped(decision)["wu-disk"]
    assert "you answered" in why
    assert "answer shared_fileroot=yes" not in why


def test_already_disk() -> None:
    cfg = config_from_text(
        "cluster: {n_nodes: 1, fileroot: /x}\nactor: {weight_update_mode: disk}\n"
    )
    decision = run(report("weight_update"), cfg)
    assert skipped(decision)["wu-disk"] == "actor.weight_update_mode is already disk"


# --- answers, warnings, language --------------------------------------------------------


def test_unknown_answer_id_lists_the_valid_ids() -> None:
    with pytest.raises(UserError, match="valid ids: multi_turn, longest_conversation_tokens"):
        run(report("training"), None, {"multi_trun": "yes"})


@pytest.mark.parametrize(
    ("qid", "value", "message"),
    [
        ("multi_turn", "maybe", "yes or no"),
        ("attention_heads", "many", "positive number"),
        ("attention_heads", "-4", "positive number"),
    ],
)
def test_bad_answer_values(qid: str, value: str, message: str) -> None:
    with pytest.raises(UserError, match=message):
        run(report("training"), None, {qid: value})


def test_no_memory_failure_still_reports_config_warnings() -> None:
    quiet = LogReport(False, "none", "none", 0.0)
    decision = run(quiet, config("broken.yaml"))
    assert decision.recommendations == [] and decision.patch == {}
    assert "bad-backend-string" in {w.id for w in decision.warnings}


def test_chinese_texts() -> None:
    decision = run(report("training"), config("grpo_fsdp.yaml"), lang="zh")
    assert "训练显存" in decision.recommendations[0].why
    assert "微批" in decision.recommendations[0].title
    shard = next(r for r in decision.recommendations if r.section == "train-parallelism")
    assert "注意力头" in shard.why and shard.patch["actor.backend"] == "fsdp:d2c2"
    assert "按估算，仅做这一项修改" in shard.why  # and checkpointing joins it
    assert any("rollout" in q.text or "多轮" in q.text for q in decision.questions)


def test_without_a_config_constant_patches_remain() -> None:
    decision = run(report("training"), None)
    assert decision.recommendations[0].section == "train-micro-batch"
    assert decision.recommendations[0].patch == {}
    ckpt = [r for r in decision.recommendations if r.fix == "grad-checkpointing"][0]
    assert ckpt.patch == {"actor.gradient_checkpointing": True}


def test_fallback_when_every_candidate_is_skipped() -> None:
    cfg = config_from_text(
        "cluster: {n_nodes: 1, fileroot: /x}\nactor: {weight_update_mode: disk}\n"
    )
    decision = run(report("weight_update"), cfg)
    assert set(skipped(decision)) == {"wu-disk", "wu-chunk-buffer"}
    assert fixes(decision) == ["core-parameters"]


# --- the log does not say enough: the user's answer picks the plan --------------------


def test_unknown_phase_asks_the_failing_stage_and_follows_the_answer() -> None:
    unanswered = run(report("unknown"), config("grpo_fsdp.yaml"))
    assert question(unanswered, "failing_stage") == (None, "default")
    assert fixes(unanswered)[0] == "core-parameters"
    training = run(report("unknown"), config("grpo_fsdp.yaml"), {"failing_stage": "training"})
    assert fixes(training)[0] == "micro-batch"
    generation = run(report("unknown"), config("grpo_fsdp.yaml"), {"failing_stage": "generation"})
    assert fixes(generation)[0] == "reduce-concurrency"


def test_known_phase_never_asks_the_failing_stage() -> None:
    decision = run(report("training"), config("grpo_fsdp.yaml"))
    assert "failing_stage" not in [q.id for q in decision.questions]


def test_unproven_kill_asks_whether_the_oom_killer_did_it() -> None:
    killed = report("host_memory", "host_oom", memory_unproven=True)
    assumed = run(killed, None)
    assert question(assumed, "killed_by_oom_killer") == ("yes", "default")
    assert fixes(assumed)[0] == "host-memory"
    denied = run(killed, None, {"killed_by_oom_killer": "no"})
    assert fixes(denied) == ["kill-not-memory"]


def test_proven_host_oom_does_not_ask_about_the_oom_killer() -> None:
    decision = run(report("host_memory", "host_oom"), None)
    assert "killed_by_oom_killer" not in [q.id for q in decision.questions]
    assert fixes(decision)[0] == "host-memory"


def _held_elsewhere(others_gib: int, total_gib: int = 24) -> LogReport:
    """A training OOM whose figures show ``others_gib`` held by other processes."""
    return LogReport(
        True,
        "training",
        "cuda_oom",
        0.9,
        metrics={
            "other_processes_bytes": others_gib * GIB,
            "total_capacity_bytes": total_gib * GIB,
        },
        inferences=[Inference("held-by-other-processes", others_gib * GIB, {"en": "held"})],
    )


def test_a_small_share_held_elsewhere_comes_right_after_the_phase_fix() -> None:
    # 4 GiB of a 24 GiB card held by other processes beside a trainer that holds 19.5:
    # the trainer's own fix first, the memory held elsewhere right after it
    decision = run(_held_elsewhere(4), config("grpo_fsdp.yaml"))
    assert fixes(decision)[:2] == ["micro-batch", "foreign-process"]


def test_a_large_share_held_elsewhere_comes_first() -> None:
    decision = run(_held_elsewhere(13), config("grpo_fsdp.yaml"))
    assert fixes(decision)[0] == "foreign-process"
