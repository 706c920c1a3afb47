"""Text and JSON renderings of search results (the contract's ``search`` output)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from assistant.search.engine import SearchHit
from assistant.search.snippets import mark_terms

DIAGNOSE_COMMAND = "areal-doctor diagnose"
# A pasted log is searched for error output up to here (the search itself reads less).
_HINT_SCAN_CHARS = 100_000

_BOLD = "\x1b[1m"
_DIM = "\x1b[2m"
_RESET = "\x1b[0m"
_PLAIN_MARKS = ("«", "»")


def format_hits_text(
    query: str, hits: list[SearchHit], color: bool, note: SearchHit | None = None
) -> str:
    """Numbered results: title and id, then the snippet with matched terms marked.

    Matched terms are bold when ``color`` is true, else wrapped in «guillemets». ``note``
    (engine.see_also) follows on a line of its own, and a query holding error output
    ends with the hint to run ``diagnose`` (diagnose_hint).
    """
    hint = diagnose_hint(query, hits)
    if not hits and note is None:
        lines = [f"No guide section matches {query.strip()!r}."]
    else:
        lines = []
        for rank, hit in enumerate(hits, 1):
            lines += _hit_lines(f"{rank}.", hit, color)
        if note is not None:
            lines += _hit_lines("See also, areal-doctor's note:", note, color)
    if hint is not None:
        lines.append(f"{_BOLD}{hint.text}{_RESET}" if color else hint.text)
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class DiagnoseHint:
    """Error output found in a search query, and the sentence pointing to ``diagnose``."""

    matched: str
    text: str
    command: str = DIAGNOSE_COMMAND


def diagnose_hint(query: str, hits: list[SearchHit] | None = None) -> DiagnoseHint | None:
    """The hint to run ``diagnose`` when ``query`` holds pasted error output, else None.

    In the language of the results (the query's when there are none).
    """
    from assistant.search.cues import pasted_error, pasted_error_hint
    from assistant.search.tokenize import detect_lang

    matched = pasted_error(query[:_HINT_SCAN_CHARS])
    if matched is None:
        return None
    lang = hits[0].lang if hits else detect_lang(query)
    return DiagnoseHint(matched=matched, text=pasted_error_hint(lang))


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
    """The contract's ``search --json`` document (plus ``terms``, the matched words,
    ``see_also``, the note engine.see_also offers beside the results: [] or one, and,
    only when the query holds error output, ``diagnose_hint``: what matched, the command
    and the sentence the text output prints)."""
    document: dict[str, Any] = {
        "query": query,
        "results": [_hit_json(hit) for hit in hits],
        "see_also": [_hit_json(note)] if note is not None else [],
    }
    hint = diagnose_hint(query, hits)
    if hint is not None:
        document["diagnose_hint"] = {
            "matched": hint.matched,
            "command": hint.command,
            "text": hint.text,
        }
    return document


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
