"""Literal gates (assistant/logs/gates.py): a pattern not yet compiled answers "no match"
on a line without one of its gate's literals, so a gate must hold every match. Checked on
crafted patterns, and for every pattern the classifier loads on every example line of
knowledge/ and every line of the fixture logs: gated and compiled answers agree."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from assistant.knowledge import knowledge_dir, load_yaml
from assistant.logs.gates import closed, derive_gate
from assistant.logs.lazyre import LazyPattern, union_gate
from assistant.logs.rules import load_rules
from assistant.logs.stage import stage_rules

FIXTURES = Path(__file__).parent / "fixtures" / "logs"
_WHOLE_TEXT = re.compile(r"\\[AZ]")  # anchors a joined text cannot stand for


@pytest.mark.parametrize(
    ("pattern", "gate"),
    [
        (r"CUDA out of memory", ("cuda out of memory",)),
        (r"(?i)out of memory\. Tried", ("out of memory. tried",)),
        (r"Tried to allocate [\d.]+ GiB", ("tried to allocate ",)),
        (r"\bNCCL error\b", ("nccl error",)),
        (r"(?:OutOfMemoryError|Cuda failure 2)", ("outofmemoryerror", "cuda failure 2")),
        (r"(?:memory|mem)\b", ("mem",)),  # the parser's own prefix factoring
        (r"(?:Killed|SIGKILL)?\s+exit", ("exit",)),  # an optional group requires nothing
        (r"(?:Killed|x)", None),  # a branch shorter than 3 keeps no line out
        (r"a[.]bc", ("a.bc",)),
        (r"(?:step ){2,}done", ("step ",)),  # the longer literal
        (r"(?:step ){0,3}", None),
        (r"[A-Z]\w+Error", ("error",)),
        (r"显存不足", ("显存不足",)),  # never on an ASCII line
        (r"(?:Killed|已杀死)\s*$", ("killed", "已杀死")),
        ("(?i)\u212aelvin", ("elvin",)),  # the Kelvin sign folds to k: no literal
        (r"Killed (?P<pid>\d+)", ("killed ",)),
        (r"(", None),  # not a pattern: no gate, the compile reports it
    ],
)
def test_derived_gates(pattern: str, gate: tuple[str, ...] | None) -> None:
    assert derive_gate(pattern) == gate


def test_an_ungated_pattern_is_not_compiled_for_a_line_without_its_literal() -> None:
    pattern = LazyPattern(r"Tried to allocate (\d+) MiB")
    assert pattern.search("step 3 loss=0.1") is None
    assert pattern._compiled is None
    found = pattern.search("Tried to allocate 20 MiB")
    assert found is not None and found.group(1) == "20"
    assert pattern._compiled is not None


def test_a_line_with_non_ascii_text_is_never_gated() -> None:
    assert not closed(("kelvin",), "\u212aelvin")  # the Kelvin sign folds to k
    assert re.search("(?i)kelvin", "\u212aelvin")
    assert closed(("kelvin",), "celsius")


def test_a_union_gate_holds_every_patterns_literals_or_none() -> None:
    patterns = [LazyPattern(r"exitcode: -9\b"), LazyPattern(r"(?:Killed|已杀死)$")]
    assert union_gate(patterns) == ("exitcode: -9", "killed", "已杀死")
    assert union_gate([*patterns, LazyPattern(r"\d+")]) is None  # one without a gate
    assert union_gate([]) is None


def test_the_kill_table_answers_on_a_line_no_spelling_can_match() -> None:
    kills = load_rules().kills
    assert kills.gate is not None
    assert kills.normalise("step 3 loss=0.12") is None
    fact = kills.normalise("worker 3 exited: Killed")
    assert fact is not None and fact.signal == "SIGKILL"


def _patterns(value: Any, seen: set[int]) -> Iterator[LazyPattern]:
    if id(value) in seen:
        return
    seen.add(id(value))
    if isinstance(value, LazyPattern):
        yield value
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for item in dataclasses.fields(value):
            yield from _patterns(getattr(value, item.name), seen)
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _patterns(item, seen)
    elif isinstance(value, tuple | list | frozenset | set):
        for item in value:
            yield from _patterns(item, seen)


def _examples(value: Any) -> Iterator[str]:
    if isinstance(value, Mapping):
        for key, item in value.items():
            if key in ("match", "no_match"):
                yield from ([item] if isinstance(item, str) else item or [])
            else:
                yield from _examples(item)
    elif isinstance(value, list):
        for item in value:
            yield from _examples(item)


def _lines() -> list[str]:
    lines: dict[str, None] = {}
    root = knowledge_dir()
    for path in sorted(root.rglob("*.yaml")):
        for example in _examples(load_yaml(path.relative_to(root).as_posix())):
            if isinstance(example, str):
                lines.update(dict.fromkeys(example.splitlines()))
    for path in sorted(FIXTURES.rglob("*.log")):
        lines.update(dict.fromkeys(path.read_text(encoding="utf-8", errors="replace").splitlines()))
    return list(lines)


def test_every_loaded_pattern_agrees_gated_and_compiled_on_every_known_line() -> None:
    stages, status, _before, _after = stage_rules()
    patterns = {(p.pattern, p.flags): p for p in _patterns((load_rules(), stages, status), set())}
    assert len(patterns) > 300
    lines = _lines()
    assert len(lines) > 1000
    lowered = [(line, line.lower()) for line in lines if line.isascii()]  # others: never gated
    gated = 0
    wrong: list[str] = []
    for text, flags in patterns:
        gate = derive_gate(text, flags)
        if gate is None:
            continue
        gated += 1
        compiled = re.compile(text, flags)
        shut = [line for line, lower in lowered if not any(map(lower.__contains__, gate))]
        # one search over the shut lines joined finds every match one of them holds (and
        # perhaps one across two lines, sorted out below); ^ and $ then mean a line's ends
        joined = re.compile(text, flags | re.MULTILINE)
        if not _WHOLE_TEXT.search(text) and not joined.search("\n".join(shut)):
            continue
        wrong += [f"{text!r} on {line!r}" for line in shut if compiled.search(line)]
    assert not wrong, "a gate keeps out a line its pattern matches:\n" + "\n".join(wrong[:10])
    assert gated > len(patterns) // 2  # most patterns have a gate
