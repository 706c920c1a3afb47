"""Pick the sentence of a section that best explains why it matched, and mark terms.

Works on the cached plain sentences without jieba: English words are re-tokenized
with the (cheap) word rules, Chinese query terms are found as substrings.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable

from assistant.search.tokenize import WORD_PATTERN, has_cjk, word_terms

MAX_SNIPPET_CHARS = 160
_CONTEXT_BEFORE = 40
_ELLIPSIS = "…"


def best_snippet(
    sentences: list[str], query_terms: list[str], idf: Callable[[str], float]
) -> tuple[str, list[str]]:
    """(snippet, matched surface terms) from the sentence richest in query terms.

    A sentence scores the summed idf of the distinct query terms it contains; when no
    sentence contains any (the section matched through the glossary) the first one is used.
    """
    wanted = set(query_terms)
    best: tuple[float, str, list[tuple[int, int]]] = (0.0, sentences[0] if sentences else "", [])
    for sentence in sentences:
        found, positions = _matches(sentence, wanted)
        score = sum(idf(term) for term in found)
        if score > best[0]:
            best = (score, sentence, positions)
    _score, text, positions = best
    return _window(text, positions)


def _matches(display: str, wanted: set[str]) -> tuple[set[str], list[tuple[int, int]]]:
    """Query terms found in ``display`` and where (positions index ``display`` itself)."""
    lowered = unicodedata.normalize("NFKC", display).lower()
    if len(lowered) != len(display):  # rare normalisation that changes length
        lowered = display.lower() if len(display.lower()) == len(display) else display
    found: set[str] = set()
    positions: list[tuple[int, int]] = []
    for match in WORD_PATTERN.finditer(lowered):
        hits = wanted.intersection(word_terms(match.group()))
        if hits:
            found |= hits
            positions.append(match.span())
    for term in wanted:
        if has_cjk(term):
            for match in re.finditer(re.escape(term), lowered):
                found.add(term)
                positions.append(match.span())
    positions.sort()
    return found, positions


def _window(text: str, positions: list[tuple[int, int]]) -> tuple[str, list[str]]:
    """Cut ``text`` to MAX_SNIPPET_CHARS around the first match; the matched surfaces in it."""
    start, end = 0, len(text)
    if len(text) > MAX_SNIPPET_CHARS:
        first = positions[0][0] if positions else 0
        start = max(0, min(first - _CONTEXT_BEFORE, len(text) - MAX_SNIPPET_CHARS))
        end = start + MAX_SNIPPET_CHARS
    surfaces: list[str] = []
    for begin, finish in positions:
        if begin >= start and finish <= end:
            surface = text[begin:finish]
            if surface not in surfaces:
                surfaces.append(surface)
    snippet = text[start:end].strip()
    if start > 0:
        snippet = _ELLIPSIS + snippet
    if end < len(text):
        snippet += _ELLIPSIS
    return snippet, surfaces


def mark_terms(snippet: str, terms: list[str], before: str, after: str) -> str:
    """Wrap each occurrence of the matched terms in ``before``/``after`` (longest first).

    English terms are whole words only, so marking ``mb`` leaves ``max_tokens_per_mb`` alone.
    """
    if not terms:
        return snippet
    alternatives = []
    for term in sorted(set(terms), key=len, reverse=True):
        escaped = re.escape(term)
        if not has_cjk(term):
            escaped = rf"(?<![A-Za-z0-9_]){escaped}(?![A-Za-z0-9_])"
        alternatives.append(escaped)
    pattern = re.compile("|".join(alternatives))
    return pattern.sub(lambda match: f"{before}{match.group()}{after}", snippet)
