"""Read crash logs and classify the memory failure in them.

Public API:
    read_and_classify(paths, progress=None) -> LogReport
    classify_text(text, name="<pasted>") -> LogReport

Stages: inputs (decode, gunzip, stdin) -> scan (byte prefilter) -> match (full
rules on candidate lines) -> classify (group, order, windows, phase) -> report.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from assistant.errors import UserError
from assistant.logs.classify import Analyser, Collected, collect
from assistant.logs.describe import classify_description, describe_phase, is_short, log_language
from assistant.logs.infer import SELF_MATCH_TOLERANCE, inferences
from assistant.logs.inputs import Source, SourceSet, open_sources
from assistant.logs.match import LineMatcher
from assistant.logs.paste import REPAIR_MAX_BYTES, Repaired, rejoin, repair
from assistant.logs.report import no_oom_report, notices, oom_report, remap_lines
from assistant.logs.rules import Rules, load_rules
from assistant.logs.scan import scan_files
from assistant.logs.smi import (
    csv_processes,
    gpu_processes,
    others_on_gpu,
    ranks_piled_on_one_gpu,
    strangers_beside_the_job,
)
from assistant.models import LogReport, Progress

__all__ = ["classify_text", "read_and_classify"]

LANGUAGE_SAMPLE = 16 * 1024  # bytes of each of the first sources used to tell the language


def read_and_classify(paths: Sequence[str], progress: Progress | None = None) -> LogReport:
    """Read log files (``"-"`` is standard input, folders are searched) and classify them.

    Raises UserError for missing, empty, unreadable or binary input.
    """
    with open_sources(list(paths)) as sources:
        report = _read_pastes(sources, progress)
        report.unread = list(sources.unread)
        return report


def classify_text(text: str, name: str = "<pasted>") -> LogReport:
    """Classify pasted text: a log, or a short description of the failure."""
    if not text.strip():
        raise UserError("empty input")
    sources = SourceSet()
    with sources:
        path, handle = sources.temp_file()
        with handle:
            handle.write(text.encode("utf-8", errors="replace"))
        data = text.encode("utf-8", errors="replace")
        source = Source(name=name, path=path, size=len(data), sample=data[:65536])
        sources.sources.append(source)
        return _read_pastes(sources, None)


Repair = Callable[[str], "Repaired | None"]


def _read_pastes(sources: SourceSet, progress: Progress | None) -> LogReport:
    """Classify the sources as pasted (repaired where a paste was mangled); when that finds
    no memory failure in a small input, try once more with single wraps joined."""
    report = _classify_repaired(sources, repair, progress)
    assert report is not None  # None only with only_changed
    if report.oom or sources.total_bytes > REPAIR_MAX_BYTES:
        return report
    second = _classify_repaired(sources, rejoin, None, only_changed=True)
    return second if second is not None and second.oom else report


def _classify_repaired(
    sources: SourceSet, fix: Repair, progress: Progress | None, only_changed: bool = False
) -> LogReport | None:
    repaired: dict[int, Repaired] = {}
    todo: list[Source] = []
    pasted = sources.total_bytes <= REPAIR_MAX_BYTES  # pastes are small; run logs are not
    for index, source in enumerate(sources.sources):
        fixed = _repaired_copy(source, sources, fix) if pasted else None
        if fixed is None:
            todo.append(source)
            continue
        repaired[index], copy = fixed
        todo.append(copy)
    if only_changed and not repaired:
        return None
    report = _classify(todo, progress)
    if repaired:
        remap_lines(report, {i: r.original_line for i, r in repaired.items()}, report.files)
        report.lines_read = sum(_line_count(s) for s in sources.sources)
    return report


def _line_count(source: Source) -> int:
    with open(source.path, "rb") as handle:
        data = handle.read()
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


def _repaired_copy(
    source: Source, sources: SourceSet, fix: Repair
) -> tuple[Repaired, Source] | None:
    with open(source.path, "rb") as handle:
        text = handle.read().decode("utf-8", errors="replace")
    fixed = fix(text)
    if fixed is None:
        return None
    data = fixed.text.encode("utf-8")
    path, out = sources.temp_file()
    with out:
        out.write(data)
    copy = Source(name=source.name, path=path, size=len(data), sample=data[:65536])
    return fixed, copy


def _classify(sources: Sequence[Source], progress: Progress | None) -> LogReport:
    rules = load_rules()
    names = [s.name for s in sources]
    scans = scan_files([s.path for s in sources], [s.size for s in sources], progress)
    collected = collect(sources, scans, LineMatcher(rules))
    analyser = Analyser(sources, rules)
    memory_hits, demoted = analyser.memory_hits(collected.hits)
    sample = "\n".join(s.sample[:LANGUAGE_SAMPLE].decode("utf-8", "replace") for s in sources[:4])
    short_text = sample if len(sources) == 1 and is_short(sample, rules.describe) else None
    if short_text is not None and not _looks_like_log(collected, rules):
        memory_hits = []  # only a reporter's sentences matched: a description, not a log
    if memory_hits:
        analysed = analyser.analyse(memory_hits)
        report = oom_report(analysed, collected, rules, names, analyser.ts_of)
        if short_text is not None and report.phase == "unknown":
            _phase_from_description(report, short_text, rules.describe)
    elif short_text is not None and not _looks_like_log(collected, rules):
        report = classify_description(short_text.strip(), names[0], rules.describe)
    else:
        report = no_oom_report(collected, demoted, rules, names, analyser.ts_of)
    report.files = names
    report.notices = notices(collected.hits, rules, names)
    if memory_hits and analyser.unproven:
        _mark_unproven(report, analyser, rules)
    _add_kill_signal(report, collected, rules)
    if report.oom:
        _add_listed_processes(report, sources)
    report.lines_read = sum(
        scan.newlines + (1 if s.size and not _ends_with_newline(s) else 0)
        for scan, s in zip(scans, sources, strict=True)
    )
    if report.input_kind == "log":
        report.language = log_language(sample)
    return report


KILL_FACT_HITS = 500  # hits searched for the kill fact (a bound for huge inputs)


def _add_kill_signal(report: LogReport, collected: Collected, rules: Rules) -> None:
    """The signal a process died of, one fact whatever the spelling (``exitcode: -9``,
    ``exit code 137``, ``Killed``, ``<Signals.SIGKILL: 9>``): the root failure's line
    when it reports one, else the first line that does (a launcher's kills of the
    other processes are not a death of their own)."""
    roles = ("exit", "word", "prose")
    texts = [e.text for e in report.evidence[:1]]
    texts += [h.text for h in collected.hits[:KILL_FACT_HITS]]
    for text in texts:
        fact = rules.kills.normalise(text, roles)
        if fact is not None:
            report.facts["kill_signal"] = fact.signal
            report.facts["kill_signal_number"] = fact.number
            return


def _mark_unproven(report: LogReport, analyser: Analyser, rules: Rules) -> None:
    """A kill with no message of its own: say how unsure we are, and let the tree ask."""
    if not report.findings:
        return
    sig = rules.signature(report.findings[0].signature)
    if sig.unproven_confidence is not None:
        report.confidence = sig.unproven_confidence
    report.facts["memory_unproven"] = True


def _add_listed_processes(report: LogReport, sources: Sequence[Source]) -> None:
    """Memory other processes hold on the failing GPU, from an nvidia-smi table in the
    failing file, when the OOM message itself did not list them; and ranks piled on one
    GPU, from the same table (the file's head is read once for both)."""
    metrics = report.metrics
    if not report.evidence:
        return
    source = next((s for s in sources if s.name == report.evidence[0].file), None)
    if source is None:
        return
    processes = gpu_processes(source.path)
    if ranks_piled_on_one_gpu(processes):
        report.facts["ranks_share_gpu"] = True
    if "other_processes_bytes" in metrics:
        return
    gpu = metrics.get("gpu_index")
    own = metrics.get("process_in_use_bytes")
    found = others_on_gpu(
        processes,
        int(gpu) if gpu is not None else None,
        int(own) if own else None,
        SELF_MATCH_TOLERANCE,
    )
    if found is None:
        _add_strangers(report, source)
        return
    metrics["other_processes_bytes"], metrics["other_processes_count"] = found
    report.inferences = inferences(metrics)


def _add_strangers(report: LogReport, source: Source) -> None:
    """Another program's memory on one of the job's GPUs, from a ``--query-compute-apps``
    CSV in the failing file: it names no GPU index, so it cannot say which GPU failed,
    only that the job shares its GPUs with a stranger (tag ``other_processes``)."""
    found = strangers_beside_the_job(csv_processes(source.path))
    if found is None:
        return
    report.metrics["other_processes_bytes"], report.metrics["other_processes_count"] = found
    tags = list(report.facts.get("signature_tags") or [])
    if "other_processes" not in tags:
        report.facts["signature_tags"] = [*tags, "other_processes"]


def _looks_like_log(collected: Collected, rules: Rules) -> bool:
    """Any line a rule recognised (even one that proved nothing) makes the text a log; a
    reporter's sentence (a `prose` signature) does not."""
    prose = {s.id for s in rules.signatures if s.prose}
    return any(h.category != "signature" or h.rule not in prose for h in collected.hits)


def _phase_from_description(report: LogReport, text: str, describe: Mapping[str, Any]) -> None:
    """A one-line paste without frames ("CUDA out of memory during weight sync")."""
    phase = describe_phase(text, describe)
    if phase and phase != "host_memory":
        report.phase = phase
        report.input_kind = "description" if not report.metrics else report.input_kind
        if report.findings:
            report.findings[0].phase = phase
            report.findings[0].phase_reasons.append("description keywords")


def _ends_with_newline(source: Source) -> bool:
    with open(source.path, "rb") as handle:
        handle.seek(max(0, source.size - 1))
        return handle.read(1) == b"\n"
