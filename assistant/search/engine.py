"""search(): rank guide sections for a question, with snippets and matched terms."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from assistant.errors import UserError
from assistant.search.glossary import query_phases
from assistant.search.index import DEFAULT_CONFIG, IndexConfig, phase_patterns, section_index
from assistant.search.sections import LANGS
from assistant.search.snippets import best_snippet
from assistant.search.tokenize import detect_lang, plain_words, query_terms, query_weights

# Longer queries are cut here: a pasted log of 100k characters would otherwise be
# segmented and scored term by term for no better ranking.
MAX_QUERY_CHARS = 2000
SEARCH_LANGS = (*LANGS, "all")


# Below this BM25 score a hit matched only a common word or two: shown, but labelled
# weak (good matches of the evaluation queries score 1.5 and more).
WEAK_SCORE = 1.0


@dataclass
class SearchHit:
    section: str
    lang: str
    title: str
    score: float
    snippet: str = ""
    terms: list[str] = field(default_factory=list)

    @property
    def weak(self) -> bool:
        return self.score < WEAK_SCORE


def search(
    query: str,
    lang: str | None = None,
    k: int = 5,
    *,
    include_extra: bool = False,
    config: IndexConfig = DEFAULT_CONFIG,
) -> list[SearchHit]:
    """The ``k`` guide sections that best match ``query``, best first.

    ``lang`` None follows the query's script (see detect_lang); ``"zh"`` or ``"en"``
    searches that language's guide; ``"all"`` searches both and merges by score.
    ``include_extra`` also searches areal-doctor's own ``x-`` sections (left out by
    default: with them in, recall@1 on the guide's evaluation queries fell from 0.96 to
    0.83; get_section() returns them either way). ``config`` is for experiments.
    An empty query is a UserError; a query with nothing searchable returns ``[]``.
    """
    if include_extra and not config.include_extra:
        config = replace(config, include_extra=True)
    prepared = _prepare(query, lang, config)
    if k < 0:
        raise UserError(f"the number of results must be positive, not {k}")
    if prepared is None or k == 0:
        return []
    ranked = _rank(prepared, config)
    ranked = _set_aside(ranked, prepared.aside)[:k]
    return [_hit(doc, score, prepared.meaningful, index) for score, doc, index in ranked]


def see_also(
    query: str,
    hits: list[SearchHit],
    lang: str | None = None,
    *,
    config: IndexConfig = DEFAULT_CONFIG,
) -> SearchHit | None:
    """areal-doctor's note that answers ``query`` beside the guide ``hits``, if any.

    The notes are merged into search() at a low weight so that they never push the
    guide's own sections down; that also keeps most of them out of sight (on 48 questions
    about the notes' topics, the right note was in the top 3 for 0.27). Here the best note
    of the notes' own index is offered on its own line when it scores at least
    ``config.see_also_ratio`` of the best guide section (each in its own index) and is not
    among ``hits`` already. None when notes are searched together with the guide.
    """
    if config.include_extra or config.see_also_ratio <= 0:
        return None
    prepared = _prepare(query, lang, config)
    if prepared is None:
        return None
    shown = {hit.section for hit in hits}
    notes_config = replace(config, only_extra=True)
    best: tuple[float, dict[str, Any], Any] | None = None
    guide_top = 0.0
    for language in prepared.langs:
        guide = section_index(language, config).rank(prepared.weights, prepared.words)
        guide_top = max([guide_top, *(score for score, _doc in guide[:1])])
        index = section_index(language, notes_config)
        for score, doc in index.rank(prepared.weights, prepared.words)[:1]:
            if best is None or score > best[0]:
                best = (score, doc, index)
    if best is None or best[1]["id"] in shown or best[0] < config.see_also_ratio * guide_top:
        return None
    score, doc, index = best
    return _hit(doc, score, prepared.meaningful, index)


@dataclass(frozen=True)
class _Prepared:
    """A query made ready for ranking: languages, weighted terms and cues."""

    langs: tuple[str, ...]
    weights: dict[str, float]
    words: dict[str, str]
    phases: set[str]
    aside: set[str]
    meaningful: list[str]


def _prepare(query: str, lang: str | None, config: IndexConfig) -> _Prepared | None:
    """Terms and weights of ``query``; None when it has nothing searchable."""
    if not isinstance(query, str) or not query.strip():
        raise UserError("empty search query")
    langs = _langs_for(query, lang)
    query = query[:MAX_QUERY_CHARS]
    terms = query_terms(query)
    if not terms:
        return None
    aside = _aside_terms(query)
    weights = {term: w for term, w in query_weights(terms).items() if term not in aside}
    return _Prepared(
        langs=langs,
        weights=weights,
        words=plain_words(query) if config.typos else {},
        phases=query_phases(query, phase_patterns()) if config.phase_boost else set(),
        aside=aside,
        meaningful=[term for term in terms if term in weights],
    )


def _rank(prepared: _Prepared, config: IndexConfig) -> list[tuple[float, dict[str, Any], Any]]:
    """Matching sections of every language, best first; a named phase boosts its sections.

    ``prepared.words`` (plain English term -> the word typed) lets each index correct typos.
    """
    ranked: list[tuple[float, int, dict[str, Any], Any]] = []
    indexes = [(1.0, config)]
    if config.notes_weight > 0 and not config.include_extra:
        indexes.append((config.notes_weight, replace(config, only_extra=True)))
    for order, language in enumerate(prepared.langs):
        for scale, index_config in indexes:
            index = section_index(language, index_config)
            for score, doc in index.rank(prepared.weights, prepared.words):
                if doc["phase"] in prepared.phases:
                    score *= 1.0 + config.phase_boost
                ranked.append((score * scale, order, doc, index))
    ranked.sort(key=lambda item: (-item[0], item[1]))
    return [(score, doc, index) for score, _order, doc, index in ranked]


def _aside_terms(query: str) -> set[str]:
    """Terms of what the query sets aside ("besides X", "不想切 X"): not searched for."""
    from assistant.search.cues import set_aside

    return {term for text in set_aside(query) for term in _naming_terms(text)}


def _set_aside(
    ranked: list[tuple[float, dict[str, Any], Any]], aside: set[str]
) -> list[tuple[float, dict[str, Any], Any]]:
    """Rank lower the sections that the set-aside terms name."""
    from assistant.search.cues import aside_factor

    if not aside:
        return ranked
    factor = aside_factor()
    rescored = [
        (score * factor if aside & _named_by(doc) else score, doc, index)
        for score, doc, index in ranked
    ]
    rescored.sort(key=lambda item: -item[0])  # stable: ties keep the earlier order
    return rescored


def _naming_terms(text: str) -> set[str]:
    """Terms of a set-aside text that can name a section (no single characters)."""
    return {term for term in query_terms(text) if len(term) > 1 and not term.isdigit()}


def _named_by(doc: dict[str, Any]) -> set[str]:
    """What a section is named by: its title, its config keys and its title's concepts."""
    fields = doc["fields"]
    return set(fields["title"]) | set(fields["keys"]) | set(fields["title_glossary"])


def _langs_for(query: str, lang: str | None) -> tuple[str, ...]:
    if lang is None:
        return (detect_lang(query),)
    if lang not in SEARCH_LANGS:
        raise UserError(f"--lang must be one of {', '.join(SEARCH_LANGS)}, not {lang!r}")
    return LANGS if lang == "all" else (lang,)


def _hit(doc: dict[str, Any], score: float, terms: list[str], index: Any) -> SearchHit:
    snippet, matched = best_snippet(doc["sentences"], terms, index.idf)
    return SearchHit(
        section=doc["id"],
        lang=doc["lang"],
        title=doc["title"],
        score=round(score, 4),
        snippet=snippet,
        terms=matched,
    )
