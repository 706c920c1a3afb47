"""Text and JSON renderings of search results (the contract's ``search`` output)."""

from __future__ import annotations

from typing import Any

from assistant.search.engine import SearchHit
from assistant.search.snippets import mark_terms

_BOLD = "\x1b[1m"
_DIM = "\x1b[2m"
_RESET = "\x1b[0m"
_PLAIN_MARKS = ("«", "»")


def format_hits_text(query: str, hits: list[SearchHit], color: bool) -> str:
    """Numbered results: title and id, then the snippet with matched terms marked.

    Matched terms are bold when ``color`` is true, else wrapped in «guillemets».
    """
    if not hits:
        return f"No guide section matches {query.strip()!r}.\n"
    before, after = (_BOLD, _RESET) if color else _PLAIN_MARKS
    lines = []
    for rank, hit in enumerate(hits, 1):
        title = f"{_BOLD}{hit.title}{_RESET}" if color else hit.title
        section = f"{_DIM}[{hit.section}]{_RESET}" if color else f"[{hit.section}]"
        weak = ", weak match" if hit.weak else ""
        lines.append(f"{rank}. {title}  {section}  ({hit.lang}, score {hit.score:.2f}{weak})")
        if hit.snippet:
            lines.append(f"   {mark_terms(hit.snippet, hit.terms, before, after)}")
    return "\n".join(lines) + "\n"


def hits_to_json(query: str, hits: list[SearchHit]) -> dict[str, Any]:
    """The contract's ``search --json`` document (plus ``terms``, the matched words)."""
    return {
        "query": query,
        "results": [
            {
                "section": hit.section,
                "lang": hit.lang,
                "title": hit.title,
                "score": hit.score,
                "snippet": hit.snippet,
                "terms": list(hit.terms),
                "weak": hit.weak,
            }
            for hit in hits
        ],
    }
