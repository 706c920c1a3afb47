"""Allocator failures of every runtime, Ray's memory monitor in all its wordings and a
server's own KV-cache sizing failure, read as whole (short) logs."""

from __future__ import annotations

import pytest

from assistant.logs import classify_text

CASES = [
    # (log, kind, phase)
    (
        "2019-01-08 19:06:10.822532: I tensorflow/core/common_runtime/gpu/gpu_device.cc:1189] "
        "Created TensorFlow device (/job:localhost/replica:0/task:0/device:GPU:0 with 7524 MB)\n"
        "2019-01-08 19:06:11.303639: E tensorflow/stream_executor/rocm/rocm_driver.cc:601] "
        "failed to allocate 7.35G (7889485824 bytes) from device: hipError_t(1002)\n",
        "cuda_error_oom",
        None,
    ),
    (
        "I0302 10:11:02.004 91 trainer.py:140] step 310 loss=1.882\n"
        "W0302 10:11:09.552100 91 bfc_allocator.cc:501] Allocator (GPU_0_bfc) ran out of memory "
        "trying to allocate 6.00GiB (rounded to 6442450944)requested by op dot_general\n",
        "cuda_oom",
        None,
    ),
    (
        "[2026-03-02 10:11:12] loading 4.2M records into the index\n"
        "terminate called after throwing an instance of 'std::bad_alloc'\n"
        "  what():  std::bad_alloc\n",
        "host_oom",
        "host_memory",
    ),
    (
        '  File "/usr/lib/python3.11/multiprocessing/popen_fork.py", line 66, in _launch\n'
        "    self.pid = os.fork()\n"
        "OSError: [Errno 12] Cannot allocate memory\n",
        "host_oom",
        "host_memory",
    ),
    (
        "(raylet, ip=10.0.3.179) [2022-09-22 17:46:53,692 E 134 134] (raylet) node_manager.cc:2966:"
        " System memory low at node with IP 10.0.3.179. Used memory (216.78GB) / total capacity "
        "(219.60GB) (0.98715) exceeds threshold 0.95, killing latest task with name sort_index and "
        "task ID NIL_ID to avoid running out of memory.\n"
        "(raylet, ip=10.0.3.179) This may indicate a memory leak in a task or actor.\n",
        "host_oom",
        "host_memory",
    ),
    (
        "PID\tMEM(GB)\tCOMMAND\n"
        "40126\t11.20\tray::WorkerDict.actor_rollout_generate_sequences\n"
        "40125\t11.17\tray::WorkerDict.actor_rollout_generate_sequences\n"
        "39907\t0.54\tray::main_task\n",
        "host_oom",
        "host_memory",
    ),
    (
        "[07/08/2025-19:47:15] [TRT-LLM] [RANK 1] [E] Failed to initialize executor on rank 1: "
        "Executor creation failed due to insufficient GPU memory.\n\n"
        "The following component could not be created: KV cache\n"
        "Total GPU memory (GiB): 140.06\n",
        "kv_cache",
        "generation",
    ),
    (
        "[2025-01-10 10:00:01 TP0] Load weight end. type=Qwen2ForCausalLM, avail mem=1.20 GB\n"
        "[2025-01-10 10:00:01 TP0] max_total_num_tokens=-5632, chunked_prefill_size=8192\n",
        "kv_cache",
        "generation",
    ),
]


@pytest.mark.parametrize(("log", "kind", "phase"), CASES)
def test_each_runtime_failure_is_its_kind(log: str, kind: str, phase: str | None) -> None:
    report = classify_text(log)
    assert (report.oom, report.kind) == (True, kind)
    if phase is not None:
        assert report.phase == phase


def test_ray_figures_of_every_wording_are_metrics() -> None:
    report = classify_text(CASES[4][0])
    assert report.metrics["host_used_bytes"] == 216_780_000_000
    assert report.metrics["host_total_bytes"] == 219_600_000_000
    assert report.metrics["host_threshold_fraction"] == pytest.approx(0.95)
    old = classify_text(
        "2019-05-02 10:11:12,123\tWARNING worker.py:1337 -- The node is running low\n"
        "ray.memory_monitor.RayOutOfMemoryError: More than 95% of the memory on node Local is "
        "used (15.98 / 16.82 GB). The top 5 memory consumers are:\n"
    )
    assert old.metrics["host_used_bytes"] == 15_980_000_000
    assert old.metrics["host_threshold_fraction"] == pytest.approx(0.95)


def test_a_node_report_borrows_no_rank_from_the_lines_before_it() -> None:
    report = classify_text(
        "(AReaL) 20260521-10:11:02.118 FSDPEngine Rank 0 INFO: step 12 loss 0.412\n"
        "(AReaL) 20260521-10:11:09.554 FSDPEngine Rank 0 INFO: step 13 loss 0.409\n"
        "ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on memory.\n"
        "Memory on the node (IP: 10.0.0.5, ID: 3f2a) where the task (task ID: ffff, name=Rollout"
        ".generate, pid=4242, memory used=31.50GB) was running was 120.33GB / 125.80GB (0.956519),"
        " which exceeds the memory usage threshold of 0.95.\n"
    )
    assert report.oom is True
    assert report.evidence[0].rank is None
    assert "rank" not in report.metrics
    # a rank's own failure still takes the rank of the line that introduced it
    rank = classify_text(
        "(AReaL) 20260521-10:11:09.554 FSDPEngine Rank 3 ERROR: train step failed\n"
        "Traceback (most recent call last):\n"
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a "
        "total capacity of 79.15 GiB of which 1.02 GiB is free.\n"
    )
    assert rank.evidence[0].rank == 3
