"""Read crash logs and classify the memory failure in them.

Public API:
    read_and_classify(paths, progress=None) -> LogReport
    classify_text(text, name="<pasted>") -> LogReport

Stages: inputs (decode, gunzip, stdin) -> scan (byte prefilter) -> match (full
rules on candidate lines) -> classify (group, order, windows, phase) -> report.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from assistant.errors import UserError
from assistant.logs.classify import Analyser, Collected, collect
from assistant.logs.describe import classify_description, describe_phase, is_short, log_language
from assistant.logs.infer import SELF_MATCH_TOLERANCE
from assistant.logs.inputs import Source, SourceSet, open_sources
from assistant.logs.match import LineMatcher
from assistant.logs.paste import REPAIR_MAX_BYTES, Repaired, rejoin, repair
from assistant.logs.report import (
    LineMap,
    Names,
    Others,
    Reading,
    Verdict,
    assemble,
    no_oom_verdict,
    notices,
    oom_verdict,
)
from assistant.logs.rules import Rules, load_rules
from assistant.logs.scan import scan_files
from assistant.logs.smi import (
    csv_processes,
    gpu_processes,
    others_on_gpu,
    ranks_piled_on_one_gpu,
    strangers_beside_the_job,
)
from assistant.models import LogFacts, LogReport, Metrics, Phase, Progress

__all__ = ["classify_text", "read_and_classify"]

LANGUAGE_SAMPLE = 16 * 1024  # bytes of each of the first sources used to tell the language


def read_and_classify(paths: Sequence[str], progress: Progress | None = None) -> LogReport:
    """Read log files (``"-"`` is standard input, folders are searched) and classify them.

    Raises UserError for missing, empty, unreadable or binary input.
    """
    with open_sources(list(paths)) as sources:
        return _read_pastes(sources, progress)


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
    """Classify the sources, each read from a repaired copy where ``fix`` changed it; the
    evidence keeps the line numbers of the user's own files."""
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
    line_maps: dict[int, LineMap] = {i: r.original_line for i, r in repaired.items()}
    names = Names(tuple(s.name for s in todo), line_maps)
    lines_read = sum(_line_count(s) for s in sources.sources) if repaired else None
    return _classify(todo, progress, names, tuple(sources.unread), lines_read)


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


def _classify(
    sources: Sequence[Source],
    progress: Progress | None,
    names: Names,
    unread: tuple[str, ...],
    lines_read: int | None,
) -> LogReport:
    """Read, match and classify; then assemble the report once from the verdict and the
    input's parts. ``lines_read``: the user's own files' count when copies were read."""
    rules = load_rules()
    scans = scan_files([s.path for s in sources], [s.size for s in sources], progress)
    collected = collect(sources, scans, LineMatcher(rules))
    analyser = Analyser(sources, rules)
    memory_hits, demoted = analyser.memory_hits(collected.hits)
    sample = "\n".join(s.sample[:LANGUAGE_SAMPLE].decode("utf-8", "replace") for s in sources[:4])
    short_text = sample if len(sources) == 1 and is_short(sample, rules.describe) else None
    if short_text is not None and not _looks_like_log(collected, rules):
        memory_hits = []  # only a reporter's sentences matched: a description, not a log
    verdict: Verdict
    if memory_hits:
        analysed = analyser.analyse(memory_hits)
        described = _described_phase(short_text, rules.describe) if short_text else None
        verdict = oom_verdict(
            analysed,
            collected,
            rules,
            names,
            analyser.ts_of,
            unproven=bool(analyser.unproven),
            described=described,
        )
    elif short_text is not None and not _looks_like_log(collected, rules):
        verdict = classify_description(short_text.strip(), names, rules.describe)
    else:
        verdict = no_oom_verdict(collected, demoted, rules, names, analyser.ts_of)
    if lines_read is None:
        lines_read = sum(
            scan.newlines + (1 if s.size and not _ends_with_newline(s) else 0)
            for scan, s in zip(scans, sources, strict=True)
        )
    reading = Reading(
        files=names.files,
        notices=notices(collected.hits, rules, names, collected.repeats),
        lines_read=lines_read,
        language=log_language(sample),
        unread=unread,
        lines_unread=collected.dropped,
    )
    kill = _kill_signal(verdict, collected, rules)
    others = _listed_processes(verdict, sources, names) if verdict.oom else None
    return assemble(verdict, reading, kill, others)


KILL_FACT_HITS = 500  # hits searched for the kill fact (a bound for huge inputs)


def _kill_signal(verdict: Verdict, collected: Collected, rules: Rules) -> LogFacts:
    """The signal a process died of, one fact whatever the spelling (``exitcode: -9``,
    ``exit code 137``, ``Killed``, ``<Signals.SIGKILL: 9>``): the root failure's line
    when it reports one, else the first line that does (a launcher's kills of the
    other processes are not a death of their own)."""
    roles = ("exit", "word", "prose")
    texts = [e.text for e in verdict.evidence[:1]]
    texts += [h.text for h in collected.hits[:KILL_FACT_HITS]]
    facts = LogFacts()
    for text in texts:
        fact = rules.kills.normalise(text, roles)
        if fact is not None:
            facts["kill_signal"] = fact.signal
            facts["kill_signal_number"] = fact.number
            break
    return facts


def _listed_processes(verdict: Verdict, sources: Sequence[Source], names: Names) -> Others:
    """Memory other processes hold on the failing GPU, from an nvidia-smi table in the
    failing file, when the OOM message itself did not list them; and ranks piled on one
    GPU, from the same table (the file's head is read once for both)."""
    if not verdict.evidence:
        return Others()
    failing = verdict.evidence[0].file
    source = next((s for s, n in zip(sources, names.files, strict=True) if n == failing), None)
    if source is None:
        return Others()
    processes = gpu_processes(source.path)
    share = ranks_piled_on_one_gpu(processes)
    metrics: Metrics = verdict.metrics
    if "other_processes_bytes" in metrics:
        return Others(ranks_share_gpu=share)
    gpu = metrics.get("gpu_index")
    own = metrics.get("process_in_use_bytes")
    found = others_on_gpu(
        processes,
        int(gpu) if gpu is not None else None,
        int(own) if own else None,
        SELF_MATCH_TOLERANCE,
    )
    if found is None:
        strangers = strangers_beside_the_job(csv_processes(source.path))
        return Others(share, strangers, strangers is not None)
    return Others(share, found)


def _looks_like_log(collected: Collected, rules: Rules) -> bool:
    """Any line a rule recognised (even one that proved nothing) makes the text a log; a
    reporter's sentence (a `prose` signature) does not."""
    prose = {s.id for s in rules.signatures if s.prose}
    return any(h.category != "signature" or h.rule not in prose for h in collected.hits)


def _described_phase(text: str, describe: Mapping[str, object]) -> Phase | None:
    """The phase a one-line paste without frames names ("CUDA out of memory during
    weight sync"), taken when the frames show none."""
    phase = describe_phase(text, describe)
    return phase if phase and phase != "host_memory" else None


def _ends_with_newline(source: Source) -> bool:
    with open(source.path, "rb") as handle:
        handle.seek(max(0, source.size - 1))
        return handle.read(1) == b"\n"
