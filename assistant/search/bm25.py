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

rank-bm25 imports numpy; import this module only when a search runs. What is cached
between processes is the compiled sections (their terms, index.py); building a model
from them is a count over a few thousand terms.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence


class WeightedBM25:
    """rank-bm25's BM25Plus (``delta=0``) with a weight per query term."""

    def __init__(self, corpus: Sequence[Sequence[str]], k1: float = 1.5, b: float = 0.75) -> None:
        from rank_bm25 import BM25Plus

        self.corpus_size = len(corpus)
        self.model = BM25Plus([list(document) for document in corpus], k1=k1, b=b, delta=0.0)
        # term -> number of sections with it (typo correction prefers common terms)
        self.doc_counts: dict[str, int] = dict(
            Counter(term for document in corpus for term in set(document))
        )
        self.idf: dict[str, float] = {term: float(self.model.idf[term]) for term in self.doc_counts}

    def weighted_scores(self, query: Mapping[str, float]) -> list[float]:
        """Per section, the sum over query terms of weight x the term's BM25 score."""
        scores = [0.0] * self.corpus_size
        for term, weight in query.items():
            if weight <= 0 or term not in self.doc_counts:
                continue
            term_scores = self.model.get_scores([term])
            scores = [
                total + weight * float(score)
                for total, score in zip(scores, term_scores, strict=True)
            ]
        return scores
