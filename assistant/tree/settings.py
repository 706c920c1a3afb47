"""``settings`` of knowledge/tree.yaml: the tree's numbers and word lists, typed."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from assistant.logs.schema import Entry

FILE = "tree.yaml"


@dataclass(frozen=True)
class AllocConf:
    """Where a config sets the CUDA allocator, and what in it counts as already set."""

    engines: tuple[str, ...]
    env_var: str
    expandable_segments: str
    custom_allocator_markers: tuple[str, ...]


@dataclass(frozen=True)
class Settings:
    pool_full_token_usage: float
    offline_dataset_types: tuple[str, ...]
    node_local_prefixes: tuple[str, ...]
    fraction_step: float
    fraction_small_step: float
    fraction_floor: float
    fraction_ceiling: float
    concurrency_cut: float
    context_round_to: int
    alloc_conf: AllocConf
    custom_allocator_keys: tuple[str, ...]
    usual_values: Mapping[str, Any]
    fit_escalation: tuple[str, ...]


NUMBERS = {
    "pool_full_token_usage": float,
    "fraction_step": float,
    "fraction_small_step": float,
    "fraction_floor": float,
    "fraction_ceiling": float,
    "concurrency_cut": float,
    "context_round_to": int,
}
LISTS = ("offline_dataset_types", "node_local_prefixes", "custom_allocator_keys", "fit_escalation")


def parse_settings(data: Any) -> Settings:
    """Check ``settings`` (unknown keys, types) and build it; KnowledgeError names the key."""
    entry = Entry(FILE, data, "settings").only(*NUMBERS, *LISTS, "alloc_conf", "usual_values")
    numbers: dict[str, Any] = {}
    for key, kind in NUMBERS.items():
        value = entry.get(key, (int, float) if kind is float else kind)
        numbers[key] = float(value) if kind is float else int(value)
    lists: dict[str, Any] = {key: tuple(entry.strings(key, required=True)) for key in LISTS}
    alloc = Entry(FILE, entry.get("alloc_conf", dict), "settings.alloc_conf")
    alloc.only("engines", "env_var", "expandable_segments", "custom_allocator_markers")
    usual = entry.get("usual_values", dict)
    return Settings(
        **numbers,
        **lists,
        alloc_conf=AllocConf(
            engines=tuple(alloc.strings("engines", required=True)),
            env_var=alloc.get("env_var", str),
            expandable_segments=alloc.get("expandable_segments", str),
            custom_allocator_markers=tuple(
                alloc.strings("custom_allocator_markers", required=True)
            ),
        ),
        usual_values=MappingProxyType(dict(usual)),
    )
