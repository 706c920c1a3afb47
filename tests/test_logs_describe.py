"""Short descriptions instead of logs, and one-line pastes without frames."""

from __future__ import annotations

import pytest

from assistant.logs import classify_text


@pytest.mark.parametrize(
    ("text", "oom", "phase", "kind", "language"),
    [
        ("训练时显存爆了", True, "training", "cuda_oom", "zh"),
        ("权重同步的时候 OOM 了", True, "weight_update", "cuda_oom", "zh"),
        ("OOM during weight sync", True, "weight_update", "cuda_oom", "en"),
        (
            "rollout with sglang runs out of memory, kv cache full",
            True,
            "generation",
            "kv_cache",
            "en",
        ),
        ("加载模型时内存不足，进程被杀", True, "host_memory", "host_oom", "zh"),
        (
            "the trainer is killed by the OOM killer while loading the model",
            True,
            "host_memory",
            "host_oom",
            "en",
        ),
        ("my job got OOM", True, "unknown", "cuda_oom", "en"),
        ("the run hangs after step 20", False, "none", "none", "en"),
        ("illegal memory access during training", False, "none", "none", "en"),
    ],
)
def test_descriptions(text: str, oom: bool, phase: str, kind: str, language: str) -> None:
    report = classify_text(text)
    assert report.input_kind == "description"
    assert (report.oom, report.phase, report.kind, report.language) == (oom, phase, kind, language)


def test_one_line_oom_text_takes_its_phase_from_the_words() -> None:
    report = classify_text("RuntimeError: CUDA out of memory during weight sync")
    assert (report.oom, report.kind, report.phase) == (True, "cuda_oom", "weight_update")
    assert report.findings[0].signature == "torch-oom-bare"


def test_a_short_log_is_not_a_description() -> None:
    report = classify_text("ModuleNotFoundError: No module named 'datasets'")
    assert report.input_kind == "log"
    assert report.oom is False and report.first_error is not None


@pytest.mark.parametrize(
    ("text", "oom"),
    [
        # advice on avoiding a memory failure names one that did not happen
        (
            "UserWarning: To avoid running out of memory, consider setting "
            "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True",
            False,
        ),
        ("FutureWarning: to avoid OOM errors, set max_split_size_mb", False),
        ("我把 max_tokens_per_mb 调小了，以免爆显存", False),
        # ... and the failure that did happen outside the advice is still read
        ("I lowered max_tokens_per_mb to avoid OOM but it still OOMs during training", True),
        ("设置了 offload 以免爆显存，结果训练时还是显存不足", True),
        ("it OOMed at step 3 of training", True),
    ],
)
def test_advice_on_avoiding_oom_is_no_failure(text: str, oom: bool) -> None:
    report = classify_text(text)
    assert report.input_kind == "description"
    assert report.oom is oom


def test_a_process_the_system_killed_is_a_host_memory_description() -> None:
    report = classify_text("进程被系统杀掉了，没有任何报错")
    assert report.input_kind == "description"
    assert (report.oom, report.phase, report.kind) == (True, "host_memory", "host_oom")
