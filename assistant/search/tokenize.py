"""Turn Chinese, English and mixed text into BM25 terms.

One tokenizer serves both languages, so a document and a query always go through the
same rules whatever their script:

* text is NFKC-normalised (full-width letters, digits and punctuation become ASCII) and
  lower-cased;
* runs of CJK characters are segmented by jieba, loaded with the small dictionary in
  ``knowledge/jieba/`` (jieba is imported only when a CJK run is met, so English-only
  text never pays for it);
* everything else is split into words; config keys and backend strings are kept whole
  *and* split (``actor.mb_spec.max_tokens_per_mb`` gives the whole key, ``actor``,
  ``mb_spec``, ``mb``, ``spec``, ``max_tokens_per_mb``, ``max``, ``tokens`` ...;
  ``fsdp:d2c2`` gives ``fsdp:d2c2 fsdp d2c2``; a hyphenated flag such as
  ``--mem-fraction-static`` gives the same whole term as ``mem_fraction_static``), and
  plain words are stemmed: inflections and a few derivational endings, so that
  ``storage``/``store`` or ``server``/``serving`` meet.

Queries drop English function words (``how do i``, ``the``, ``of``), recognised before
stemming: in a corpus of about fifteen sections even "the" keeps a noticeable idf, and
removing them from queries raised recall@1 on held-out queries. Chinese function words
are kept: removing them lowered recall (both measured by ``benchmarks/eval_search.py``).
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Iterator
from functools import cache
from typing import Any

# CJK Unified Ideographs (+ extension A and compatibility ideographs).
_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_CJK_RUN = re.compile(f"[{_CJK}]+")
_CJK_CHAR = re.compile(f"[{_CJK}]")
_LATIN_LETTER = re.compile(r"[a-zA-Z]")
# A word, key or backend string: starts and ends with a letter or digit and may hold
# the joiners of config keys (``.``, ``_``, ``:``, ``/``, ``-``) in between.
WORD_PATTERN = re.compile(r"[a-z0-9](?:[a-z0-9_.:/\-]*[a-z0-9])?")
_KEY_SEPARATORS = re.compile(r"[.:/]")
_NUMBER = re.compile(r"\d+(?:\.\d+)*")
_JOINERS = re.compile(r"[_\-]")


def normalize(text: str) -> str:
    """NFKC + lower case: ``ＯＯＭ`` and ``OOM`` become the same term."""
    return unicodedata.normalize("NFKC", text).lower()


def detect_lang(text: str) -> str:
    """``"zh"`` when the text has a meaningful share of Chinese, else ``"en"``.

    Two CJK characters, or CJK making up a fifth of the letters, make a query Chinese;
    a single stray character in an English question does not.
    """
    cjk = len(_CJK_CHAR.findall(text))
    if cjk == 0:
        return "en"
    latin = len(_LATIN_LETTER.findall(text))
    return "zh" if cjk >= 2 or cjk * 5 >= cjk + latin else "en"


def has_cjk(text: str) -> bool:
    return _CJK_CHAR.search(text) is not None


# The last two lines are verbs and fillers that say nothing about a topic: in a corpus of
# fifteen sections a word like "using" or "instead" that one section's text happens to
# contain has a high idf ("another process is using the GPU" went to the weight-buffer
# section for its "To continue using NCCL"). Tune sets: paraphrase R@1 +0.004, none worse.
_STOP_WORDS_TEXT = """
    a an the of to in on at for by with from into over under about as and or but if then so
    than too very is are was were be been being do does did doing have has had i me my we our
    you your it its this that these those there here what which who whom whose when where why
    how can could should would will shall may might must just really still also not no any all
    some much many such only own same other others each few both again further out up
    down off during while after until since because via across
    doesn don didn isn aren wasn weren won wouldn shouldn couldn cannot s t m d ll re ve
    use using used uses get got gets getting make makes made making give gives gave given
    giving go goes going went take takes took taking instead thing things something anything"""
ENGLISH_STOP_WORDS = frozenset(_STOP_WORDS_TEXT.split())


def query_terms(text: str) -> list[str]:
    """Terms of a search query: tokenize() without English function words.

    Function words are recognised by their surface form, before stemming (``during``
    would otherwise survive as the stem ``dur``, ``does`` as ``doe``).
    """
    return [
        term
        for surface, terms in spans(text)
        if surface not in ENGLISH_STOP_WORDS
        for term in terms
    ]


def plain_words(text: str) -> dict[str, str]:
    """Plain English query words (no key, number or Chinese) by their term: ``{stem: word}``.

    Typo correction works on the word as typed, not on its stem.
    """
    return {
        terms[0]: surface
        for surface, terms in spans(text)
        if surface.isascii() and surface.isalpha() and surface not in ENGLISH_STOP_WORDS
    }


def query_weights(terms: list[str]) -> dict[str, float]:
    """Each query term with its weight: its count, reduced for very common Chinese words.

    With about fifteen sections a language, idf cannot tell that 时, 上 or 把 carry little
    meaning (each occurs in only a few sections). jieba's word frequencies know: the
    Chinese words more frequent than 10^5 in jieba's corpus (about forty function words)
    are dropped, and those above 10^4.5 damped. Other terms keep weight 1.
    Measured on held-out queries with ``benchmarks/eval_search.py``: a hand-made Chinese
    stop list hurt, this did not, and it keeps "训练时…" questions on the training sections.
    """
    weights: dict[str, float] = {}
    for term in terms:
        weights[term] = weights.get(term, 0.0) + _commonness_weight(term)
    return {term: weight for term, weight in weights.items() if weight > 0}


# Single characters that jieba's dictionary tags as a function word (adverb, conjunction,
# preposition, particle, modal, interjection, pronoun: 先, 再, 就, 把, 但, 吗 ...) are not
# searched for. Frequency alone misses some (先 is below the damping line), and in a
# corpus this small one such character in a long section outweighed the topic words
# ("训练的时候显存爆了，先调哪个参数" went to the long optimizer-dtype section for its 先).
# Measured on the tune sets with holdout9: weight 0.3 -> 0 moved R@1 0.960 -> 0.963.
FUNCTION_TAGS = frozenset(["d", "c", "p", "u", "y", "e", "r"])
FUNCTION_CHARACTER_WEIGHT = 0.0
# Question words and other pronouns of two or more characters (哪个, 什么, 怎么, 这个,
# 其他: tagged r) count half in a query: too rare in jieba's corpus to be damped, they
# name no topic, and one that a single section happens to use ("往哪个方向调" in the vLLM
# note) took "训练时 OOM 先调哪个" there. Tune sets: fresh R@1 0.99 -> 1.00, holdout12
# 0.85 -> 0.87, the others unchanged (0 instead of 0.5: the same).
PRONOUN_WEIGHT = 0.5
DAMPED_LOG_FREQ = 4.5
# A single character is counted this many powers of ten more frequent than jieba says:
# a character is more often part of other words than its own count tells
# (能 in 能不能, 可能, 性能), so it means less than a word of the same count.
SINGLE_CHARACTER_SHIFT = 1.0
DROPPED_LOG_FREQ = 5.0


def is_function_piece(term: str) -> bool:
    """A Chinese word common enough to leave out of a glossary ring's pieces.

    Judged by frequency alone, as a word: a single character split off a ring term
    (爆 from 爆了, 调 from 调小) still stands for the ring in the index.
    """
    return _commonness_weight(term, query=False) < 1.0


@cache
def _commonness_weight(term: str, query: bool = True) -> float:
    if not has_cjk(term):
        return 1.0
    single = len(term) == 1 and query
    if single and term in _function_characters():
        return FUNCTION_CHARACTER_WEIGHT
    if query and not single and term in _pronouns():
        return PRONOUN_WEIGHT
    freq = _jieba().FREQ.get(term) or 0
    if freq <= 1:
        return 1.0
    log_freq = math.log10(freq) + (SINGLE_CHARACTER_SHIFT if single else 0.0)
    if log_freq >= DROPPED_LOG_FREQ:
        return 0.0
    excess = log_freq - DAMPED_LOG_FREQ
    return 1.0 / (1.0 + excess) if excess > 0 else 1.0


def tokenize(text: str) -> list[str]:
    """The BM25 terms of ``text`` in order (duplicates kept: they are term frequency)."""
    return [term for _surface, terms in spans(text) for term in terms]


def spans(text: str) -> Iterator[tuple[str, list[str]]]:
    """Yield ``(surface, terms)`` pairs: each piece of the normalised text with its terms.

    The surface string lets a caller highlight where a matched term came from.
    """
    text = normalize(text)
    position = 0
    for match in _CJK_RUN.finditer(text):
        yield from _latin_spans(text[position : match.start()])
        for word in _segment_cjk(match.group()):
            yield word, [word]
        position = match.end()
    yield from _latin_spans(text[position:])


def _latin_spans(text: str) -> Iterator[tuple[str, list[str]]]:
    for match in WORD_PATTERN.finditer(text):
        word = match.group()
        yield word, word_terms(word)


def word_terms(word: str) -> list[str]:
    """Terms for one lower-case word, key or backend string (see the module docstring)."""
    if _NUMBER.fullmatch(word):
        return [word]
    if not _KEY_SEPARATORS.search(word) and not _JOINERS.search(word):
        return [stem(word)]
    # Command-line flags spell keys with hyphens (--mem-fraction-static), configs with
    # underscores (mem_fraction_static): the whole terms use underscores.
    terms = [word.replace("-", "_")]
    for part in _KEY_SEPARATORS.split(word):
        pieces = [piece for piece in _JOINERS.split(part) if piece]
        if part != word and len(pieces) > 1:
            terms.append(part.replace("-", "_"))
        terms.extend(stem(piece) for piece in pieces)
    return terms


_DOUBLE_CONSONANT = re.compile(r"([b-df-hj-np-tv-z])\1$")


@cache
def stem(word: str) -> str:
    """A light English stemmer: plurals, -ing, -ed, a final -e, then derivations.

    It folds forms that mean the same thing here (``tokens``/``token``,
    ``checkpointing``/``checkpoint``, ``reduced``/``reduces``, and through
    _DERIVATIONS ``storage``/``store``, ``generator``/``generation``) and leaves short
    words and identifiers alone. Stems need not be words (``reduc``, ``stor``).
    """
    if len(word) <= 3 or not word.isalpha():
        return word
    if word.endswith("ies") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith("sses"):
        word = word[:-2]
    elif word.endswith("s") and not word.endswith(("ss", "is")) and not _latin_us(word):
        word = word[:-1]
    for suffix in ("ing", "ed"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3 and not word.endswith("eed"):
            word = word[: -len(suffix)]
            if _DOUBLE_CONSONANT.search(word) and not word.endswith(("ll", "ss", "zz")):
                word = word[:-1]
            break
    if word.endswith("e") and len(word) > 3:
        word = word[:-1]
    return _fold_derivation(word)


# Derivational endings folded after the inflections and the final -e, longest first:
# (ending, replacement).
# They join the words a question and the guide use for one thing: store/storage,
# serve/server/serving, generate/generation/generator, optimize/optimizer/optimization,
# parallel/parallelism, concurrent/concurrency, allocate/allocation/allocator.
_DERIVATIONS = (
    ("isation", "iz"),
    ("ization", "iz"),
    ("ation", ""),
    ("ator", ""),
    ("ency", "ent"),
    ("ism", ""),
    ("enc", ""),
    ("anc", ""),
    ("ag", ""),
    ("iser", "iz"),
    ("izer", "iz"),
    ("er", ""),
    ("at", ""),
    ("ly", ""),
)
_MIN_STEM = 4


def _fold_derivation(word: str) -> str:
    for ending, replacement in _DERIVATIONS:
        if word.endswith(ending) and len(word) - len(ending) + len(replacement) >= _MIN_STEM:
            word = word[: -len(ending)] + replacement
            if _DOUBLE_CONSONANT.search(word) and not word.endswith(("ll", "ss", "zz")):
                word = word[:-1]
            return word
    return word


def _latin_us(word: str) -> bool:
    """Words such as ``status`` or ``corpus`` keep their s; acronyms (``gpus``) do not."""
    return word.endswith("us") and any(vowel in word[:-2] for vowel in "aeiou")


def _segment_cjk(run: str) -> list[str]:
    """Dictionary words only (jieba's HMM off): an unknown word falls apart into characters.

    The HMM guesses new words (``多卡上``, ``存能``) that rarely recur verbatim in the guide;
    characters match consistently. Measured: HMM off gave the best recall of the variants
    tried (HMM on, HMM on plus the characters of guessed words).
    """
    words = [word for word in _jieba().lcut(run, HMM=False) if word.strip()]
    return words + _compounds_in(words)


# The longest run of segments checked against the compound terms.
_MAX_COMPOUND_SEGMENTS = 6


def _compounds_in(words: list[str]) -> list[str]:
    """The guide's compound terms (``knowledge/jieba/compounds.txt``) spelt by runs of words.

    The dictionary splits 微批 into 微 批, 主权重 into 主权 重, 梯度检查点 into 梯度 检查点:
    the pieces stay terms (a question may use one of them), and the whole compound is
    added, so that a question naming the guide's term meets it as one specific term
    rather than as common pieces shared with other sections (批 of 批大小).
    """
    known = _compound_terms()
    found: list[tuple[int, int, str]] = []
    for start in range(len(words)):
        text = words[start]
        for end in range(start + 1, min(len(words), start + _MAX_COMPOUND_SEGMENTS)):
            text += words[end]
            if text in known:
                found.append((start, end, text))
    # As in glossary matching, a term that crosses one starting earlier is not seen:
    # 微批大小 is 微批 + 大小, not 批大小.
    return [
        text for start, end, text in found if not any(s < start <= e < end for s, e, _ in found)
    ]


@cache
def _compound_terms() -> frozenset[str]:
    from assistant.knowledge import knowledge_path

    text = knowledge_path("jieba", "compounds.txt").read_text(encoding="utf-8")
    return frozenset(
        line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#")
    )


def _pronouns() -> frozenset[str]:
    """Words of two or more characters the dictionary tags as pronouns (r)."""
    return _tagged_words()[0]


def _function_characters() -> frozenset[str]:
    """Single-character words tagged with a FUNCTION_TAGS part of speech in the dictionary."""
    return _tagged_words()[1]


@cache
def _tagged_words() -> tuple[frozenset[str], frozenset[str]]:
    """(pronouns, function characters) of the small dictionary, read in one pass."""
    from assistant.knowledge import knowledge_path

    pronouns, function = set(), set()
    with knowledge_path("jieba", "dict.txt").open(encoding="utf-8") as lines:
        for line in lines:
            fields = line.split()
            if len(fields) != 3:
                continue
            word, tag = fields[0], fields[2]
            if len(word) > 1 and tag == "r":
                pronouns.add(word)
            elif len(word) == 1 and tag in FUNCTION_TAGS:
                function.add(word)
    return frozenset(pronouns), frozenset(function)


def _import_jieba() -> Any:
    """``import jieba`` without its import of ``pkg_resources`` (setuptools).

    jieba 0.42 imports ``pkg_resources`` when it is imported (``jieba/_compat.py``), only
    to open the files of its own package, and falls back to plain ``open()`` beside its
    module when that import fails; pkg_resources scans every installed distribution and
    cost 0.38 s of jieba's 0.46 s here (a Python 3.11 venv ships setuptools). jieba's
    files are never read here anyway: the dictionary is our own path and the HMM is off.
    So while jieba is imported, ``pkg_resources`` is marked absent (a ``None`` entry in
    ``sys.modules`` makes its import raise ImportError, Python's documented way), and the
    mark is removed again so that nothing else is affected. Where something imported
    pkg_resources already, jieba simply uses it.
    """
    import sys

    if "jieba" in sys.modules or "pkg_resources" in sys.modules:
        import jieba

        return jieba
    sys.modules["pkg_resources"] = None  # type: ignore[assignment]
    try:
        import jieba
    finally:
        if sys.modules.get("pkg_resources", ...) is None:
            del sys.modules["pkg_resources"]
    return jieba


@cache
def _jieba() -> Any:
    """A jieba tokenizer on the small dictionary, built once per process.

    jieba's own prefix-dict cache goes to the areal-doctor cache folder when it is
    writable; jieba's chatty logger is silenced.
    """
    import logging

    from assistant.knowledge import knowledge_path
    from assistant.search.cache import cache_dir

    jieba = _import_jieba()
    jieba.setLogLevel(logging.CRITICAL)
    tokenizer = jieba.Tokenizer(dictionary=str(knowledge_path("jieba", "dict.txt")))
    folder = cache_dir()
    if folder is not None:
        tokenizer.tmp_dir = str(folder)
    tokenizer.initialize()
    return tokenizer
