"""Typed, validated access to entries of the rule files (errors name file and entry)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from assistant.errors import KnowledgeError
from assistant.logs.lazyre import LazyPattern
from assistant.logs.units import PLACEHOLDERS


class _Validation:
    """Whether loading compiles every pattern (validation) or defers it (the same rule
    files were validated before: rules.load_rules keeps that verdict per file content)."""

    patterns: bool = True


VALIDATION = _Validation()


class Entry:
    """Typed access to one YAML mapping, with errors that name file and entry."""

    def __init__(self, file: str, data: Any, label: str) -> None:
        self.file, self.label = file, label
        if not isinstance(data, dict):
            self.fail("is not a mapping")
        self.data: dict[str, Any] = data

    def fail(self, why: str) -> None:
        raise KnowledgeError(f"knowledge/{self.file}: entry {self.label}: {why}")

    def only(self, *allowed: str) -> Entry:
        """Refuse keys the loader does not read: a misspelt key would be silently ignored."""
        unknown = [key for key in self.data if key not in allowed]
        if unknown:
            self.fail(f"unknown key '{unknown[0]}' (allowed: {', '.join(allowed)})")
        return self

    def get(
        self,
        key: str,
        kind: type | tuple[type, ...],
        default: Any = ...,
        check: Callable[[Any], bool] | None = None,
    ) -> Any:
        if key not in self.data:
            if default is ...:
                self.fail(f"missing '{key}'")
            return default
        value = self.data[key]
        if not isinstance(value, kind) or (isinstance(value, bool) and bool not in _as_tuple(kind)):
            self.fail(f"'{key}' has the wrong type ({type(value).__name__})")
        if check is not None and not check(value):
            self.fail(f"'{key}' has a bad value: {value!r}")
        return value

    def regexes(
        self, key: str, required: bool = True, expand: bool = False
    ) -> tuple[LazyPattern, ...]:
        raw = self.get(key, (list, str), default=... if required else [])
        items = [raw] if isinstance(raw, str) else raw
        if required and not items:
            self.fail(f"'{key}' is empty")
        return tuple(self.compile(item, expand) for item in items)

    def compile(self, pattern: Any, expand: bool = False) -> LazyPattern:
        if not isinstance(pattern, str):
            self.fail(f"pattern {pattern!r} is not a string")
        text = _expand(pattern) if expand else pattern
        if not VALIDATION.patterns:
            return LazyPattern(text)  # validated before: compiled where a line needs it
        try:
            return LazyPattern(text, re.compile(text))
        except re.error as exc:
            self.fail(f"pattern {pattern!r} does not compile: {exc}")
        raise AssertionError  # unreachable: fail() raises

    def strings(self, key: str, required: bool = False) -> tuple[str, ...]:
        raw = self.get(key, list, default=... if required else [])
        if required and not raw:
            self.fail(f"'{key}' is empty")
        if not all(isinstance(item, str) and item for item in raw):
            self.fail(f"'{key}' must be a list of non-empty strings")
        return tuple(raw)

    def triggers(self) -> tuple[str, ...]:
        triggers = self.strings("triggers", required=True)
        for trigger in triggers if VALIDATION.patterns else ():
            try:
                re.compile(trigger.removeprefix("(?i)"))
            except re.error as exc:
                self.fail(f"trigger {trigger!r} does not compile: {exc}")
        return triggers


def _as_tuple(kind: type | tuple[type, ...]) -> tuple[type, ...]:
    return kind if isinstance(kind, tuple) else (kind,)


def _expand(pattern: str) -> str:
    """Replace {size}, {num}, {int} placeholders by their capture groups."""
    out = pattern
    for name, regex in PLACEHOLDERS.items():
        out = out.replace("{" + name + "}", regex)
    return out


def entries(file: str, data: Any, key: str) -> list[Entry]:
    if not isinstance(data, dict) or not isinstance(data.get(key), list):
        raise KnowledgeError(f"knowledge/{file}: top-level '{key}' list is missing")
    entries: list[Entry] = []
    seen: set[str] = set()
    for index, item in enumerate(data[key]):
        label = f"#{index + 1}"
        if isinstance(item, dict) and isinstance(item.get("id"), str):
            label = f"'{item['id']}'"
        entry = Entry(file, item, label)
        ident = entry.get("id", str, default=label)
        if ident in seen:
            entry.fail("duplicate id")
        seen.add(ident)
        entries.append(entry)
    return entries
