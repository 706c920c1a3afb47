"""BM25 for the guide, through rank-bm25's public API.

The scoring is rank-bm25's ``BM25Plus`` with ``delta=0``: Okapi's term-frequency
saturation (``k1``, ``b``) and BM25+'s idf, ``log((N + 1) / n)``, which is never negative.
``BM25Okapi``'s idf, ``log((N - n + 0.5) / (n + 0.5))``, is negative for a term found in
more than half of the sections and then floored at a share of the average idf: with
about fifteen sections a language, ordinary words such as "memory" or "训练" sit right
at that edge, so a query made of them could rank nothing. ``delta`` (BM25+'s lower bound
for a term a section lacks) is 0 so that a section without any query term scores 0: a
hit needs a matching term, and the scores of the guide's and the notes' indexes stay
comparable (with ``delta=1`` every section would gain ``idf`` for every query term).

A query term counts with its own weight (see tokenize.query_weights): each term is
scored on its own with ``get_scores([term])`` and the scores are summed with the weights.

Those per-term scores are a pure function of the index, so they are memoised: when an
index is built, rank-bm25 scores every term of its vocabulary once (``TermScores``), and
the table is kept in the one cache (index.py), so a warm process never imports
rank-bm25 or numpy (about 150 ms). A term the table lacks is scored by rank-bm25 then.
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

Corpus = Sequence[Sequence[str]]


@dataclass(frozen=True)
class TermScores:
    """rank-bm25's results for one index: what ``WeightedBM25`` reads at query time.

    ``scores[term]`` is ``get_scores([term])`` without its zeros (a section without the
    term scores exactly 0 with ``delta=0``): the positions of the other sections and
    their scores as rank-bm25 computed them, packed (arrays of machine ints and doubles:
    a warm process reads a table of thousands of terms without walking it).
    """

    size: int
    doc_counts: dict[str, int]  # term -> number of sections with it
    idf: dict[str, float]
    scores: dict[str, tuple[bytes, bytes]]

    @classmethod
    def pack(
        cls,
        size: int,
        doc_counts: dict[str, int],
        idf: dict[str, float],
        vectors: Mapping[str, Sequence[float]],
    ) -> TermScores:
        """The table of full score vectors (one per term), their zeros left out."""
        scores: dict[str, tuple[bytes, bytes]] = {}
        for term, vector in vectors.items():
            positions, values = _nonzero(vector)
            scores[term] = (array("I", positions).tobytes(), array("d", values).tobytes())
        return cls(size, doc_counts, idf, scores)

    def nonzero(self, term: str) -> tuple[list[int], list[float]] | None:
        """The sections ``term`` scores in and those scores, or None when not cached."""
        found = self.scores.get(term)
        if found is None:
            return None
        positions, scores = array("I"), array("d")
        positions.frombytes(found[0])
        scores.frombytes(found[1])
        if len(positions) != len(scores) or any(p >= self.size for p in positions):
            return None
        return positions.tolist(), scores.tolist()

    def term_vector(self, term: str) -> list[float] | None:
        """The cached ``get_scores([term])`` as a full list, or None when not cached."""
        found = self.nonzero(term)
        if found is None:
            return None
        vector = [0.0] * self.size
        for position, score in zip(*found, strict=True):
            vector[position] = score
        return vector

    def to_plain(self) -> list[Any]:
        """Plain data for marshal (the one cache): the terms, and aligned with them
        their section counts, idf and packed scores."""
        terms = list(self.doc_counts)
        return [
            self.size,
            terms,
            array("I", [self.doc_counts[term] for term in terms]).tobytes(),
            array("d", [self.idf[term] for term in terms]).tobytes(),
            [self.scores[term][0] for term in terms],
            [self.scores[term][1] for term in terms],
        ]

    @classmethod
    def from_plain(cls, data: Any) -> TermScores | None:
        """The table read back, or None when the data is not what ``to_plain`` wrote
        (each term's packed scores are checked when a query reads them)."""
        if not (type(data) is list and len(data) == 6):
            return None
        size, terms, counts, idf, positions, scores = data
        if not (
            type(size) is int
            and type(terms) is list
            and all(type(term) is str for term in terms)
            and _packed(counts, "I", len(terms))
            and _packed(idf, "d", len(terms))
            and _blobs(positions, len(terms))
            and _blobs(scores, len(terms))
        ):
            return None
        count_array, idf_array = array("I"), array("d")
        count_array.frombytes(counts)
        idf_array.frombytes(idf)
        return cls(
            size,
            dict(zip(terms, count_array.tolist(), strict=True)),
            dict(zip(terms, idf_array.tolist(), strict=True)),
            dict(zip(terms, zip(positions, scores, strict=True), strict=True)),
        )


def _nonzero(vector: Sequence[float]) -> tuple[list[int], list[float]]:
    positions = [i for i, score in enumerate(vector) if score != 0.0]
    return positions, [vector[i] for i in positions]


def _packed(data: Any, code: str, length: int) -> bool:
    return type(data) is bytes and len(data) == length * array(code).itemsize


def _blobs(data: Any, length: int) -> bool:
    return type(data) is list and len(data) == length and all(type(b) is bytes for b in data)


class WeightedBM25:
    """rank-bm25's BM25Plus (``delta=0``) with a weight per query term.

    ``corpus`` is the sections' terms, or a function returning them: with ``memo`` (a
    table read from the cache) it is only called if a query term is missing from it.
    """

    def __init__(
        self,
        corpus: Corpus | Callable[[], Corpus],
        k1: float = 1.5,
        b: float = 0.75,
        memo: TermScores | None = None,
    ) -> None:
        self._corpus = corpus
        self._documents: list[list[str]] | None = None
        self.k1, self.b = k1, b
        self._model: Any = None
        self.memo = memo if memo is not None else self._memoise()
        self.corpus_size = self.memo.size
        self.doc_counts = self.memo.doc_counts
        self.idf = self.memo.idf

    def corpus(self) -> list[list[str]]:
        """The sections' terms (built once, when the corpus is a function)."""
        if self._documents is None:
            corpus = self._corpus() if callable(self._corpus) else self._corpus
            self._documents = [list(document) for document in corpus]
        return self._documents

    def model(self) -> Any:
        """rank-bm25's BM25Plus over the corpus, built on first use."""
        if self._model is None:
            from rank_bm25 import BM25Plus

            self._model = BM25Plus(self.corpus(), k1=self.k1, b=self.b, delta=0.0)
        return self._model

    def rank_bm25_scores(self, term: str) -> list[float]:
        """``get_scores([term])`` from rank-bm25 itself (a numpy array: ``tolist`` gives
        the same doubles as Python floats, faster than converting them one by one)."""
        scores: list[float] = self.model().get_scores([term]).tolist()
        return scores

    def _memoise(self) -> TermScores:
        corpus = self.corpus()
        doc_counts = dict(Counter(term for document in corpus for term in set(document)))
        model = self.model()
        return TermScores.pack(
            size=len(corpus),
            doc_counts=doc_counts,
            idf={term: float(model.idf[term]) for term in doc_counts},
            vectors={term: self.rank_bm25_scores(term) for term in doc_counts},
        )

    def weighted_scores(self, query: Mapping[str, float]) -> list[float]:
        """Per section, the sum over query terms of weight x the term's BM25 score."""
        scores = [0.0] * self.corpus_size
        for term, weight in query.items():
            if weight <= 0 or term not in self.doc_counts:
                continue
            found = self.memo.nonzero(term)
            if found is None:
                found = _nonzero(self.rank_bm25_scores(term))
            # a section without the term would add weight x 0.0: it keeps its total
            for position, score in zip(*found, strict=True):
                scores[position] = scores[position] + weight * score
        return scores
