"""Recall@1, recall@3 and MRR@5 of guide search, per query group, against a baseline.

    .venv/bin/python benchmarks/eval_search.py QUERIES.yaml [--half a|b] [--show-misses]

QUERIES.yaml is a list of ``{q, lang, relevant: [section ids, most relevant first]}``.
Groups come from ``# --- group: NAME`` comment lines before the items, else from each
item's ``lang``. A query counts as found at rank r when the r-th result is any of its
relevant sections.

The baseline is rank-bm25's BM25Okapi with default parameters over the raw guide
sections (title + body), tokens split on whitespace, Chinese split into characters,
the index chosen by the query's script: what one gets without this package's
tokenisation, field weights, idf choice and glossary.

``--kinds`` also reports, per group, the questions a guide section answers
(``GROUP:guide``) apart from those one of areal-doctor's x- notes answers first
(``GROUP:notes``).

``--half a`` / ``--half b`` keep every other query of each group (a: 1st, 3rd, ...),
so a change can be tuned on one half and checked on the other. Options ``--k1``,
``--b``, ``--weights title=2,keys=2,...`` and ``--extra`` try index variants.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

GROUP_LINE = re.compile(r"^#\s*---\s*group:\s*([\w-]+)")
ITEM_LINE = re.compile(r"^-\s")


@dataclass(frozen=True)
class Query:
    text: str
    group: str
    relevant: tuple[str, ...]


def load_queries(path: Path) -> list[Query]:
    import yaml

    text = path.read_text(encoding="utf-8")
    items = yaml.safe_load(text) or []
    groups: list[str | None] = []
    current: str | None = None
    for line in text.splitlines():
        match = GROUP_LINE.match(line)
        if match:
            current = match.group(1)
        elif ITEM_LINE.match(line):
            groups.append(current)
    if len(groups) != len(items):
        groups = [None] * len(items)
    return [
        Query(str(item["q"]), group or str(item.get("lang", "all")), tuple(item["relevant"]))
        for item, group in zip(items, groups, strict=True)
    ]


def take_half(queries: list[Query], half: str) -> list[Query]:
    seen: dict[str, int] = defaultdict(int)
    kept = []
    for query in queries:
        position = seen[query.group]
        seen[query.group] += 1
        if (position % 2 == 0) == (half == "a"):
            kept.append(query)
    return kept


def first_relevant_rank(ranked: list[str], relevant: tuple[str, ...], depth: int = 5) -> int:
    """1-based rank of the first relevant section within ``depth``, or 0."""
    for rank, section in enumerate(ranked[:depth], 1):
        if section in relevant:
            return rank
    return 0


def metrics(ranks: list[int]) -> tuple[float, float, float]:
    n = len(ranks) or 1
    recall1 = sum(1 for r in ranks if r == 1) / n
    recall3 = sum(1 for r in ranks if 1 <= r <= 3) / n
    mrr5 = sum(1.0 / r for r in ranks if r) / n
    return recall1, recall3, mrr5


class Baseline:
    """BM25Okapi over whitespace / character tokens of the raw contract sections."""

    def __init__(self) -> None:
        from rank_bm25 import BM25Okapi

        from assistant.search.sections import list_sections

        self.ids: dict[str, list[str]] = {}
        self.models = {}
        for lang in ("zh", "en"):
            sections = [s for s in list_sections(lang) if not s.is_extra]
            self.ids[lang] = [s.id for s in sections]
            corpus = [self.tokens(f"{s.title}\n{s.body}") for s in sections]
            self.models[lang] = BM25Okapi(corpus)

    @staticmethod
    def tokens(text: str) -> list[str]:
        out: list[str] = []
        for chunk in text.lower().split():
            if re.search(r"[\u4e00-\u9fff]", chunk):
                out.extend(ch for ch in chunk if not ch.isspace())
            else:
                out.append(chunk)
        return out

    def rank(self, query: str) -> list[str]:
        from assistant.search import detect_lang

        lang = detect_lang(query)
        scores = self.models[lang].get_scores(self.tokens(query))
        order = sorted(range(len(scores)), key=lambda i: -scores[i])
        return [self.ids[lang][i] for i in order]


def parse_weights(spec: str | None):
    from assistant.search.index import Weights

    if not spec:
        return Weights()
    values = {}
    for part in spec.split(","):
        name, _, value = part.partition("=")
        values[name.strip()] = int(value)
    return Weights(**values)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("queries", type=Path)
    parser.add_argument("--half", choices=("a", "b"))
    parser.add_argument("--k1", type=float)
    parser.add_argument("--b", type=float)
    parser.add_argument("--weights", help="e.g. title=2,heading=1,keys=2,body=1,glossary=1")
    parser.add_argument("--extra", action="store_true", help="also index the x- sections")
    parser.add_argument(
        "--note-lead", type=float, help="how much higher a note must score to lead (0: no notes)"
    )
    parser.add_argument("--show-misses", action="store_true")
    parser.add_argument(
        "--kinds", action="store_true", help="also per group: guide questions apart from note ones"
    )
    args = parser.parse_args()

    from assistant.search import search
    from assistant.search.index import DEFAULT_CONFIG, IndexConfig

    config = IndexConfig(
        weights=parse_weights(args.weights) if args.weights else DEFAULT_CONFIG.weights,
        k1=DEFAULT_CONFIG.k1 if args.k1 is None else args.k1,
        b=DEFAULT_CONFIG.b if args.b is None else args.b,
        include_extra=args.extra or DEFAULT_CONFIG.include_extra,
        note_lead=DEFAULT_CONFIG.note_lead if args.note_lead is None else args.note_lead,
    )
    queries = load_queries(args.queries)
    if args.half:
        queries = take_half(queries, args.half)
    baseline = Baseline()
    ours: dict[str, list[int]] = defaultdict(list)
    base: dict[str, list[int]] = defaultdict(list)
    misses = []
    for query in queries:
        ranked = [hit.section for hit in search(query.text, k=5, config=config)]
        rank = first_relevant_rank(ranked, query.relevant)
        keys = [query.group, "ALL"]
        if args.kinds:
            kind = "notes" if query.relevant[0].startswith("x-") else "guide"
            keys += [f"{query.group}:{kind}", f"ALL:{kind}"]
        for key in keys:
            ours[key].append(rank)
            base[key].append(first_relevant_rank(baseline.rank(query.text), query.relevant))
        if rank != 1:
            misses.append((query, rank, ranked[:3]))
    print(
        f"{'group':<14}{'n':>4}   {'R@1':>5} {'R@3':>5} {'MRR@5':>6}   | baseline "
        f"{'R@1':>5} {'R@3':>5} {'MRR@5':>6}"
    )
    for group in [
        *sorted(k for k in ours if not k.startswith("ALL")),
        "ALL",
        "ALL:guide",
        "ALL:notes",
    ]:
        if group not in ours:
            continue
        r1, r3, mrr = metrics(ours[group])
        b1, b3, bmrr = metrics(base[group])
        print(
            f"{group:<14}{len(ours[group]):>4}   {r1:5.2f} {r3:5.2f} {mrr:6.3f}   |          "
            f"{b1:5.2f} {b3:5.2f} {bmrr:6.3f}"
        )
    if args.show_misses:
        for query, rank, top in misses:
            print(f"  rank {rank or '-'}: {query.text!r} want {list(query.relevant)} got {top}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
