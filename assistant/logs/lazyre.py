"""Regular expressions compiled on first use.

The rule files hold several hundred regexes; compiling them all costs more than
reading a small log. Once a set of rule files has been validated (every pattern
compiled once, the verdict cached per file content), later runs compile only the
patterns that a line actually reaches, and only once a line holds one of the literals
every match of the pattern contains (its gate, ``assistant/logs/gates.py``): on other
lines the pattern cannot match, so it answers "no match" without being compiled.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from assistant.logs.gates import GATES, Gate, closed

_UNKNOWN: Any = object()
GATED_CALLS = 256  # a pattern asked this often is compiled: its search is then cheaper


class LazyPattern:
    """``re.compile(pattern, flags)`` on first use; the common methods of re.Pattern."""

    __slots__ = ("_calls", "_compiled", "_gate", "flags", "pattern")

    def __init__(
        self, pattern: str, compiled: re.Pattern[str] | None = None, flags: int = 0
    ) -> None:
        self.pattern = pattern
        self.flags = flags
        self._compiled = compiled
        self._gate: Gate | None = _UNKNOWN
        self._calls = 0

    def compiled(self) -> re.Pattern[str]:
        if self._compiled is None:
            self._compiled = re.compile(self.pattern, self.flags)
        return self._compiled

    def gate(self) -> Gate | None:
        """The literals one of which every match contains (None: no such literals)."""
        if self._gate is _UNKNOWN:
            self._gate = GATES.gate(self.pattern, self.flags)
        return self._gate

    def _shut(self, string: str) -> bool:
        """Not compiled yet, and ``string`` lacks every literal a match needs. Checking
        the gate costs a little each time, compiling once: a pattern asked GATED_CALLS
        times (a kill spelling on every line of 128 rank logs) is compiled instead."""
        if self._compiled is not None:
            return False
        self._calls += 1
        return self._calls <= GATED_CALLS and closed(self.gate(), string)

    def search(self, string: str, *args: int) -> re.Match[str] | None:
        compiled = self._compiled  # the hot path: one attribute, no call, once compiled
        if compiled is None:
            if self._shut(string):
                return None
            compiled = self.compiled()
        return compiled.search(string, *args)

    def match(self, string: str, *args: int) -> re.Match[str] | None:
        compiled = self._compiled
        if compiled is None:
            if self._shut(string):
                return None
            compiled = self.compiled()
        return compiled.match(string, *args)

    def finditer(self, string: str, *args: int) -> Iterator[re.Match[str]]:
        if self._shut(string):
            return iter(())
        return self.compiled().finditer(string, *args)

    def sub(self, repl: Any, string: str, count: int = 0) -> str:
        if self._shut(string):
            return string
        return self.compiled().sub(repl, string, count)

    def split(self, string: str) -> list[str | Any]:
        if self._shut(string):
            return [string]
        return self.compiled().split(string)

    def findall(self, string: str) -> list[Any]:
        if self._shut(string):
            return []
        return self.compiled().findall(string)

    @property
    def groups(self) -> int:
        return self.compiled().groups

    def __repr__(self) -> str:
        return f"LazyPattern({self.pattern!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LazyPattern) and other.pattern == self.pattern

    def __hash__(self) -> int:
        return hash(self.pattern)


def union_gate(patterns: Iterable[LazyPattern]) -> Gate | None:
    """The literals one of which a match of any of ``patterns`` holds (None when one of
    them has no gate): a line that fails it needs none of them tried."""
    literals: dict[str, None] = {}
    for pattern in patterns:
        gate = pattern.gate()
        if gate is None:
            return None
        literals.update(dict.fromkeys(gate))
    return tuple(literals) or None


def knowledge_patterns() -> Callable[[str], LazyPattern]:
    """How to compile a knowledge file's patterns that its own loader does not check
    (stages.yaml, memory.yaml): on first use (and on a line holding their gate's
    literal) once the knowledge passed validation, else at once, so that a broken one
    fails at load with the validator's message rather than on some later line."""
    from assistant.cache import KNOWLEDGE_VALID, has_stamp

    if has_stamp(KNOWLEDGE_VALID):
        return LazyPattern
    return lambda pattern: LazyPattern(pattern, re.compile(pattern))


def lazy(pattern: str, flags: int = 0) -> LazyPattern:
    """A module-level regex compiled when first used (modules whose patterns only some
    inputs reach, e.g. the paste repairs that big logs never need)."""
    return LazyPattern(pattern, flags=flags)
