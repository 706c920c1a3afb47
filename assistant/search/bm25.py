"""The BM25 variant used for the guide: rank-bm25's Okapi scoring with Lucene's idf.

rank-bm25's ``BM25Okapi`` computes idf as ``log((N - n + 0.5) / (n + 0.5))``: with
about 15 sections a term found in half of them scores 0 and one found in more scores
negative (rank-bm25 then floors it at a fraction of the average idf). In a corpus this
small, ordinary words such as "memory" or "训练" sit right at that edge, so a query made
of them could rank nothing. Lucene's idf, ``log(1 + (N - n + 0.5) / (n + 0.5))``, keeps
the same shape for rare terms but is always positive.

This module imports rank-bm25 (and so numpy); import it only when a search runs.
"""

from __future__ import annotations

import math

import numpy as np
from rank_bm25 import BM25Okapi


class LuceneBM25(BM25Okapi):
    """Okapi BM25 term-frequency saturation with a never-negative (Lucene) idf."""

    def _calc_idf(self, nd: dict[str, int]) -> None:
        self.doc_counts = nd  # term -> number of sections with it (typo correction)
        for word, doc_count in nd.items():
            self.idf[word] = lucene_idf(self.corpus_size, doc_count)

    def weighted_scores(self, query: dict[str, float]) -> np.ndarray:
        """BM25 scores where each query term counts with its own weight (see engine)."""
        doc_len = np.array(self.doc_len, dtype=float)
        norm = self.k1 * (1 - self.b + self.b * doc_len / self.avgdl)
        scores = np.zeros(self.corpus_size)
        for term, weight in query.items():
            idf = self.idf.get(term)
            if not idf or weight <= 0:
                continue
            tf = np.array([doc.get(term, 0) for doc in self.doc_freqs], dtype=float)
            scores += weight * idf * tf * (self.k1 + 1) / (tf + norm)
        return scores


def lucene_idf(corpus_size: int, doc_count: int) -> float:
    return math.log(1.0 + (corpus_size - doc_count + 0.5) / (doc_count + 0.5))
