"""Regenerate, or check, the sample output in README.md from the command itself.

The block between ``<!-- sample-output: begin -->`` and ``<!-- sample-output: end -->``
is what the README's first command prints, abridged by the rules below (which
sections, how many fixes). ``tests/test_docs_and_packaging.py`` runs ``--check``, so
the README cannot drift from the program (sqlite-utils does this with ``cog --check``).

    python docs/readme_sample.py           # rewrite README.md
    python docs/readme_sample.py --check   # exit 1 and show the difference if stale
"""

from __future__ import annotations

import contextlib
import difflib
import io
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
BEGIN, END = "<!-- sample-output: begin -->", "<!-- sample-output: end -->"
# the README's first command, run from the repository root
ARGS = [
    "diagnose",
    "examples/areal-training-oom.log",
    "--config",
    "examples/gsm8k-grpo.yaml",
    "--non-interactive",
]
# sections shown (by their first line); the others become "..."
KEEP = ("Memory failure", "Try first", "Root cause", "Recommended fixes", "Config patch",
        "Command-line overrides")  # fmt: skip
FIXES_SHOWN = 2  # of "Recommended fixes, best first"


def command_output() -> str:
    """What the first command prints, in English, without colour."""
    sys.path.insert(0, str(ROOT))
    from assistant.cli import main

    saved = {k: os.environ.get(k) for k in ("LANG", "LC_ALL", "LC_MESSAGES", "NO_COLOR")}
    os.environ.update(LANG="en_US.UTF-8", NO_COLOR="1")
    for key in ("LC_ALL", "LC_MESSAGES"):
        os.environ.pop(key, None)
    cwd = Path.cwd()
    out = io.StringIO()
    try:
        os.chdir(ROOT)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            main(ARGS)
    finally:
        os.chdir(cwd)
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    return out.getvalue()


def abridge(output: str) -> list[str]:
    sections = output.rstrip("\n").split("\n\n")
    lines: list[str] = []
    for section in sections:
        rows = section.splitlines()
        if not rows[0].startswith(KEEP):
            if lines and lines[-1] != "...":
                lines.append("...")
            continue
        if rows[0].startswith("Recommended fixes"):
            starts = [i for i, row in enumerate(rows) if row.startswith("  #")]
            if len(starts) > FIXES_SHOWN:
                rows = rows[: starts[FIXES_SHOWN]] + ["  ..."]
        if lines and lines[-1] != "...":
            lines.append("")
        lines += rows
    return lines


def sample_block() -> str:
    return "\n".join(["```text", *abridge(command_output()), "```"])


def rewritten(readme: str) -> str:
    head, begin, rest = readme.partition(BEGIN)
    _, end, tail = rest.partition(END)
    if not begin or not end:
        raise SystemExit(f"README.md lacks the {BEGIN} ... {END} markers")
    return f"{head}{BEGIN}\n{sample_block()}\n{END}{tail}"


def main(argv: list[str]) -> int:
    current = README.read_text(encoding="utf-8")
    wanted = rewritten(current)
    if "--check" in argv:
        if current == wanted:
            return 0
        diff = difflib.unified_diff(
            current.splitlines(), wanted.splitlines(), "README.md", "generated", lineterm=""
        )
        print("\n".join(diff))
        print("README.md's sample output is stale: run python docs/readme_sample.py")
        return 1
    README.write_text(wanted, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
