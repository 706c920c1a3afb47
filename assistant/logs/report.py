"""Assemble the LogReport: root finding, evidence, metrics, facts, cascade, confidence."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any, cast

from assistant.logs.classify import Analysed, Collected, first_in_time
from assistant.logs.group import in_time_order
from assistant.logs.infer import derive_metrics, inferences, model_params_b
from assistant.logs.match import Hit
from assistant.logs.rules import Rules
from assistant.logs.stage import find_stage
from assistant.logs.windows import Window
from assistant.models import Consequence, Evidence, Finding, LogFacts, LogReport, Notice, Phase

EVIDENCE_CHARS = 600
MATCH_LEAD = 80  # characters kept before the match when a long line is cut
CONTEXT_LINES = 3
MAX_PHASE_EVIDENCE = 4
EXPLAIN_LINES = 12

TsOf = Callable[[Hit], "tuple[float, ...] | None"]


def _cap(text: str) -> str:
    return text if len(text) <= EVIDENCE_CHARS else text[: EVIDENCE_CHARS - 3] + "..."


def _around_match(hit: Hit) -> str:
    """The line, capped; a long line is shown from just before what the rule matched."""
    text = hit.text
    if hit.start + EVIDENCE_CHARS // 2 <= EVIDENCE_CHARS:
        return _cap(text.strip())
    return _cap("..." + text[max(0, hit.start - MATCH_LEAD) :].strip())


def hit_evidence(hit: Hit, names: Sequence[str], role: str = "failure") -> Evidence:
    return Evidence(
        file=names[hit.source],
        line=hit.line,
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


def build_finding(item: Analysed, names: Sequence[str]) -> Finding:
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
        evidence=[evidence],
        metrics=metrics,
        phase_reasons=reasons,
        count=len(group.hits),
        ranks=group.ranks or ([item.rank] if item.rank is not None else []),
        files=[names[i] for i in group.sources],
        fingerprint=group.fingerprint,
        group_reason=group.reason(names),
    )


def phase_evidence(item: Analysed, names: Sequence[str]) -> list[Evidence]:
    out: list[Evidence] = []
    if item.phase is None:
        return out
    for fired in item.phase.fired:
        line = fired.line
        if line is None or fired.scope == "line" or len(out) >= MAX_PHASE_EVIDENCE:
            continue
        role = "frame" if fired.scope == "traceback" else "context"
        out.append(
            Evidence(
                file=names[item.group.first.source],
                line=line.number,
                text=_cap(line.text.strip()),
                rank=line.clean.rank,
                timestamp=line.clean.timestamp,
                role=role,
            )
        )
    return out


def consequences(
    hits: Sequence[Hit], rules: Rules, root: Hit | None, names: Sequence[str], ts_of: TsOf
) -> list[Consequence]:
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
        out.append(Consequence(what, len(events), ranks, example_evidence))
    return out


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


def confidence(root: Analysed) -> float:
    value = root.signature.confidence
    if root.signature.kind == "host_oom":
        return round(value, 2)
    phase = root.phase
    if phase is None or phase.phase == "unknown":
        value *= 0.85
    elif phase.margin < 1.0:
        value *= 0.9
    return round(max(0.0, min(1.0, value)), 2)


def oom_report(
    analysed: Sequence[Analysed],
    collected: Collected,
    rules: Rules,
    names: Sequence[str],
    ts_of: TsOf,
) -> LogReport:
    root = analysed[0]
    findings = [build_finding(item, names) for item in analysed]
    first = findings[0]
    cascade = consequences(collected.hits, rules, root.group.first, names, ts_of)
    evidence = [first.evidence[0], *phase_evidence(root, names)]
    evidence += _pressure_evidence(collected.hits, root, rules, names)
    evidence += [c.example for c in cascade]
    facts = collect_facts(collected, root)
    where = find_stage(root.window, first.phase, root.signature)
    facts.update(cast(LogFacts, where.status))
    if where.stage is not None:
        facts["stage"] = where.stage
    return LogReport(
        oom=True,
        phase=first.phase,
        kind=first.kind,
        confidence=confidence(root),
        evidence=evidence,
        metrics=first.metrics,
        inferences=inferences(first.metrics),
        findings=findings,
        consequences=cascade,
        facts=facts,
        stage=where.stage,
    )


def _pressure_evidence(
    hits: Sequence[Hit], root: Analysed, rules: Rules, names: Sequence[str]
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


def no_oom_report(
    collected: Collected, demoted: Sequence[Hit], rules: Rules, names: Sequence[str], ts_of: TsOf
) -> LogReport:
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
    return LogReport(
        oom=False,
        phase="none",
        kind="none",
        confidence=0.85 if first is not None else 0.6,
        evidence=evidence,
        consequences=cascade,
        first_error=first_error,
        facts=facts,
    )


MAX_NOTICE_EVIDENCE = 2


def notices(hits: Sequence[Hit], rules: Rules, names: Sequence[str]) -> list[Notice]:
    """Memory events that are no failure by themselves, one entry per kind with a count."""
    rules_by_id = {x.id: x for x in rules.lookalikes if x.notice}
    grouped: dict[str, list[Hit]] = {}
    texts: dict[str, dict[str, str]] = {}
    for hit in hits:
        rule = rules_by_id.get(hit.rule) if hit.category == "lookalike" else None
        if rule is None or rule.notice is None:
            continue
        grouped.setdefault(rule.notice, []).append(hit)
        texts.setdefault(rule.notice, dict(rule.what))
    return [
        Notice(
            id=notice,
            count=len(group),
            text=texts[notice],
            evidence=tuple(hit_evidence(h, names, "context") for h in group[:MAX_NOTICE_EVIDENCE]),
        )
        for notice, group in grouped.items()
    ]


def remap_lines(
    report: LogReport, maps: dict[int, Callable[[int], int]], names: Sequence[str]
) -> None:
    """Give evidence read from a repaired paste the line numbers of the user's file."""
    by_name = {names[index]: fn for index, fn in maps.items() if index < len(names)}

    def fix(item: Evidence | None) -> Evidence | None:
        if item is None or item.file not in by_name:
            return item
        return replace(item, line=by_name[item.file](item.line))

    report.evidence = [fix(e) for e in report.evidence]  # type: ignore[misc]
    report.first_error = fix(report.first_error)
    report.notices = [
        replace(n, evidence=tuple(fix(e) for e in n.evidence))  # type: ignore[misc]
        for n in report.notices
    ]
    for finding in report.findings:
        finding.evidence = [fix(e) for e in finding.evidence]  # type: ignore[misc]
    report.consequences = [
        replace(c, example=fix(c.example))  # type: ignore[arg-type]
        for c in report.consequences
    ]
