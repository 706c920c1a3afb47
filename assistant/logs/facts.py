"""Facts a log reveals in its head: allocator settings, engines, model names.

Settings are printed when a run starts (environment, config dump), and lines
such as AReaL's ``[FSDPEngine Rank 0]`` logger name can fill a whole log, so
facts are looked for in the first bytes of each source and in the lines the
scanner already found, not in a full pass.
"""

from __future__ import annotations

from collections.abc import Sequence

from assistant.logs.lines import strip_controls
from assistant.logs.match import FactHit, LineMatcher
from assistant.logs.scan import Prefilter

HEAD_BYTES = 512 * 1024
MAX_LINES = 64  # trigger lines looked at in one head
MAX_SOURCES = 8  # rank logs of one run share their settings: the first few suffice

_PREFILTERS: dict[int, Prefilter] = {}


def _prefilter(matcher: LineMatcher) -> Prefilter:
    facts = matcher.rules.facts
    if id(facts) not in _PREFILTERS:
        triggers = list(dict.fromkeys(t for rule in facts for t in rule.triggers))
        _PREFILTERS[id(facts)] = Prefilter(triggers, ())
    return _PREFILTERS[id(facts)]


def head_facts(path: str, source: int, matcher: LineMatcher) -> list[FactHit]:
    """The first line showing each fact in the head of ``path``."""
    with open(path, "rb") as handle:
        head = handle.read(HEAD_BYTES)
    found: dict[str, FactHit] = {}
    covered = -1
    looked = 0
    for end in _prefilter(matcher).ends(head):
        if end <= covered or looked >= MAX_LINES:
            continue
        start = head.rfind(b"\n", 0, end) + 1
        stop = head.find(b"\n", end)
        covered = stop if stop >= 0 else len(head)
        looked += 1
        # prefixes stay: the logger name "[FSDPEngine Rank 0]" is itself a fact
        text = strip_controls(head[start:covered].decode("utf-8", errors="replace"))
        # each rule behind its trigger gate, as for the scanned lines: the head's trigger
        # lines are those of any fact, and most rules' patterns need not run on them
        for rule, value in matcher.facts(text):
            if rule.fact not in found:
                line = head.count(b"\n", 0, start) + 1
                found[rule.fact] = FactHit(rule.fact, value, rule.id, source, line)
    return list(found.values())


def merge_facts(found: Sequence[FactHit]) -> dict[str, FactHit]:
    """Earliest source and line wins for each fact."""
    facts: dict[str, FactHit] = {}
    for hit in sorted(found, key=lambda h: (h.source, h.line)):
        facts.setdefault(hit.fact, hit)
    return facts
