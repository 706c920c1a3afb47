"""Decide the phase of a failure from the frames and lines around it.

Scores come from the frame vocabulary (knowledge/vocabulary/: the generic core's
words and the per-framework entries); this module only cuts the window into scopes
(the failure line, its traceback, the lines before and after it) and adds up the
weights. Framework entries decide when they reach the bar; the core's words decide
what they leave open. The phase is never read from a file name.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, cast

from assistant.logs.lines import CleanLine
from assistant.logs.rules import SCOPES, PhaseConfig, PhasePattern, Signature
from assistant.logs.vocabulary import (
    decay,
    has_name_inside,
    has_phrase,
    has_words,
    line_role,
    line_words,
)
from assistant.logs.windows import Window, WindowLine
from assistant.models import Phase

MAX_TRACEBACK_LINES = 600

_FRAME = re.compile(
    r"""^\s*(?:File\s+"|Traceback \(most recent call last\)|\^[\^~\s]*$|~+\^*"""
    r"""|\[Previous line repeated"""
    r"""|During handling of the above exception|The above exception was the direct cause"""
    r"""|frame\s+#\d+|Exception raised from|\(most recent call first\)"""
    r"""|(?:\.\.\.|'{3}|"{3})\s*$|\s*$)"""
)
_FILE = re.compile(r'^\s*File\s+"|^\s*File .*, line \d+')
_EXCEPTION = re.compile(r"^\s*(?:[\w.]+\.)?[A-Z]\w*(?:Error|Exception|Exit)\b")
# an exception of any name whose message ends with a colon: the cause follows on the
# next line (torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:)
_WRAPPER = re.compile(r"^\s*(?:[\w.]+\.)?[A-Z]\w+:\s.*:\s*$")


@dataclass(frozen=True)
class Fired:
    pattern: PhasePattern
    scope: str
    line: WindowLine | None  # None when it fired on another copy of the message
    score: float


@dataclass
class PhaseResult:
    phase: Phase
    scores: dict[str, float]
    fired: list[Fired] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    facts: dict[str, Any] = field(default_factory=dict)
    margin: float = 0.0  # best score minus the runner-up
    # phase unknown, yet some evidence points one way: the plan to offer first
    leaning: Phase | None = None


def traceback_start(lines: Sequence[WindowLine], fail: int) -> int:
    """Index of the first line of the traceback that ends at ``fail``."""
    stream = lines[fail].clean.stream
    start = fail
    index = fail - 1
    while index >= 0 and fail - index <= MAX_TRACEBACK_LINES:
        line = lines[index]
        if line.clean.stream != stream:
            index -= 1
            continue
        text = line.text
        previous = lines[index - 1].text if index > 0 else ""
        is_code = bool(_FILE.match(previous)) and bool(text.strip())
        chained = (
            (_EXCEPTION.match(text) or _WRAPPER.match(text))
            and index + 1 < len(lines)
            and (
                _FRAME.match(lines[index + 1].text)
                # a wrapper whose message goes on with the cause on the next line
                # (torch._dynamo's "BackendCompilerFailed: backend='inductor' raised:")
                or (index + 1 == fail and bool(_WRAPPER.match(text)))
            )
        )
        if _FRAME.match(text) or is_code or _FILE.match(text) or chained:
            start = index
            if text.lstrip().startswith("Traceback (most recent call last)") and not _chain_above(
                lines, index
            ):
                break
            index -= 1
            continue
        break
    return start


def _chain_above(lines: Sequence[WindowLine], index: int) -> bool:
    """True when the lines just above a traceback header join it to an earlier one."""
    for back in range(index - 1, max(-1, index - 4), -1):
        text = lines[back].text
        if "During handling of the above exception" in text or "direct cause" in text:
            return True
        if text.strip():
            return False
    return False


def message_end(lines: Sequence[WindowLine], fail: int, sig: Signature) -> int:
    """Index after the last line of the message that starts at ``fail``.

    A message may continue on up to ``sig.lines`` lines (wrapped, or printed
    over several lines), but not into a new log record (a line with its own
    timestamp), another process's line, or a repeat of the same message (the
    RPC layer and the controller print it again right below). A record stamped with the
    failure line's own time goes on with it (the kernel's OOM-killer report is several
    syslog records of one second)."""
    stream = lines[fail].clean.stream
    stamp = lines[fail].clean.ts_key
    opening = [p for p in sig.patterns if p.search(lines[fail].text)][:1]
    end = fail + 1
    while end < min(len(lines), fail + sig.lines):
        clean = lines[end].clean
        new_record = clean.ts_key is not None and clean.ts_key != stamp
        if new_record or (clean.stream and clean.stream != stream):
            break
        if any(p.search(clean.text) for p in opening):
            break
        end += 1
    return end


def _scopes(
    window: Window, fail: int, sig: Signature, config: PhaseConfig
) -> dict[str, list[WindowLine]]:
    lines = window.lines
    stream = lines[fail].clean.stream
    # a line without a prefix (a paste) may belong to any process around it, and the
    # ranks of one job run the same code: rank 1's frames say where rank 0 was too
    same = [i for i, line in enumerate(lines) if _same_job(stream, line.clean.stream)]
    tb_start = traceback_start(lines, fail)
    msg_start, msg_end = fail, message_end(lines, fail, sig)
    before = [lines[i] for i in same if i < tb_start][-config.before_lines :]
    after = [lines[i] for i in same if i >= msg_end][: config.after_lines]
    if not any(_FILE.match(lines[i].text) for i in range(tb_start, fail)):  # no frames above
        fail, tb_start = _repeat_with_traceback(lines, fail, msg_end, sig, len(lines))
        stream = lines[fail].clean.stream  # a paste's own line may be repeated by a rank
    traceback = [lines[i] for i in range(tb_start, fail) if lines[i].clean.stream == stream]
    message = list(lines[msg_start:msg_end])
    if stream:  # the process name itself ("(SGLangHttpServer pid=1)") tells where it ran
        message.append(WindowLine(lines[fail].number, CleanLine(stream)))
    return {
        "line": message,
        "traceback": traceback,
        "before": before,
        "after": after,
    }


_RANK_STREAM = re.compile(r"^rank\d+$")


def _same_job(stream: str, other: str) -> bool:
    """Whether a line of ``other`` can tell where the process ``stream`` was."""
    if not stream or other in (stream, ""):
        return True
    return bool(_RANK_STREAM.match(stream)) and bool(_RANK_STREAM.match(other))


def _repeat_with_traceback(
    lines: Sequence[WindowLine], fail: int, msg_end: int, sig: Signature, reach: int
) -> tuple[int, int]:
    """(line, traceback start) of a later repeat of the message that ends a traceback.

    A native library often logs the failure first (glog, NCCL WARN) and Python
    raises the same message a few lines later with the stack that says where it
    ran; a report's title may quote the error above the rank's traceback. Without such
    a repeat the failure line itself is returned (no traceback)."""
    stream = lines[fail].clean.stream
    opening = [p for p in sig.patterns if p.search(lines[fail].text)][:1]
    # a line without a prefix (a paste, a title quoting the error) may be repeated by any
    # process; a process's line first by itself, else by another rank of the same job
    # (ranks run the same code: a sibling's traceback of the same error says where)
    passes = (False, True) if stream else (True,)
    for any_stream in passes:
        for index in range(msg_end, min(len(lines), fail + reach)):
            if not any_stream and lines[index].clean.stream != stream:
                continue
            if any(p.search(lines[index].text) for p in opening):
                start = traceback_start(lines, index)
                if start < index:
                    return index, start
    return fail, fail


def score_phase(
    window: Window,
    fail: int,
    sig: Signature,
    config: PhaseConfig,
    other_copies: Sequence[str] = (),
) -> PhaseResult:
    """Phase of the failure at ``window.lines[fail]``."""
    scopes = _scopes(window, fail, sig, config)
    scores: dict[str, float] = dict.fromkeys(("generation", "training", "weight_update"), 0.0)
    scores.update({"model_loading": 0.0, "host_memory": 0.0})
    fired: list[Fired] = []
    readings = _readings(scopes, config)
    for pattern in config.patterns:
        if pattern.generic:
            best = _best_generic(pattern, readings)
        else:
            best = _best_scope(pattern, scopes, config, other_copies)
        if best is not None:
            fired.append(best)
    fired = _absorbed(fired)
    # lean-only entries say which way the paste leans, never which phase it shows
    leaning_only = [f for f in fired if f.pattern.lean_only]
    fired = [f for f in fired if not f.pattern.lean_only]
    framework = dict(scores)
    for name, score in _line_scores([f for f in fired if not f.pattern.generic]).items():
        framework[name] += score
    for name, score in _line_scores(fired).items():
        scores[name] += score
    for name, weight in sig.phase_hints.items():
        scores[name] = scores.get(name, 0.0) + float(weight)
        framework[name] = framework.get(name, 0.0) + float(weight)
    # the framework entries decide when they reach the bar; the generic core's words
    # decide only what they leave open (frames outweigh words)
    shown = max(framework.values(), default=0.0) >= config.min_score
    # tags and facts come from every entry that fired, the framework's first
    noted = sorted(fired, key=lambda f: (f.pattern.generic, -f.score))
    if shown:
        scores = framework
        fired = [f for f in fired if not f.pattern.generic]
    ranked = sorted(scores.items(), key=lambda kv: -kv[1])
    (top, top_score), runner = ranked[0], ranked[1][1] if len(ranked) > 1 else 0.0
    bar, margin = (config.min_score, 0.0) if shown else (config.core_min_score, config.core_margin)
    decided = top_score >= bar and top_score - runner >= margin
    phase: Phase = cast(Phase, top) if decided else "unknown"
    fired.sort(key=lambda f: -f.score)
    tags: list[str] = []
    facts: dict[str, Any] = {}
    for item in noted:
        for tag in item.pattern.tags:
            if tag not in tags:
                tags.append(tag)
        for key, value in item.pattern.facts.items():
            facts.setdefault(key, value)
    leaning = _leaning(phase, scores, leaning_only, config)
    return PhaseResult(phase, scores, fired, tags, facts, top_score - runner, leaning)


def _leaning(
    phase: Phase, scores: dict[str, float], leaning_only: list[Fired], config: PhaseConfig
) -> Phase | None:
    """Phase unknown: the phase its evidence (lean-only entries too) points to, if any."""
    if phase != "unknown":
        return None
    totals = dict(scores)
    for name, score in _line_scores(leaning_only).items():
        totals[name] = totals.get(name, 0.0) + score
    ranked = sorted(totals.items(), key=lambda kv: -kv[1])
    (top, top_score), runner = ranked[0], ranked[1][1] if len(ranked) > 1 else 0.0
    leans = top_score >= config.core_lean_score and top_score > runner
    return cast(Phase, top) if leans else None


def _absorbed(fired: list[Fired]) -> list[Fired]:
    """Evidence that counts for another phase because an entry that absorbs it fired
    (``absorbs`` in the vocabulary)."""
    # an entry cancels the listed entries' evidence in the scopes it reads itself
    cancelled = {(c, scope) for f in fired for c in f.pattern.cancels for scope in f.pattern.where}
    fired = [f for f in fired if (f.pattern.id, f.scope) not in cancelled]
    into = {a: f.pattern.phase for f in fired for a in f.pattern.absorbs}
    if not into:
        return fired
    return [
        replace(f, pattern=replace(f.pattern, phase=into[f.pattern.id]))
        if f.pattern.id in into
        else f
        for f in fired
    ]


def _line_scores(fired: Sequence[Fired]) -> dict[str, float]:
    """Score per phase, each line counted once: two patterns of one phase that fire
    on the same frame are one piece of evidence (its best weight counts)."""
    best: dict[tuple[str, str, object], float] = {}
    for item in fired:
        where = item.line.number if item.line is not None else item.pattern.id
        key = (item.pattern.phase, item.scope, where)
        best[key] = max(best.get(key, 0.0), item.score)
    totals: dict[str, float] = {}
    for (phase, _scope, _where), score in best.items():
        totals[phase] = totals.get(phase, 0.0) + score
    return totals


def _best_scope(
    pattern: PhasePattern,
    scopes: dict[str, list[WindowLine]],
    config: PhaseConfig,
    other_copies: Sequence[str],
) -> Fired | None:
    best: Fired | None = None
    for scope in SCOPES:
        if scope not in pattern.where:
            continue
        factor = float(config.scope_factor[scope])
        if best is not None and best.score >= pattern.weight * factor:
            continue
        hit = _first(pattern, scopes[scope], scope)
        if hit is not None:
            best = Fired(pattern, scope, hit, pattern.weight * factor)
        elif scope == "line" and any(fires(pattern, t) for t in other_copies):
            best = Fired(pattern, scope, None, pattern.weight * factor)
    return best


def fires(pattern: PhasePattern, text: str) -> bool:
    """Whether one vocabulary entry fires on one line (its regex, words or phrases)."""
    if pattern.regex is not None and pattern.regex.search(text):
        return True
    if pattern.words and has_words(line_words(text), pattern.words):
        return True
    if pattern.inside and has_name_inside(text, pattern.words):
        return True
    return bool(pattern.phrases) and has_phrase(text, pattern.phrases)


@dataclass(frozen=True)
class _Reading:
    """One line of a scope as the core entries weigh it, worked out once per window."""

    line: WindowLine
    share: float  # distance decay
    role_factor: float | None  # the line's role; None for a quiet line (no word evidence)


def _readings(
    scopes: dict[str, list[WindowLine]], config: PhaseConfig
) -> dict[str, list[_Reading]]:
    """Each scope's lines in search order ("before" nearest first) with their decay and
    role factor: every core entry reads the same lines, so this is done once."""
    out: dict[str, list[_Reading]] = {}
    for scope in SCOPES:
        lines = scopes[scope]
        ordered = list(reversed(lines)) if scope == "before" else lines
        lines_decay = float(config.decay_lines.get(scope, 0.0))
        head = lines[0].number if lines else None
        readings: list[_Reading] = []
        for distance, line in enumerate(ordered):
            share = decay(distance, lines_decay) if scope in ("before", "after") else 1.0
            factor: float | None = None
            if not any(q.search(line.text) for q in config.quiet):
                # the failure line (and the process that printed it) is the message; the
                # lines a message runs on to are read for what they are (a user's prose)
                kind = "after" if scope == "line" and line.number != head else scope
                role = line_role(line.text, kind, line.clean.ts_key is not None)
                factor = float(config.role_factor[role])
            readings.append(_Reading(line, share, factor))
        out[scope] = readings
    return out


def _best_generic(pattern: PhasePattern, readings: dict[str, list[_Reading]]) -> Fired | None:
    """A core entry on its best line: weight x the line's role x its distance decay. A
    line shape (a regex) counts what the line is, whoever wrote it; words on a quiet line
    (a package list, a test report) are no evidence."""
    best: Fired | None = None
    for scope in SCOPES:
        if scope not in pattern.where:
            continue
        for reading in readings[scope]:
            factor = 1.0 if pattern.regex is not None else reading.role_factor
            if factor is None:
                continue
            score = pattern.weight * factor * reading.share
            if best is not None and score <= best.score:
                continue
            if fires(pattern, reading.line.text):
                best = Fired(pattern, scope, reading.line, score)
    return best


def _first(pattern: PhasePattern, lines: list[WindowLine], scope: str) -> WindowLine | None:
    # in "before", the nearest line counts; elsewhere the first (outermost frame)
    ordered = reversed(lines) if scope == "before" else lines
    for line in ordered:
        if fires(pattern, line.text):
            return line
    return None
