"""Which backend each engine of a config runs, where that is written, and its GPUs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import assistant.config.defaults as defaults
from assistant.config.backend import (
    Backend,
    BackendError,
    parse_allocation_mode,
    parse_backend,
)

if TYPE_CHECKING:
    from assistant.config.loader import ExperimentConfig


@dataclass(frozen=True)
class EngineLayout:
    engine: str  # rollout, actor, critic, ref, teacher
    key: str  # dotted key holding the string: "actor.backend" or "allocation_mode"
    backend: Backend
    colocated: bool  # scheduled onto another engine's GPUs


def _section(config: ExperimentConfig, engine: str) -> dict[str, Any] | None:
    value = config.get(engine)
    return value if isinstance(value, dict) else None


def _colocated(config: ExperimentConfig, engine: str) -> bool:
    strategy = config.get(f"{engine}.scheduling_strategy.type")
    return isinstance(strategy, str) and strategy.lower() == "colocation"


def engine_layout(config: ExperimentConfig, engine: str) -> EngineLayout | None:
    """The engine's layout, or None when the config gives none (or it does not parse)."""
    try:
        return _engine_layout(config, engine)
    except BackendError:
        return None


def _engine_layout(config: ExperimentConfig, engine: str) -> EngineLayout | None:
    spec = defaults.engines().get(engine, {})
    if engine != "rollout" and engine != "actor" and _section(config, engine) is None:
        return None
    own = config.get(f"{engine}.backend")
    if isinstance(own, str) and own.strip():
        key = f"{engine}.backend"
        if config.raw(key) != own and spec.get("inherits"):
            # "${actor.backend}": a patch belongs to the engine it copies
            parent = _engine_layout(config, spec["inherits"])
            if parent is not None:
                key = parent.key
        return EngineLayout(engine, key, parse_backend(own), _colocated(config, engine))
    if spec.get("inherits"):
        parent = _engine_layout(config, spec["inherits"])
        if parent is not None:
            return EngineLayout(engine, parent.key, parent.backend, _colocated(config, engine))
    mode_text = config.get("allocation_mode")
    if not (isinstance(mode_text, str) and mode_text.strip()):
        return None
    mode = parse_allocation_mode(mode_text)
    backend = mode.inference if spec.get("role") == "inference" else mode.training
    if backend is None:
        return None
    return EngineLayout(engine, "allocation_mode", backend, _colocated(config, engine))


def all_layouts(config: ExperimentConfig) -> list[EngineLayout]:
    layouts = []
    for engine in defaults.engines():
        layout = engine_layout(config, engine)
        if layout is not None:
            layouts.append(layout)
    return layouts


def backend_keys(config: ExperimentConfig) -> list[str]:
    """Every key in the file that holds a backend string (for grammar checks)."""
    keys = [f"{e}.backend" for e in defaults.engines() if config.written(f"{e}.backend")]
    if config.written("allocation_mode"):
        keys.append("allocation_mode")
    return keys


def rewrite_backend(config: ExperimentConfig, engine: str, new: Backend) -> dict[str, str]:
    """The flat patch that gives ``engine`` the layout ``new``, written where it lives."""
    layout = engine_layout(config, engine)
    key = layout.key if layout is not None else f"{engine}.backend"
    if key != "allocation_mode":
        return {key: new.text()}
    mode = parse_allocation_mode(config.get("allocation_mode"))
    role = defaults.engines().get(engine, {}).get("role")
    inference, training = mode.inference, mode.training
    if role == "inference":
        inference = new
    else:
        training = new
    parts = [b.text() for b in (inference, training) if b is not None]
    return {"allocation_mode": "+".join(parts)}
