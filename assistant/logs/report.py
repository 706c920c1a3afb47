"""Assemble the LogReport: root finding, evidence, metrics, facts, cascade, confidence.

The report is built once, by ``assemble``, from its parts: the ``Verdict`` of one of
the three readings (a memory failure, none, a user's description) and the ``Reading``
of the whole input. What used to be decided afterwards (an unproven kill's confidence,
a description's phase, the kill signal, other processes on the GPU) are steps here,
worked out before anything is built; nothing is changed once made.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, cast

from assistant.logs.classify import Analysed, Collected, first_in_time
from assistant.logs.group import in_time_order
from assistant.logs.infer import derive_metrics, inferences, model_params_b
from assistant.logs.match import Hit
from assistant.logs.rules import Rules
from assistant.logs.stage import find_stage
from assistant.logs.windows import Window
from assistant.models import (
    NO_METRICS,
    Consequence,
    Evidence,
    Finding,
    Kind,
    Lang,
    LogFacts,
    LogReport,
    Metrics,
    Notice,
    Phase,
    frozen_metrics,
)

EVIDENCE_CHARS = 600
MATCH_LEAD = 80  # characters kept before the match when a long line is cut
CONTEXT_LINES = 3
MAX_PHASE_EVIDENCE = 4
EXPLAIN_LINES = 12

TsOf = Callable[[Hit], "tuple[float, ...] | None"]
LineMap = Callable[[int], int]


@dataclass(frozen=True)
class Names:
    """The input's file names, by source index, and the user's own line numbers for a
    source read from a repaired copy of a paste (``paste.Repaired.original_line``)."""

    files: tuple[str, ...]
    line_maps: Mapping[int, LineMap] = field(default_factory=dict)

    def at(self, source: int, line: int) -> tuple[str, int]:
        """(file name, line number) as the user sees them."""
        remap = self.line_maps.get(source)
        return self.files[source], remap(line) if remap is not None else line


@dataclass(frozen=True)
class Verdict:
    """What one reading concluded, before the input-wide parts join it."""

    oom: bool
    phase: Phase
    kind: Kind
    confidence: float
    evidence: tuple[Evidence, ...]
    facts: LogFacts
    findings: tuple[Finding, ...] = ()
    consequences: tuple[Consequence, ...] = ()
    first_error: Evidence | None = None
    metrics: Metrics = field(default_factory=lambda: NO_METRICS)
    stage: str | None = None
    input_kind: str = "log"
    # the language of a description (input_kind "description"; a one-line paste whose
    # words gave the phase and that has no figures is one too, and keeps "en"); a log's
    # comes from the Reading
    language: Lang = "en"


@dataclass(frozen=True)
class Reading:
    """What the whole input says beside the failure, the same for every verdict."""

    files: tuple[str, ...]
    notices: tuple[Notice, ...]
    lines_read: int
    language: Lang  # of the log's text
    unread: tuple[str, ...] = ()
    # lines that held a rule's trigger and were not read: past the candidate cap of a
    # range (scan.MAX_CANDIDATES), between its first and its last lines
    lines_unread: int = 0


@dataclass(frozen=True)
class Others:
    """Other processes' memory on the failing GPU (nvidia-smi in the failing file)."""

    ranks_share_gpu: bool = False
    bytes_and_count: tuple[int, int] | None = None
    strangers: bool = False  # from a --query-compute-apps CSV: no GPU index, a tag only


def assemble(
    verdict: Verdict, reading: Reading, kill: LogFacts, others: Others | None = None
) -> LogReport:
    """The one place a LogReport is made: the verdict, the input's parts, and the facts
    the steps found (``kill``: the kill signal; ``others``: for a memory failure)."""
    facts = LogFacts(**verdict.facts)
    facts.update(kill)
    metrics = verdict.metrics
    if others is not None:
        if others.ranks_share_gpu:
            facts["ranks_share_gpu"] = True
        if others.bytes_and_count is not None:
            found = others.bytes_and_count
            metrics = frozen_metrics(
                {**metrics, "other_processes_bytes": found[0], "other_processes_count": found[1]}
            )
        tags = list(facts.get("signature_tags") or [])
        if others.strangers and "other_processes" not in tags:
            facts["signature_tags"] = [*tags, "other_processes"]
    return LogReport(
        oom=verdict.oom,
        phase=verdict.phase,
        kind=verdict.kind,
        confidence=verdict.confidence,
        evidence=verdict.evidence,
        metrics=metrics,
        inferences=inferences(metrics) if verdict.oom else (),
        findings=verdict.findings,
        consequences=verdict.consequences,
        first_error=verdict.first_error,
        facts=facts,
        stage=verdict.stage,
        language=reading.language if verdict.input_kind == "log" else verdict.language,
        files=reading.files,
        lines_read=reading.lines_read,
        input_kind=verdict.input_kind,
        unread=reading.unread,
        lines_unread=reading.lines_unread,
        notices=reading.notices,
    )


def _cap(text: str) -> str:
    return text if len(text) <= EVIDENCE_CHARS else text[: EVIDENCE_CHARS - 3] + "..."


def _around_match(hit: Hit) -> str:
    """The line, capped; a long line is shown from just before what the rule matched."""
    text = hit.text
    if hit.start + EVIDENCE_CHARS // 2 <= EVIDENCE_CHARS:
        return _cap(text.strip())
    return _cap("..." + text[max(0, hit.start - MATCH_LEAD) :].strip())


def hit_evidence(hit: Hit, names: Names, role: str = "failure") -> Evidence:
    file, line = names.at(hit.source, hit.line)
    return Evidence(
        file=file,
        line=line,
        text=_around_match(hit),
        rank=hit.clean.rank,
        timestamp=hit.clean.timestamp,
        role=role,
    )


def _context(window: Window | None, index: int) -> tuple[str, ...]:
    if window is None:
        return ()
    stream = window.lines[index].clean.stream
    before = [
        line.text
        for line in window.lines[:index]
        if line.clean.stream in (stream, "") and line.text.strip()
    ]
    return tuple(_cap(text) for text in before[-CONTEXT_LINES:])


def build_finding(item: Analysed, names: Names) -> Finding:
    group, first = item.group, item.group.first
    evidence = hit_evidence(first, names)
    context = _context(item.window, item.window.center) if item.window is not None else ()
    evidence = replace(evidence, context=context, rank=item.rank)
    metrics = derive_metrics(item.figures)
    if item.rank is not None:
        metrics["rank"] = item.rank
    phase: Phase = item.phase.phase if item.phase is not None else "unknown"
    reasons = [f"{f.pattern.id} ({f.scope})" for f in item.phase.fired] if item.phase else []
    if item.signature.kind == "host_oom":
        phase = "host_memory"
    return Finding(
        signature=item.signature.id,
        kind=item.signature.kind,
        phase=phase,
        evidence=(evidence,),
        metrics=frozen_metrics(metrics),
        phase_reasons=tuple(reasons),
        count=len(group.hits),
        ranks=tuple(group.ranks or ([item.rank] if item.rank is not None else [])),
        files=tuple(names.files[i] for i in group.sources),
        fingerprint=group.fingerprint,
        group_reason=group.reason(names.files),
    )


def phase_evidence(item: Analysed, names: Names) -> list[Evidence]:
    out: list[Evidence] = []
    if item.phase is None:
        return out
    for fired in item.phase.fired:
        line = fired.line
        if line is None or fired.scope == "line" or len(out) >= MAX_PHASE_EVIDENCE:
            continue
        role = "frame" if fired.scope == "traceback" else "context"
        file, number = names.at(item.group.first.source, line.number)
        out.append(
            Evidence(
                file=file,
                line=number,
                text=_cap(line.text.strip()),
                rank=line.clean.rank,
                timestamp=line.clean.timestamp,
                role=role,
            )
        )
    return out


def consequences(
    hits: Sequence[Hit], rules: Rules, root: Hit | None, names: Names, ts_of: TsOf
) -> tuple[Consequence, ...]:
    """Cascade events grouped by what they are; examples come after the root when possible."""
    whats = {c.id: c.what for c in rules.consequences}
    by_what: dict[str, list[Hit]] = {}
    for hit in in_time_order([h for h in hits if h.category == "consequence"], ts_of):
        by_what.setdefault(whats[hit.rule], []).append(hit)
    out: list[Consequence] = []
    for what, group in by_what.items():
        example = group[0]
        if root is not None:
            from assistant.logs.group import earlier

            later = [h for h in group if earlier(root, h, ts_of) < 0]
            example = later[0] if later else example
        ranks = sorted({h.clean.rank for h in group if h.clean.rank is not None})
        # one event per rank and file (a timeout prints several lines), else one per line
        events = {(h.source, h.clean.rank if h.clean.rank is not None else -h.line) for h in group}
        example_evidence = hit_evidence(example, names, "consequence")
        out.append(Consequence(what, len(events), tuple(ranks), example_evidence))
    return tuple(out)


def collect_facts(collected: Collected, root: Analysed | None) -> LogFacts:
    """The facts of the log; the keys come from knowledge/ and are those of ``LogFacts``."""
    facts: dict[str, Any] = {}
    for key, hit in collected.facts.items():
        facts[key] = hit.value
    if root is not None:
        for key, value in root.signature.facts.items():
            facts[key] = value
        phase_facts = root.phase.facts if root.phase is not None else {}
        for key, value in phase_facts.items():
            if key == "server" and "server" not in root.signature.facts:
                facts["server"] = value
            elif key == "sleep_mode" and value:
                facts["sleep_mode"] = True
            else:
                facts.setdefault(key, value)
        tags = list(root.signature.tags)
        for tag in root.phase.tags if root.phase is not None else []:
            if tag not in tags:
                tags.append(tag)
        facts["signature_tags"] = tags
        if root.phase is not None and root.phase.leaning is not None:
            facts["phase_leaning"] = root.phase.leaning
    name = facts.get("model_name")
    if isinstance(name, str):
        name = name.rstrip("/").rsplit("/", 1)[-1]
        facts["model_name"] = name
        params = model_params_b(name)
        if params is not None:
            facts.setdefault("model_params_b", params)
    return cast(LogFacts, facts)


def confidence(root: Analysed, unproven: bool = False) -> float:
    """The root signature's confidence, lower when the phase is unsure; a kill with no
    message of its own (``unproven``) takes its signature's ``unproven_confidence``."""
    if unproven and root.signature.unproven_confidence is not None:
        return root.signature.unproven_confidence
    value = root.signature.confidence
    if root.signature.kind == "host_oom":
        return round(value, 2)
    phase = root.phase
    if phase is None or phase.phase == "unknown":
        value *= 0.85
    elif phase.margin < 1.0:
        value *= 0.9
    return round(max(0.0, min(1.0, value)), 2)


def oom_verdict(
    analysed: Sequence[Analysed],
    collected: Collected,
    rules: Rules,
    names: Names,
    ts_of: TsOf,
    *,
    unproven: bool = False,
    described: Phase | None = None,
) -> Verdict:
    """A memory failure: ``analysed[0]`` is the root. ``unproven``: it stands on a bare
    kill; ``described``: the phase a one-line paste names (used when none is found)."""
    root = analysed[0]
    first = build_finding(root, names)
    cascade = consequences(collected.hits, rules, root.group.first, names, ts_of)
    evidence = [first.evidence[0], *phase_evidence(root, names)]
    evidence += _pressure_evidence(collected.hits, root, rules, names)
    evidence += [c.example for c in cascade]
    facts = collect_facts(collected, root)
    where = find_stage(root.window, first.phase, root.signature)
    facts.update(cast(LogFacts, where.status))
    if where.stage is not None:
        facts["stage"] = where.stage
    if unproven:
        facts["memory_unproven"] = True
    input_kind = "log"
    if described is not None and first.phase == "unknown":  # after the stage, as it was
        first = replace(
            first, phase=described, phase_reasons=(*first.phase_reasons, "description keywords")
        )
        input_kind = "log" if first.metrics else "description"
    findings = (first, *(build_finding(item, names) for item in analysed[1:]))
    return Verdict(
        oom=True,
        phase=first.phase,
        kind=first.kind,
        confidence=confidence(root, unproven),
        evidence=tuple(evidence),
        metrics=first.metrics,
        findings=findings,
        consequences=cascade,
        facts=facts,
        stage=where.stage,
        input_kind=input_kind,
    )


def _pressure_evidence(
    hits: Sequence[Hit], root: Analysed, rules: Rules, names: Names
) -> list[Evidence]:
    pressure = {x.id for x in rules.lookalikes if x.pressure}
    first = root.group.first
    near = [
        h
        for h in hits
        if h.category == "lookalike"
        and h.rule in pressure
        and h.source == first.source
        and 0 < first.line - h.line <= 2000
    ]
    return [hit_evidence(near[-1], names, "context")] if near else []


def _explaining_lookalike(first: Hit, hits: Sequence[Hit], info: set[str]) -> Hit | None:
    """The look-alike that says what the first error is: itself, or one a few lines on
    (NCCL prints "Cuda failure '...'" after the exception line)."""
    if first.category == "lookalike":
        return first
    for hit in hits:
        if (
            hit.category == "lookalike"
            and hit.rule not in info
            and hit.source == first.source
            and 0 < hit.line - first.line <= EXPLAIN_LINES
        ):
            return hit
    return None


def no_oom_verdict(
    collected: Collected, demoted: Sequence[Hit], rules: Rules, names: Names, ts_of: TsOf
) -> Verdict:
    """No memory failure: say what the first real error was instead."""
    info = {x.id for x in rules.lookalikes if x.informational or x.pressure}
    errors = [
        h
        for h in collected.hits
        if (h.category == "lookalike" and h.rule not in info) or h.category == "error"
    ]
    errors += list(demoted)
    first = first_in_time(errors, ts_of) or first_in_time(
        [h for h in collected.hits if h.category == "consequence"], ts_of
    )
    facts = collect_facts(collected, None)
    evidence: list[Evidence] = []
    first_error = None
    if first is not None:
        first_error = hit_evidence(first, names)
        evidence.append(first_error)
        explained = _explaining_lookalike(first, collected.hits, info)
        if explained is not None:
            what = next(x for x in rules.lookalikes if x.id == explained.rule)
            facts["first_error_kind"] = what.id
            facts["first_error_what"] = dict(what.what)
    cascade = consequences(collected.hits, rules, first, names, ts_of)
    return Verdict(
        oom=False,
        phase="none",
        kind="none",
        confidence=0.85 if first is not None else 0.6,
        evidence=tuple(evidence),
        consequences=cascade,
        first_error=first_error,
        facts=facts,
    )


MAX_NOTICE_EVIDENCE = 2


def notices(
    hits: Sequence[Hit], rules: Rules, names: Names, repeats: Mapping[str, int] | None = None
) -> tuple[Notice, ...]:
    """Memory events that are no failure by themselves, one entry per kind with a count.
    ``repeats``: lines of a rule counted without a hit of their own (a folded flood of one
    line shape, ``classify.Collected.repeats``)."""
    rules_by_id = {x.id: x for x in rules.lookalikes if x.notice}
    grouped: dict[str, list[Hit]] = {}
    texts: dict[str, dict[str, str]] = {}
    counted: dict[str, int] = {}
    for hit in hits:
        rule = rules_by_id.get(hit.rule) if hit.category == "lookalike" else None
        if rule is None or rule.notice is None:
            continue
        grouped.setdefault(rule.notice, []).append(hit)
        texts.setdefault(rule.notice, dict(rule.what))
    for rule_id, count in (repeats or {}).items():
        rule = rules_by_id.get(rule_id)
        if rule is not None and rule.notice is not None:
            counted[rule.notice] = counted.get(rule.notice, 0) + count
    return tuple(
        Notice(
            id=notice,
            count=len(group) + counted.get(notice, 0),
            text=texts[notice],
            evidence=tuple(hit_evidence(h, names, "context") for h in group[:MAX_NOTICE_EVIDENCE]),
        )
        for notice, group in grouped.items()
    )
