"""Read crash logs and classify the memory failure in them.

Public API:
    read_and_classify(paths, progress=None) -> LogReport
    classify_text(text, name="<pasted>") -> LogReport

Stages: inputs (decode, gunzip, stdin) -> scan (byte prefilter) -> match (full
rules on candidate lines) -> classify (group, order, windows, phase) -> report.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from assistant.errors import UserError
from assistant.logs.classify import Analyser, collect
from assistant.logs.describe import classify_description, describe_phase, is_short, log_language
from assistant.logs.inputs import Source, SourceSet, open_sources
from assistant.logs.match import LineMatcher
from assistant.logs.report import no_oom_report, oom_report
from assistant.logs.rules import load_rules
from assistant.logs.scan import scan_files
from assistant.models import LogReport

__all__ = ["classify_text", "read_and_classify"]

Progress = Callable[[int, int], None]
LANGUAGE_SAMPLE = 16 * 1024  # bytes of each of the first sources used to tell the language


def read_and_classify(paths: Sequence[str], progress: Progress | None = None) -> LogReport:
    """Read log files (``"-"`` is standard input, folders are searched) and classify them.

    Raises UserError for missing, empty, unreadable or binary input.
    """
    with open_sources(list(paths)) as sources:
        report = _classify(sources.sources, progress)
        report.unread = list(sources.unread)
        return report


def classify_text(text: str, name: str = "<pasted>") -> LogReport:
    """Classify pasted text: a log, or a short description of the failure."""
    if not text.strip():
        raise UserError("empty input")
    sources = SourceSet()
    with sources:
        path, handle = sources.temp_file()
        with handle:  # type: ignore[attr-defined]
            handle.write(text.encode("utf-8", errors="replace"))  # type: ignore[attr-defined]
        data = text.encode("utf-8", errors="replace")
        source = Source(name=name, path=path, size=len(data), sample=data[:65536])
        return _classify([source], None)


def _classify(sources: Sequence[Source], progress: Progress | None) -> LogReport:
    rules = load_rules()
    names = [s.name for s in sources]
    scans = scan_files([s.path for s in sources], [s.size for s in sources], progress)
    collected = collect(sources, scans, LineMatcher(rules))
    analyser = Analyser(sources, rules)
    memory_hits, demoted = analyser.memory_hits(collected.hits)
    sample = "\n".join(s.sample[:LANGUAGE_SAMPLE].decode("utf-8", "replace") for s in sources[:4])
    short_text = sample if len(sources) == 1 and is_short(sample, rules.describe) else None
    if memory_hits:
        analysed = analyser.analyse(memory_hits)
        report = oom_report(analysed, collected, rules, names, analyser.ts_of)
        if short_text is not None and report.phase == "unknown":
            _phase_from_description(report, short_text, rules.describe)
    elif short_text is not None and not _looks_like_log(collected):
        report = classify_description(short_text.strip(), names[0], rules.describe)
    else:
        report = no_oom_report(collected, demoted, rules, names, analyser.ts_of)
    report.files = names
    report.lines_read = sum(
        scan.newlines + (1 if s.size and not _ends_with_newline(s) else 0)
        for scan, s in zip(scans, sources, strict=True)
    )
    if report.input_kind == "log":
        report.language = log_language(sample)
    return report


def _looks_like_log(collected) -> bool:
    """Any line a rule recognised (even one that proved nothing) makes the text a log."""
    return bool(collected.hits)


def _phase_from_description(report: LogReport, text: str, describe) -> None:
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
