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
    sentence contains any (the section matched through the glossary) the first one that
    is not an aside in parentheses is used. A lead-in ("Adjust SGLang memory
    allocation:") says nothing by itself: it is shown with what it introduces (the code
    block or item after it), see candidates().
    """
    wanted = set(query_terms)
    pieces = candidates(sentences)
    plain = [piece for piece in pieces if not _is_aside(piece)]
    first = (plain or pieces or [""])[0]
    best: tuple[float, str, list[tuple[int, int]]] = (0.0, first, [])
    for sentence in pieces:
        found, positions = _matches(sentence, wanted)
        # summed in one order: a set's order follows the hash seed, and two sentences
        # with the same terms must tie exactly (the first then wins) in every run
        score = sum(idf(term) for term in sorted(found))
        if score > best[0]:
            best = (score, sentence, positions)
    _score, text, positions = best
    if not positions:
        _found, positions = _matches(text, wanted)
    return _window(text, positions)


_LEAD_IN_ENDS = (":", "：")


def candidates(sentences: list[str]) -> list[str]:
    """The snippet candidates: each sentence, a lead-in joined to the piece after it."""
    pieces = []
    for position, sentence in enumerate(sentences):
        if sentence.endswith(_LEAD_IN_ENDS) and position + 1 < len(sentences):
            sentence = f"{sentence} {sentences[position + 1]}"
        pieces.append(sentence)
    return pieces


def _is_aside(sentence: str) -> bool:
    """A sentence that is one parenthesis: "(Translated by areal-doctor from ...)"."""
    return sentence.startswith(("(", "（")) and sentence.endswith((")", "）"))


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
    for term in sorted(set(terms), key=lambda term: (-len(term), term)):
        escaped = re.escape(term)
        if not has_cjk(term):
            escaped = rf"(?<![A-Za-z0-9_]){escaped}(?![A-Za-z0-9_])"
        alternatives.append(escaped)
    pattern = re.compile("|".join(alternatives))
    return pattern.sub(lambda match: f"{before}{match.group()}{after}", snippet)
