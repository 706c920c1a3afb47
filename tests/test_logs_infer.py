"""Units, derived metrics, inferences and facts read from logs."""

from __future__ import annotations

import pytest

from assistant.logs import classify_text
from assistant.logs.infer import derive_metrics, inferences, model_params_b
from assistant.logs.units import format_bytes, parse_size, parse_value

GIB = 1 << 30


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("0 bytes", 0),
        ("1024 bytes", 1024),
        ("1024.00 KiB", 1 << 20),
        ("2.00 MiB", 2 << 20),
        ("79.11 GiB", round(79.11 * GIB)),
        ("17.25GiB", round(17.25 * GIB)),
        ("12 GB", 12 * GIB),
        ("3", 3),
    ],
)
def test_sizes(text: str, value: int) -> None:
    assert parse_size(text) == value


def test_units_by_convention() -> None:
    assert parse_size("2 GB", decimal=True) == 2_000_000_000
    assert parse_value("31451456", "kib") == 31451456 * 1024
    assert parse_value("59.49", "gb_decimal") == 59_490_000_000
    assert parse_value("0.35", "float") == 0.35
    assert parse_value("x", "int") is None
    assert format_bytes(3 * GIB) == "3.00 GiB"


def test_reserved_total_gives_reserved_unallocated() -> None:
    metrics = derive_metrics(
        {"allocated_by_pytorch_bytes": 10 * GIB, "reserved_by_pytorch_bytes": 14 * GIB}
    )
    assert metrics["reserved_unallocated_bytes"] == 4 * GIB


def test_process_list_without_own_clause_excludes_the_process_itself() -> None:
    figures = {
        "allocated_by_pytorch_bytes": 60 * GIB,
        "reserved_unallocated_bytes": 10 * GIB,
        "process_list_bytes": [72 * GIB, 5 * GIB],
    }
    metrics = derive_metrics(figures)
    assert (metrics["other_processes_bytes"], metrics["other_processes_count"]) == (5 * GIB, 1)
    assert "process_list_bytes" not in metrics


def test_inferences_from_figures() -> None:
    metrics = {
        "tried_to_allocate_bytes": 4 * GIB,
        "total_capacity_bytes": 80 * GIB,
        "free_bytes": 1 * GIB,
        "allocated_by_pytorch_bytes": 40 * GIB,
        "reserved_unallocated_bytes": 20 * GIB,
        "process_in_use_bytes": 62 * GIB,
    }
    found = {item.id: item for item in inferences(metrics)}
    assert found["reserved-unallocated-share"].value == pytest.approx(1 / 3, abs=1e-3)
    assert found["held-by-other-processes"].value == 17 * GIB
    assert found["request-exceeds-free"].value == 3 * GIB
    assert all(set(item.text) == {"en", "zh"} for item in found.values())


def test_request_larger_than_the_gpu() -> None:
    ids = [
        i.id
        for i in inferences(
            {"tried_to_allocate_bytes": 900 * GIB, "total_capacity_bytes": 80 * GIB}
        )
    ]
    assert ids == ["request-exceeds-gpu"]


def test_request_below_free_points_at_fragmentation() -> None:
    ids = [i.id for i in inferences({"tried_to_allocate_bytes": GIB, "free_bytes": 2 * GIB})]
    assert ids == ["request-below-free"]


@pytest.mark.parametrize(
    ("name", "params"),
    [
        ("Qwen2.5-7B-Instruct", 7.0),
        ("Meta-Llama-3-70B", 70.0),
        ("Qwen3-30B-A3B", 30.0),
        ("Qwen2.5-0.5B", 0.5),
        ("SmolLM2-135M", 0.135),
        ("DeepSeek-R1", None),
    ],
)
def test_model_size_from_name(name: str, params: float | None) -> None:
    assert model_params_b(name) == params


def test_facts_read_from_the_log_head() -> None:
    text = (
        "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True,max_split_size_mb:128\n"
        "(AReaL) 20260301-10:00:00.000 RLTrainer INFO: actor.path: /models/Qwen2.5-14B-Instruct\n"
        "(AReaL) 20260301-10:00:00.001 RLTrainer INFO: weight_update_mode: disk\n"
        "(AReaL) 20260301-10:00:09.000 [FSDPEngine Rank 0] INFO: step 1\n"
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
        "capacity of 79.11 GiB of which 1.00 GiB is free. If reserved but unallocated memory is "
        "large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid "
        "fragmentation.\n"
    )
    facts = classify_text(text).facts
    assert facts["expandable_segments"] is True
    assert facts["alloc_conf"] == "expandable_segments:True,max_split_size_mb:128"
    assert facts["weight_update_mode"] == "disk"
    assert facts["train_engine"] == "fsdp"
    assert (facts["model_name"], facts["model_params_b"]) == ("Qwen2.5-14B-Instruct", 14.0)


def test_advice_text_alone_does_not_set_expandable_segments() -> None:
    text = (
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
        "capacity of 79.11 GiB of which 1.00 GiB is free. If reserved but unallocated memory is "
        "large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid "
        "fragmentation.\n"
    )
    facts = classify_text(text).facts
    assert "expandable_segments" not in facts and "alloc_conf" not in facts
