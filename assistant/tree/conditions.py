"""The small condition language of ``knowledge/tree.yaml``.

A condition is a mapping ``{path: test}`` (all must hold), a list of conditions
(any must hold), or ``{all: [...]}`` / ``{any: [...]}`` / ``{not: condition}``.
A path names a value the ``Context`` can look up (``phase``, ``facts.server``,
``config.actor.gradient_checkpointing``, ``answer.multi_turn``, ...). A test is a
scalar (equals), a list (one of), or a mapping of operators:
``present``, ``eq``, ``ne``, ``in``, ``contains``, ``contains_any``, ``gt``,
``gte``, ``lt``, ``lte``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from assistant.errors import KnowledgeError
from assistant.knowledge import FrozenDict, FrozenList

Lookup = Callable[[str], Any]


def holds(condition: Any, lookup: Lookup) -> bool:
    if condition is None:
        return True
    if isinstance(condition, list):
        return any(holds(item, lookup) for item in answers_last(condition))
    if not isinstance(condition, Mapping):
        raise KnowledgeError(f"tree.yaml: a condition must be a mapping or list: {condition!r}")
    terms = list(condition.items())
    if asks(condition):
        terms.sort(key=lambda term: _term_asks(*term))
    for path, test in terms:
        if path == "all":
            ok = all(holds(item, lookup) for item in answers_last(test))
        elif path == "any":
            ok = any(holds(item, lookup) for item in answers_last(test))
        elif path == "not":
            ok = not holds(test, lookup)
        else:
            ok = passes(lookup(path), test)
        if not ok:
            return False
    return True


_ASKS: dict[int, tuple[Any, bool]] = {}


def asks(condition: Any) -> bool:
    """Whether deciding the condition may need a question's answer (an ``answer.ID`` path).

    Remembered per condition object (loaded knowledge is read-only; the object is kept
    with its verdict, so its id cannot be reused by another one).
    """
    known = _ASKS.get(id(condition))
    if known is not None and known[0] is condition:
        return known[1]
    verdict = _asks(condition)
    if isinstance(condition, FrozenDict | FrozenList):  # a plain one may still change
        _ASKS[id(condition)] = (condition, verdict)
    return verdict


def _asks(condition: Any) -> bool:
    if isinstance(condition, list):
        return any(asks(item) for item in condition)
    if isinstance(condition, Mapping):
        return any(_term_asks(path, test) for path, test in condition.items())
    return False


def _term_asks(path: str, test: Any) -> bool:
    return asks(test) if path in ("all", "any", "not") else str(path).startswith("answer.")


def answers_last(items: list[Any]) -> list[Any]:
    """Terms the log and config decide first, those that need an answer after them.

    ``all``/``any`` stop at the first term that settles them, so a question is only
    consulted (and asked) when what is known does not settle the condition,
    whatever order the terms are written in.
    """
    return sorted(items, key=asks) if any(asks(item) for item in items) else items


def same(actual: Any, expected: Any) -> bool:
    """Equality that forgives YAML spelling: "True"/true, "XCCL"/"xccl"."""
    if actual is None or expected is None:
        return actual is None and expected is None
    if isinstance(expected, bool) or isinstance(actual, bool):
        return str(actual).lower() == str(expected).lower()
    if isinstance(actual, str) or isinstance(expected, str):
        return str(actual).strip().lower() == str(expected).strip().lower()
    return bool(actual == expected)


def passes(value: Any, test: Any) -> bool:
    if isinstance(test, list):
        return any(same(value, option) for option in test)
    if not isinstance(test, Mapping):
        return same(value, test)
    return all(_operator(op, value, arg) for op, arg in test.items())


def _operator(op: str, value: Any, arg: Any) -> bool:
    if op == "present":
        return (value is not None) == bool(arg)
    if op == "eq":
        return same(value, arg)
    if op == "ne":
        return not same(value, arg)
    if op == "in":
        return any(same(value, option) for option in arg)
    if op in ("contains", "contains_any"):
        options = arg if isinstance(arg, list) else [arg]
        items = value if isinstance(value, list | tuple | set) else [value] if value else []
        if isinstance(value, str):
            return any(str(o).lower() in value.lower() for o in options)
        return any(same(item, o) for item in items for o in options)
    if op in ("gt", "gte", "lt", "lte"):
        if isinstance(value, bool) or not isinstance(value, int | float):
            return False
        return bool(
            {
                "gt": value > arg,
                "gte": value >= arg,
                "lt": value < arg,
                "lte": value <= arg,
            }[op]
        )
    raise KnowledgeError(f"tree.yaml: unknown condition operator '{op}'")
