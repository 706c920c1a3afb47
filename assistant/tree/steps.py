"""What a patch step of ``knowledge/tree.yaml`` is, and what a value function gives back.

Kept apart from the functions themselves (``values``, ``memory_values``) and from the
table that names them (``functions``), so that each of those imports this module one
way and none of them imports another for its side effects.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # annotations only: context.py never imports this module's users
    from assistant.tree.context import Context


class NotApplicable(Exception):
    """A fix cannot apply to this config: ``reason`` is an id of tree.yaml's ``reasons``."""

    def __init__(self, reason: str, **text_vars: Any) -> None:
        super().__init__(reason)
        self.reason = reason
        self.text_vars = text_vars


@dataclass
class StepResult:
    patch: dict[str, Any] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)
    vars: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Step:
    """One patch step: ``{key, value}``, ``{key, fn}``, ``{fn}``, ``{env, fn|value}`` or
    ``{vars: fn}`` (``fn`` then names a function that only gives text variables)."""

    key: str = ""
    value: Any = None
    has_value: bool = False
    fn: str = ""
    env: str = ""
    vars_only: bool = False  # written ``vars: NAME``
    ask: bool = False  # the function may ask its question (optimizer_memory)


ValueFn = Callable[["Context", Step, Mapping[str, Any]], StepResult]


@dataclass(frozen=True)
class ValueFunction:
    """A named value function with what it may give the texts: its variables and the
    ``reasons`` ids it may raise (the tree loader holds tree.yaml's texts to both)."""

    name: str
    run: ValueFn
    vars: frozenset[str]
    reasons: frozenset[str]

    def __call__(self, ctx: Context, step: Step, so_far: Mapping[str, Any]) -> StepResult:
        return self.run(ctx, step, so_far)


def value_fn(
    name: str, vars: tuple[str, ...] = (), reasons: tuple[str, ...] = ()
) -> Callable[[ValueFn], ValueFunction]:
    """Declare a value function; ``assistant/tree/functions.py`` collects the declared ones."""

    def declare(func: ValueFn) -> ValueFunction:
        return ValueFunction(name, func, frozenset(vars), frozenset(reasons))

    return declare
