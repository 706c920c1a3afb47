"""search(): rank guide sections for a question, with snippets and matched terms."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cache
from typing import Any

from assistant.errors import UserError
from assistant.search.glossary import query_phases
from assistant.search.index import (
    DEFAULT_CONFIG,
    FIELDS,
    IndexConfig,
    Weights,
    compiled_knowledge,
    is_extra,
    phase_patterns,
    section_index,
)
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
    areal-doctor's own ``x-`` notes join the results when they match, ahead of a guide
    section only when they score clearly higher (``config.note_lead``), or higher and
    the query names them rather than the section (``config.named_product``; a pasted
    message that only the note quotes names it too, ``config.quoted_naming``, and so does
    a term that the note alone holds, ``config.own_terms``); one about
    as good as the best section comes second (``config.note_second``; see _rank).
    ``include_extra`` ranks guide and notes in one index instead, all on equal terms
    (recall@1 on the guide's evaluation queries fell from 0.96 to 0.83 that way).
    ``config`` is for experiments.
    An empty query is a UserError; a query with nothing searchable returns ``[]``.
    """
    if include_extra and not config.include_extra:
        config = replace(config, include_extra=True)
    prepared = _prepare(query, lang, config)
    if k < 0:
        raise UserError(f"the number of results must be positive, not {k}")
    if prepared is None or k == 0:
        return []
    ranked, close = _rank(prepared, config)
    ranked = _note_second(_set_aside(ranked, prepared.aside), close, prepared.aside)[:k]
    return [_hit(doc, score, prepared.meaningful, index) for score, doc, index in ranked]


def see_also(
    query: str,
    hits: list[SearchHit],
    lang: str | None = None,
    *,
    config: IndexConfig = DEFAULT_CONFIG,
) -> SearchHit | None:
    """areal-doctor's note that answers ``query`` beside the guide ``hits``, if any.

    A note leads search()'s results only when it scores clearly higher than the guide
    (``config.note_lead``); one that scores nearly as well as the best guide section (at
    least ``config.see_also_ratio`` of it, on the same scale) and is not among ``hits``
    is offered here on a line of its own. None when notes are searched together with the
    guide (``include_extra``).
    """
    if config.include_extra or config.see_also_ratio <= 0:
        return None
    prepared = _prepare(query, lang, config)
    if prepared is None:
        return None
    shown = {hit.section for hit in hits}
    best: tuple[float, dict[str, Any], Any] | None = None
    guide_top = 0.0
    for language in prepared.langs:
        guide = _guide_ranked(prepared, language, config)
        guide_top = max([guide_top, *(score for score, _doc, _index in guide[:1])])
        for score, doc, index in _notes_on_guide_scale(prepared, language, config, guide)[:1]:
            if best is None or score > best[0]:
                best = (score, doc, index)
    if best is None or best[1]["id"] in shown or best[0] < config.see_also_ratio * guide_top:
        return None
    if best[0] < WEAK_SCORE:  # a weak match offered beside weak results is only noise
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
    others: tuple[set[str], set[str]] = (set(), set())
    pasted: tuple[Any, ...] = ()  # the patterns of program output the query holds


def _prepare(query: str, lang: str | None, config: IndexConfig) -> _Prepared | None:
    """Terms and weights of ``query``; None when it has nothing searchable."""
    if not isinstance(query, str) or not query.strip():
        raise UserError("empty search query")
    from assistant.search.cues import pasted_patterns, without_generic_error

    langs = _langs_for(query, lang)
    query = without_generic_error(query[:MAX_QUERY_CHARS])
    # what is left of program output once the words every CUDA OOM prints are gone
    pasted = tuple(pasted_patterns(query)) if config.quoted_notes else ()
    terms = query_terms(query)
    if not terms:
        return None
    aside = _aside_terms(query)
    kept = _without_aside_pieces(terms, aside) if config.aside_pieces else terms
    if config.aside_cue_words:
        kept = _without_cue_words(kept, query)
    weights = {term: w for term, w in query_weights(kept).items() if term not in aside}
    heads = [term for term in _mixed_heads(query, set(weights)) if term not in weights]
    terms += heads
    weights.update(query_weights(heads))
    return _Prepared(
        langs=langs,
        weights=weights,
        words=plain_words(query) if config.typos else {},
        phases=_phases(query, aside, langs, config),
        aside=aside,
        meaningful=[term for term in terms if term in weights],
        others=_other_alternatives(terms, config.product_knobs),
        pasted=pasted,
    )


def _rank(
    prepared: _Prepared, config: IndexConfig
) -> tuple[list[tuple[float, dict[str, Any], Any]], set[str]]:
    """Matching sections of every language, best first; a named phase boosts its sections.

    ``prepared.words`` (plain English term -> the word typed) lets each index correct typos.
    areal-doctor's notes join the guide's sections on the guide's scale, divided by
    ``config.note_lead``: a note comes first only when it scores clearly higher.
    Also returned: the notes that score at least ``config.note_second`` of the best
    guide section (on that scale, before the division); see _note_second.
    """
    ranked: list[tuple[float, int, dict[str, Any], Any]] = []
    close: set[str] = set()  # the notes that score about as well as the guide's best
    for order, language in enumerate(prepared.langs):
        guide = _guide_ranked(prepared, language, config)
        ranked += [(score, order, doc, index) for score, doc, index in guide]
        if config.note_lead > 0 and not config.include_extra:
            notes = _notes_on_guide_scale(prepared, language, config, guide)
            naming = _naming_ratios(prepared, language, config, guide)
            quoted = _quoted_only_by(prepared.pasted, language)
            if config.own_terms:
                quoted |= _owning_notes(prepared.weights, language)
            for score, doc, index in notes:
                named = naming.get(doc["id"], 0.0)
                if doc["id"] in quoted:
                    named = max(named, config.quoted_naming)
                boosting = named if config.any_phase_quoted else naming.get(doc["id"], 0.0)
                if config.any_phase_notes and _any_phase_named(prepared, doc, boosting):
                    score *= 1.0 + config.phase_boost
                lead = config.note_lead
                if guide and _is_named(score / guide[0][0], named, config):
                    lead = config.named_lead
                ranked.append((score / lead, order, doc, index))
                if guide and score >= config.note_second * guide[0][0] > 0:
                    close.add(doc["id"])
    ranked.sort(key=lambda item: (-item[0], item[1]))
    return [(score, doc, index) for score, _order, doc, index in ranked], close


def _note_second(
    ranked: list[tuple[float, dict[str, Any], Any]], close: set[str], aside: set[str]
) -> list[tuple[float, dict[str, Any], Any]]:
    """``ranked`` with the first note of ``close`` moved up to second place if lower.

    A note the query sets aside (``aside``, see _set_aside) stays where it is.

    A note that scores about as well as the best guide section, but not note_lead times
    better, lost R@3 to two or three guide sections that share its words (NCCL buffers
    after both weight-update sections, optimizer arithmetic after three optimizer
    sections); second place keeps the guide's best first. It takes the score of the
    section it passes, so the scores shown still fall.
    """
    for position, (_score, doc, index) in enumerate(ranked):
        if doc["id"] in close and not aside & _named_by(doc):
            if position > 1:
                ranked = list(ranked)
                del ranked[position]
                ranked.insert(1, (ranked[1][0], doc, index))
            break
    return ranked


def _guide_ranked(
    prepared: _Prepared, language: str, config: IndexConfig
) -> list[tuple[float, dict[str, Any], Any]]:
    """The sections of one language's index (the guide's, or both with include_extra)."""
    index = section_index(language, config)
    return _boosted(prepared, index, config)


def _notes_on_guide_scale(
    prepared: _Prepared,
    language: str,
    config: IndexConfig,
    guide: list[tuple[float, dict[str, Any], Any]],
) -> list[tuple[float, dict[str, Any], Any]]:
    """The notes that match, best first, with scores on the scale of ``guide``'s.

    Guide and notes are scored in one index of both (the same idf and document lengths
    for every section), on their own words (_joint_config); a note's score there over
    the best guide section's is its ratio, and ratio times the guide's best score (in
    the guide's own index) its score. _rank divides it by ``config.note_lead``. A note
    also has to stand against the guide with every field counted (glossary rings and
    phase words, through which the guide answers paraphrases): its ratio is capped at
    ``config.note_lead`` times its ratio in the joint index of all fields.
    """
    own = _boosted(prepared, section_index(language, _joint_config(config)), config)
    every = _boosted(prepared, section_index(language, replace(config, include_extra=True)), config)
    own_top = _best_guide_score(own)
    every_top = _best_guide_score(every)
    every_score = {doc["id"]: score for score, doc, _index in every}
    guide_top = guide[0][0] if guide else 0.0
    notes = []
    for score, doc, index in own:
        if not is_extra(doc["id"]):
            continue
        if guide_top <= 0 or own_top <= 0:
            notes.append((score, doc, index))  # nothing of the guide to compare with
            continue
        ratio = score / own_top
        if every_top > 0:
            ratio = min(ratio, config.note_lead * every_score.get(doc["id"], 0.0) / every_top)
        notes.append((ratio * guide_top, doc, index))
    notes.sort(key=lambda item: -item[0])
    return notes


def _quoted_only_by(patterns: tuple[Any, ...], language: str) -> set[str]:
    """The notes that are the one section of ``language`` quoting a pasted message.

    A pasted "NCCL WARN Failed to CUDA calloc" or "Cuda failure 2 'out of memory'" is
    quoted by the NCCL note alone; the weight-update sections, which share its NCCL and
    weight words, came first (the note scored twice as much, but its title and concept
    words did not name it 2.5 times better). A message the note alone quotes names it
    at least ``config.quoted_naming`` times better than the guide (see _is_named). A
    message two sections quote names neither.
    """
    found: set[str] = set()
    for pattern in patterns:
        quoting = _sections_quoting(pattern.pattern, pattern.flags, language)
        if len(quoting) == 1 and is_extra(quoting[0]):
            found.add(quoting[0])
    return found


def _owning_notes(weights: dict[str, float], language: str) -> set[str]:
    """The notes that hold a term of the query which no other section holds.

    A term of the domain's vocabulary (a config key, a glossary ring's term, an
    identifier) that only one note's title, keys or concept words name, and that no
    other section of either language holds (owners.held_terms), names that note as a quoted
    message does (see _quoted_only_by): "private pools" and 录制图 are the CUDA graph
    note's, "logits" and "词表" the oversized-request note's, max_split_size_mb the
    fragmentation note's. The guide's best section took them on the words every
    question shares ("显存", "allocate", "set"). Plain words a note alone happens to use
    do not count: "shape" (of "wrong shape or padding bug") took "what settings shape
    the footprint" to the oversized-request note, "need" (of "memory needs") a question
    of CPU RAM to the optimizer one.
    """
    owners: dict[str, str] = compiled_knowledge()["own_terms"][language]
    return {owners[term] for term in weights if term in owners}


@cache
def _sections_quoting(pattern: str, flags: int, language: str) -> tuple[str, ...]:
    import re

    compiled = re.compile(pattern, flags)
    return tuple(
        doc["id"]
        for doc in compiled_knowledge()["langs"][language]
        if any(compiled.search(sentence) for sentence in doc["sentences"])
    )


def _is_named(ratio: float, naming: float, config: IndexConfig) -> bool:
    """Whether a note the query names may lead at ``named_lead`` instead of ``note_lead``.

    ``ratio`` is its score over the best guide section's (on the guide's scale),
    ``naming`` how much better the query names it (_naming_ratios). A guide section that
    came first on words every section shares ("显存", "process", "start") while the note
    matched on its own title and concept words gives way when the two together reach
    ``named_product`` and the note scores at least ``named_floor`` times the section.
    """
    return (
        config.named_product > 0
        and ratio >= config.named_floor
        and ratio * naming >= config.named_product
    )


def _naming_ratios(
    prepared: _Prepared,
    language: str,
    config: IndexConfig,
    guide: list[tuple[float, dict[str, Any], Any]],
) -> dict[str, float]:
    """Per matching note, how much better than the best guide section the query names it.

    A section is named by its title, its config keys and its concept words
    (section_terms.yaml): _naming_config's index of guide and notes holds only those.
    The ratio is a note's score there over that of the guide's best section (in the
    guide's own ranking); infinite when that section is not named at all.
    """
    if not guide:
        return {}
    index = section_index(language, _naming_config(config))
    scores = {doc["id"]: score for score, doc in index.rank(prepared.weights, prepared.words)}
    guide_named = scores.get(guide[0][1]["id"], 0.0)
    return {
        section: score / guide_named if guide_named > 0 else float("inf")
        for section, score in scores.items()
        if is_extra(section)
    }


def _naming_config(config: IndexConfig) -> IndexConfig:
    """The index of guide and notes on what names a section: title, keys, concept words."""
    weights = replace(
        Weights(**dict.fromkeys(FIELDS, 0)),
        title=config.weights.title,
        keys=config.weights.keys,
        concepts=config.weights.concepts,
    )
    return replace(config, include_extra=True, weights=weights)


def _best_guide_score(ranked: list[tuple[float, dict[str, Any], Any]]) -> float:
    return max((score for score, doc, _index in ranked if not is_extra(doc["id"])), default=0.0)


def _joint_config(config: IndexConfig) -> IndexConfig:
    """The index of guide and notes together in which a note is compared with the guide.

    Only the sections' own words and concepts: no phase words and no glossary rings
    (neither those the text names nor those its concept words name).
    Every generation section carries the generation phase's words, and the glossary's
    inference-server ring puts "sglang" and "vllm" into every section that names a
    server, so "vllm" or "cuda graph capture" matched gen-sglang-memory nearly as well
    as the note about it. On holdout12 (the tuning set) at note_lead 2.0: R@1 0.67 with
    them, 0.73 without the phase words, 0.85 without the rings of the text too, 0.97
    without those of the concept words as well; the guide's tune sets no worse (the
    guide's own ranking still uses every field).
    """
    weights = replace(config.weights, phase=0, glossary=0, title_glossary=0, concept_glossary=0)
    return replace(config, include_extra=True, weights=weights)


# A note of phase "any" (another process, fragmentation, an oversized request) happens in
# every phase: a phase the query names boosts it like the sections of that phase, when
# the query names the note (_any_phase_named; ungated, "训练时显存不足怎么办" offered the
# fragmentation note among training sections). Unboosted, "上一次训练没杀干净，显存还被占着"
# went to a training section for its 训练.
# Not for the guide's "any" sections (core and engine parameters, overviews): the fixes
# of the named phase should beat them (boosting them too lost guide questions on every
# tune set). Tune sets: holdout13 zh R@1 0.81 -> 0.94, the others unchanged.
# (IndexConfig.any_phase_notes switches it off.)


def _any_phase_named(prepared: _Prepared, doc: dict[str, Any], naming: float) -> bool:
    """Whether note ``doc`` of phase "any" gets the boost of a phase the query names: only
    when the query names the note at least as well as the guide's best section (naming,
    see _naming_ratios; a message or a term the note alone holds names it too), so a
    generic "训练时显存不足" stays on the training sections."""
    return bool(prepared.phases) and doc["phase"] == "any" and naming >= 1.0


def _boosted(
    prepared: _Prepared, index: Any, config: IndexConfig
) -> list[tuple[float, dict[str, Any], Any]]:
    """``index``'s ranking of the query, sections of a phase the query names boosted."""
    from assistant.search.cues import alternatives

    named, others = prepared.others
    factor = alternatives()[0] if others else 1.0
    ranked = []
    for score, doc in index.rank(prepared.weights, prepared.words):
        if doc["phase"] in prepared.phases:
            score *= 1.0 + config.phase_boost
        if factor != 1.0:
            own = set(doc["fields"]["title"]) | set(doc["fields"]["keys"])
            if own & others and not own & named:
                score *= factor
        ranked.append((score, doc, index))
    ranked.sort(key=lambda item: -item[0])  # stable: ties keep the guide's order
    return ranked


def _other_alternatives(terms: list[str], knobs: bool = True) -> tuple[set[str], set[str]]:
    """The alternatives the query names ("vllm") and those of their sets it does not
    ("sglang"): a section named only by one the query does not name is about the other
    server (cues.py). With ``knobs`` a product's own setting names it too (_product_knobs).
    """
    from assistant.search.cues import alternatives

    present = set(terms)
    if knobs:
        owners = _product_knobs()
        present |= {owners[term] for term in terms if term in owners}
    named: set[str] = set()
    others: set[str] = set()
    for group in alternatives()[1]:
        here = present & set(group)
        if here:
            named |= here
            others |= set(group) - here
    return named, others


def _product_knobs() -> dict[str, str]:
    """Each setting that the guide's config keys give to one alternative only, with it
    (``gpu_memory_utilization`` -> ``vllm``, from ``vllm.gpu_memory_utilization``).

    A pasted vLLM error names its knob and not vLLM ("Try increasing
    `gpu_memory_utilization`"): without it the question named no server, and the SGLang
    section, whose words of memory share it matched, came first. A setting both servers
    have under one name names neither.
    """
    from assistant.search.cues import alternatives

    members = {word for group in alternatives()[1] for word in group}
    owners: dict[str, set[str]] = {}
    for docs in compiled_knowledge()["langs"].values():
        for doc in docs:
            for key in doc["keys"]:
                prefix, _, knob = str(key).lower().partition(".")
                if knob and prefix in members:
                    owners.setdefault(knob, set()).add(prefix)
    return {knob: min(names) for knob, names in owners.items() if len(names) == 1}


def _mixed_heads(query: str, kept: set[str]) -> list[str]:
    """The English head terms of the mixed glossary terms the query spells ("CUDA 图")."""
    from assistant.search.glossary import mixed_term_heads

    return mixed_term_heads(query, kept, _glossary())


@cache
def _glossary() -> list[Any]:
    from assistant.search.glossary import load_glossary

    return load_glossary()


def _aside_terms(query: str) -> set[str]:
    """Terms of what the query sets aside ("besides X", "不想切 X"): not searched for."""
    from assistant.search.cues import set_aside

    return {term for text in set_aside(query) for term in _naming_terms(text)}


def _without_aside_pieces(terms: list[str], aside: set[str]) -> list[str]:
    """``terms`` less one of each piece a set-aside term is segmented into.

    A compound the dictionary does not hold whole is its pieces plus the compound
    (tokenize._compounds_in: 微批 is 微, 批 and 微批); setting 微批 aside left 微 and 批
    to take "微批已经压到最小还是爆" to core-parameters, whose text has both. Only as
    many as the set-aside terms hold: a 批 elsewhere in the query stays.
    """
    pieces = [piece for term in sorted(aside) for piece in query_terms(term) if piece != term]
    return _less(terms, pieces)


def _phases(query: str, aside: set[str], langs: tuple[str, ...], config: IndexConfig) -> set[str]:
    """The phases the query names (phase_terms.yaml), and those of the fixes it sets aside:
    "微批都改成最小了还是不行" names no phase in words, but a micro-batch used up is a
    training step that still runs out of memory."""
    if not config.phase_boost:
        return set()
    phases = query_phases(query, phase_patterns())
    if aside and config.aside_phase:
        for language in langs:
            for doc in compiled_knowledge()["langs"][language]:
                if doc["phase"] != "any" and aside & _named_by(doc):
                    phases.add(doc["phase"])
    return phases


def _without_cue_words(terms: list[str], query: str) -> list[str]:
    """``terms`` less those of the cue words that set something aside (cues.set_aside_cues):
    "微批都改成最小了" kept 改成 and 最小, and 最小 took it to the micro-batch section
    (its concept words: the smallest valid value), the one the question sets aside."""
    from assistant.search.cues import set_aside_cues

    return _less(terms, [term for words in set_aside_cues(query) for term in query_terms(words)])


def _less(terms: list[str], removed: list[str]) -> list[str]:
    """``terms`` with one occurrence of each of ``removed`` taken out (those it holds)."""
    kept = list(terms)
    for term in removed:
        if term in kept:
            kept.remove(term)
    return kept


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
