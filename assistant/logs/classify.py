"""From candidate lines to findings: match, group, order, read windows, score phases."""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from assistant.logs.facts import MAX_SOURCES, head_facts, merge_facts
from assistant.logs.group import Group, drop_poisoned, drop_yielding, earlier, group_hits
from assistant.logs.inputs import Source
from assistant.logs.lazyre import LazyPattern, union_gate
from assistant.logs.lines import CleanLine, clean_line, strip_controls
from assistant.logs.match import FactHit, Hit, LineMatcher, extract_figures, extract_values
from assistant.logs.phase import PhaseResult, message_end, score_phase, traceback_start
from assistant.logs.rules import Figure, Rules, Signature
from assistant.logs.scan import RangeScan, line_shape, window_prefilter
from assistant.logs.windows import Window, marked_before, read_window, time_before

MAX_WINDOWS = 24  # groups that get a window (and so a phase); the rest keep their line
MAX_WEAK_CHECKS = 16
MAX_HEADER_WINDOWS = 64  # windows read above memory hits for near-failure rules
TRACEBACK_VETO_BELOW = 6


@dataclass
class Analysed:
    """One group of memory-failure lines with what its window told."""

    group: Group
    signature: Signature
    window: Window | None
    phase: PhaseResult | None
    figures: dict[str, Any] = field(default_factory=dict)
    ts_key: tuple[float, ...] | None = None
    rank: int | None = None  # of the first line, or of the log line that introduced it


@dataclass
class Collected:
    """Everything the full rules found in the candidate lines of all sources."""

    hits: list[Hit] = field(default_factory=list)
    facts: dict[str, FactHit] = field(default_factory=dict)
    dropped: int = 0
    # lines of a folded shape (scan.FOLD_AFTER) that a look-alike rule would have
    # matched, counted by rule: they count in its notice
    repeats: dict[str, int] = field(default_factory=dict)


# A candidate whose shape (its text with the numbers masked, scan.line_shape) came this
# many times with no rule matching any of its lines is a status line holding a trigger word
# ("memory allocated (GB): 61.2 ... num_ooms: 0" on every step): its later lines are not
# classified again. A shape that a rule matched once is always read.
PLAIN_RUNS = 32


def collect(
    sources: Sequence[Source], scans: Sequence[RangeScan], matcher: LineMatcher
) -> Collected:
    """Classify every candidate line; find the first line that shows each fact."""
    out = Collected()
    fact_hits: list[FactHit] = []
    for index, scan in enumerate(scans):
        out.dropped += scan.dropped
        if index < MAX_SOURCES:
            fact_hits += head_facts(sources[index].path, index, matcher)
        shown: dict[bytes, Hit | None] = {}  # a folded shape's verdict, from its first line
        plain: dict[bytes, int] = {}  # line shape -> its lines no rule matched
        matched: set[bytes] = set()  # shapes a rule matched a line of: always read
        for cand in scan.candidates:
            shape = line_shape(cand.data)
            if shape is not None and shape not in matched and plain.get(shape, 0) >= PLAIN_RUNS:
                continue  # a status line printed again with other numbers
            raw = cand.data.decode("utf-8", errors="replace")
            clean = clean_line(raw)
            hit = matcher.classify(clean, index, cand.line, cand.offset)
            if shape is not None:
                if hit is None:
                    plain[shape] = plain.get(shape, 0) + 1
                else:
                    matched.add(shape)
                if shape in scan.folded and shape not in shown:
                    shown[shape] = hit
            if hit is not None:
                out.hits.append(hit)
                fact_hits += [
                    FactHit(rule.fact, value, rule.id, index, cand.line)
                    for rule, value in matcher.facts(strip_controls(raw))
                ]
        for shape, count in scan.folded.items():
            first = shown.get(shape)
            if first is not None and first.category == "lookalike":
                out.repeats[first.rule] = out.repeats.get(first.rule, 0) + count
    out.facts = merge_facts(fact_hits)
    return out


class Analyser:
    """Turns memory-failure hits into ordered, analysed groups."""

    def __init__(self, sources: Sequence[Source], rules: Rules) -> None:
        self.sources = sources
        self.rules = rules
        self._inherited: dict[tuple[int, int], tuple[float, ...] | None] = {}
        self.unproven: set[int] = set()  # ids of hits kept without corroboration

    def ts_of(self, hit: Hit) -> tuple[float, ...] | None:
        """The event time of ``hit``: its line's own timestamp, else that of the nearest
        earlier timestamped line of its file (windows.time_before; found once per line)."""
        if hit.clean.ts_key is not None:
            return hit.clean.ts_key
        key = (hit.source, hit.line)
        if key not in self._inherited:
            path = self.sources[hit.source].path
            self._inherited[key] = time_before(path, hit.offset, hit.clean.stream)
        return self._inherited[key]

    def memory_hits(self, hits: Sequence[Hit]) -> tuple[list[Hit], list[Hit]]:
        """(memory hits kept, hits demoted to plain errors: uncorroborated or caused)."""
        rules = self.rules
        lookahead = rules.reading["raise_lookahead"]
        sig_hits = [h for h in hits if h.category == "signature"]
        sig_hits += _cut_after_raise(hits, lookahead)
        sig_hits = drop_yielding(sig_hits, {s.id: s.yields_to for s in rules.signatures})
        poison_ids = {x.id for x in rules.lookalikes if x.poisons}
        poisons = [h for h in hits if h.category == "lookalike" and h.rule in poison_ids]
        sig_hits, poisoned = drop_poisoned(sig_hits, poisons)
        sig_hits, recovered = _drop_recovered(sig_hits, hits, rules)
        poisoned = poisoned + recovered
        sig_hits, _past = self._drop_past(sig_hits, hits)  # history: not this run's error
        sig_hits, vetoed = self._traceback_vetoes(sig_hits)
        poisoned = poisoned + vetoed
        strong = [h for h in sig_hits if not rules.signature(h.rule).weak]
        weak = [h for h in sig_hits if rules.signature(h.rule).weak]
        confirmed, unconfirmed = self._corroborate(weak)
        if strong or confirmed:
            return strong + confirmed, poisoned + unconfirmed
        unproven = self._unexplained(unconfirmed, hits)
        self.unproven = {id(h) for h in unproven}
        return unproven, poisoned + [h for h in unconfirmed if id(h) not in self.unproven]

    def _traceback_vetoes(self, hits: list[Hit]) -> tuple[list[Hit], list[Hit]]:
        """(kept, vetoed): a signature's `unless_traceback` searched in the frames around it."""
        kept: list[Hit] = []
        vetoed: list[Hit] = []
        for number, group in enumerate(group_hits(hits, self.ts_of)):
            sig = self.rules.signature(group.signature)
            if not sig.unless_traceback or number >= MAX_WEAK_CHECKS:
                kept.extend(group.hits)
                continue
            window = self._window(group.first)
            start = traceback_start(window.lines, window.center)
            # the frames above, and a few lines below (summaries list the calls after)
            below = window.center + 1 + TRACEBACK_VETO_BELOW
            frames = [line.text for line in window.lines[start:below]]
            veto = any(p.search(text) for text in frames for p in sig.unless_traceback)
            (vetoed if veto else kept).extend(group.hits)
        return kept, vetoed

    def _unexplained(self, unconfirmed: list[Hit], hits: Sequence[Hit]) -> list[Hit]:
        """Weak hits that may stand unproven: a process killed (SIGKILL, exit 137) in an
        input with no other error that would explain the kill."""
        candidates = [h for h in unconfirmed if self.rules.signature(h.rule).unproven_confidence]
        if not candidates:
            return []
        pressure = {x.id for x in self.rules.lookalikes if x.pressure or x.notice}
        other_errors = [
            h
            for h in hits
            if h.category == "error" or (h.category == "lookalike" and h.rule not in pressure)
        ]
        # a hang a watchdog (NCCL's, an inference server's) reported before the kill
        # explains it too (the launcher or Ray tears the hung ranks down); timeouts after
        # it are its consequences
        first_kill = first_in_time(candidates, self.ts_of)
        hangs = {c.id for c in self.rules.consequences if c.hang}  # lookalikes.yaml hang
        earlier_hangs = [
            h
            for h in hits
            if h.category == "consequence"
            and h.rule in hangs
            and first_kill is not None
            and earlier(h, first_kill, self.ts_of) < 0
        ]
        return [] if other_errors or earlier_hangs else candidates

    def _corroborate(self, weak: list[Hit]) -> tuple[list[Hit], list[Hit]]:
        confirmed: list[Hit] = []
        unconfirmed: list[Hit] = []
        for number, group in enumerate(group_hits(weak, self.ts_of)):
            sig = self.rules.signature(group.signature)
            ok = False
            if number < MAX_WEAK_CHECKS:
                window = self._window(group.first)
                denied = self.rules.corroboration_denied
                ok = any(
                    _asserts(line.text, p, denied) for line in window.lines for p in sig.corroborate
                )
            (confirmed if ok else unconfirmed).extend(group.hits)
        return confirmed, unconfirmed

    def _drop_past(self, sig_hits: list[Hit], hits: Sequence[Hit]) -> tuple[list[Hit], list[Hit]]:
        """(kept, past): memory failures in a block a paste marks as past or solved ("===
        之前的报错（已解决）===", "### Previous error (fixed)"). The block ends at the header
        of the current error, the next past header, its first empty line after some
        text (a new paragraph may be today's error), or ``past_block`` lines."""
        marks = {x.id: x.past for x in self.rules.lookalikes if x.past}
        found = [h for h in hits if h.category == "lookalike" and h.rule in marks]
        found += self._headers_near(sig_hits, {(h.source, h.line) for h in hits})
        headers = sorted((h.source, h.line, marks[h.rule], h) for h in found)
        if not any(kind == "opens" for _, _, kind, _ in headers):
            return sig_hits, []
        blocks: list[tuple[int, int, int]] = []
        for index, (source, line, kind, hit) in enumerate(headers):
            if kind != "opens":
                continue
            end = line + self.rules.reading["past_block"]
            following = [h[1] for h in headers[index + 1 :] if h[0] == source]
            end = min([end, *following[:1], self._paragraph_end(hit)])
            blocks.append((source, line, end))
        kept: list[Hit] = []
        past: list[Hit] = []
        for hit in sig_hits:
            inside = any(s == hit.source and start < hit.line < end for s, start, end in blocks)
            (past if inside else kept).append(hit)
        return kept, past

    def _headers_near(self, sig_hits: list[Hit], seen: set[tuple[int, int]]) -> list[Hit]:
        """Hits of the rules tried only near a failure (lookalikes.yaml ``scope: window``:
        headings such as "=== Current error ===") in the window above each memory
        hit; their words ("new", "current", "old") fill healthy logs, so they are no
        prefilter triggers. Windows read from the last hit of a file upwards cover the
        hits above them; at most MAX_HEADER_WINDOWS are read."""
        prefilter = window_prefilter()
        rules = [x for x in self.rules.lookalikes if x.scope == "window"]
        if prefilter is None or not rules:
            return []
        needs = union_gate(p for rule in rules for p in rule.patterns)
        reach = self.rules.reading["past_block"]
        found: list[Hit] = []
        reads = 0
        for source in sorted({h.source for h in sig_hits}):
            covered = None  # the first line the windows read so far looked at
            for hit in sorted((h for h in sig_hits if h.source == source), key=lambda h: -h.line):
                if covered is not None and hit.line - reach >= covered:
                    continue
                if reads >= MAX_HEADER_WINDOWS:
                    return found
                reads += 1
                path = self.sources[source].path
                marked = marked_before(path, hit.offset, hit.line, prefilter, needs)
                covered = marked.first
                for offset, line in marked.lines:
                    key = (source, line.number)
                    if key in seen:
                        continue
                    rule = next(
                        (r for r in rules if any(p.search(line.text) for p in r.patterns)), None
                    )
                    if rule is not None:
                        seen.add(key)
                        found.append(
                            Hit("lookalike", rule.id, source, line.number, offset, line.clean)
                        )
        return found

    def _paragraph_end(self, header: Hit) -> int:
        """The first empty line after some text below ``header`` (a big number if none)."""
        window = self._window(header)
        seen_text = False
        for line in window.lines[window.center + 1 :]:
            if line.text.strip():
                seen_text = True
            elif seen_text:
                return line.number
        return header.line + 10**9

    def _window(self, hit: Hit) -> Window:
        source = self.sources[hit.source]
        return read_window(source.path, hit.offset, hit.line)

    def analyse(self, memory_hits: list[Hit]) -> list[Analysed]:
        """Groups with windows, phases and figures, root cause first."""
        groups = group_hits(memory_hits, self.ts_of)
        analysed: list[Analysed] = []
        for number, group in enumerate(groups):
            sig = self.rules.signature(group.signature)
            if number >= MAX_WINDOWS:
                figures = extract_figures(sig, group.first.text)
                analysed.append(Analysed(group, sig, None, None, figures))
                continue
            analysed.append(self._analyse_group(group, sig))
        return self._root_first(analysed)

    def _analyse_group(self, group: Group, sig: Signature) -> Analysed:
        first = group.first
        window = self._window(first)
        fail = window.center
        end = message_end(window.lines, fail, sig)
        message = "\n".join(line.text for line in window.lines[fail:end])
        figures = extract_figures(sig, message or first.text)
        if "free_bytes" not in figures and "total_capacity_bytes" not in figures:
            figures.update(_context_figures(window, fail, self.rules.context_figures))
        copies = [h.text for h in group.hits[1:8]]
        phase = score_phase(window, fail, sig, self.rules.phases, copies)
        stamped = _stamped_line(window, fail)
        ts_key = self.ts_of(first)
        rank = first.clean.rank
        # a node's report (Ray's memory monitor, the kernel, Slurm) names no rank: it
        # borrows none from the rank's lines printed before it
        if rank is None and stamped is not None and sig.scope != "node":
            rank = stamped.rank
        return Analysed(group, sig, window, phase, figures, ts_key, rank)

    def _root_first(self, analysed: list[Analysed]) -> list[Analysed]:
        """Earliest first; across files whose times cannot be compared (one line has no
        timestamp), the fuller message first: a bare line on one rank must not win over
        another rank's whole traceback just because its file was named first."""
        from functools import cmp_to_key

        def order(a: Analysed, b: Analysed) -> int:
            first_a, first_b = a.group.first, b.group.first
            if first_a.source != first_b.source and (
                self.ts_of(first_a) is None or self.ts_of(first_b) is None
            ):
                fuller_a, fuller_b = _fullness(a), _fullness(b)
                if fuller_a != fuller_b:
                    return -1 if fuller_a > fuller_b else 1
            return earlier(first_a, first_b, self.ts_of)

        return sorted(analysed, key=cmp_to_key(order))


_SENTENCE_END = re.compile(r"[.!?](?=\s|$)")


def _asserts(text: str, pattern: LazyPattern, denied: LazyPattern | None) -> bool:
    """The line states the memory evidence: not a question about it, nor its denial
    ("is the pool running out of memory?", "dmesg has nothing from the OOM killer")."""
    found = pattern.search(text)
    if found is None:
        return False
    ends = _SENTENCE_END.search(text, found.end())
    if (ends.group(0) if ends else text.rstrip()[-1:]) == "?":
        return False  # the sentence that names it asks a question
    return denied is None or not denied.search(text[: found.start()])


def _drop_recovered(
    sig_hits: list[Hit], hits: Sequence[Hit], rules: Rules
) -> tuple[list[Hit], list[Hit]]:
    """(kept, recovered): a memory failure with a "retrying with a smaller batch" line of
    the same file just before it (a logger that prints the traceback after its message)
    or just after it was caught and handled."""
    recovering = {x.id for x in rules.lookalikes if x.recovers}
    before, after = rules.reading["recovery_before"], rules.reading["recovery_after"]
    marks = [h for h in hits if h.category == "lookalike" and h.rule in recovering]
    if not marks:
        return sig_hits, []
    kept: list[Hit] = []
    recovered: list[Hit] = []
    for hit in sig_hits:
        near = any(m.source == hit.source and -before <= m.line - hit.line <= after for m in marks)
        (recovered if near else kept).append(hit)
    return kept, recovered


def _cut_after_raise(hits: Sequence[Hit], lookahead: int) -> list[Hit]:
    """Source lines that raise a memory error, where the paste ends before the
    exception line: nothing that looks like an error follows within a few lines."""
    raises = [h for h in hits if h.category == "raise"]
    if not raises:
        return []
    errors: dict[int, list[int]] = {}
    for other in hits:
        if other.category in ("signature", "raise", "error", "lookalike"):
            errors.setdefault(other.source, []).append(other.line)
    out: list[Hit] = []
    for hit in raises:
        lines = sorted(errors.get(hit.source, []))
        after = bisect_right(lines, hit.line)
        if after == len(lines) or lines[after] - hit.line > lookahead:
            out.append(replace(hit, category="signature"))
    return out


def _fullness(item: Analysed) -> tuple[int, int, int]:
    """How much a failure says: a traceback with frames, its figures, its signature."""
    frames = 0
    if item.window is not None:
        start = traceback_start(item.window.lines, item.window.center)
        frames = item.window.center - start
    return (1 if frames > 0 else 0, len(item.figures), item.signature.priority)


def _context_figures(window: Window, fail: int, figures: Sequence[Figure]) -> dict[str, Any]:
    """Figures of the nearest earlier line of the same process that states the first one."""
    if not figures:
        return {}
    stream = window.lines[fail].clean.stream
    for line in reversed(window.lines[:fail]):
        if stream and line.clean.stream not in (stream, ""):
            continue
        if any(p.search(line.text) for p in figures[0].patterns):
            found = {}
            for figure in figures:
                found.update(extract_values(figure, line.text))
            return found
    return {}


def _stamped_line(window: Window, fail: int) -> CleanLine | None:
    """A traceback has no ranks: the nearest earlier stamped line of the same process
    lends its rank (any process when the failure line has no prefix)."""
    stream = window.lines[fail].clean.stream
    for line in reversed(window.lines[:fail]):
        if line.clean.ts_key is not None and (not stream or line.clean.stream in (stream, "")):
            return line.clean
    return None


def first_in_time(
    hits: Sequence[Hit], ts_of: Callable[[Hit], tuple[float, ...] | None]
) -> Hit | None:
    best: Hit | None = None
    for hit in hits:
        if best is None or earlier(hit, best, ts_of) < 0:
            best = hit
    return best
