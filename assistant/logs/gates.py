"""Literal gates of regexes: texts one of which every match must contain.

Compiling the few hundred rule regexes costs more than reading a small log, and most of
them never fire on it. A gate is derived from the pattern itself (Python's own regex
parser, ``re._parser``), so it needs no field in the data and cannot drift from the
pattern: a run of literal characters the pattern must match, or for an alternation one
such literal per branch. A lazily compiled pattern (``assistant/logs/lazyre.py``) is only
compiled once a line holds one of its gate's literals; on any other line it cannot match.

Gates are lower-cased and tested against the lower-cased line, which is exact for
case-sensitive patterns and for ``(?i)`` ones alike on ASCII text; a line with other
characters (where case folding has its surprises, e.g. the Kelvin sign) is never gated.
A literal may hold characters without case (Chinese): an ASCII line never holds them, so
``(?:Killed|已杀死)`` keeps out every ASCII line without "killed".

Deriving a gate parses the pattern (about half of what compiling costs), so the gates of
every pattern a run looked at are kept in the one cache (``assistant/cache.py``) and read
back by the next run.
"""

from __future__ import annotations

import atexit
import re
from re import _constants as sre  # type: ignore[attr-defined]
from re import _parser  # type: ignore[attr-defined]
from typing import Any

Gate = tuple[str, ...]
MIN_LITERAL = 3  # a gate whose shortest literal is shorter than this keeps no line out
CACHE_NAME = "regex-gates.json"

_ZERO_WIDTH = frozenset({sre.AT})
_REPEATS = frozenset({sre.MAX_REPEAT, sre.MIN_REPEAT, getattr(sre, "POSSESSIVE_REPEAT", None)})


def derive_gate(pattern: str, flags: int = 0) -> Gate | None:
    """Lower-case literals one of which every match of ``pattern`` contains, or None when
    the pattern has no such literals (an ASCII one needs MIN_LITERAL characters)."""
    try:
        parsed = _parser.parse(pattern, flags)
    except (re.error, RecursionError, OverflowError, TypeError, ValueError):
        return None
    gate = _sequence(list(parsed))
    return gate if gate and _strength(gate) >= MIN_LITERAL else None


def _strength(gate: Gate) -> int:
    """How rare the gate's commonest literal is on ASCII lines (one without case never
    occurs on them)."""
    return min(len(literal) if literal.isascii() else 1000 for literal in gate)


def _better(first: Gate | None, second: Gate | None) -> Gate | None:
    """The gate that keeps more lines out: stronger literals, then fewer of them."""
    if first is None or second is None:
        return first or second
    rank = (_strength(first), -len(first))
    return first if rank >= (_strength(second), -len(second)) else second


def _sequence(items: list[tuple[Any, Any]]) -> Gate | None:
    """Every item of a sequence is matched, one after the other: any run of literal
    characters is in the match, and so is what any one required item requires."""
    best: Gate | None = None
    run: list[str] = []
    for op, av in items:
        char = _literal_char(op, av)
        if char is not None:
            run.append(char)
            continue
        if op in _ZERO_WIDTH:  # anchors consume nothing: the run goes on
            continue
        best = _better(best, _run_gate(run))
        run = []
        best = _better(best, _item(op, av))
    return _better(best, _run_gate(run))


def _run_gate(run: list[str]) -> Gate | None:
    return ("".join(run).lower(),) if run else None


def _literal_char(op: Any, av: Any) -> str | None:
    """The character an item matches when it matches exactly one (ASCII, or without
    case, so no case folding under (?i) makes it match an ASCII one), else None."""
    if op is sre.IN and len(av) == 1 and av[0][0] is sre.LITERAL:
        op, av = av[0]  # [.] and the like
    if op is not sre.LITERAL:
        return None
    char = chr(av)
    return char if char.isascii() or char.lower() == char.upper() == char else None


def _item(op: Any, av: Any) -> Gate | None:
    """What one non-literal item requires of the text it matches."""
    if op is sre.SUBPATTERN:
        return _sequence(list(av[-1]))
    if op is getattr(sre, "ATOMIC_GROUP", None):
        return _sequence(list(av))
    if op in _REPEATS:
        low, _high, body = av
        return _sequence(list(body)) if low >= 1 else None
    if op is sre.BRANCH:
        literals: dict[str, None] = {}
        for branch in av[1]:
            gate = _sequence(list(branch))
            if gate is None:
                return None  # one branch requires nothing: neither does the alternation
            literals.update(dict.fromkeys(gate))
        return tuple(literals)
    return None  # classes, any character, lookarounds, back references: no literal


class GateTable:
    """Gates by pattern, read from the one cache and written back when a run added some."""

    def __init__(self) -> None:
        self._gates: dict[str, Gate | None] | None = None
        self._added = False

    def gate(self, pattern: str, flags: int = 0) -> Gate | None:
        gates = self._load()
        key = f"{flags}\0{pattern}" if flags else pattern
        if key in gates:
            return gates[key]
        gate = gates[key] = derive_gate(pattern, flags)
        if not self._added:
            self._added = True
            atexit.register(self.save)
        return gate

    def _load(self) -> dict[str, Gate | None]:
        if self._gates is None:
            from assistant.cache import read_json

            stored = read_json(CACHE_NAME)
            self._gates = {}
            if isinstance(stored, dict):
                for key, value in stored.items():
                    if value is None:
                        self._gates[key] = None
                    elif isinstance(value, list) and all(isinstance(v, str) and v for v in value):
                        self._gates[key] = tuple(value)
        return self._gates

    def save(self) -> None:
        """Keep the gates for the next run (a read-only cache only costs the parsing)."""
        from assistant.cache import write_json

        if self._gates is not None and self._added:
            write_json(CACHE_NAME, {k: list(v) if v else None for k, v in self._gates.items()})
            self._added = False

    def clear(self) -> None:
        """Forget what was read (tests that switch the cache folder)."""
        self._gates = None


GATES = GateTable()


_LOWER: dict[str, str | None] = {}  # a window's lines are gated by many patterns
_LOWER_MAX = 4096


def closed(gate: Gate | None, text: str) -> bool:
    """Whether ``gate`` shows that its pattern cannot match ``text``."""
    if gate is None:
        return False
    lower = _LOWER.get(text, "")
    if lower == "":
        if len(_LOWER) >= _LOWER_MAX:
            _LOWER.clear()
        lower = _LOWER[text] = text.lower() if text.isascii() else None
    return lower is not None and not any(map(lower.__contains__, gate))
