"""Read a bounded window of lines around a candidate line.

Only the root-cause candidates get a window: the traceback above the failure,
the lines that follow it and the context that tells the phase. Windows are
bounded in bytes and lines, so a 30 MB line or a 400 MB file costs the same.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass

from assistant.logs.gates import Gate, closed
from assistant.logs.lines import MAX_LINE_CHARS, CleanLine, clean_line
from assistant.logs.scan import Prefilter

BEFORE_BYTES = 160 * 1024
AFTER_BYTES = 48 * 1024
BEFORE_LINES = 400
AFTER_LINES = 150  # a native failure's Python repeat may end a long traceback below it
TIME_SEARCH_BYTES = 8 * 1024 * 1024  # how far above a line its event time is looked for
_CLOCK = re.compile(rb"\d:\d\d:\d\d")


@dataclass(frozen=True)
class WindowLine:
    number: int  # 1-based line number in the source
    clean: CleanLine

    @property
    def text(self) -> str:
        return self.clean.text


@dataclass(frozen=True)
class Window:
    lines: tuple[WindowLine, ...]
    center: int  # index in ``lines`` of the candidate line

    def index_of(self, number: int) -> int | None:
        for index, line in enumerate(self.lines):
            if line.number == number:
                return index
        return None


def read_window(path: str, offset: int, line_number: int) -> Window:
    """Lines around the line starting at byte ``offset`` (line ``line_number``)."""
    start = max(0, offset - BEFORE_BYTES)
    with open(path, "rb") as handle:
        handle.seek(start)
        data = handle.read(offset - start + AFTER_BYTES)
    head, tail = data[: offset - start], data[offset - start :]
    before = _whole_lines(head, start)[-BEFORE_LINES:]
    after = tail.split(b"\n")[: AFTER_LINES + 1]
    if len(data) == offset - start + AFTER_BYTES and len(after) > 1:
        after = after[:-1]  # the last piece may be cut
    lines = [WindowLine(line_number - len(before) + i, _clean(raw)) for i, raw in enumerate(before)]
    center = len(lines)
    lines += [WindowLine(line_number + i, _clean(raw)) for i, raw in enumerate(after)]
    return Window(tuple(lines), center)


def _whole_lines(head: bytes, start: int) -> list[bytes]:
    """The whole lines of ``head`` (bytes from ``start`` up to a line's start)."""
    before = head.split(b"\n")
    if start > 0 and len(before) > 1:
        before = before[1:]  # the first piece is a partial line
    before = before[:-1] if before and before[-1] == b"" else before
    if head and not head.endswith(b"\n") and before:
        # the offset is inside a very long line: its slice starts at ``offset``
        before.pop()
    return before


@dataclass(frozen=True)
class Marked:
    """Lines before a candidate that hold a trigger of ``prefilter`` (see marked_before)."""

    lines: tuple[tuple[int, WindowLine], ...]  # (byte offset, line)
    first: int  # the first line number looked at


def marked_before(
    path: str,
    offset: int,
    line_number: int,
    prefilter: Prefilter,
    needs: Gate | None = None,
) -> Marked:
    """The lines of the window above the line at ``offset`` that hold one of
    ``prefilter``'s triggers, cleaned, with their byte offsets: what a rule tried only near
    a failure (lookalikes.yaml ``scope: window``) is matched on. Only those lines are
    decoded, so the cost is one bounded read and one byte scan.

    ``needs`` (lower-case literals, the rules' gate: ``lazyre.union_gate``) also leaves
    out a plain ASCII line that holds none of them, before it is cleaned: a trigger word
    such as "new" fills a server's status lines ("#new-seq: 1, #new-token: 8192"), and
    no heading rule can match a line without its other words."""
    start = max(0, offset - BEFORE_BYTES)
    with open(path, "rb") as handle:
        handle.seek(start)
        head = handle.read(offset - start)
    pieces = _whole_lines(head, start)[-BEFORE_LINES:]
    first = line_number - len(pieces)
    if not pieces:
        return Marked((), line_number)
    block = b"\n".join(pieces)
    block_end = len(head) - 1 if head.endswith(b"\n") else head.rfind(b"\n")
    base = start + block_end - len(block)
    starts = [0]
    for piece in pieces[:-1]:
        starts.append(starts[-1] + len(piece) + 1)
    found: dict[int, tuple[int, WindowLine]] = {}
    passed: set[int] = set()
    for end in prefilter.ends(block):
        index = bisect_right(starts, max(0, end - 1)) - 1
        if index in found or index in passed:
            continue
        if needs and _lacks(pieces[index], needs):
            passed.add(index)
            continue
        line = WindowLine(first + index, _clean(pieces[index]))
        found[index] = (base + starts[index], line)
    return Marked(tuple(found[i] for i in sorted(found)), first)


def _lacks(raw: bytes, needs: Gate) -> bool:
    """A line whose cleaning cannot bring in a literal it lacks (ASCII, no escape codes,
    no HTML entities) and that holds none of ``needs`` (gates.closed)."""
    if not raw.isascii() or b"\x1b" in raw or b"&" in raw:
        return False
    return closed(needs, raw.decode("ascii"))


def time_before(path: str, offset: int, stream: str) -> tuple[float, ...] | None:
    """The time of the nearest earlier timestamped line of the same file, for a line
    (at ``offset``) that carries none: a traceback sits under the log line that led to
    it, however far above (a communicator's NCCL INFO lines can come between).

    A line of the same process (``stream``, or one without a prefix) is preferred within
    BEFORE_BYTES; beyond that, or when none is there, the nearest stamped line of any
    process in the file (a merged log is written in time order). Reads backwards in
    growing blocks, at most TIME_SEARCH_BYTES; only lines with a clock are decoded."""
    other: tuple[float, ...] | None = None
    pos, size, carry = offset, 8 * 1024, b""
    with open(path, "rb") as handle:
        while pos > 0 and offset - pos < TIME_SEARCH_BYTES:
            start = max(0, pos - size, offset - TIME_SEARCH_BYTES)
            size = min(size * 4, 1024 * 1024)
            handle.seek(start)
            block = handle.read(pos - start) + carry
            carry = b""
            if start > 0:  # the first piece may be the end of a line that starts earlier
                cut = block.find(b"\n")
                carry, block = (block, b"") if cut < 0 else (block[:cut], block[cut + 1 :])
            pos = start
            for raw in reversed(block.split(b"\n")):
                if not _CLOCK.search(raw):
                    continue
                clean = _clean(raw)
                if clean.ts_key is None:
                    continue
                if not stream or clean.stream in (stream, ""):
                    if other is None or offset - pos <= BEFORE_BYTES:
                        return clean.ts_key
                    return other
                other = other or clean.ts_key
            if other is not None and offset - pos > BEFORE_BYTES:
                return other
    return other  # a partial line left in ``carry`` at the search limit is not read


def _clean(raw: bytes) -> CleanLine:
    if len(raw) > MAX_LINE_CHARS * 4:
        raw = raw[: MAX_LINE_CHARS * 4]
    return clean_line(raw.decode("utf-8", errors="replace"))
