"""Find candidate lines fast: a DFA prefilter over raw bytes in large blocks.

Python's ``re`` over a 400 MB log takes many seconds; a multi-literal automaton
over the raw bytes takes a fraction of a second. So the scanner only looks for
the trigger strings of every rule (knowledge/*.yaml) and returns the few lines
that contain one, with their line numbers; the full rules run on those lines
and on windows read around them afterwards.

Backends: Hyperscan when installed (several GB/s), else google-re2. Big inputs
are split into line-aligned byte ranges scanned by two processes.
"""

from __future__ import annotations

import os
import re
from bisect import bisect_left
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

BLOCK_BYTES = 8 * 1024 * 1024
HALF_SLICE = 4 * 1024  # bytes kept on each side of a match in a very long line
CARRY_CAP = 64 * 1024  # bytes of an unfinished line carried into the next block
RANGE_BYTES = 48 * 1024 * 1024  # files are split into ranges of about this size
PARALLEL_MIN_BYTES = 24 * 1024 * 1024  # below this, one process is faster
MAX_CANDIDATES = 20_000  # per range; afterwards only memory-signature lines are kept ...
TAIL_CANDIDATES = 2_000  # ... and the last ones of the range (a crash ends its log)
# A flood of one line shape (a server's "KV cache pool is full. Retract requests." on every
# retraction, a per-step stats line with "num_ooms: 0") would fill the candidates and
# take seconds to classify. Past FOLD_AFTER candidates in a range, a shape (the line
# with its numbers masked) keeps FOLD_KEEP candidates and its later lines are counted
# (RangeScan.folded): a log with fewer candidates is read exactly as before.
FOLD_AFTER = 2_000
FOLD_KEEP = 256
# numbers that may decide what a line is (an exit code, a signal, a CUDA error number):
# such lines are never folded. Searched once per line shape (digits masked as #: whether
# a word is followed by a number shows in the shape), so a flood pays a dict look-up.
_CODED = re.compile(
    rb"\b(?:code|exitcode|signal|status|failure|errno|result|rc|sig\w*)[^\w#]{0,3}-?#"
    rb"|\berror[ :(]+-?#+(?![.#])"
)
_MASK_DIGITS = bytes.maketrans(b"0123456789", b"##########")
_CODED_SHAPES: dict[bytes, bool] = {}
CODED_SHAPES_KEPT = 50_000  # shapes whose answer is remembered (a memory bound)


@dataclass(frozen=True)
class Candidate:
    """A line (or a slice of a very long line) that contains a trigger."""

    line: int  # 1-based line number in the source
    offset: int  # byte offset of ``data`` in the source
    data: bytes


@dataclass
class RangeScan:
    candidates: list[Candidate] = field(default_factory=list)
    newlines: int = 0
    dropped: int = 0  # candidates not kept because of MAX_CANDIDATES
    folded: dict[bytes, int] = field(default_factory=dict)  # line shape -> lines counted only
    # while scanning: kept candidates per shape, and the tail past MAX_CANDIDATES
    _shapes: dict[bytes, int] = field(default_factory=dict, repr=False)
    _tail: deque[Candidate] = field(
        default_factory=lambda: deque(maxlen=TAIL_CANDIDATES), repr=False
    )
    # the last folded line of each shape: (line, offset, data)
    _last: dict[bytes, tuple[int, int, bytes]] = field(default_factory=dict, repr=False)

    def finish(self) -> None:
        """Join the tail and the last line of each folded shape to the candidates, in
        line order; drop the scanning state."""
        for shape, (line, offset, data) in self._last.items():
            self.candidates.append(Candidate(line, offset, data))
            self.folded[shape] -= 1
            if not self.folded[shape]:
                del self.folded[shape]
        if self._tail or self._last:
            self.candidates.extend(self._tail)
            self.candidates.sort(key=lambda candidate: candidate.offset)
        self._tail = deque(maxlen=TAIL_CANDIDATES)
        self._shapes = {}
        self._last = {}


def line_shape(data: bytes) -> bytes | None:
    """``data`` with every digit masked, or None for a line whose numbers may decide
    what it is (``exit code 137``, ``Signal 9``, ``Cuda failure 2``): never folded."""
    shape = data.translate(_MASK_DIGITS)
    coded = _CODED_SHAPES.get(shape)
    if coded is None:
        coded = _CODED.search(shape.lower()) is not None
        if len(_CODED_SHAPES) < CODED_SHAPES_KEPT:
            _CODED_SHAPES[shape] = coded
    return None if coded else shape


class Prefilter:
    """Multi-pattern search over bytes, reporting match end offsets."""

    def __init__(self, triggers: Sequence[str], priority: Sequence[str]) -> None:
        self.triggers = tuple(triggers)
        self._priority_source = tuple(priority)
        self._priority: re.Pattern[bytes] | None = None  # compiled when first needed
        wanted = set(self._priority_source)
        self._priority_ids = frozenset(i for i, t in enumerate(self.triggers) if t in wanted)
        self._hs = _hyperscan_db(self.triggers)
        if self._hs is None:
            import re2

            self._re2 = re2.compile("|".join(_to_re2(t) for t in self.triggers).encode())

    @property
    def backend(self) -> str:
        return "hyperscan" if self._hs is not None else "re2"

    def ends(self, buf: bytes) -> list[int]:
        return self.matches(buf)[0]

    def matches(self, buf: bytes) -> tuple[list[int], list[int] | None]:
        """The end offsets of every match, in order, and those of the priority triggers'
        (Hyperscan names each match's trigger; None with re2, where ``is_priority``
        decides line by line)."""
        if self._hs is None:
            return [m.end() for m in self._re2.finditer(buf)], None
        found: list[int] = []
        priority: list[int] = []
        ids = self._priority_ids

        def seen(number: int, _from: int, to: int, _flags: int, _context: object) -> None:
            found.append(to)
            if number in ids:
                priority.append(to)

        self._hs.scan(buf, match_event_handler=seen)
        found.sort()
        priority.sort()
        return found, priority

    def holds_priority(
        self, priority_ends: list[int] | None, data: bytes, start: int, end: int
    ) -> bool:
        """Whether the line ``data``, at [start, end) of a buffer whose priority matches
        end at ``priority_ends`` (``matches``), holds a memory signature's trigger."""
        if priority_ends is None:
            return self.is_priority(data)
        index = bisect_left(priority_ends, start + 1)
        return index < len(priority_ends) and priority_ends[index] <= end

    def is_priority(self, data: bytes) -> bool:
        """Whether ``data`` holds a memory signature's trigger. Asked only once a range
        has MAX_CANDIDATES candidates, so the regex is compiled then (it costs a few
        milliseconds every run otherwise)."""
        if not self._priority_source:
            return False
        if self._priority is None:
            joined = "|".join(_to_python(t) for t in self._priority_source)
            self._priority = re.compile(joined.encode())
        return self._priority.search(data) is not None


def _to_python(trigger: str) -> str:
    if trigger.startswith("(?i)"):
        return "(?i:" + trigger[4:] + ")"
    return "(?:" + trigger + ")"


def _to_re2(trigger: str) -> str:
    return _to_python(trigger)


def _hyperscan_db(triggers: tuple[str, ...]) -> Any:
    """The compiled Hyperscan database of ``triggers``: from the user's cache when the
    same triggers were compiled before (compiling costs tens of milliseconds per run)."""
    if os.environ.get("AREAL_DOCTOR_PREFILTER") == "re2":
        return None
    try:
        import hyperscan
    except ImportError:
        return None
    expressions, flags = [], []
    for trigger in triggers:
        caseless = trigger.startswith("(?i)")
        expressions.append(trigger.removeprefix("(?i)").encode())
        flags.append(hyperscan.HS_FLAG_CASELESS if caseless else 0)
    name = _database_name(expressions, flags, getattr(hyperscan, "__version__", ""))
    cached = _cached_database(hyperscan, name)
    if cached is not None:
        return cached
    database = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    database.compile(
        expressions=expressions,
        ids=list(range(len(expressions))),
        elements=len(expressions),
        flags=flags,
    )
    _store_database(hyperscan, name, database)
    return database


def _database_name(expressions: list[bytes], flags: list[int], version: str) -> str:
    import hashlib

    digest = hashlib.sha256(version.encode())
    for expression, flag in zip(expressions, flags, strict=True):
        digest.update(b"%d\0%s\0" % (flag, expression))
    return f"prefilter-{digest.hexdigest()[:24]}.hsdb"


def _cached_database(hyperscan: Any, name: str) -> Any:
    from assistant.cache import read_bytes

    data = read_bytes(name)
    if not data:
        return None
    try:
        database = hyperscan.loadb(data, mode=hyperscan.HS_MODE_BLOCK)
        database.scratch = hyperscan.Scratch(database)  # compile() makes one; loadb does not
        return database
    except Exception:  # noqa: BLE001 - a stale or foreign file: compile instead
        return None


def _store_database(hyperscan: Any, name: str, database: Any) -> None:
    from assistant.cache import write_bytes

    try:
        write_bytes(name, hyperscan.dumpb(database))
    except Exception:  # noqa: BLE001 - the cache only saves time
        return


@cache
def default_prefilter() -> Prefilter:
    from assistant.logs.rules import load_rules

    rules = load_rules()
    priority = [t for sig in rules.signatures for t in sig.triggers]
    return Prefilter(rules.triggers, priority)


@cache
def window_prefilter() -> Prefilter | None:
    """The prefilter of the rules tried only near a failure (lookalikes.yaml
    ``scope: window``), or None when there are none."""
    from assistant.logs.rules import load_rules

    triggers = load_rules().window_triggers
    return Prefilter(triggers, ()) if triggers else None


def scan_range(path: str, start: int, end: int, prefilter: Prefilter | None = None) -> RangeScan:
    """Scan bytes [start, end) of ``path``; ``start`` must begin a line."""
    prefilter = prefilter or default_prefilter()
    result = RangeScan()
    with open(path, "rb") as handle:
        state = _BlockState(base=start)
        size = BLOCK_BYTES
        while True:
            # the unfinished tail of a block is read again with the next one (a seek
            # back of at most CARRY_CAP): cheaper than joining it to the next block,
            # which copies every block once more
            handle.seek(state.base)
            base = state.base
            want = min(size, end - base)
            buf = handle.read(want) if want > 0 else b""
            final = not buf or base + len(buf) >= end
            _scan_block(buf, final, state, prefilter, result)
            if final:
                break
            # a block that is all one unfinished line: read it again with more after it
            size = size + BLOCK_BYTES if state.base == base else BLOCK_BYTES
    result.finish()
    return result


@dataclass
class _BlockState:
    base: int  # absolute offset of the current buffer's first byte
    lines_at_base: int = 0  # newlines before ``base`` (relative to the range start)
    covered_until: int = -1  # absolute offset up to which candidates were taken
    starts_at_line: bool = True  # the buffer's first byte begins a line


def _scan_block(buf: bytes, final: bool, st: _BlockState, pf: Prefilter, out: RangeScan) -> bytes:
    """Collect candidates in ``buf``; return the unfinished tail to carry over."""
    cursor, lines_at_cursor = 0, st.lines_at_base
    limit = len(buf)
    ends, priority_ends = pf.matches(buf) if buf else ([], [])
    for end in ends:
        if st.base + end <= st.covered_until:
            continue
        lo = max(0, end - HALF_SLICE)
        line_start = buf.rfind(b"\n", lo, end) + 1
        if line_start == 0 and not (lo == 0 and st.starts_at_line):
            line_start = lo  # a very long line: keep a slice around the match
        newline = buf.find(b"\n", end, end + HALF_SLICE)
        if newline >= 0:
            line_end = newline
        elif end + HALF_SLICE <= limit or final:
            line_end = min(limit, end + HALF_SLICE)
        else:
            continue  # unfinished line: it is carried over and scanned again
        st.covered_until = st.base + line_end
        data = buf[line_start:line_end]
        kept = len(out.candidates)
        fold = _fold_shape(out, data) if kept >= FOLD_AFTER else None
        if line_start >= cursor:
            lines_at_cursor += buf.count(b"\n", cursor, line_start)
            cursor = line_start
            line_no = lines_at_cursor
        else:
            line_no = lines_at_cursor - buf.count(b"\n", line_start, cursor)
        if fold is not None:
            # counted; the last line of each folded shape is kept (finish): the crash
            # that ends a log may repeat the message of failures caught before it, and a
            # recovery line the failure it follows
            out.folded[fold] = out.folded.get(fold, 0) + 1
            out._last[fold] = (line_no + 1, st.base + line_start, data)
            continue
        # past the cap only a memory signature's line joins the candidates (else the tail)
        priority = kept >= MAX_CANDIDATES and pf.holds_priority(
            priority_ends, data, line_start, line_end
        )
        _keep(out, Candidate(line_no + 1, st.base + line_start, data), priority)
    if final:
        out.newlines = lines_at_cursor + buf.count(b"\n", cursor)
        return b""
    last_newline = buf.rfind(b"\n")
    carry_start = max(last_newline + 1, limit - CARRY_CAP)
    if carry_start < cursor:  # keep the cursor inside the part we count now
        lines_at_cursor -= buf.count(b"\n", carry_start, cursor)
        cursor = carry_start
    st.lines_at_base = lines_at_cursor + buf.count(b"\n", cursor, carry_start)
    st.starts_at_line = carry_start == last_newline + 1
    st.base += carry_start
    return buf[carry_start:]


def _fold_shape(out: RangeScan, data: bytes) -> bytes | None:
    """The shape of ``data`` when it repeats a line shape that has FOLD_KEEP candidates
    kept already (it is then folded), else None (and the shape's count goes up)."""
    shape = line_shape(data)
    if shape is None:
        return None
    seen = out._shapes.get(shape, 0)
    if seen >= FOLD_KEEP:
        return shape
    out._shapes[shape] = seen + 1
    return None


def _keep(out: RangeScan, candidate: Candidate, priority: bool) -> None:
    """Keep ``candidate`` (``priority``: it holds a memory signature's trigger; only
    looked at once the range has MAX_CANDIDATES candidates)."""
    kept = len(out.candidates)
    if kept < MAX_CANDIDATES or (kept < 2 * MAX_CANDIDATES and priority):
        out.candidates.append(candidate)
        return
    if len(out._tail) == TAIL_CANDIDATES:
        out.dropped += 1
    out._tail.append(candidate)


@dataclass(frozen=True)
class _Task:
    source: int
    path: str
    start: int
    end: int


def split_ranges(path: str, size: int, range_bytes: int = RANGE_BYTES) -> list[tuple[int, int]]:
    """Line-aligned byte ranges of about ``range_bytes`` covering the file."""
    if size <= range_bytes:
        return [(0, size)]
    cuts = [0]
    with open(path, "rb") as handle:
        for target in range(range_bytes, size, range_bytes):
            handle.seek(target)
            probe = handle.read(1024 * 1024)
            newline = probe.find(b"\n")
            if newline < 0:
                continue  # a huge line here: leave it to one range
            cut = target + newline + 1
            if cut > cuts[-1] and cut < size:
                cuts.append(cut)
    cuts.append(size)
    return list(zip(cuts, cuts[1:], strict=False))


def _run_task(task: _Task) -> tuple[_Task, RangeScan]:
    return task, scan_range(task.path, task.start, task.end)


def scan_files(
    paths: Sequence[str],
    sizes: Sequence[int],
    progress: Callable[[int, int], None] | None = None,
    workers: int | None = None,
) -> list[RangeScan]:
    """Scan every file; one merged RangeScan per file, line numbers absolute."""
    default_prefilter()  # compile before forking, so workers inherit it
    total = sum(sizes)
    tasks = [
        _Task(index, path, start, end)
        for index, (path, size) in enumerate(zip(paths, sizes, strict=True))
        for start, end in split_ranges(path, size)
    ]
    workers = workers if workers is not None else min(2, os.cpu_count() or 1)
    parts: dict[tuple[int, int], RangeScan] = {}
    done = 0
    if workers > 1 and total >= PARALLEL_MIN_BYTES and len(tasks) > 1:
        # imported here: the process pool costs ~15 ms to import and small logs never use it
        from concurrent.futures import ProcessPoolExecutor
        from multiprocessing import get_context

        with ProcessPoolExecutor(workers, mp_context=get_context("fork")) as pool:
            for task, scanned in pool.map(_run_task, tasks, chunksize=_chunksize(tasks)):
                parts[(task.source, task.start)] = scanned
                done += task.end - task.start
                if progress:
                    progress(done, total)
    else:
        for task in tasks:
            parts[(task.source, task.start)] = scan_range(task.path, task.start, task.end)
            done += task.end - task.start
            if progress:
                progress(done, total)
    return _merge(tasks, parts, len(paths))


def _chunksize(tasks: list[_Task]) -> int:
    return max(1, len(tasks) // 16)


def _merge(
    tasks: list[_Task], parts: dict[tuple[int, int], RangeScan], count: int
) -> list[RangeScan]:
    merged = [RangeScan() for _ in range(count)]
    for task in tasks:  # tasks are in file order, ranges in offset order
        part, whole = parts[(task.source, task.start)], merged[task.source]
        shift = whole.newlines
        whole.candidates.extend(
            Candidate(c.line + shift, c.offset, c.data) for c in part.candidates
        )
        whole.newlines += part.newlines
        whole.dropped += part.dropped
        for shape, count in part.folded.items():
            whole.folded[shape] = whole.folded.get(shape, 0) + count
    return merged
