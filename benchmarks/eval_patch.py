"""Patch safety over a folder of AReaL configs.

For every ``*.yaml`` in CONFIG_FOLDER and a synthetic training, generation and
weight-update OOM report, run the decision tree and apply EVERY recommended patch
(not only the first) to the config text. Each patched text must:

  * load again (strict safe loader),
  * hold exactly the original data plus the patched keys (nothing else changed),
  * keep every comment and every ``${...}`` interpolation of the original,
  * break no config rule the original did not already break.

Usage: python benchmarks/eval_patch.py CONFIG_FOLDER [--answer ID=VALUE ...]
Exit status 1 when any check fails.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from assistant.config import check_config, config_from_text, load_config, patched_text  # noqa: E402
from assistant.errors import UserError  # noqa: E402
from assistant.models import LogReport  # noqa: E402
from assistant.tree import decide  # noqa: E402

INTERPOLATION = re.compile(r"\$\{[^}]*\}")
REPORTS = {
    "training": LogReport(True, "training", "cuda_oom", 0.9),
    "generation": LogReport(
        True, "generation", "cuda_oom", 0.9, facts={"signature_tags": ["decode"]}
    ),
    "weight_update": LogReport(True, "weight_update", "cuda_oom", 0.9),
}
CHECKS = ("loads", "only_patched", "comments", "interpolations", "constraints")


def comments(text: str) -> list[str]:
    return [line.split("#", 1)[1].strip() for line in text.splitlines() if "#" in line]


def check_patch(config, patch: dict) -> dict[str, bool]:
    result = dict.fromkeys(CHECKS, False)
    try:
        new_text = patched_text(config, patch)
        reloaded = config_from_text(new_text, config.path)
    except UserError:
        return result
    result["loads"] = True
    result["only_patched"] = reloaded.data == config.with_patch(patch).data
    result["comments"] = all(c in new_text for c in comments(config.text))
    result["interpolations"] = all(
        new_text.count(i) >= config.text.count(i) for i in set(INTERPOLATION.findall(config.text))
    )
    before = {w.id for w in check_config(config)}
    result["constraints"] = {w.id for w in check_config(reloaded)} <= before
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder")
    parser.add_argument("--answer", action="append", default=[], metavar="ID=VALUE")
    args = parser.parse_args()
    answers = dict(a.split("=", 1) for a in args.answer)
    flags = {k: (v, "flag") for k, v in answers.items()}
    paths = sorted(Path(args.folder).glob("*.yaml"))
    if not paths:
        print(f"no *.yaml in {args.folder}", file=sys.stderr)
        return 2
    failures = dict.fromkeys(CHECKS, 0)
    patches = decisions = empty_first = 0
    preexisting = 0
    elapsed = 0.0
    print(f"{'config':<58} {'phase':<14} {'first fix':<24} {'recs':>4} {'patches':>7} result")
    for path in paths:
        config = load_config(str(path))
        preexisting += len(check_config(config))
        for phase, report in REPORTS.items():
            start = time.perf_counter()
            decision = decide(report, config, flags, "en", True)
            elapsed += time.perf_counter() - start
            decisions += 1
            empty_first += not decision.patch
            bad: list[str] = []
            count = 0
            for rec in decision.recommendations:
                if not rec.patch:
                    continue
                count += 1
                for check, ok in check_patch(config, rec.patch).items():
                    if not ok:
                        failures[check] += 1
                        bad.append(f"{rec.fix}:{check}")
            patches += count
            first = decision.recommendations[0].fix if decision.recommendations else "-"
            status = "ok" if not bad else "FAIL " + ", ".join(bad)
            recs = len(decision.recommendations)
            print(f"{path.name:<58} {phase:<14} {first:<24} {recs:>4} {count:>7} {status}")
    print()
    print(f"configs: {len(paths)}  decisions: {decisions}  patches applied: {patches}")
    print(f"decisions whose first fix is not a config change: {empty_first}")
    print(f"warnings already in the original configs: {preexisting}")
    for check in CHECKS:
        print(f"  {check:<15} passed {patches - failures[check]}/{patches}")
    print(f"mean decide() time: {1000 * elapsed / max(decisions, 1):.1f} ms")
    return 1 if any(failures.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
