"""Line cleaning: producer prefixes peeled off, rank and timestamp kept."""

from __future__ import annotations

import pytest

from assistant.logs.lines import clean_line, strip_controls

CASES = [
    # raw line, cleaned text, rank, timestamp
    (
        "\x1b[1;38;2;180;140;80m(AReaL)\x1b[0m 20260521-18:37:16.123 [FSDPEngine Rank 3] "
        "\x1b[31mERROR\x1b[0m: boom",
        "boom",
        3,
        "20260521-18:37:16.123",
    ),
    (
        "(AReaL) 20260521-18:37:16.123 RLTrainer INFO: step done",
        "step done",
        None,
        "20260521-18:37:16.123",
    ),
    ("[rank3]: torch.OutOfMemoryError: x", "torch.OutOfMemoryError: x", 3, None),
    # srun --label: the task number is peeled off, the rank inside it stays the rank
    ('0: [rank3]:   File "/opt/x.py", line 1, in f', '  File "/opt/x.py", line 1, in f', 3, None),
    ("12: torch.OutOfMemoryError: x", "torch.OutOfMemoryError: x", None, None),
    # torchrun --tee: the local rank
    ("[default5]:torch.OutOfMemoryError: x", "torch.OutOfMemoryError: x", 5, None),
    ("(ActorWorker pid=123) hello", "hello", None, None),
    (
        "(VllmWorker rank=5 pid=3073) INFO 03-20 03:14:59 [gpu_worker.py:136] load",
        "load",
        5,
        "03-20 03:14:59",
    ),
    ("(LLMRayActor pid=1112, ip=172.26.5.7) update weight", "update weight", None, None),
    ("(raylet) Task was killed", "Task was killed", None, None),
    (
        "[rank1]:[E1218 20:27:21.426415540 ProcessGroupNCCL.cpp:629] [Rank 1] Watchdog",
        "[Rank 1] Watchdog",
        1,
        "1218 20:27:21.426415540",
    ),
    (
        "[2026-02-26 05:24:09 TP4] Decode out of memory.",
        "Decode out of memory.",
        4,
        "2026-02-26 05:24:09",
    ),
    (
        "[2025-03-18 16:10:06 DP1 TP0] TpModelWorkerClient hit",
        "TpModelWorkerClient hit",
        0,
        "2025-03-18 16:10:06",
    ),
    (
        "(EngineCore_DP0 pid=268) ERROR 10-21 00:35:03 [core.py:708] ValueError: x",
        "ValueError: x",
        None,
        "10-21 00:35:03",
    ),
    (
        "ERROR 04-30 10:20:36 core.py:396] EngineCore failed",
        "EngineCore failed",
        None,
        "04-30 10:20:36",
    ),
    (
        "WARNING:2025-11-28 16:00:45,396:Async request",
        "Async request",
        None,
        "2025-11-28 16:00:45,396",
    ),
    ("[2025-06-28T09:19:58Z] FAILED test_x", "FAILED test_x", None, "2025-06-28 09:19:58"),
    (
        "[441280.839852] Out of memory: Killed process 698405",
        "Out of memory: Killed process 698405",
        None,
        "441280.839852",
    ),
    (
        "inference_engine  | [2025-02-12 12:54:32 TP0] Scheduler",
        "Scheduler",
        0,
        "2025-02-12 12:54:32",
    ),
    (
        "[actor]   (AReaL) 20260521-18:37:16.123 PPOActor INFO: ok",
        "ok",
        None,
        "20260521-18:37:16.123",
    ),
    ("[36m(RayWorkerWrapper pid=4009) [rank1]:[E ProcessGroupNCCL.cpp:563] x", "x", 1, None),
    ("plain text line", "plain text line", None, None),
]


@pytest.mark.parametrize(("raw", "text", "rank", "timestamp"), CASES)
def test_prefixes_are_removed(raw: str, text: str, rank: int | None, timestamp: str | None) -> None:
    line = clean_line(raw)
    assert (line.text, line.rank, line.timestamp) == (text, rank, timestamp)


def test_timestamps_of_different_producers_compare() -> None:
    areal = clean_line("(AReaL) 20260415-10:00:04.015 [FSDPEngine Rank 2] ERROR: x").ts_key
    glog = clean_line("[rank0]:[E415 10:10:04.120000000 ProcessGroupNCCL.cpp:632] y").ts_key
    sglang = clean_line("[2026-04-15 09:59:59 TP0] z").ts_key
    assert sglang < areal < glog


def test_stream_tells_processes_apart() -> None:
    one = clean_line("(WorkerDict pid=1) a").stream
    two = clean_line("(WorkerDict pid=2) a").stream
    assert one and two and one != two


def test_controls_and_progress_segments() -> None:
    assert strip_controls("a\x1b[0mb\r\n") == "ab"
    assert strip_controls("10%|#  | 1/10\r100%|###| 10/10\rKilled") == "Killed"
    assert strip_controls("GPU\x00") == "GPU "


def test_html_escapes_from_copied_issues_are_undone() -> None:
    line = clean_line(
        "If reserved memory is &gt;&gt; allocated memory try setting max_split_size_mb"
    )
    assert ">>" in line.text
