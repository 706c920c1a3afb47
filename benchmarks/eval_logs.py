"""Accuracy of the log classifier on a labelled folder.

usage: python benchmarks/eval_logs.py FOLDER [--part all|tune|holdout] [--misses-only]
                                             [--leave-family-out] [--by KEY]

FOLDER/labels.yaml lists entries with file, oom, phase, kind and (optionally)
sections and framework. Prints the accuracy of oom, phase and kind, the same per
framework family, confusion tables and every miss. When assistant.pipeline offers
diagnose_paths(), the first recommended section is compared with the labelled
sections as well. Phase, kind and first fix are also given over the memory
failures only (the labels with oom: true), as the issue tracker reports them.

--part holdout keeps every third labelled file (the 3rd, 6th, ...); --part tune
the others. Tune rules on one part and report both.

--leave-family-out scores each family's logs with the rules written from that
family's logs switched off (rules name their families in `learned_from`): a rule
that only fits the logs it came from shows as a drop against the plain figures.

--by KEY adds the same breakdown by another label field (e.g. `--by segment`).
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import yaml  # noqa: E402

import assistant.logs as logs_package  # noqa: E402
from assistant.errors import UserError  # noqa: E402
from assistant.logs import read_and_classify  # noqa: E402
from assistant.logs.rules import load_rules  # noqa: E402


@contextmanager
def rules_without(family: str | None) -> Iterator[None]:
    """Classify with the signatures and phase patterns learned from ``family`` removed."""
    if family is None:
        yield
        return
    full = load_rules()
    phases = dataclasses.replace(
        full.phases,
        patterns=tuple(p for p in full.phases.patterns if family not in p.learned_from),
    )
    reduced = dataclasses.replace(
        full,
        signatures=tuple(s for s in full.signatures if family not in s.learned_from),
        phases=phases,
    )
    original = logs_package.load_rules
    logs_package.load_rules = lambda: reduced
    try:
        yield
    finally:
        logs_package.load_rules = original


def _diagnose_fn():
    try:
        from assistant.pipeline import diagnose_paths
    except ImportError:
        return None
    return diagnose_paths


def _select(labels: list[dict], part: str) -> list[dict]:
    if part == "all":
        return labels
    holdout = part == "holdout"
    return [e for i, e in enumerate(labels) if (i % 3 == 2) == holdout]


def _confusion(name: str, pairs: list[tuple[str, str]]) -> None:
    values = sorted({v for pair in pairs for v in pair})
    counts = Counter(pairs)
    width = max(8, *(len(v) for v in values)) + 1
    print(f"\n{name} confusion (rows: label, columns: predicted)")
    print(" " * width + "".join(v[: width - 1].rjust(width) for v in values))
    for label in values:
        row = "".join(str(counts.get((label, p), "")).rjust(width) for p in values)
        print(label.ljust(width) + row)


def _share(rows: list[dict], key: str) -> str:
    scored = [r[key] for r in rows if key in r]
    if not scored:
        return "   -  "
    return f"{sum(scored) / len(scored):.2f} ({sum(scored)}/{len(scored)})"


def _over_memory_failures(rows: list[dict]) -> None:
    memory = [r for r in rows if r["memory"]]
    if memory:
        print(
            f"over the {len(memory)} memory failures: oom {_share(memory, 'oom')}, "
            f"phase {_share(memory, 'phase')}, kind {_share(memory, 'kind')}, "
            f"first fix {_share(memory, 'section')}"
        )
    others = [r for r in rows if not r["memory"]]
    if others:
        flagged = sum(1 for r in others if not r["oom"])
        print(f"look-alikes flagged as memory failures: {flagged}/{len(others)}")


def _per_family(rows: list[dict], key: str = "family", title: str = "framework family") -> None:
    by_family: dict[str, list[dict]] = defaultdict(list)
    for row in rows:
        by_family[row[key]].append(row)
    if len(by_family) < 2:
        return
    print(f"\nper {title} (oom / phase / kind / first fix):")
    for family in sorted(by_family, key=lambda f: (-len(by_family[f]), f)):
        group = by_family[family]
        keys = ("oom", "phase", "kind", "section")
        cells = "  ".join(_share(group, key).ljust(12) for key in keys)
        print(f"  {family:10} n={len(group):<3} {cells}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--part", choices=("all", "tune", "holdout"), default="all")
    parser.add_argument("--misses-only", action="store_true", help="skip the confusion tables")
    parser.add_argument(
        "--leave-family-out",
        action="store_true",
        help="score each family with the rules learned from it switched off",
    )
    parser.add_argument("--by", metavar="KEY", help="also break down by this label field")
    args = parser.parse_args(argv)
    labels = yaml.safe_load((args.folder / "labels.yaml").read_text(encoding="utf-8"))
    entries = _select(labels, args.part)
    diagnose = _diagnose_fn()
    fields = ("oom", "phase", "kind")
    pairs: dict[str, list[tuple[str, str]]] = {f: [] for f in fields}
    section_hits = section_total = 0
    misses: list[str] = []
    rows: list[dict] = []
    started = time.perf_counter()
    for entry in entries:
        path = str(args.folder / entry["file"])
        family = entry.get("framework", "?")
        try:
            with rules_without(family if args.leave_family_out else None):
                report = read_and_classify([path])
            got = {"oom": str(report.oom), "phase": report.phase, "kind": report.kind}
        except UserError as exc:
            got = {"oom": "error", "phase": "error", "kind": "error"}
            print(f"{entry['file']}: {exc}")
        want = {"oom": str(entry["oom"]), "phase": entry["phase"], "kind": entry["kind"]}
        for f in fields:
            pairs[f].append((want[f], got[f]))
        wrong = [f"{f} {want[f]}->{got[f]}" for f in fields if want[f] != got[f]]
        recs = None
        if diagnose is not None and entry.get("sections"):
            try:
                with rules_without(family if args.leave_family_out else None):
                    recs = diagnose([path]).decision.recommendations
            except ImportError:  # the decision tree is not there yet
                diagnose = None
                recs = None
        row = {"family": family, "memory": bool(entry["oom"])}
        if args.by:
            row["by"] = str(entry.get(args.by, "?"))
        row.update({f: want[f] == got[f] for f in fields})
        if recs is not None:
            section_total += 1
            first = recs[0].section if recs else "-"
            row["section"] = first in entry["sections"]
            if first in entry["sections"]:
                section_hits += 1
            else:
                wrong.append(f"section {entry['sections']}->{first}")
        rows.append(row)
        if wrong:
            misses.append(f"{entry['file']}: {'; '.join(wrong)}  # {entry.get('note', '')[:90]}")
    elapsed = time.perf_counter() - started
    print(f"{len(entries)} logs from {args.folder} (part: {args.part}) in {elapsed:.2f} s")
    for f in fields:
        right = sum(1 for want, got in pairs[f] if want == got)
        print(f"{f:6} accuracy {right / len(entries):.3f}  ({right}/{len(entries)})")
    if section_total:
        print(
            f"first recommended section in labelled sections: "
            f"{section_hits / section_total:.3f} ({section_hits}/{section_total})"
        )
    _over_memory_failures(rows)
    _per_family(rows)
    if args.by:
        _per_family(rows, "by", args.by)
    if not args.misses_only:
        for f in ("phase", "kind"):
            _confusion(f, pairs[f])
    print(f"\nmisses ({len(misses)}):")
    for line in misses:
        print("  " + line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
