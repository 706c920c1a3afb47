"""Event time: a line's own timestamp, else that of the nearest earlier timestamped line of
the same file. Tracebacks rarely carry a time of their own: the log line they sit under
does, however many untimed lines (a communicator's NCCL INFO output) come between. Only
where the times cannot be compared does the fuller message lead the root-cause choice."""

from __future__ import annotations

from pathlib import Path

from assistant.logs import read_and_classify
from assistant.logs.lines import clean_line
from assistant.logs.windows import time_before


def _noise(rank: int, lines: int) -> str:
    return "".join(
        f"(AReaL) 20260521-03:54:{40 + i % 15:02d}.{i:03d} [FSDPEngine Rank {rank}] INFO: "
        f"Microbatch #tokens (rank {rank}): [16384, 12288], padded to: [16384, 16384]\n"
        for i in range(lines)
    )


def _nccl_init(rank: int, lines: int) -> str:
    """NCCL_DEBUG=INFO output of a new communicator: no timestamps."""
    return "".join(
        f"node-10:4321:4400 [{rank % 8}] NCCL INFO Channel {i % 24:02d}/0 : "
        f"{rank}[{rank % 8}] -> {i % 128}[{i % 8}] via P2P/CUMEM/read\n"
        for i in range(lines)
    )


def _rank77() -> str:
    """NCCL's CUDA failure at 03:55:00.100: a short message, no figures."""
    return (
        _noise(77, 30)
        + "(AReaL) 20260521-03:55:00.100 [FSDPEngine Rank 77] INFO: Begin update_weights\n"
        + _nccl_init(77, 450)
        + "Traceback (most recent call last):\n"
        '  File "/opt/AReaL/areal/engine/fsdp_engine.py", line 612, in update_weights\n'
        "    dist.broadcast(tensor, src=0, group=self.weight_update_group)\n"
        '  File "/usr/lib/python3/site-packages/torch/distributed/distributed_c10d.py", '
        "line 2417, in broadcast\n"
        "    work = group.broadcast([tensor], opts)\n"
        "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/"
        "NCCLUtils.hpp:317, unhandled cuda error (run with NCCL_DEBUG=INFO for details), "
        "NCCL version 2.21.5\n"
        "ncclUnhandledCudaError: Call to CUDA function failed.\n"
        "Last error:\n"
        "Cuda failure 2 'out of memory'\n"
    )


def _rank90() -> str:
    """PyTorch's CUDA OOM at 03:55:02.400: the fuller message, with every figure."""
    return (
        _noise(90, 30)
        + "(AReaL) 20260521-03:55:02.400 [FSDPEngine Rank 90] INFO: Begin update_weights\n"
        "Traceback (most recent call last):\n"
        '  File "/opt/AReaL/areal/engine/fsdp_engine.py", line 598, in update_weights\n'
        "    buffer = torch.empty(numel, dtype=torch.bfloat16, device='cuda')\n"
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 2 has a "
        "total capacity of 79.11 GiB of which 1.21 GiB is free. Including non-PyTorch memory, "
        "this process has 77.88 GiB memory in use. Of the allocated memory 70.12 GiB is "
        "allocated by PyTorch, and 6.01 GiB is reserved by PyTorch but unallocated.\n"
    )


def test_the_earlier_failure_of_two_ranks_is_the_root_cause(tmp_path: Path) -> None:
    (tmp_path / "rank077.log").write_text(_rank77(), encoding="utf-8")
    (tmp_path / "rank090.log").write_text(_rank90(), encoding="utf-8")
    report = read_and_classify([str(tmp_path)])
    assert report.oom is True
    assert report.evidence[0].file.endswith("rank077.log")
    assert report.findings[0].signature == "nccl-cuda-failure-oom"
    assert report.kind == "nccl"
    assert [f.signature for f in report.findings] == ["nccl-cuda-failure-oom", "torch-oom-current"]


def test_the_file_order_does_not_decide(tmp_path: Path) -> None:
    """The later failure's file is named first: the times still decide."""
    (tmp_path / "a-rank90.log").write_text(_rank90(), encoding="utf-8")
    (tmp_path / "b-rank77.log").write_text(_rank77(), encoding="utf-8")
    report = read_and_classify([str(tmp_path / "a-rank90.log"), str(tmp_path / "b-rank77.log")])
    assert report.evidence[0].file.endswith("b-rank77.log")


def test_without_any_time_the_fuller_message_leads(tmp_path: Path) -> None:
    untimed77 = _rank77().replace("(AReaL) 20260521-", "(AReaL) ")
    untimed90 = _rank90().replace("(AReaL) 20260521-", "(AReaL) ")
    assert clean_line(untimed77.splitlines()[0]).ts_key is None
    (tmp_path / "rank077.log").write_text(untimed77, encoding="utf-8")
    (tmp_path / "rank090.log").write_text(untimed90, encoding="utf-8")
    report = read_and_classify([str(tmp_path)])
    assert report.evidence[0].file.endswith("rank090.log")


def _offset_of(data: bytes, needle: bytes) -> int:
    at = data.index(needle)
    return data.rfind(b"\n", 0, at) + 1


def test_time_before_is_the_nearest_earlier_stamp(tmp_path: Path) -> None:
    path = tmp_path / "x.log"
    data = _rank77().encode()
    path.write_bytes(data)
    offset = _offset_of(data, b"Cuda failure 2")
    assert time_before(str(path), offset, "") == (5.0, 21.0, 3.0, 55.0, 0.1)
    # the first line of a file has nothing above it
    assert time_before(str(path), 0, "") is None


def test_time_before_prefers_the_same_process_nearby(tmp_path: Path) -> None:
    path = tmp_path / "merged.log"
    text = (
        "[rank3]:[I521 03:55:00.100000 77 ProcessGroupNCCL.cpp:944] init\n"
        "[rank5]:[I521 03:55:09.000000 78 ProcessGroupNCCL.cpp:944] init\n"
        "[rank3]: Traceback (most recent call last):\n"
    )
    path.write_text(text, encoding="utf-8")
    offset = text.index("[rank3]: Traceback")
    assert time_before(str(path), offset, "rank3") == (5.0, 21.0, 3.0, 55.0, 0.1)
    assert time_before(str(path), offset, "") == (5.0, 21.0, 3.0, 55.0, 9.0)


def test_time_before_reads_across_blocks_and_long_gaps(tmp_path: Path) -> None:
    """The stamp is a megabyte above, beyond any window, with lines cut by block edges."""
    path = tmp_path / "far.log"
    filler = "".join(f"untimed line {i} " + "x" * (i % 300) + "\n" for i in range(8000))
    text = "May 21 03:55:00 node-3 kernel: eth0: link up\n" + filler + "the failure\n"
    path.write_text(text, encoding="utf-8")
    assert len(filler) > 1_000_000
    assert time_before(str(path), text.index("the failure"), "") == (5.0, 21.0, 3.0, 55.0, 0.0)


def test_syslog_kernel_lines_have_a_comparable_time() -> None:
    line = clean_line("Dec  1 03:55:00 node-3 kernel: Out of memory: Killed process 4242 (python)")
    assert line.text.startswith("Out of memory")
    assert line.ts_key == (12.0, 1.0, 3.0, 55.0, 0.0)
