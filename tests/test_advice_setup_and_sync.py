"""Advice for classes met in fresh_logs5 (AReaL in depth), each on a fixture written here:
a GPU already full at process set-up, the server side of a weight update, colocation
read from the log, and one change offered once."""

from __future__ import annotations

from pathlib import Path

import pytest

from assistant.logs import read_and_classify
from assistant.pipeline import conclude

ADVICE = Path(__file__).parent / "fixtures" / "advice"


def diagnose(log: str):
    report = read_and_classify([str(ADVICE / log)])
    return conclude(report, lang="en", use_defaults=True)


def fixes(diagnosis) -> list[str]:
    return [r.fix for r in diagnosis.decision.recommendations]


def test_a_gpu_full_before_the_process_built_anything_points_at_other_processes():
    diagnosis = diagnose("process_setup_gpu_full.log")
    assert diagnosis.report.phase == "model_loading"
    assert diagnosis.report.stage == "process_setup"
    assert fixes(diagnosis)[0] == "foreign-process"
    first = diagnosis.decision.recommendations[0]
    assert "only setting up" in first.why


def test_at_process_set_up_in_a_colocated_run_the_own_server_is_named():
    diagnosis = diagnose("process_setup_colocated.log")
    assert diagnosis.report.stage == "process_setup"
    assert diagnosis.report.facts.get("colocated") is True  # "enable_offload: true"
    assert fixes(diagnosis)[0] == "colocated-sglang"


@pytest.mark.parametrize(
    ("log", "phase", "stage", "first"),
    [
        # AReaL's vllm_ext worker extension: "Failed to update parameter! CUDA out of memory"
        ("vllm_worker_update_oom.log", "weight_update", "inference_side", "vllm-utilization-lower"),
        # vLLM's sleep mode: /wake_up and its cumem allocator, not SGLang's memory saver
        ("vllm_wake_up_500.log", "generation", "wake_up", "vllm-utilization-lower"),
        # the NCCL WARN line is the failure; the Python report of it follows a line later
        ("vllm_update_nccl_warn.log", "weight_update", "inference_side", "vllm-utilization-lower"),
    ],
)
def test_a_vllm_server_failing_is_read_as_vllm_at_its_stage(log, phase, stage, first):
    diagnosis = diagnose(log)
    assert (diagnosis.report.phase, diagnosis.report.stage) == (phase, stage)
    assert diagnosis.report.facts.get("server") == "vllm"
    assert fixes(diagnosis)[0] == first


def test_sglang_update_online_with_the_nccl_error_between_its_two_halves():
    diagnosis = diagnose("sglang_update_online_split.log")
    assert diagnosis.report.kind == "nccl"
    assert diagnosis.report.stage == "inference_side"
    assert fixes(diagnosis)[0] == "sglang-fraction-lower"


def test_colocation_read_from_the_log_and_one_change_listed_once():
    diagnosis = diagnose("vllm_startup_colocated.log")
    assert diagnosis.report.facts.get("colocated") is True
    assert fixes(diagnosis)[0] == "colocated-vllm"
    assert "vllm-utilization-lower" not in fixes(diagnosis)
    skipped = {s.fix: s.why for s in diagnosis.decision.skipped}
    assert "the same change as [x-vllm-memory]" in skipped["vllm-utilization-lower"]


def test_the_word_colocated_alone_is_not_offload():
    """Training engines (actor, ref, critic) are 'colocated' too; only enable_offload or
    the trainer's offload lines say the inference server shares the GPUs."""
    from assistant.logs.rules import load_rules

    rule = next(f for f in load_rules().facts if f.id == "colocated-offload")
    assert not any(p.search("actor/ref/critic colocated on the same GPUs") for p in rule.patterns)
    assert any(p.search("enable_offload: true") for p in rule.patterns)


def test_a_ref_failing_beside_other_processes_is_sharded_not_sent_hunting():
    """AReaL colocates ref/critic with the actor: the other process is the actor."""
    diagnosis = diagnose("ref_beside_actor.log")
    assert diagnosis.report.facts.get("failing_role") == "ref"
    assert fixes(diagnosis)[0] == "train-shard"
    first = diagnosis.decision.recommendations[0]
    assert "most likely this run's own actor" in first.why
    actor = diagnose("process_setup_gpu_full.log")  # an actor's failure: no such lead
    assert actor.report.facts.get("failing_role") != "ref"


def _training_oom(allocated: str, unallocated: str) -> str:
    return (
        "Traceback (most recent call last):\n"
        '  File "/srv/AReaL/areal/engine/fsdp_engine.py", line 746, in forward_backward_batch\n'
        "    loss.backward()\n"
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 96.00 MiB. GPU 0 has a"
        " total capacity of 39.39 GiB of which 61.06 MiB is free. Of the allocated memory"
        f" {allocated} is allocated by PyTorch, and {unallocated} is reserved by PyTorch but"
        " unallocated.\n"
    )


def test_a_small_cache_slack_on_a_full_card_does_not_lead_with_fragmentation():
    """1.23 GiB spare of 38.4 reserved (3%) is 13x a 96 MiB request but normal churn:
    expandable segments is offered after the phase's first fix, not before it."""
    from assistant.logs import classify_text

    small = conclude(classify_text(_training_oom("37.14 GiB", "1.23 GiB")), use_defaults=True)
    assert fixes(small)[0] != "fragmentation" and "fragmentation" in fixes(small)[:3]
    large = conclude(classify_text(_training_oom("30.10 GiB", "8.20 GiB")), use_defaults=True)
    assert fixes(large)[0] == "fragmentation"  # 21% of what PyTorch holds is slack


def test_ranks_piled_on_one_gpu_are_named_with_the_set_device_fix():
    diagnosis = diagnose("ranks_on_gpu0.log")
    assert diagnosis.report.facts.get("ranks_share_gpu") is True
    assert fixes(diagnosis)[0] == "foreign-process"
    assert "torch.cuda.set_device(local_rank)" in diagnosis.decision.recommendations[0].why
    one_each = diagnose("process_setup_gpu_full.log")  # no table: nothing said of ranks
    assert "ranks_share_gpu" not in one_each.report.facts


def test_a_prefill_failure_after_the_graphs_were_captured_is_not_a_capture_failure():
    diagnosis = diagnose("sglang_prefill_after_capture.log")
    assert diagnosis.report.phase == "generation"
    assert diagnosis.report.stage == "prefill"
    assert "cuda-graph-sglang" not in fixes(diagnosis)[:1]
    assert fixes(diagnosis)[0] in ("sglang-fraction-lower", "reduce-concurrency")


@pytest.mark.parametrize(
    ("log", "buffer"),
    [
        # verl: the bucket is an override, the server is verl's vLLM rollout
        ("verl_bucket_update_oom.log", "4096"),
        # AReaL: WeightUpdateMeta(weight_chunked_mem_mb=...) echoed in the trainer's log
        ("areal_chunk_equals_request.log", "2048"),
    ],
)
def test_a_request_the_size_of_the_weight_buffer_leads_with_the_buffer(log, buffer):
    """'Tried to allocate 4.00 GiB' with a 4096 MiB bucket: the bucket did not fit."""
    diagnosis = diagnose(log)
    assert diagnosis.report.phase == "weight_update"
    assert diagnosis.report.facts.get("weight_buffer_mb") == buffer
    assert fixes(diagnosis)[0] == "wu-chunk-buffer"
    first = diagnosis.decision.recommendations[0]
    assert f"the weight-update buffer this run sets ({buffer} MiB)" in first.why


def test_a_verl_hybrid_engine_is_colocated_and_its_server_is_vllm():
    diagnosis = diagnose("verl_bucket_update_oom.log")
    assert diagnosis.report.facts.get("colocated") is True
    assert diagnosis.report.facts.get("server") == "vllm"
    assert "colocated-vllm" in fixes(diagnosis)
    assert "foreign-process" not in fixes(diagnosis)


def test_a_request_of_another_size_is_not_the_buffer(tmp_path: Path):
    text = (ADVICE / "areal_chunk_equals_request.log").read_text(encoding="utf-8")
    log = tmp_path / "other_size.log"
    log.write_text(text.replace("Tried to allocate 2.00 GiB", "Tried to allocate 2.50 GiB"))
    report = read_and_classify([str(log)])
    diagnosis = conclude(report, lang="en", use_defaults=True)
    assert report.facts.get("weight_buffer_mb") == "2048"
    whys = " ".join(r.why for r in diagnosis.decision.recommendations)
    assert "buffer this run sets" not in whys


@pytest.mark.parametrize(
    ("log", "phase"),
    [
        # a notebook builds vLLM's LLM(...) first, then loads the policy in the same process
        ("notebook_inprocess_vllm_then_policy_load.log", "model_loading"),
        # TRL's vllm_mode="colocate": vLLM lives in the trainer's process
        ("trl_colocate_backward_oom.log", "training"),
    ],
)
def test_a_vllm_engine_in_the_trainers_own_process_is_named_first(log, phase):
    diagnosis = diagnose(log)
    assert diagnosis.report.phase == phase
    assert diagnosis.report.facts.get("engine_in_process") is True
    assert diagnosis.report.facts.get("server") == "vllm"
    assert fixes(diagnosis)[0] == "inprocess-vllm"
    first = diagnosis.decision.recommendations[0]
    assert first.section == "x-vllm-memory" and "inside the trainer's own process" in first.why


def test_an_in_process_engine_failing_itself_keeps_the_generation_plan(tmp_path: Path):
    """The lead is for the trainer failing beside the engine, not for the engine's own OOM."""
    text = (ADVICE / "notebook_inprocess_vllm_then_policy_load.log").read_text(encoding="utf-8")
    log = tmp_path / "engine_itself.log"
    log.write_text(
        text.split("In [5]")[0]
        + '  File "/usr/local/lib/python3.11/site-packages/vllm/v1/worker/gpu_model_runner.py",'
        " line 2301, in execute_model\n"
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a"
        " total capacity of 39.39 GiB of which 1.02 GiB is free.\n"
    )
    diagnosis = conclude(read_and_classify([str(log)]), lang="en", use_defaults=True)
    assert diagnosis.report.phase == "generation"
    assert "inprocess-vllm" not in fixes(diagnosis)


@pytest.mark.parametrize(
    "setting",
    [
        "policy.generation.backend=vllm",
        'rollout:\n  backend: "vllm:d4t2"',
        "vllm_cfg: {tensor_parallel_size: 2}",
        # OpenRLHF generates with vLLM only: its own name, its --vllm_* arguments
        "openrlhf 0.8.5, --colocate_all_models --vllm_enable_sleep",
        "(PolicyModelActor pid=1198, ip=10.0.1.7) [rank0]: step 3",
    ],
)
def test_a_config_that_names_vllm_as_the_backend_names_the_server(tmp_path: Path, setting):
    log = tmp_path / "run.log"
    log.write_text(
        f"{setting}\n"
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a"
        " total capacity of 79.11 GiB of which 1.02 GiB is free.\n",
        encoding="utf-8",
    )
    assert read_and_classify([str(log)]).facts.get("server") == "vllm"
