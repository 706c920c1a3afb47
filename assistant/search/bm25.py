"""The BM25 variant used for the guide: Okapi term-frequency saturation with Lucene's idf.

rank-bm25's ``BM25Okapi`` computes idf as ``log((N - n + 0.5) / (n + 0.5))``: with
about 15 sections a term found in half of them scores 0 and one found in more scores
negative (rank-bm25 then floors it at a fraction of the average idf). In a corpus this
small, ordinary words such as "memory" or "训练" sit right at that edge, so a query made
of them could rank nothing. Lucene's idf, ``log(1 + (N - n + 0.5) / (n + 0.5))``, keeps
the same shape for rare terms but is always positive.

The idf is a small function of its own, as in bm25s (``bm25s/scoring.py`` has one idf
function per variant, e.g. ``_score_idf_lucene``), rather than an override of a
library's private method; counting and scoring are as rank-bm25's ``BM25Okapi`` does
them, so the figures are the same.

This module imports numpy; import it only when a search runs.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import numpy.typing as npt


class LuceneBM25:
    """Okapi BM25 term-frequency saturation with a never-negative (Lucene) idf."""

    def __init__(self, corpus: Sequence[Sequence[str]], k1: float = 1.5, b: float = 0.75) -> None:
        self.k1 = k1
        self.b = b
        self.corpus_size = len(corpus)
        self.doc_len = [len(document) for document in corpus]
        self.doc_freqs: list[dict[str, int]] = []  # per section: term -> count
        self.doc_counts: dict[str, int] = {}  # term -> number of sections with it (typos)
        for document in corpus:
            frequencies: dict[str, int] = {}
            for term in document:
                frequencies[term] = frequencies.get(term, 0) + 1
            self.doc_freqs.append(frequencies)
            for term in frequencies:
                self.doc_counts[term] = self.doc_counts.get(term, 0) + 1
        self.avgdl = sum(self.doc_len) / self.corpus_size
        self.idf: dict[str, float] = {
            term: lucene_idf(self.corpus_size, count) for term, count in self.doc_counts.items()
        }

    def weighted_scores(self, query: Mapping[str, float]) -> npt.NDArray[np.float64]:
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
    """Lucene's BM25 idf: ``log(1 + (N - n + 0.5) / (n + 0.5))``, never negative."""
    return math.log(1.0 + (corpus_size - doc_count + 0.5) / (doc_count + 0.5))
