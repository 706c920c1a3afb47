"""Bytes per parameter of a training engine, from knowledge/memory.yaml ``storage``.

One table, one reader: `estimate`, `check`, the allocation explanation and the tree's
values ask ``bytes_per_param`` and never write a figure of their own. Which version
of AReaL's memory behaviour the figures assume (``behaviour``) is said with them.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

from assistant.errors import KnowledgeError
from assistant.knowledge import load_yaml
from assistant.memory.facts import dtype_bytes

if TYPE_CHECKING:
    from assistant.config.loader import ExperimentConfig

TERMS = ("weights", "gradients", "master")


@cache
def table() -> dict[str, Any]:
    data = (load_yaml("memory.yaml") or {}).get("storage")
    if not isinstance(data, dict):
        raise KnowledgeError("knowledge/memory.yaml: 'storage' is missing")
    return dict(data)


def behaviours() -> list[str]:
    return list(table()["behaviours"])


def default_behaviour() -> str:
    return str(table()["default"])


@dataclass(frozen=True)
class Behaviour:
    id: str
    chosen_by: str  # "default" | "config" | "answer"


def behaviour(
    config: ExperimentConfig | None, engine: str = "actor", answer: Any = None
) -> Behaviour:
    """The behaviour the figures assume: an answer first, then a config key only the
    newer AReaL has (written in the file), else the default (the guide's)."""
    known = table()["behaviours"]
    if isinstance(answer, str) and answer in known:
        return Behaviour(answer, "answer")
    if config is not None:
        for ident, spec in known.items():
            for key in spec.get("shown_by_config_keys") or []:
                if config.source(f"{engine}.{key}") == "config":
                    return Behaviour(str(ident), "config")
    return Behaviour(default_behaviour(), "default")


def _engine_spec(kind: str, ident: str) -> dict[str, Any]:
    engines = table()["engines"]
    spec = engines.get(kind) or engines["fsdp"]
    if "same_as" in spec:  # an engine with another's figures (Archon: FSDP2)
        spec = engines[spec["same_as"]]
    version = spec.get(ident)
    if isinstance(version, dict) and "same_as" in version:  # unchanged between versions
        version = spec[version["same_as"]]
    if not isinstance(version, dict):
        raise KnowledgeError(f"knowledge/memory.yaml: storage.engines.{kind}: no '{ident}'")
    return dict(version)


@dataclass(frozen=True)
class PerParam:
    """Bytes per parameter, unsharded, of each term, and where each figure comes from."""

    behaviour: str
    weights: float
    gradients: float
    master: float
    states: dict[str, float]
    sources: dict[str, str]

    @property
    def optimizer_states(self) -> float:
        return float(sum(self.states.values()))

    def as_dict(self) -> dict[str, Any]:
        return {
            "behaviour": self.behaviour,
            "weights": self.weights,
            "gradients": self.gradients,
            "master_weights": self.master,
            "optimizer_states": self.optimizer_states,
            "states": dict(self.states),
            "sources": dict(self.sources),
        }


def bytes_per_param(
    kind: str,
    optimizer: str | None,
    dtype: Any,
    optimizer_dtype: Any = None,
    ident: str | None = None,
) -> PerParam:
    """The figures of ``kind`` (fsdp, archon, megatron) for this optimizer and dtypes.
    ``optimizer`` None: a forward-only engine (ref): weights only, in ``dtype``."""
    ident = ident or default_behaviour()
    spec = _engine_spec(kind, ident)
    compute = dtype_bytes(dtype)
    default = table()["behaviours"][ident].get("optimizer_dtype_default")
    # no optimizer_dtype in this version: the parameters are stored in the compute dtype
    storage = compute if default is None else dtype_bytes(optimizer_dtype or default, compute)

    def figure(value: Any) -> float:
        if value == "dtype":
            return float(compute)
        if value == "optimizer_dtype":
            return float(storage)
        return float(value)

    if optimizer is None:
        return PerParam(ident, float(compute), 0.0, 0.0, {}, {"weights": "forward only"})
    optimizers = spec["optimizers"]
    chosen = optimizers.get(str(optimizer).lower()) or optimizers["adam"]
    sources = {term: str(spec[term]["source"]) for term in TERMS}
    sources["optimizer_states"] = str(chosen["source"])
    return PerParam(
        behaviour=ident,
        weights=figure(spec["weights"]["bytes"]),
        gradients=figure(spec["gradients"]["bytes"]),
        master=figure(spec["master"]["bytes"]),
        states={name: figure(v) for name, v in (chosen.get("states") or {}).items()},
        sources=sources,
    )


def offloaded(config: ExperimentConfig | None, engine: str, kind: str) -> dict[str, str]:
    """{term: the key that moves it to the CPU} for the offload switches the config sets."""
    if config is None:
        return {}
    moved: dict[str, str] = {}
    for item in table().get("offload") or []:
        key = f"{engine}.{item['key']}"
        if kind in item["backends"] and config.get(key) is True:
            for term in item["moves"]:
                moved.setdefault(term, key)
    return moved


def behaviour_text(ident: str, lang: str) -> tuple[str, str]:
    """(what the figures assume, what the other version would say) in ``lang``."""
    spec = table()["behaviours"][ident]
    pick = "zh" if lang == "zh" else "en"
    return str(spec[pick]), str(spec[f"other_{pick}"])
