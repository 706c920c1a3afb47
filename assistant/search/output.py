"""Text and JSON renderings of search results (the contract's ``search`` output)."""

from __future__ import annotations

from typing import Any

from assistant.search.engine import SearchHit
from assistant.search.snippets import mark_terms

_BOLD = "\x1b[1m"
_DIM = "\x1b[2m"
_RESET = "\x1b[0m"
_PLAIN_MARKS = ("«", "»")


def format_hits_text(
    query: str, hits: list[SearchHit], color: bool, note: SearchHit | None = None
) -> str:
    """Numbered results: title and id, then the snippet with matched terms marked.

    Matched terms are bold when ``color`` is true, else wrapped in «guillemets». ``note``
    (engine.see_also) follows on a line of its own.
    """
    if not hits and note is None:
        return f"No guide section matches {query.strip()!r}.\n"
    lines = []
    for rank, hit in enumerate(hits, 1):
        lines += _hit_lines(f"{rank}.", hit, color)
    if note is not None:
        lines += _hit_lines("See also, areal-doctor's note:", note, color)
    return "\n".join(lines) + "\n"


def _hit_lines(lead: str, hit: SearchHit, color: bool) -> list[str]:
    before, after = (_BOLD, _RESET) if color else _PLAIN_MARKS
    title = f"{_BOLD}{hit.title}{_RESET}" if color else hit.title
    section = f"{_DIM}[{hit.section}]{_RESET}" if color else f"[{hit.section}]"
    weak = ", weak match" if hit.weak else ""
    lines = [f"{lead} {title}  {section}  ({hit.lang}, score {hit.score:.2f}{weak})"]
    if hit.snippet:
        lines.append(f"   {mark_terms(hit.snippet, hit.terms, before, after)}")
    return lines


def hits_to_json(
    query: str, hits: list[SearchHit], note: SearchHit | None = None
) -> dict[str, Any]:
    """The contract's ``search --json`` document (plus ``terms``, the matched words, and
    ``see_also``, the note engine.see_also offers beside the results: [] or one)."""
    return {
        "query": query,
        "results": [_hit_json(hit) for hit in hits],
        "see_also": [_hit_json(note)] if note is not None else [],
    }


def _hit_json(hit: SearchHit) -> dict[str, Any]:
    return {
        "section": hit.section,
        "lang": hit.lang,
        "title": hit.title,
        "score": hit.score,
        "snippet": hit.snippet,
        "terms": list(hit.terms),
        "weak": hit.weak,
    }
