"""AReaL defaults and key locations, read from ``knowledge/config_defaults.yaml``."""

from __future__ import annotations

from functools import cache
from typing import Any

from assistant.config.interpolate import UNKNOWN
from assistant.knowledge import load_yaml


@cache
def _table() -> dict[str, Any]:
    data = load_yaml("config_defaults.yaml") or {}
    return {
        "defaults": dict(data.get("defaults") or {}),
        "aliases": {k: list(v) for k, v in (data.get("aliases") or {}).items()},
        "engines": dict(data.get("engines") or {}),
    }


@cache
def _alias_to_canonical() -> dict[str, str]:
    mapping: dict[str, str] = {}
    for canonical_key, aliases in _table()["aliases"].items():
        for alias in aliases:
            mapping[alias] = canonical_key
    return mapping


def canonical(key: str) -> str:
    """The canonical dotted key for ``key`` (itself unless it is a known alias)."""
    return _alias_to_canonical().get(key, key)


def locations(key: str) -> list[str]:
    """Every place ``key`` may be written, canonical first."""
    main = canonical(key)
    return [main, *_table()["aliases"].get(main, [])]


def default_for(key: str) -> Any:
    """AReaL's default for a canonical key, ``UNKNOWN`` when the table has none."""
    return _table()["defaults"].get(key, UNKNOWN)


def engines() -> dict[str, dict[str, Any]]:
    """Engine name -> {role: inference|training, inherits: other engine}."""
    table: dict[str, dict[str, Any]] = _table()["engines"]
    return table
