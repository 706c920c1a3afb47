"""Resolve OmegaConf-style ``${a.b}`` interpolations for reading values.

Only plain references are understood (``${actor.path}``, also inside a longer
string such as ``/data/${experiment_name}/ckpt``). Resolver calls such as
``${oc.env:HOME}``, references to missing keys and reference cycles resolve to
``UNKNOWN``: the tool then treats the value as not known rather than guessing.
"""

from __future__ import annotations

import re
from typing import Any

INTERPOLATION = re.compile(r"\$\{([^${}]*)\}")
PLAIN_REFERENCE = re.compile(r"^[A-Za-z_][A-Za-z0-9_\-]*(\.[A-Za-z0-9_\-]+)*$")
MAX_DEPTH = 32


class _Unknown:
    """Marker for a value that is absent or cannot be resolved."""

    _instance: _Unknown | None = None

    def __new__(cls) -> _Unknown:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "UNKNOWN"

    def __bool__(self) -> bool:
        return False


UNKNOWN: Any = _Unknown()


def has_interpolation(value: Any) -> bool:
    return isinstance(value, str) and "${" in value


class Resolver:
    """Looks up dotted keys in a loaded mapping, resolving references on the way."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data

    def lookup(self, key: str, *, resolve: bool = True, _stack: tuple[str, ...] = ()) -> Any:
        """The value at ``key``; parents written as interpolations are always followed,
        the value itself only when ``resolve`` is true."""
        node: Any = self.data
        parts = key.split(".")
        for index, part in enumerate(parts):
            if isinstance(node, list) and part.isdigit() and int(part) < len(node):
                node = node[int(part)]  # a list item: scheduling_spec.0.env_vars
            elif not isinstance(node, dict) or part not in node:
                return UNKNOWN
            else:
                node = node[part]
            if has_interpolation(node) and index < len(parts) - 1:
                node = self._resolve(node, _stack + (key,))
        return self._resolve(node, _stack + (key,)) if resolve else node

    def resolve_value(self, value: Any) -> Any:
        """Resolve a value that does not live in the file (e.g. a default)."""
        return self._resolve(value, ())

    def _resolve(self, value: Any, stack: tuple[str, ...]) -> Any:
        if len(stack) > MAX_DEPTH:
            return UNKNOWN
        if isinstance(value, dict):
            return {k: self._resolve(v, stack) for k, v in value.items()}
        if isinstance(value, list):
            return [self._resolve(v, stack) for v in value]
        if not has_interpolation(value):
            return value
        whole = INTERPOLATION.fullmatch(value)
        if whole:
            return self._reference(whole.group(1), stack)
        return self._embedded(value, stack)

    def _reference(self, ref: str, stack: tuple[str, ...]) -> Any:
        ref = ref.strip()
        if not PLAIN_REFERENCE.match(ref) or ref in stack:
            return UNKNOWN
        return self.lookup(ref, _stack=stack + (ref,))

    def _embedded(self, text: str, stack: tuple[str, ...]) -> Any:
        """Resolve nested ``${...}`` inner-first, then the references around them."""
        for _ in range(MAX_DEPTH):
            match = INTERPOLATION.search(text)
            if match is None:
                return text
            value = self._reference(match.group(1), stack)
            if value is UNKNOWN or isinstance(value, dict | list):
                return UNKNOWN
            text = text[: match.start()] + _as_text(value) + text[match.end() :]
        return UNKNOWN


def _as_text(value: Any) -> str:
    if value is None:
        return "None"
    if isinstance(value, bool):
        return "True" if value else "False"
    return str(value)
