"""Rules that keep the classifier right on logs it was not tuned on.

Each test names the general rule it protects (repeats of a message, inner frames
over outer loops, server evidence, snapshots, wrapped advice) and checks it on a
fixture written for it, together with the fix the decision tree puts first.
"""

from __future__ import annotations

from pathlib import Path

from assistant.logs import classify_text, read_and_classify
from assistant.models import LogReport
from assistant.tree import decide

FIXTURES = Path(__file__).parent / "fixtures" / "logs"


def _read(path: str) -> LogReport:
    return read_and_classify([str(FIXTURES / path)])


def _first_fix(report: LogReport) -> str:
    decision = decide(report, None, {}, "en", True)
    return decision.recommendations[0].section


def _inference_ids(report: LogReport) -> set[str]:
    return {item.id for item in report.inferences}


def test_a_repeat_of_the_message_on_the_next_lines_adds_no_process_entries() -> None:
    # EngineBP and the controller print the same "Process N has ..." text right below
    report = _read("multirank/rpc-repeat.log")
    assert "other_processes_bytes" not in report.metrics
    assert "held-by-other-processes" not in _inference_ids(report)
    assert _first_fix(report) == "train-micro-batch"


def test_vllm_cumem_allocator_names_the_server_and_its_fix() -> None:
    report = _read("signatures/cuda-error-oom--vllm-cumem.log")
    assert report.facts.get("server") == "vllm"
    assert report.facts.get("sleep_mode") is True
    assert _first_fix(report) == "x-vllm-memory"


def test_sglang_memory_resume_names_the_server_without_a_process_prefix() -> None:
    text = (
        "WARNING:2026-01-01 10:00:00,000:Async request to resume_memory_occupation timed out\n"
        "[torch_memory_saver.cpp] CUresult error: 2 (out of memory)  file=csrc/core.cpp "
        "func=cu_mem_create line=120\n"
    )
    report = classify_text(text)
    assert (report.phase, report.kind) == ("generation", "cuda_error_oom")
    assert report.facts.get("server") == "sglang"
    assert _first_fix(report) == "gen-sglang-memory"


def test_an_oom_inside_the_optimizer_step_puts_the_optimizer_state_fixes_first() -> None:
    report = _read("phases/training-optimizer-step.log")
    assert "optimizer_step" in report.facts["signature_tags"]
    assert _first_fix(report) == "optimizer-state-dtype"


def test_an_oom_in_backward_is_not_an_optimizer_step() -> None:
    report = _read("phases/training-wrapped-advice.log")
    assert "optimizer_step" not in report.facts["signature_tags"]


def test_generation_inside_a_training_loop_is_generation() -> None:
    report = _read("phases/generation-in-trainer-generate.log")
    assert report.phase == "generation"
    assert _first_fix(report) == "gen-reduce-concurrency"


def test_a_snapshot_with_the_gpu_already_full_points_to_another_process() -> None:
    report = _read("phases/model-loading-colocated-snapshot.log")
    assert "held-by-other-processes" in _inference_ids(report)
    assert _first_fix(report) == "x-foreign-process"


def test_a_snapshot_of_an_empty_gpu_blames_nobody_else() -> None:
    report = _read("phases/model-loading-snapshot-normal.log")
    assert "held-by-other-processes" not in _inference_ids(report)
    assert _first_fix(report) == "train-efficient-load"


def test_a_snapshot_does_not_override_the_figures_of_the_message() -> None:
    text = (
        "(AReaL) 20260702-11:00:00.000 [FSDPEngine Rank 0] INFO: Memory-Usage after offload "
        "model: memory allocated (GB): 0.00, memory reserved (GB): 0.00, device memory "
        "used/total (GB): 70.00/79.11\n"
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a "
        "total capacity of 79.11 GiB of which 1.00 GiB is free. Including non-PyTorch memory, "
        "this process has 78.00 GiB memory in use. Of the allocated memory 76.00 GiB is "
        "allocated by PyTorch, and 1.00 GiB is reserved by PyTorch but unallocated.\n"
    )
    report = classify_text(text)
    assert "snapshot_device_used_bytes" not in report.metrics
    assert "held-by-other-processes" not in _inference_ids(report)


def test_pytorch_advice_wrapped_onto_the_next_line_does_not_count_as_a_setting() -> None:
    report = _read("phases/training-wrapped-advice.log")
    assert "expandable_segments" not in report.facts
    assert "alloc_conf" not in report.facts
    # 36 GiB cached vs a 6 GiB request: fragmentation is recommended, not skipped as
    # "already set" (6x is below the lead cut-off, so it follows the phase's first fix)
    sections = [r.section for r in decide(report, None, {}, "en", True).recommendations]
    assert sections[:2] == ["train-micro-batch", "x-fragmentation"]


def test_a_real_setting_still_counts() -> None:
    text = (
        "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\n"
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a "
        "total capacity of 79.11 GiB of which 1.00 GiB is free.\n"
    )
    report = classify_text(text)
    assert report.facts.get("expandable_segments") is True


def test_the_kernel_report_is_the_root_cause_not_the_launchers_sigkill() -> None:
    report = _read("signatures/kernel-oom-killer--after-torchrun.log")
    assert report.findings[0].signature == "kernel-oom-killer"
    assert "Killed process 420" in report.evidence[0].text


def test_a_message_that_names_other_processes_puts_them_first() -> None:
    text = (
        "[2025-04-12 06:30:13 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
        "ValueError: The memory capacity is unbalanced. Some GPUs may be occupied by other "
        "processes. min_per_gpu_memory=20.00, local_gpu_memory=79.00\n"
    )
    report = classify_text(text)
    assert "other_processes" in report.facts["signature_tags"]
    assert _first_fix(report) == "x-foreign-process"


def test_areal_code_inside_the_vllm_server_names_vllm_and_keeps_the_weight_update_phase() -> None:
    text = (
        "Traceback (most recent call last):\n"
        '  File "/opt/AReaL/areal/engine/vllm_ext/vllm_worker_extension.py", line 140, '
        "in areal_update_weight_xccl\n"
        '    weight = torch.empty(shape, dtype=dtype, device="cuda")\n'
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a "
        "total capacity of 79.19 GiB of which 1.00 GiB is free.\n"
    )
    report = classify_text(text)
    assert report.phase == "weight_update"
    assert report.facts.get("server") == "vllm"


def test_a_container_killed_at_its_limit_is_host_memory_and_false_is_not() -> None:
    killed = _read("signatures/container-oom-killed.log")
    assert (killed.oom, killed.phase) == (True, "host_memory")
    assert _first_fix(killed) == "x-host-memory"
    assert _read("lookalikes/docker-inspect-not-oom-killed.log").oom is False
