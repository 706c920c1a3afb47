"""Parse and rewrite AReaL backend strings (``sglang:d4t2``, ``fsdp:d2c2``,
``megatron:(attn:d4p2t2c2|ffn:d2p2t4e2)``) and the deprecated ``allocation_mode``
(``sglang:d4+fsdp:d4``, ``sglang:d1+d1``).

Which dimensions each backend accepts lives in ``knowledge/constraints.yaml``
(``backends:``), following AReaL's allocation-mode reference:
world size = d x t x p x c; ``e`` does not add GPUs except in the ``ffn`` part of
a hybrid MoE string, whose world size is d x t x p x e and must equal attn's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import Any

from assistant.knowledge import load_yaml

CANONICAL_ORDER = "dptce"
DIMS = re.compile(r"([a-z])(\d+)")
HYBRID = re.compile(r"^\(\s*attn:([a-z0-9]*)\s*\|\s*ffn:([a-z0-9]*)\s*\)$")


class BackendError(ValueError):
    """A backend string that does not parse, or uses a dimension its backend lacks."""


@cache
def backend_specs() -> dict[str, dict[str, Any]]:
    return dict((load_yaml("constraints.yaml") or {}).get("backends") or {})


@dataclass(frozen=True)
class Dims:
    """Parallel sizes in the order written, e.g. (("d", 4), ("t", 2))."""

    items: tuple[tuple[str, int], ...]

    def size(self, dim: str) -> int:
        return dict(self.items).get(dim, 1)

    def with_sizes(self, **sizes: int) -> Dims:
        """New sizes for some dimensions; a new one is slotted in canonical order (d p t c e)."""
        items = list(self.items)
        for dim, size in sizes.items():
            written = [d for d, _ in items]
            if dim in written:
                items[written.index(dim)] = (dim, size)
                continue
            rank = CANONICAL_ORDER.index(dim)
            later = [i for i, d in enumerate(written) if CANONICAL_ORDER.index(d) > rank]
            items.insert(later[0] if later else len(items), (dim, size))
        return Dims(tuple(items))

    def text(self) -> str:
        return "".join(f"{d}{n}" for d, n in self.items)


def parse_dims(text: str, allowed: str, what: str) -> Dims:
    if not text:
        raise BackendError(f"{what}: no parallel dimensions")
    pos = 0
    items: list[tuple[str, int]] = []
    for match in DIMS.finditer(text):
        if match.start() != pos:
            break
        dim, size = match.group(1), int(match.group(2))
        if dim not in "dtpce":
            raise BackendError(f"{what}: unknown dimension '{dim}' (use d, t, p, c, e)")
        if dim not in allowed and size > 1:  # a size-1 dimension is a no-op ("fsdp:d4p1t1")
            raise BackendError(f"{what}: dimension '{dim}' is not supported by this backend")
        if any(d == dim for d, _ in items):
            raise BackendError(f"{what}: dimension '{dim}' given twice")
        if size < 1:
            raise BackendError(f"{what}: size of '{dim}' must be at least 1")
        items.append((dim, size))
        pos = match.end()
    if pos != len(text):
        raise BackendError(f"{what}: cannot read '{text[pos:]}' in '{text}'")
    return Dims(tuple(items))


@dataclass(frozen=True)
class Backend:
    """One engine's layout. ``name`` is None for a legacy bare training part ("d4")."""

    name: str | None
    dims: Dims
    ffn: Dims | None = None  # MoE hybrid: dims is the attn part

    @property
    def role(self) -> str:
        if self.name is None:
            return "training"
        return str(backend_specs()[self.name]["role"])

    @property
    def hybrid(self) -> bool:
        return self.ffn is not None

    def size(self, dim: str) -> int:
        return self.dims.size(dim)

    @property
    def gpus(self) -> int:
        d = self.dims
        if self.role == "inference":
            return d.size("d") * d.size("t") * d.size("p")
        return d.size("d") * d.size("t") * d.size("p") * d.size("c")

    def text(self) -> str:
        if self.ffn is not None:
            body = f"(attn:{self.dims.text()}|ffn:{self.ffn.text()})"
        else:
            body = self.dims.text()
        return body if self.name is None else f"{self.name}:{body}"

    def with_sizes(self, **sizes: int) -> Backend:
        if self.ffn is not None:
            raise BackendError("hybrid attn/ffn layouts are rewritten by hand")
        return Backend(self.name, self.dims.with_sizes(**sizes))


def parse_backend(text: Any, *, allow_bare: bool = False) -> Backend:
    """Parse one engine's backend string; ``allow_bare`` accepts legacy "d4p1t1"."""
    if not isinstance(text, str) or not text.strip():
        raise BackendError(f"backend {text!r} is not a string like 'fsdp:d4'")
    raw = text.strip()
    name, sep, body = raw.partition(":")
    if not sep:
        if allow_bare and DIMS.match(raw):
            return Backend(None, parse_dims(raw, "dtpce", raw))
        raise BackendError(f"'{raw}' needs a backend prefix, e.g. 'fsdp:{raw}'")
    specs = backend_specs()
    if name not in specs:
        raise BackendError(f"'{raw}': unknown backend '{name}' (known: {', '.join(specs)})")
    allowed = str(specs[name]["dims"])
    hybrid = HYBRID.match(body.strip())
    if hybrid:
        return _parse_hybrid(raw, name, hybrid.group(1), hybrid.group(2))
    if body.strip().startswith("("):
        raise BackendError(f"'{raw}': expected '(attn:...|ffn:...)'")
    return Backend(name, parse_dims(body.strip(), allowed, f"'{raw}'"))


def _parse_hybrid(raw: str, name: str, attn_text: str, ffn_text: str) -> Backend:
    if not backend_specs()[name].get("hybrid"):
        raise BackendError(f"'{raw}': {name} has no attn/ffn hybrid layout")
    attn = parse_dims(attn_text, "dtpc", f"'{raw}' attn")
    ffn = parse_dims(ffn_text, "dtpe", f"'{raw}' ffn")
    if attn.size("p") != ffn.size("p"):
        raise BackendError(f"'{raw}': pipeline size differs between attn and ffn")
    attn_world = attn.size("d") * attn.size("t") * attn.size("p") * attn.size("c")
    ffn_base = ffn.size("t") * ffn.size("p") * ffn.size("e")
    if "d" not in dict(ffn.items):
        if attn_world % ffn_base:
            raise BackendError(f"'{raw}': ffn layout does not divide the attn world size")
    elif ffn.size("d") * ffn_base != attn_world:
        raise BackendError(
            f"'{raw}': world size differs (attn {attn_world}, ffn {ffn.size('d') * ffn_base})"
        )
    return Backend(name, attn, ffn)


@dataclass(frozen=True)
class AllocationMode:
    """The deprecated top-level ``allocation_mode``: an inference and/or training part."""

    inference: Backend | None
    training: Backend | None

    def text(self) -> str:
        parts = [b.text() for b in (self.inference, self.training) if b is not None]
        return "+".join(parts)


def parse_allocation_mode(text: Any) -> AllocationMode:
    if not isinstance(text, str) or not text.strip():
        raise BackendError(f"allocation_mode {text!r} is not a string like 'sglang:d4+fsdp:d4'")
    parts = [p.strip() for p in text.split("+")]
    if len(parts) > 2:
        raise BackendError(f"allocation_mode '{text}': at most one '+' (inference+training)")
    if len(parts) == 2:
        inference = parse_backend(parts[0])
        if inference.role != "inference":
            raise BackendError(
                f"allocation_mode '{text}': '{parts[0]}' is not an inference backend"
            )
        training = parse_backend(parts[1], allow_bare=True)
        if training.role != "training":
            raise BackendError(f"allocation_mode '{text}': '{parts[1]}' is not a training backend")
        return AllocationMode(inference, training)
    only = parse_backend(parts[0], allow_bare=True)
    if only.role == "inference":
        return AllocationMode(only, None)
    return AllocationMode(None, only)
