"""Backend strings per AReaL's allocation-mode reference, and where each engine's lives."""

from __future__ import annotations

from pathlib import Path

import pytest

from assistant.config import config_from_text, load_config
from assistant.config.backend import BackendError, parse_allocation_mode, parse_backend
from assistant.config.engines import all_layouts, engine_layout, rewrite_backend

CONFIGS = Path(__file__).parent / "fixtures" / "configs"


@pytest.mark.parametrize(
    ("text", "gpus", "sizes"),
    [
        ("sglang:d4t2", 8, {"d": 4, "t": 2}),
        ("sglang:d2t4", 8, {"d": 2, "t": 4}),
        ("vllm:d1p2t2", 4, {"p": 2, "t": 2}),
        ("fsdp:d8", 8, {"d": 8}),
        ("fsdp:d2c2", 4, {"c": 2}),
        ("fsdp:d4p1t1", 4, {"p": 1}),  # size-1 dims are no-ops, accepted anywhere
        ("megatron:d2p2t4", 16, {"p": 2}),
        ("megatron:d2p2t4e4", 16, {"e": 4}),  # e adds no GPUs
        ("archon:d2p2e2", 4, {"e": 2}),
    ],
)
def test_flat_backends(text: str, gpus: int, sizes: dict[str, int]) -> None:
    backend = parse_backend(text)
    assert backend.gpus == gpus
    assert all(backend.size(dim) == size for dim, size in sizes.items())
    assert backend.text() == text


def test_hybrid_moe_layout() -> None:
    backend = parse_backend("megatron:(attn:d4p2t2c2|ffn:d2p2t4e2)")
    assert backend.hybrid and backend.gpus == 32
    assert backend.ffn is not None and backend.ffn.size("e") == 2
    assert backend.text() == "megatron:(attn:d4p2t2c2|ffn:d2p2t4e2)"
    assert parse_backend("megatron:(attn:d4p4t2|ffn:d2p4e4)").gpus == 32


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("d4t2", "needs a backend prefix"),
        ("tpu:d4", "unknown backend"),
        ("fsdp:d2p2", "'p' is not supported"),
        ("sglang:d4c2", "'c' is not supported"),
        ("fsdp:d4e2", "'e' is not supported"),
        ("fsdp:d4d2", "given twice"),
        ("fsdp:d0", "at least 1"),
        ("fsdp:x4", "unknown dimension"),
        ("fsdp:d4 t2", "cannot read"),
        ("fsdp:", "no parallel dimensions"),
        ("fsdp:(attn:d2|ffn:d2)", "no attn/ffn hybrid"),
        ("megatron:(attn:d4p2|ffn:d2p4e2)", "pipeline size differs"),
        ("megatron:(attn:d4p2t2|ffn:d2p2t4e2)", "world size differs"),
        ("megatron:(attn:d2e2|ffn:d2e2)", "'e' is not supported"),
        ("megatron:(attn:d2", r"expected '\(attn"),
        ("", "not a string"),
    ],
)
def test_bad_backends_say_why(text: str, problem: str) -> None:
    with pytest.raises(BackendError, match=problem):
        parse_backend(text)


def test_non_string_backend() -> None:
    with pytest.raises(BackendError):
        parse_backend(8)


@pytest.mark.parametrize(
    ("text", "inference", "training"),
    [
        ("sglang:d4+fsdp:d4", "sglang:d4", "fsdp:d4"),
        ("sglang:d1+d1", "sglang:d1", "d1"),
        ("vllm:d4p1t2+d4p1t1c2", "vllm:d4p1t2", "d4p1t1c2"),
        ("fsdp:d8", None, "fsdp:d8"),
        ("sglang:d8", "sglang:d8", None),
    ],
)
def test_allocation_modes(text: str, inference: str | None, training: str | None) -> None:
    mode = parse_allocation_mode(text)
    assert (mode.inference.text() if mode.inference else None) == inference
    assert (mode.training.text() if mode.training else None) == training
    assert mode.text() == text


@pytest.mark.parametrize("text", ["fsdp:d4+sglang:d4", "sglang:d2+sglang:d2", "a+b+c", ""])
def test_bad_allocation_modes(text: str) -> None:
    with pytest.raises(BackendError):
        parse_allocation_mode(text)


def test_new_dimensions_slot_in_canonical_order() -> None:
    assert parse_backend("sglang:d4").with_sizes(d=2, t=2).text() == "sglang:d2t2"
    assert parse_backend("fsdp:d4").with_sizes(d=2, c=2).text() == "fsdp:d2c2"
    assert parse_backend("archon:d4e2").with_sizes(d=2, p=2).text() == "archon:d2p2e2"
    assert parse_backend("fsdp:d4p1t1").with_sizes(d=2, c=2).text() == "fsdp:d2p1t1c2"


def test_engine_layouts_follow_interpolation_and_inheritance() -> None:
    config = load_config(str(CONFIGS / "grpo_fsdp.yaml"))
    ref = engine_layout(config, "ref")
    assert ref is not None and ref.key == "actor.backend" and ref.colocated
    assert engine_layout(config, "critic") is None
    assert {lay.engine for lay in all_layouts(config)} == {"rollout", "actor", "ref"}


def test_engine_layouts_from_allocation_mode() -> None:
    config = load_config(str(CONFIGS / "legacy_alloc.yaml"))
    rollout, actor = engine_layout(config, "rollout"), engine_layout(config, "actor")
    assert rollout is not None and rollout.key == "allocation_mode"
    assert actor is not None and actor.backend.text() == "d4"
    new = rollout.backend.with_sizes(d=2, t=2)
    assert rewrite_backend(config, "rollout", new) == {"allocation_mode": "sglang:d2t2+d4"}


def test_per_engine_backend_wins_over_allocation_mode() -> None:
    config = config_from_text('allocation_mode: "sglang:d2+fsdp:d2"\nactor:\n  backend: fsdp:d4\n')
    assert engine_layout(config, "actor").backend.text() == "fsdp:d4"
    assert engine_layout(config, "rollout").key == "allocation_mode"
