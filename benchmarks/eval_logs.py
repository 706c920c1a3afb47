"""Accuracy of the log classifier on a labelled folder.

usage: python benchmarks/eval_logs.py FOLDER [--part all|tune|holdout] [--misses-only]

FOLDER/labels.yaml lists entries with file, oom, phase, kind and (optionally)
sections. Prints the accuracy of oom, phase and kind, confusion tables and
every miss. When assistant.pipeline offers diagnose_paths(), the first
recommended section is compared with the labelled sections as well.

--part holdout keeps every third labelled file (the 3rd, 6th, ...); --part tune
the others. Tune rules on one part and report both.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import yaml  # noqa: E402

from assistant.errors import UserError  # noqa: E402
from assistant.logs import read_and_classify  # noqa: E402


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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--part", choices=("all", "tune", "holdout"), default="all")
    parser.add_argument("--misses-only", action="store_true", help="skip the confusion tables")
    args = parser.parse_args(argv)
    labels = yaml.safe_load((args.folder / "labels.yaml").read_text(encoding="utf-8"))
    entries = _select(labels, args.part)
    diagnose = _diagnose_fn()
    fields = ("oom", "phase", "kind")
    pairs: dict[str, list[tuple[str, str]]] = {f: [] for f in fields}
    section_hits = section_total = 0
    misses: list[str] = []
    started = time.perf_counter()
    for entry in entries:
        path = str(args.folder / entry["file"])
        try:
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
                recs = diagnose([path]).decision.recommendations
            except ImportError:  # the decision tree is not there yet
                diagnose = None
                recs = None
        if recs is not None:
            section_total += 1
            first = recs[0].section if recs else "-"
            if first in entry["sections"]:
                section_hits += 1
            else:
                wrong.append(f"section {entry['sections']}->{first}")
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
    if not args.misses_only:
        for f in ("phase", "kind"):
            _confusion(f, pairs[f])
    print(f"\nmisses ({len(misses)}):")
    for line in misses:
        print("  " + line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
