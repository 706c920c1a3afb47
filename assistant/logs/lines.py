"""Clean one raw log line: colours, progress bars and producer prefixes.

Logs reach us through many hands: AReaL's own logger, torchrun's ``[rank3]:``,
Ray's ``(ActorWorker pid=123)``, glog, SGLang, vLLM, docker compose, dmesg.
Rules match the message body, so the prefixes are peeled off here, and the
rank, timestamp and stream (which worker wrote the line) are kept aside.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_LINE_CHARS = 16_384  # a cleaned line longer than this is cut (bounded memory)

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07|\x1b[()][A-Z0-9]")
_STRAY_COLOUR = re.compile(r"^(?:\[\d{1,3}(?:;\d{1,3})*m)+")
# C0 and C1 control characters (U+009B is a one-character CSI to some terminals) and the
# bidirectional overrides that can make shown text differ from what it says.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


@dataclass(frozen=True)
class CleanLine:
    """A line with its producer prefixes removed."""

    text: str
    rank: int | None = None
    timestamp: str | None = None  # as written
    ts_key: tuple[float, ...] | None = None  # (month, day, hour, minute, second) when known
    stream: str = ""  # which process wrote it: outermost worker/role prefix, else rank


def _ts_key(month: str, day: str, clock: str) -> tuple[float, ...] | None:
    parts = clock.replace(",", ".").split(":")
    try:
        hour, minute, second = int(parts[0]), int(parts[1]), float(parts[2])
        return (float(int(month)), float(int(day)), float(hour), float(minute), second)
    except (ValueError, IndexError):
        return None


@dataclass(frozen=True)
class _Prefix:
    """One producer's line prefix; named groups say what it carries."""

    name: str
    regex: re.Pattern[str]


def _p(name: str, pattern: str) -> _Prefix:
    return _Prefix(name, re.compile(pattern))


# Order matters only for prefixes that could shadow each other; each is applied
# repeatedly until none matches (a line can carry several, e.g. Ray + [rank1]: + glog).
_PREFIXES: tuple[_Prefix, ...] = (
    _p(
        "areal",
        r"^\(AReaL\)\s+(?P<date>\d{8})-(?P<clock>\d{2}:\d{2}:\d{2}(?:\.\d+)?)\s+"
        r"(?P<logger>.+?)\s+(?:DEBUG|INFO|WARNING|ERROR|CRITICAL):\s?",
    ),
    _p("torchrun", r"^\[rank(?P<rank>\d+)\]:\s?"),
    # torchrun --tee / --log-dir local-rank prefix
    _p("torchrun_tee", r"^\[default(?P<rank>\d+)\]:\s?"),
    # srun --label: the task number (a node's launcher, not a rank: the ranks inside
    # carry their own prefix), so it is peeled off and names nothing
    _p("srun", r"^\d{1,5}:\s(?=\S)"),
    _p(
        "ray",
        r"^\((?P<stream>[A-Za-z_][\w.:-]*(?:[ ,]+(?:pid|ip|rank|node_id|repr)=[\w.:<>-]+)*)\)\s*",
    ),
    _p(
        "glog",
        r"^\[?(?P<level>[IWEF])(?P<md>\d{3,4}) (?P<clock>\d{2}:\d{2}:\d{2}(?:\.\d+)?)"
        r"(?:\s+\d+)?\s+[\w./-]+:\d+\]\s?",
    ),
    _p("glog_short", r"^\[[IWEF] [\w./-]+:\d+\]\s?"),
    _p(
        "sglang",
        r"^\[(?P<iso>\d{4}-\d{2}-\d{2})[ T](?P<clock>\d{2}:\d{2}:\d{2}(?:[.,]\d+)?)Z?"
        r"(?P<tags>(?:\s+(?:DP|TP|PP|EP|CP|ATTN_TP|ATTN_DP|MOE_EP)\d+)*)\]\s?",
    ),
    _p("sglang_gpu", r"^\[gpu=(?P<rank>\d+)\]\s?"),
    _p(
        "vllm",
        r"^(?:DEBUG|INFO|WARNING|ERROR|CRITICAL)\s+(?P<mo>\d{2})-(?P<dd>\d{2})\s+"
        r"(?P<clock>\d{2}:\d{2}:\d{2}(?:\.\d+)?)\s+\[?[\w./-]+:\d+\]\s?",
    ),
    _p(
        "pylog",
        r"^(?:DEBUG|INFO|WARNING|ERROR|CRITICAL):(?P<iso>\d{4}-\d{2}-\d{2}) "
        r"(?P<clock>\d{2}:\d{2}:\d{2}(?:,\d+)?):",
    ),
    _p(
        "iso",
        r"^\[?(?P<iso>\d{4}-\d{2}-\d{2})[ T](?P<clock>\d{2}:\d{2}:\d{2}(?:[.,]\d+)?)"
        r"(?:Z|[+-]\d{2}:?\d{2})?\]?\s+(?:-\s+)?",
    ),
    _p("dmesg", r"^\[\s*(?P<uptime>\d+\.\d+)\]\s?"),
    _p(
        "journal",
        r"^(?P<mon>[A-Z][a-z]{2}) (?P<mday>[ \d]\d) (?P<clock>\d{2}:\d{2}:\d{2}) \S+ kernel:\s?",
    ),
    _p("compose", r"^(?P<stream>[a-z][\w.-]*)\s+\|\s?"),
    _p("role", r"^\[(?P<stream>[a-z][a-z0-9_-]{1,30})\]\s+"),
)

_MONTHS = {
    name: number
    for number, name in enumerate(
        ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"), 1
    )
}
_RANK_IN_STREAM = re.compile(r"\brank[= ](\d+)", re.IGNORECASE)
_TP_TAG = re.compile(r"\bTP(\d+)")


def strip_controls(raw: str) -> str:
    """Remove colour codes, CR progress segments and control bytes."""
    if "\x1b" in raw:
        raw = _ANSI.sub("", raw)
    raw = raw.rstrip("\r\n")
    if "\r" in raw:
        # tqdm redraws with \r: the last non-empty segment is what the terminal showed.
        segments = [s for s in raw.split("\r") if s.strip()]
        raw = segments[-1] if segments else ""
    if _CONTROL.search(raw):
        raw = _CONTROL.sub(" ", raw)
    return raw


def clean_line(raw: str) -> CleanLine:
    """Peel producer prefixes off ``raw``; keep rank, timestamp and stream."""
    text = strip_controls(raw)[:MAX_LINE_CHARS]
    if text.startswith("\ufeff"):
        text = text[1:]
    if "&" in text and ";" in text:
        import html  # an HTML-escaped paste is rare: not imported at start-up

        text = html.unescape(text)
    rank: int | None = None
    timestamp: str | None = None
    ts_key: tuple[float, ...] | None = None
    streams: list[str] = []
    for _ in range(6):
        text = _STRAY_COLOUR.sub("", text)
        for prefix in _PREFIXES:
            found = prefix.regex.match(text)
            if found is None:
                continue
            groups = {k: v for k, v in found.groupdict().items() if v is not None}
            rank = _rank_from(prefix.name, groups, rank)
            stamp = _timestamp_from(groups)
            if stamp is not None and timestamp is None:
                timestamp, ts_key = stamp
            if groups.get("stream"):  # a worker/role prefix; logger names are not processes
                streams.append(groups["stream"])
            text = text[found.end() :]
            break
        else:
            break
    # the outermost prefix names the process (merged logs put the role first)
    stream = streams[0] if streams else (f"rank{rank}" if rank is not None else "")
    return CleanLine(text, rank, timestamp, ts_key, stream)


def _rank_from(name: str, groups: dict[str, str], current: int | None) -> int | None:
    if "rank" in groups:
        return int(groups["rank"])
    for key in ("stream", "logger"):
        if key in groups:
            found = _RANK_IN_STREAM.search(groups[key])
            if found:
                return int(found.group(1))
    if name == "sglang" and groups.get("tags"):
        found = _TP_TAG.search(groups["tags"])
        if found and current is None:
            return int(found.group(1))
    return current


def _timestamp_from(groups: dict[str, str]) -> tuple[str, tuple[float, ...] | None] | None:
    clock = groups.get("clock")
    if "date" in groups and clock:  # AReaL 20260521
        date = groups["date"]
        return f"{date}-{clock}", _ts_key(date[4:6], date[6:8], clock)
    if "iso" in groups and clock:
        iso = groups["iso"]
        return f"{iso} {clock}", _ts_key(iso[5:7], iso[8:10], clock)
    if "md" in groups and clock:  # glog MMDD (month may lack its leading zero)
        md = groups["md"].rjust(4, "0")
        return f"{groups['md']} {clock}", _ts_key(md[:2], md[2:], clock)
    if "mo" in groups and clock:
        return f"{groups['mo']}-{groups['dd']} {clock}", _ts_key(groups["mo"], groups["dd"], clock)
    if "mon" in groups and clock:  # syslog / journalctl: "Dec  1 03:55:00"
        month = _MONTHS.get(groups["mon"])
        key = _ts_key(str(month), groups["mday"].strip(), clock) if month else None
        return clock, key
    if "uptime" in groups:  # seconds since boot: no wall time to compare with others
        return groups["uptime"], None
    if clock:
        return clock, None
    return None
