"""Group repeated failures across ranks and order events in time.

The same OOM printed by eight ranks, by the RPC wrapper and by the controller
is one failure: lines are grouped by a fingerprint of the message with numbers,
PIDs, hosts and ranks masked. The root cause is the earliest failure, by
timestamp where both lines have one and by line order inside one file.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cmp_to_key

from assistant.logs.match import Hit

FINGERPRINT_CHARS = 160
INCIDENT_LINES = 200  # lines within which two messages of one process are one incident
MIN_COPY_CHARS = 80  # a cut copy must keep this much of the message to join its group

_MASKS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\[repeated \d+x across cluster\]"), ""),
    (re.compile(r"\b0x[0-9a-fA-F]+\b"), "<hex>"),
    (re.compile(r"\b[0-9a-f]{12,}\b"), "<id>"),
    (re.compile(r"\b\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?\b"), "<ip>"),
    (re.compile(r"\b[\w.-]+:\d+:\d+\b"), "<host:pid>"),
    (re.compile(r"(?i)\b(?:rank|pid|tp|dp|gpu|device)\s*[=: ]?\s*\d+"), "<id>"),
    (re.compile(r"\d+(?:\.\d+)?"), "<n>"),
    (re.compile(r"\s+"), " "),
)


def fingerprint(text: str) -> str:
    """The message with everything that varies between ranks masked."""
    out = text[: FINGERPRINT_CHARS * 2]
    for pattern, replacement in _MASKS:
        out = pattern.sub(replacement, out)
    return out.strip()[:FINGERPRINT_CHARS]


def earlier(a: Hit, b: Hit, ts_of: Callable[[Hit], tuple[float, ...] | None]) -> int:
    """-1 when ``a`` happened before ``b`` (for sorting)."""
    if a.source == b.source:
        return -1 if a.line < b.line else (1 if a.line > b.line else 0)
    ta, tb = ts_of(a), ts_of(b)
    if ta is not None and tb is not None and ta != tb:
        return -1 if ta < tb else 1
    return -1 if a.source < b.source else (1 if a.source > b.source else 0)


def in_time_order(
    hits: Sequence[Hit], ts_of: Callable[[Hit], tuple[float, ...] | None]
) -> list[Hit]:
    def order(a: Hit, b: Hit) -> int:
        return earlier(a, b, ts_of)

    return sorted(hits, key=cmp_to_key(order))


@dataclass
class Group:
    """Hits of one signature with one fingerprint."""

    signature: str
    fingerprint: str
    hits: list[Hit] = field(default_factory=list)

    @property
    def first(self) -> Hit:
        return self.hits[0]

    @property
    def ranks(self) -> list[int]:
        return sorted({h.clean.rank for h in self.hits if h.clean.rank is not None})

    @property
    def sources(self) -> list[int]:
        return sorted({h.source for h in self.hits})

    def reason(self, names: Sequence[str]) -> dict[str, str] | None:
        """Why the lines were merged, in each language (texts in knowledge/i18n/cli.yaml)."""
        if len(self.hits) < 2:
            return None
        from assistant.i18n import message

        out: dict[str, str] = {}
        for lang in ("en", "zh"):
            where = (
                message("group_files", lang, n=len(self.sources))
                if len(self.sources) > 1
                else names[self.first.source]
            )
            ranks = message("group_ranks", lang, ranks=_span(self.ranks)) if self.ranks else ""
            count = len(self.hits)
            out[lang] = message("group_reason", lang, count=count, where=where, ranks=ranks)
        return out


def _span(ranks: list[int]) -> str:
    if len(ranks) > 2 and ranks == list(range(ranks[0], ranks[-1] + 1)):
        return f"{ranks[0]}-{ranks[-1]}"
    return ", ".join(str(r) for r in ranks)


def group_hits(
    hits: Sequence[Hit], ts_of: Callable[[Hit], tuple[float, ...] | None]
) -> list[Group]:
    """Groups in order of their first hit."""
    groups: dict[tuple[str, str], Group] = {}
    for hit in in_time_order(hits, ts_of):
        key = (hit.rule, fingerprint(hit.text[hit.start :]))
        if key not in groups:
            key = _cut_copy_of(key, groups) or key
        groups.setdefault(key, Group(hit.rule, key[1])).hits.append(hit)
    return list(groups.values())


def _cut_copy_of(
    key: tuple[str, str], groups: dict[tuple[str, str], Group]
) -> tuple[str, str] | None:
    """The group whose message this one is a cut copy of, or extends (a wrapper that
    prints only the start of the message, e.g. a controller re-raising it)."""
    rule, print_ = key
    for other_rule, other in groups:
        if other_rule != rule or min(len(other), len(print_)) < MIN_COPY_CHARS:
            continue
        if other.startswith(print_) or print_.startswith(other):
            return other_rule, other
    return None


def drop_yielding(hits: Sequence[Hit], yields_to: dict[str, tuple[str, ...]]) -> list[Hit]:
    """Remove hits that a better message of the same incident replaces."""
    by_source: dict[int, list[Hit]] = {}
    for hit in hits:
        by_source.setdefault(hit.source, []).append(hit)
    kept = []
    for hit in hits:
        targets = yields_to.get(hit.rule, ())
        replaced = targets and any(
            other.rule in targets and abs(other.line - hit.line) <= INCIDENT_LINES
            for other in by_source[hit.source]
        )
        if not replaced:
            kept.append(hit)
    return kept


def drop_poisoned(hits: Sequence[Hit], poisons: Sequence[Hit]) -> tuple[list[Hit], list[Hit]]:
    """Split memory hits into (kept, caused by an earlier kernel fault in the same file)."""
    kept, poisoned = [], []
    for hit in hits:
        if any(
            p.source == hit.source and 0 <= hit.line - p.line <= INCIDENT_LINES for p in poisons
        ):
            poisoned.append(hit)
        else:
            kept.append(hit)
    return kept, poisoned
