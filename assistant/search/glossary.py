"""The bilingual glossary (``knowledge/glossary.yaml``) and document expansion.

Each glossary entry is a ring of equivalent terms in English and Chinese. A section
that contains any term of a ring gets the terms of the whole ring added to its search
document, so a question in other words or in the other language still finds it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property

from assistant.errors import KnowledgeError
from assistant.search.tokenize import has_cjk, is_function_piece, normalize, tokenize


@dataclass(frozen=True)
class GlossaryEntry:
    terms: tuple[str, ...]

    @cached_property
    def chinese_patterns(self) -> tuple[str, ...]:
        """Chinese terms, normalised with spaces removed (``GPU 内存`` -> ``gpu内存``)."""
        return tuple(squeeze(term) for term in self.terms if has_cjk(term))

    @cached_property
    def word_patterns(self) -> tuple[str, ...]:
        """Other terms as `` token token `` lines (whole tokens, see MatchableText)."""
        lines = (" ".join(tokenize(term)) for term in self.terms if not has_cjk(term))
        return tuple(f" {line} " for line in lines if line)

    @cached_property
    def index_terms(self) -> tuple[str, ...]:
        """The distinct BM25 terms of the whole ring.

        Single characters split off longer Chinese terms (爆 from 爆了) are kept: leaving
        them out lowered recall in our measurements. Common function words split off
        them are not (能 from 能整除, 小 from 调小): the whole term and its meaningful
        pieces stand for the ring, and such a piece would only make every section that
        mentions the ring match questions that happen to use that word.
        """
        whole = {squeeze(term) for term in self.terms}
        return tuple(
            dict.fromkeys(
                token
                for term in self.terms
                for token in tokenize(term)
                if token in whole or not is_function_piece(token)
            )
        )


def squeeze(text: str) -> str:
    return "".join(normalize(text).split())


class MatchableText:
    """A document prepared for glossary matching.

    English terms match as runs of whole tokens, so ``tp`` does not match inside
    ``http`` and ``tokens`` matches ``token``. Chinese terms match as substrings of the
    text with spaces removed, except where an occurrence crosses an occurrence of
    another term that starts earlier: in ``微批大小`` the term ``微批`` (micro-batch)
    wins and ``批大小`` (batch size) is not seen. Nested occurrences both count
    (``显存不足`` is both "GPU memory" and "OOM").
    """

    def __init__(self, text: str) -> None:
        self._squeezed = squeeze(text)
        latin = "".join(" " if has_cjk(char) else char for char in text)
        self._token_line = f" {' '.join(tokenize(latin))} "

    def has_words(self, pattern: str) -> bool:
        return pattern in self._token_line

    def chinese_occurrences(self, pattern: str) -> list[tuple[int, int]]:
        spans = []
        start = self._squeezed.find(pattern)
        while start >= 0:
            spans.append((start, start + len(pattern)))
            start = self._squeezed.find(pattern, start + 1)
        return spans


def matched_entries(text: str, entries: list[GlossaryEntry]) -> list[GlossaryEntry]:
    """The entries that ``text`` mentions, in glossary order."""
    doc = MatchableText(text)
    occurrences: list[tuple[int, int, int]] = []
    matched: set[int] = set()
    for number, entry in enumerate(entries):
        if any(doc.has_words(pattern) for pattern in entry.word_patterns):
            matched.add(number)
        for pattern in entry.chinese_patterns:
            occurrences += [(s, e, number) for s, e in doc.chinese_occurrences(pattern)]
    for start, end, number in occurrences:
        if not any(s < start < e < end for s, e, _ in occurrences):
            matched.add(number)
    return [entries[number] for number in sorted(matched)]


def expansion_terms(text: str, entries: list[GlossaryEntry]) -> list[str]:
    """Distinct BM25 terms of every glossary ring that ``text`` mentions."""
    terms: dict[str, None] = {}
    for entry in matched_entries(text, entries):
        terms.update(dict.fromkeys(entry.index_terms))
    return list(terms)


def mixed_term_heads(query: str, kept: set[str], entries: list[GlossaryEntry]) -> list[str]:
    """The BM25 terms of the first (English) term of each ring whose mixed term, Latin
    and Chinese in one ("CUDA 图"), ``query`` spells (spaces ignored) while a Chinese
    piece of it is not among the query's searched terms ``kept``.

    A single common character is not searched for (图, 卡: see tokenize.py), but after
    an English word it is half of a term: "CUDA 图" is "cuda graph", and "cuda" alone
    matched every section that names CUDA. The ring's English head says what was meant.
    """
    squeezed = squeeze(query)
    heads: dict[str, None] = {}
    for entry in entries:
        for term in entry.terms:
            if not (has_cjk(term) and _LATIN.search(term) and squeeze(term) in squeezed):
                continue
            if any(has_cjk(piece) and piece not in kept for piece in tokenize(term)):
                heads.update(dict.fromkeys(tokenize(entry.terms[0])))
                break
    return list(heads)


_LATIN = re.compile("[a-zA-Z]")


def parse_glossary(data: object) -> list[GlossaryEntry]:
    """Validate the YAML structure: a list of mappings with ``en``/``zh`` term lists."""
    if not isinstance(data, list):
        raise KnowledgeError("glossary.yaml must be a list of entries")
    entries = []
    for number, item in enumerate(data, 1):
        if not isinstance(item, dict) or not set(item) <= {"en", "zh"}:
            raise KnowledgeError(f"glossary.yaml entry {number}: only 'en' and 'zh' lists")
        terms = [str(term).strip() for key in ("en", "zh") for term in item.get(key) or []]
        if len(terms) < 2 or not all(terms):
            raise KnowledgeError(f"glossary.yaml entry {number}: needs two or more terms")
        entries.append(GlossaryEntry(tuple(terms)))
    return entries


def load_glossary() -> list[GlossaryEntry]:
    from assistant.knowledge import load_yaml

    return parse_glossary(load_yaml("glossary.yaml"))


def _phase_table() -> dict[str, dict[str, list[str]]]:
    from assistant.knowledge import load_yaml

    table = load_yaml("phase_terms.yaml") or {}
    if not isinstance(table, dict):
        raise KnowledgeError("phase_terms.yaml must map phase ids to en/zh word lists")
    return table


def phase_words(phase: str) -> str:
    """The words of ``knowledge/phase_terms.yaml`` for ``phase``, as one line of text."""
    words = _phase_table().get(phase) or {}
    return " ; ".join(str(term) for key in ("en", "zh") for term in words.get(key) or [])


def compile_phase_patterns() -> dict[str, dict[str, list[str]]]:
    """Per phase, its words as match patterns (plain data, cached with the index)."""
    compiled = {}
    for phase, words in _phase_table().items():
        entry = GlossaryEntry(tuple(str(t) for key in ("en", "zh") for t in words.get(key) or []))
        compiled[phase] = {"zh": list(entry.chinese_patterns), "words": list(entry.word_patterns)}
    return compiled


def query_phases(query: str, patterns: dict[str, dict[str, list[str]]]) -> set[str]:
    """The phases whose words occur in ``query`` (no jieba needed)."""
    text = MatchableText(query)
    return {
        phase
        for phase, compiled in patterns.items()
        if any(text.has_words(p) for p in compiled["words"])
        or any(text.chinese_occurrences(p) for p in compiled["zh"])
    }
