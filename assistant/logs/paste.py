"""Undo what copying a log into an issue, a chat or a terminal did to it.

A log pasted by hand is rarely the bytes the program wrote: a terminal hard-wraps
long lines at its width (inside words and numbers), markdown quotes every line
with ``> `` and fences it, a web page turns colour codes into ``#033[33m`` or
``^[[33m`` text and carriage returns into ``^M``, and some trackers flatten a whole
traceback onto one line. Signatures are written for the program's own lines, so
such a paste is repaired first into a temporary copy, with a map from each repaired
line back to the line the user can find in their file.

Only small inputs are repaired (pastes, not a 400 MB training log). ``repair``
does the safe repairs that cannot join unrelated lines; ``rejoin`` is the second
chance, used only when the first reading found no memory failure: it also joins a
long line to a next line that reads as its continuation (a single wrap, where no
common width shows it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from assistant.logs.lazyre import lazy

REPAIR_MAX_BYTES = 2 * 1024 * 1024  # a paste (an issue comment holds 64 KiB)
MIN_WRAP_WIDTH = 60  # terminals and issue viewers wrap at 80..250 columns
LONGER_THAN_WRAP_SHARE = 0.05  # lines longer than the wrap width (typed above the paste)
FLAT_MIN_CHARS = 600  # a flattened traceback is a long line with several frames in it
QUOTED_SHARE = 0.6  # share of non-empty lines that start with '>' for a quoted paste

# colour codes whose ESC byte was turned into text by a web page, syslog or a terminal
_ESCAPE_TEXT = lazy(
    r"(?:#033|\\033|\\x1[bB]|\\e|\\u001[bB]|\^\[|\u241b)\[[0-9;?]*[A-Za-z]"
    r"|(?<=\s)\[(?:\d{1,3};)*\d{1,3}m(?=\S)"
)
_CARET_M = lazy(r"\^M(?=.|$)")
_QUOTE = lazy(r"^[ \t]{0,3}(?:>[ \t]?)+")
_FENCE = lazy(r"^\s*(?:```|~~~)[\w+-]*\s*$")
_TABLE_EDGE = lazy(r"[|+=\-]\s*$")
# a line that starts a new record, so it is no continuation of the line above
_RECORD_START = lazy(
    r"^(?:\s*$|\s*(?:File \"|Traceback \(|During handling|The above exception)"
    r"|\[?\d{4}-\d{2}-\d{2}|\d{8}-\d{2}:|\[rank\d+\]|\(\w[\w.:-]*(?: pid=| ip=|\))"
    r"|(?:DEBUG|INFO|WARN|WARNING|ERROR|CRITICAL|FATAL)\b|[IWEF]\d{4} |\[\s*\d+\.\d+\]"
    r"|[|+]|#\d|\w+(?:\.\w+)*(?:Error|Exception|Warning)\b)"
)
# where a flattened log is cut back into lines
# IPython / Jupyter print frames as "File /path/x.py:1063, in Class.func(args)" and the
# cell as "Cell In[12], line 3", with real colour codes; written here as Python does
_ANSI = lazy(r"\x1b\[[0-9;?]*[A-Za-z]")
_IPYTHON_FRAME = lazy(
    r"^\s*(?:File (?P<path>\S+?):(?P<line>\d+)(?:, in (?P<func>[\w.<>]+))?"
    r"|Cell In\[(?P<cell>\d+)\], line (?P<cell_line>\d+))"
)
_IPYTHON_FRAME_ANYWHERE = lazy(
    r"^(?:\x1b\[[0-9;]*m)*(?:File (?:\x1b\[[0-9;]*m)*\S+?:\d+|Cell (?:\x1b\[[0-9;]*m)*In\[\d+\])",
    re.MULTILINE,
)
_FLAT_BREAK = lazy(
    r"(?<=\S)\s*(?=Traceback \(most recent call last\):)"
    r"|(?<=\S)\s*(?=File \"[^\"]+\", line \d+)"
    r"|(?<=\S)\s*(?=(?:During handling of the above exception|The above exception was))"
    r"|(?<=[\w)\]'\"])\s+(?=(?:[a-z_][\w]*\.)*[A-Z]\w*(?:Error|Exception)(?:\([\w.]+\))?: )"
)
_FRAME_MARK = lazy(r"File \"[^\"]+\", line \d+|Traceback \(most recent call last\)")


@dataclass(frozen=True)
class Repaired:
    """The repaired text and, per repaired line, the 1-based line of the original."""

    text: str
    line_map: tuple[int, ...]

    def original_line(self, line: int) -> int:
        if 1 <= line <= len(self.line_map):
            return self.line_map[line - 1]
        return line


def repair(text: str) -> Repaired | None:
    """The repaired paste, or None when nothing needed repair."""
    raw_lines = text.split("\n")
    if raw_lines and raw_lines[-1] == "":
        raw_lines.pop()
    joins = _wrapped_lines(raw_lines)
    quoted = _is_quoted(raw_lines)
    ipython = "File " in text and bool(_IPYTHON_FRAME_ANYWHERE.search(text))
    if not (joins or quoted or ipython or _has_remnants(text) or _has_flat_line(raw_lines)):
        return None  # the common case, decided without touching each line
    lines: list[tuple[str, int]] = []
    for number, line in enumerate(raw_lines, start=1):
        lines.extend((piece, number) for piece in _split_flat(_clean(line, quoted)))
    # indices into raw_lines and into lines differ only where a flat line was split
    merged = _join(lines, joins)
    changed = merged != [(line, n) for n, line in enumerate(raw_lines, start=1)]
    return _as_repaired(merged) if changed else None


def rejoin(text: str) -> Repaired | None:
    """Second chance: also join single wraps (a long line and its continuation)."""
    base = repair(text)
    source = base.text if base is not None else text
    lines = source.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the text's final newline ends the last line; it starts no new one
    numbers = base.line_map if base is not None else range(1, len(lines) + 1)
    pairs = list(zip(lines, numbers, strict=False))
    if not pairs:
        return None
    out: list[tuple[str, int]] = []
    for line, number in pairs:
        if out and _continues(out[-1][0], line):
            previous, first = out[-1]
            out[-1] = (previous + line, first)
        else:
            out.append((line, number))
    if len(out) == len(pairs):
        return base
    return _as_repaired(out)


_REMNANT_MARKS: tuple[str, ...] = (
    "^M",
    "```",
    "~~~",
    "#033[",
    "\\033[",
    "\\x1b[",
    "\\x1B[",
    "\\e[",
    "\\u001b[",
)
_REMNANT_MARKS += ("\\u001B[", "^[[", "\u241b[")
_STRAY_COLOUR_MID = lazy(r"\s\[\d{1,3}(?:;\d{1,3})*m\S")


def _has_remnants(text: str) -> bool:
    """Cheap test for what ``_clean`` removes (a scan of the whole text per mark)."""
    return any(mark in text for mark in _REMNANT_MARKS) or bool(_STRAY_COLOUR_MID.search(text))


def _has_flat_line(lines: list[str]) -> bool:
    return any(len(line) >= FLAT_MIN_CHARS and 'File "' in line for line in lines)


def _as_repaired(lines: list[tuple[str, int]]) -> Repaired:
    return Repaired("\n".join(line for line, _ in lines) + "\n", tuple(n for _, n in lines))


def _clean(line: str, quoted: bool) -> str:
    if quoted:
        line = _QUOTE.sub("", line, count=1)
    if ("File " in line or "Cell " in line) and _IPYTHON_FRAME.match(_ANSI.sub("", line)):
        line = _python_frame(_ANSI.sub("", line))
    if "[" in line:
        line = _ESCAPE_TEXT.sub("", line)
    if "^M" in line:
        line = _CARET_M.sub("\r", line)
    if _FENCE.match(line):
        return ""
    return line


def _python_frame(line: str) -> str:
    found = _IPYTHON_FRAME.match(line)
    if found is None:
        return line
    if found["cell"] is not None:
        return f'  File "<cell In[{found["cell"]}]>", line {found["cell_line"]}, in <module>'
    func = (found["func"] or "<module>").rsplit(".", 1)[-1]  # Trainer.compute_loss -> compute_loss
    return f'  File "{found["path"]}", line {found["line"]}, in {func}'


def _is_quoted(lines: list[str]) -> bool:
    filled = [line for line in lines if line.strip()]
    if len(filled) < 2:
        return bool(filled) and filled[0].lstrip().startswith("> ")
    quoted = sum(1 for line in filled if _QUOTE.match(line))
    return quoted >= QUOTED_SHARE * len(filled)


def _wrapped_lines(lines: list[str]) -> set[int]:
    """1-based numbers of lines a terminal cut at a fixed width (joined to the next).

    The width is the line length that most long lines share exactly: a hard wrap
    leaves every cut line at the same width. A few lines may be longer (the reporter's
    own words typed above the paste, which the terminal did not wrap), but no more than
    a quarter as many as the cut lines, and more than one only within
    LONGER_THAN_WRAP_SHARE of all lines."""
    if not lines:
        return set()
    lengths = list(map(len, lines))
    if any(line.endswith("\r") for line in lines):
        lengths = [len(line.rstrip("\r")) for line in lines]
    widest = _wrap_width(lengths)
    if widest is None:
        return set()
    cut = set()
    for index, length in enumerate(lengths[:-1]):
        if length != widest or _TABLE_EDGE.search(lines[index]):
            continue
        following = lines[index + 1]
        # an indented line is code or a nested record (a traceback's source line)
        if following.strip() and not following[:2].isspace() and not _RECORD_START.match(following):
            cut.add(index + 1)
    return cut if len(cut) >= 2 else set()


def _wrap_width(lengths: list[int]) -> int | None:
    """The width a terminal wrapped at, or None when the lengths show no such width."""
    from collections import Counter

    long = Counter(length for length in lengths if length >= MIN_WRAP_WIDTH)
    if not long:
        return None
    width, count = long.most_common(1)[0]
    longer = sum(1 for length in lengths if length > width)
    allowed = max(1.0, LONGER_THAN_WRAP_SHARE * len(lengths))
    if count < 2 or longer > count // 4 or longer > allowed:
        return None
    return width


def _join(lines: list[tuple[str, int]], cut: set[int]) -> list[tuple[str, int]]:
    out: list[tuple[str, int]] = []
    joined_from: int | None = None
    for line, number in lines:
        if joined_from is not None and out:
            previous, first = out[-1]
            out[-1] = (previous.rstrip("\r") + line, first)
        else:
            out.append((line, number))
        joined_from = number if number in cut else None
    return out


def _split_flat(line: str) -> list[str]:
    if len(line) < FLAT_MIN_CHARS or len(_FRAME_MARK.findall(line)) < 2:
        return [line]
    pieces = [piece for piece in _FLAT_BREAK.split(line) if piece and piece.strip()]
    return pieces or [line]


def _continues(previous: str, line: str) -> bool:
    """``line`` reads as the rest of ``previous``, cut by a wrap."""
    if len(previous) < MIN_WRAP_WIDTH or not line or _RECORD_START.match(line):
        return False
    if line[:2].isspace() or _TABLE_EDGE.search(previous):  # indented: code, not a wrap
        return False
    return line[0].islower() or line[0].isdigit() or previous[-1].isalnum()
