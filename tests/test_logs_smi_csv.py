"""nvidia-smi --query-compute-apps CSV: another program on one of the job's GPUs."""

from __future__ import annotations

from pathlib import Path

from assistant.logs import read_and_classify
from assistant.logs.smi import MIB, GpuProcess, csv_processes, strangers_beside_the_job

ADVICE = Path(__file__).parent / "fixtures" / "advice"


def test_the_csv_rows_are_read_with_their_gpu_and_memory() -> None:
    rows = csv_processes(str(ADVICE / "nccl_load_beside_a_stranger.log"))
    assert len(rows) == 3
    stranger = next(r for r in rows if r.pid == 5531)
    assert stranger.name == "ray::InferenceWorker" and stranger.bytes == 64002 * MIB
    assert stranger.gpu.endswith("000000000002")


def test_a_stranger_is_another_program_on_a_gpu_of_the_job() -> None:
    job = [GpuProcess(f"gpu{i}", 100 + i, "python3", 9000 * MIB) for i in range(4)]
    assert strangers_beside_the_job(job) is None  # the job alone
    elsewhere = [*job, GpuProcess("gpu9", 7, "VLLM::Worker_TP0", 70000 * MIB)]
    assert strangers_beside_the_job(elsewhere) is None  # not on the job's GPUs
    shared = [*job, GpuProcess("gpu2", 8, "VLLM::Worker_TP0", 70000 * MIB)]
    assert strangers_beside_the_job(shared) == (70000 * MIB, 1)


def test_the_stranger_makes_other_processes_the_first_fix() -> None:
    from assistant.pipeline import conclude

    report = read_and_classify([str(ADVICE / "nccl_load_beside_a_stranger.log")])
    assert report.kind == "nccl"
    assert report.metrics["other_processes_bytes"] == 64002 * MIB
    assert "other_processes" in report.facts["signature_tags"]
    diagnosis = conclude(report, lang="en", use_defaults=True)
    assert diagnosis.decision.recommendations[0].fix == "foreign-process"
