"""Every spelling of a process killed by a signal, read as one fact.

signatures.yaml ``kills`` holds one table: the signals (name, number, the words
strsignal() and shells print for them) and the spellings a log uses for a death by
one of them (torchrun's ``exitcode: -9``, a shell's ``exit code 137`` and ``Killed``,
Python's ``<Signals.SIGKILL: 9>``, DeepSpeed's ``return code = -9``, ``被kill掉`` ...).
A spelling is a regex with placeholders filled per signal:

  {name}   the name without its SIG prefix (KILL)
  {num}    the number (9)
  {shell}  128 + the number, a shell's exit status (137)
  {word}   the signal's words, as an alternation (Killed|已杀死)

A rule elsewhere (a signature, a look-alike, a cascade event) names signals and
roles under ``kill:`` and gets every spelling of them as patterns; ``normalise``
turns a line into the (signal, number) it reports.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from assistant.logs.gates import Gate, closed
from assistant.logs.lazyre import LazyPattern, union_gate
from assistant.logs.schema import Entry

# a process's exit report / a shell's word for it / a reporter's sentence / a kill sent
ROLES = ("exit", "word", "prose", "sender")
FILE = "signatures.yaml"


@dataclass(frozen=True)
class Signal:
    name: str  # SIGKILL
    number: int
    words: tuple[str, ...]


@dataclass(frozen=True)
class Spelling:
    id: str
    role: str
    signals: tuple[str, ...]  # the signals it is written for (all when the table says so)
    patterns: Mapping[str, tuple[LazyPattern, ...]]  # per signal name, placeholders filled
    triggers: Mapping[str, tuple[str, ...]]


@dataclass(frozen=True)
class KillFact:
    signal: str
    number: int
    role: str
    spelling: str
    start: int


@dataclass(frozen=True)
class KillTable:
    signals: tuple[Signal, ...]
    spellings: tuple[Spelling, ...]

    def select(
        self, signals: tuple[str, ...], roles: tuple[str, ...]
    ) -> tuple[tuple[LazyPattern, ...], tuple[str, ...]]:
        """The patterns and triggers of every spelling of ``signals`` in ``roles``."""
        patterns: list[LazyPattern] = []
        triggers: dict[str, None] = {}
        for spelling in self.spellings:
            if spelling.role not in roles:
                continue
            for name in signals:
                patterns += spelling.patterns.get(name, ())
                for trigger in spelling.triggers.get(name, ()):
                    triggers.setdefault(trigger, None)
        return tuple(patterns), tuple(triggers)

    @cached_property
    def gate(self) -> Gate | None:
        """Literals one of which any spelling's match holds (see assistant/logs/gates.py)."""
        return union_gate(p for s in self.spellings for ps in s.patterns.values() for p in ps)

    def normalise(self, text: str, roles: tuple[str, ...] = ROLES) -> KillFact | None:
        """The first (leftmost) kill ``text`` reports, whatever its spelling."""
        if closed(self.gate, text):  # no spelling can match: one test, not one per pattern
            return None
        best: KillFact | None = None
        numbers = {s.name: s.number for s in self.signals}
        for spelling in self.spellings:
            if spelling.role not in roles:
                continue
            for name, patterns in spelling.patterns.items():
                for pattern in patterns:
                    found = pattern.search(text)
                    if found and (best is None or found.start() < best.start):
                        best = KillFact(
                            name, numbers[name], spelling.role, spelling.id, found.start()
                        )
        return best


def _fill(template: str, signal: Signal) -> str:
    words = "|".join(re.escape(w) for w in signal.words)
    return (
        template.replace("{name}", signal.name.removeprefix("SIG"))
        .replace("{num}", str(signal.number))
        .replace("{shell}", str(128 + signal.number))
        .replace("{word}", f"(?:{words})")
    )


def _fill_trigger(template: str, signal: Signal) -> tuple[str, ...]:
    if "{word}" in template:
        return tuple(template.replace("{word}", re.escape(w)) for w in signal.words)
    return (_fill(template, signal),)


def load_kills(data: Any) -> KillTable:
    """The ``kills`` table of signatures.yaml, checked (names, roles, placeholders)."""
    top = Entry(FILE, data, "(top level)")
    table = Entry(FILE, top.get("kills", dict), "'kills'").only("signals", "spellings")
    signals: list[Signal] = []
    for name, spec in table.get("signals", dict).items():
        entry = Entry(FILE, spec, f"kills.signals.{name}").only("number", "words")
        if not isinstance(name, str) or not re.fullmatch(r"SIG[A-Z]+", name):
            entry.fail("a signal is named SIGXXX")
        number = entry.get("number", int, check=lambda n: 0 < n < 64)
        signals.append(Signal(name, number, entry.strings("words", required=True)))
    by_name = {s.name: s for s in signals}
    spellings: list[Spelling] = []
    raw = table.get("spellings", list)
    for index, spec in enumerate(raw):
        label = f"kills.spellings '{spec.get('id', index)}'" if isinstance(spec, dict) else "#"
        entry = Entry(FILE, spec, label).only(
            "id", "role", "signals", "patterns", "triggers", "match", "no_match"
        )
        role = entry.get("role", str, check=lambda r: r in ROLES)
        names = entry.strings("signals") or tuple(by_name)
        for name in names:
            if name not in by_name:
                entry.fail(f"unknown signal '{name}'")
        templates = entry.strings("patterns", required=True)
        trigger_templates = entry.strings("triggers", required=True)
        patterns = {
            name: tuple(entry.compile(_fill(t, by_name[name])) for t in templates) for name in names
        }
        triggers = {
            name: tuple(t for tt in trigger_templates for t in _fill_trigger(tt, by_name[name]))
            for name in names
        }
        spellings.append(Spelling(entry.get("id", str), role, names, patterns, triggers))
    return KillTable(tuple(signals), tuple(spellings))


def kill_spec(entry: Entry, table: KillTable) -> tuple[tuple[LazyPattern, ...], tuple[str, ...]]:
    """A rule's ``kill: {signals: [...], roles: [...]}``: its patterns and triggers."""
    raw = entry.get("kill", dict, None)
    if raw is None:
        return (), ()
    spec = Entry(entry.file, raw, f"{entry.label} 'kill'").only("signals", "roles")
    known = {s.name for s in table.signals}
    names = spec.strings("signals", required=True)
    roles = spec.strings("roles", required=True)
    for name in names:
        if name not in known:
            entry.fail(f"kill: unknown signal '{name}'")
    for role in roles:
        if role not in ROLES:
            entry.fail(f"kill: unknown role '{role}' (known: {', '.join(ROLES)})")
    return table.select(names, roles)
