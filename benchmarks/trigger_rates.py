"""How often each prefilter trigger fires on the healthy lines of a folder of real logs.

usage: python benchmarks/trigger_rates.py FOLDER [FOLDER ...] [--top 20] [--max-share 0.005]

A healthy line is one that is not part of a failure: no rule of the classifier
recognises it (signature, look-alike, cascade event, error line), it is no traceback
frame, and it does not follow a ``Traceback`` header or a recognised line within a few
lines (the message that goes on below). Prints the triggers by the share of healthy
lines they keep, and exits 1 when one keeps more than --max-share (the limit
tests/test_logs_triggers.py holds the written pool of tests/fixtures/healthy to).
The corpus is read here only; none of its lines is copied anywhere.

Meant for folders of whole run logs. The labelled corpora (../shared/corpus/logs/dev*) are
failure reports: what is left of them after the failures is mostly the reporter's prose
about the failure ("I get an OOM error") and lines the heuristic above does not tie to
it, so there "error" and "OOM" rank high without meaning that healthy runs print them.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from assistant.logs.lines import clean_line  # noqa: E402
from assistant.logs.match import LineMatcher  # noqa: E402
from assistant.logs.rules import load_rules  # noqa: E402
from assistant.logs.scan import _to_python  # noqa: E402

AFTER_FAILURE = 8  # lines below a recognised line or a traceback header that belong to it
_FRAME = re.compile(r'^\s*(?:File "|at |#\d+ |\^+$|Traceback \(most recent call last\))')


def healthy_lines(path: Path, matcher: LineMatcher) -> list[str]:
    out: list[str] = []
    quiet = 0  # lines left that still belong to the failure above
    text = path.read_bytes().decode("utf-8", errors="replace")
    for number, raw in enumerate(text.splitlines(), 1):
        clean = clean_line(raw)
        if not clean.text.strip():
            continue
        if _FRAME.match(clean.text) or matcher.classify(clean, 0, number, 0) is not None:
            quiet = AFTER_FAILURE
            continue
        if quiet:
            quiet -= 1
            continue
        out.append(raw)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("folders", nargs="+", type=Path)
    parser.add_argument("--top", type=int, default=20)
    parser.add_argument("--max-share", type=float, default=0.005)
    args = parser.parse_args(argv)
    rules = load_rules()
    matcher = LineMatcher(rules)
    lines: list[str] = []
    for folder in args.folders:
        for path in sorted(folder.rglob("*")):
            if path.is_file() and path.suffix in (".log", ".txt"):
                lines += healthy_lines(path, matcher)
    if not lines:
        print("no healthy lines found", file=sys.stderr)
        return 2
    rates = []
    for trigger in rules.triggers:
        pattern = re.compile(_to_python(trigger))
        rates.append((sum(1 for line in lines if pattern.search(line)), trigger))
    rates.sort(key=lambda item: -item[0])
    print(f"{len(lines)} healthy lines; {len(rules.triggers)} triggers")
    for kept, trigger in rates[: args.top]:
        print(f"{kept:7d} {kept / len(lines):8.3%}  {trigger}")
    over = [t for kept, t in rates if kept > args.max_share * len(lines)]
    if over:
        print(f"over {args.max_share:.1%}: {', '.join(over)}")
    return 1 if over else 0


if __name__ == "__main__":
    raise SystemExit(main())
