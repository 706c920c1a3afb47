"""The small condition language of ``knowledge/tree.yaml``, as typed predicates.

A condition is written as a mapping ``{path: test}`` (all must hold), a list of
conditions (any must hold), or ``{all: [...]}`` / ``{any: [...]}`` / ``{not: condition}``.
A path names a value of the ``Context`` (``phase``, ``facts.server``,
``config.actor.gradient_checkpointing``, ``answer.multi_turn``, ...). A test is a
scalar (equals), a list (one of), or a mapping of operators: ``present``, ``eq``,
``ne``, ``in``, ``contains``, ``contains_any``, ``gt``, ``gte``, ``lt``, ``lte``.

The tree loader (``assistant/tree/rules.py``) parses each condition once into the
predicates below: a ``Term`` holds the function that reads its value from the
``Context`` (chosen by the path's head at load time) and its parsed ``Test``. Terms
the log and config decide come before those needing an answer, so a question is
only consulted (and asked) when what is known does not settle the condition.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from assistant.tree.context import Context

Getter = Callable[[Context], Any]


def same(actual: Any, expected: Any) -> bool:
    """Equality that forgives YAML spelling: "True"/true, "XCCL"/"xccl"."""
    if actual is None or expected is None:
        return actual is None and expected is None
    if isinstance(expected, bool) or isinstance(actual, bool):
        return str(actual).lower() == str(expected).lower()
    if isinstance(actual, str) or isinstance(expected, str):
        return str(actual).strip().lower() == str(expected).strip().lower()
    return bool(actual == expected)


# --- tests on one value -------------------------------------------------------------------


@dataclass(frozen=True)
class Equals:
    expected: Any

    def __call__(self, value: Any) -> bool:
        return same(value, self.expected)


@dataclass(frozen=True)
class OneOf:
    options: tuple[Any, ...]

    def __call__(self, value: Any) -> bool:
        return any(same(value, option) for option in self.options)


@dataclass(frozen=True)
class Present:
    wanted: bool

    def __call__(self, value: Any) -> bool:
        return (value is not None) == self.wanted


@dataclass(frozen=True)
class Negated:
    test: Equals | OneOf

    def __call__(self, value: Any) -> bool:
        return not self.test(value)


@dataclass(frozen=True)
class Contains:
    """A list holds one of the options; a string contains one (case-insensitive)."""

    options: tuple[Any, ...]

    def __call__(self, value: Any) -> bool:
        if isinstance(value, str):
            return any(str(o).lower() in value.lower() for o in self.options)
        items = value if isinstance(value, list | tuple | set) else [value] if value else []
        return any(same(item, o) for item in items for o in self.options)


@dataclass(frozen=True)
class Compare:
    op: str  # gt, gte, lt, lte
    bound: float

    def __call__(self, value: Any) -> bool:
        if isinstance(value, bool) or not isinstance(value, int | float):
            return False
        if self.op == "gt":
            return value > self.bound
        if self.op == "gte":
            return value >= self.bound
        if self.op == "lt":
            return value < self.bound
        return value <= self.bound


Check = Equals | OneOf | Present | Negated | Contains | Compare


@dataclass(frozen=True)
class Test:
    """Every operator of one test must pass."""

    checks: tuple[Check, ...]

    def __call__(self, value: Any) -> bool:
        return all(check(value) for check in self.checks)


# --- conditions -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Term:
    path: str  # as written, for messages
    get: Getter
    test: Test
    asks: bool  # an answer.ID path: deciding it may ask a question

    def holds(self, ctx: Context) -> bool:
        return self.test(self.get(ctx))


@dataclass(frozen=True)
class Group:
    """Every item must hold (``every``: a mapping, ``all:``), or one of them (a list, ``any:``)."""

    items: tuple[Condition, ...]  # the terms needing an answer last
    asks: bool
    every: bool

    def holds(self, ctx: Context) -> bool:
        items = (item.holds(ctx) for item in self.items)
        return all(items) if self.every else any(items)


@dataclass(frozen=True)
class Not:
    item: Condition
    asks: bool

    def holds(self, ctx: Context) -> bool:
        return not self.item.holds(ctx)


Condition = Term | Group | Not


def all_of(items: list[Condition]) -> Group:
    return Group(answers_last(items), any(item.asks for item in items), every=True)


def any_of(items: list[Condition]) -> Group:
    return Group(answers_last(items), any(item.asks for item in items), every=False)


def answers_last(items: list[Condition]) -> tuple[Condition, ...]:
    """Terms the log and config decide first, those that need an answer after them
    (a stable sort: the written order stays among each)."""
    return tuple(sorted(items, key=lambda item: item.asks))


ALWAYS: Condition = all_of([])  # no condition written
