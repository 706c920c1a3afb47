"""Where inside its phase the root failure happened (the sub-stage), and server status.

The patterns live in ``knowledge/stages.yaml``. The stage comes from the whole
traceback that ends at the failure (every frame, however deep), from the message
itself, and when the failure line has no traceback of its own, from the tracebacks
that end at other copies of the same message in the window (ranks print it again,
the RPC layer re-raises it). Only then are context lines before it consulted.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from assistant.errors import KnowledgeError
from assistant.knowledge import load_yaml
from assistant.logs.lazyre import LazyPattern, knowledge_patterns
from assistant.logs.phase import message_end, traceback_start
from assistant.logs.rules import Signature
from assistant.logs.windows import Window, WindowLine

MIN_TRACEBACK = 2  # fewer frames than this: look for a copy of the message with a traceback


@dataclass(frozen=True)
class StageRule:
    id: str
    phase: str
    name: dict[str, str]
    match: tuple[LazyPattern, ...]
    context: tuple[LazyPattern, ...] = ()


@dataclass
class StageResult:
    stage: str | None = None
    line: WindowLine | None = None  # the line that showed it
    status: dict[str, int | float] = field(default_factory=dict)


@cache
def stage_rules() -> tuple[tuple[StageRule, ...], tuple[tuple[str, LazyPattern], ...], int, int]:
    """(stages in precedence order, status-line patterns, lines searched before, after)."""
    data = load_yaml("stages.yaml") or {}
    compile_ = knowledge_patterns()
    try:
        stages = tuple(
            StageRule(
                id=item["id"],
                phase=item["phase"],
                name=dict(item["name"]),
                match=tuple(compile_(p) for p in item.get("match") or []),
                context=tuple(compile_(p) for p in item.get("context") or []),
            )
            for item in data.get("stages") or []
        )
        status = tuple((s["fact"], compile_(s["pattern"])) for s in data.get("status") or [])
    except (KeyError, TypeError, re.error) as exc:
        raise KnowledgeError(f"stages.yaml: {exc}") from None
    return stages, status, int(data.get("before_lines") or 400), int(data.get("after_lines") or 0)


def stage_name(stage: str | None, lang: str) -> str | None:
    """The stage's name in ``lang`` (English when missing), None for an unknown id."""
    for rule in stage_rules()[0]:
        if rule.id == stage:
            return rule.name.get(lang) or rule.name.get("en")
    return None


def stages_of(phase: str) -> list[str]:
    return [rule.id for rule in stage_rules()[0] if rule.phase == phase]


def find_stage(window: Window | None, phase: str, sig: Signature) -> StageResult:
    """The sub-stage of the failure at ``window.center`` in ``phase``, and status figures."""
    if window is None or not window.lines:
        return StageResult()
    rules, status_rules, reach, after_reach = stage_rules()
    lines = window.lines
    fail = window.center
    stream = lines[fail].clean.stream
    message = list(lines[fail : message_end(lines, fail, sig)])
    frames = _traceback(lines, fail, stream)
    if len(frames) < MIN_TRACEBACK:
        frames += _copies_tracebacks(lines, fail, sig)
    # a line without a prefix (a paste) may belong to any process around it
    before = [
        line
        for line in lines[max(0, fail - reach) : fail]
        if not stream or line.clean.stream in (stream, "")
    ]
    result = StageResult(status=_status(before, status_rules))
    candidates = [r for r in rules if r.phase == phase or phase == "unknown"]
    # an NCCL WARN or a C++ error line comes before the Python exception that reports
    # it: the few lines after the message belong to the same failure
    after = [
        line
        for line in lines[fail + len(message) : fail + len(message) + after_reach]
        if not stream or line.clean.stream in (stream, "")
    ]
    for searched in (message + frames, after):
        for rule in candidates:
            line = _first(rule.match, searched)
            if line is not None:
                result.stage, result.line = rule.id, line
                return result
    for rule in candidates:
        line = _last(rule.context, before)
        if line is not None:
            result.stage, result.line = rule.id, line
            return result
    return result


def _traceback(lines: Sequence[WindowLine], fail: int, stream: str) -> list[WindowLine]:
    start = traceback_start(lines, fail)
    return [line for line in lines[start:fail] if line.clean.stream in (stream, "")]


def _copies_tracebacks(lines: Sequence[WindowLine], fail: int, sig: Signature) -> list[WindowLine]:
    """Frames of the tracebacks that end at other copies of the failure message."""
    opening = [p for p in sig.patterns if p.search(lines[fail].text)][:1] or list(sig.patterns)
    found: list[WindowLine] = []
    for index, line in enumerate(lines):
        if index == fail or not any(p.search(line.text) for p in opening):
            continue
        found += _traceback(lines, index, line.clean.stream)
    return found


def _first(patterns: Sequence[LazyPattern], lines: Sequence[WindowLine]) -> WindowLine | None:
    for line in lines:
        if any(p.search(line.text) for p in patterns):
            return line
    return None


def _last(patterns: Sequence[LazyPattern], lines: Sequence[WindowLine]) -> WindowLine | None:
    for line in reversed(lines):
        if any(p.search(line.text) for p in patterns):
            return line
    return None


def _status(
    before: Sequence[WindowLine], rules: Sequence[tuple[str, LazyPattern]]
) -> dict[str, Any]:
    """Each status figure from the last line before the failure that states it."""
    found: dict[str, int | float] = {}
    for fact, pattern in rules:
        for line in reversed(before):
            match = pattern.search(line.text)
            if match is None:
                continue
            text = match.group(1)
            try:
                found[fact] = float(text) if "." in text else int(text)
            except ValueError:
                continue
            break
    return found
