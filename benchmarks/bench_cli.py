"""Cold-process timing of `areal-doctor search` against importing its dependencies.

    .venv/bin/python benchmarks/bench_cli.py [--runs 7] [--query "训练时显存不足怎么办"]

Each measurement starts a new Python process, so nothing is shared between runs
except what a user also keeps between commands: the search-index cache in the user
cache folder. Printed (median of --runs, in seconds):

* ``import jieba, rank_bm25`` alone: the reference (jieba imports pkg_resources, which
  costs most of it in a venv with setuptools; areal-doctor imports jieba without it, see
  assistant/search/tokenize.py), and for information the same import without
  pkg_resources: the stricter reference;
* ``python -m assistant search QUERY`` with a warm cache (the normal case), and the
  ratio to the reference (goal: at most 2);
* the same with an empty cache folder on every run (first use after an install or a
  knowledge edit: the index is compiled and written), for information;
* ``python -m assistant diagnose`` of a small fixture log (a CUDA OOM in backward) with
  a warm cache: the fixed cost of a diagnosis, for information;
* which of the heavy libraries (numpy, rank_bm25, yaml, jieba) a warm search and a warm
  diagnose load: none but jieba for a Chinese query is the expected answer, since the
  cache holds rank-bm25's scores of every index term and the parsed guide sections.

The interpreter running this script is used for every command, from bytecode as an
installed wheel runs (PYTHONDONTWRITEBYTECODE is dropped and the package compiled
first; --source-only keeps the variable as it is).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SMALL_LOG = ROOT / "tests" / "fixtures" / "logs" / "phases" / "backward-source-line-after-error.log"


def timed_run(command: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, cwd=ROOT, env=env, check=True, capture_output=True)
    return time.perf_counter() - start


def median_time(command: list[str], runs: int, env_for_run) -> float:
    return statistics.median(timed_run(command, env_for_run(i)) for i in range(runs))


HEAVY = ("numpy", "rank_bm25", "yaml", "jieba")
_LOADED = (
    "import runpy, sys\n"
    "sys.argv = sys.argv[1:]\n"
    "try:\n"
    "    runpy.run_module('assistant', run_name='__main__', alter_sys=True)\n"
    "except SystemExit:\n"
    "    pass\n"
    f"sys.stderr.write('LOADED ' + ' '.join(m for m in {HEAVY!r} if m in sys.modules))\n"
)


def loaded_modules(command: list[str], env: dict[str, str]) -> str:
    """The heavy libraries ``python -m assistant ARGS`` (command[3:]) ends up loading."""
    wrapped = [command[0], "-c", _LOADED, "assistant", *command[3:]]
    result = subprocess.run(wrapped, cwd=ROOT, env=env, capture_output=True, text=True)
    found = result.stderr.rpartition("LOADED")[2].split()
    return ", ".join(found) or "none"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--query", default="训练时显存不足怎么办")
    parser.add_argument(
        "--source-only", action="store_true", help="keep PYTHONDONTWRITEBYTECODE as it is"
    )
    args = parser.parse_args()

    python = sys.executable
    base_env = dict(os.environ)
    if not args.source_only:
        base_env.pop("PYTHONDONTWRITEBYTECODE", None)
        compile_all = [python, "-m", "compileall", "-q", str(ROOT / "assistant")]
        subprocess.run(compile_all, check=False, env=base_env)
    with tempfile.TemporaryDirectory() as scratch:
        warm_env = {**base_env, "AREAL_DOCTOR_CACHE_DIR": str(Path(scratch) / "warm")}
        imports = [python, "-c", "import jieba, rank_bm25"]
        no_pkg = "import sys; sys.modules['pkg_resources'] = None; import jieba, rank_bm25"
        imports_lean = [python, "-c", no_pkg]
        search = [python, "-m", "assistant", "search", args.query]
        timed_run(search, warm_env)  # fill the cache once
        diagnose = [python, "-m", "assistant", "diagnose", str(SMALL_LOG), "--non-interactive"]
        timed_run(diagnose, warm_env)

        def cold_env(run: int) -> dict[str, str]:
            return {**base_env, "AREAL_DOCTOR_CACHE_DIR": str(Path(scratch) / f"cold{run}")}

        reference = median_time(imports, args.runs, lambda _run: base_env)
        lean = median_time(imports_lean, args.runs, lambda _run: base_env)
        warm = median_time(search, args.runs, lambda _run: warm_env)
        cold = median_time(search, args.runs, cold_env)
        diagnosed = median_time(diagnose, args.runs, lambda _run: warm_env)
        search_loads = loaded_modules(search, warm_env)
        diagnose_loads = loaded_modules(diagnose, warm_env)

    print(f"runs per figure: {args.runs} (median), query: {args.query!r}")
    print(f"import jieba, rank_bm25          {reference:6.3f} s")
    print(f"  the same without pkg_resources {lean:6.3f} s   (search / this: {warm / lean:4.2f})")
    print(
        f"search, warm cache               {warm:6.3f} s   ratio {warm / reference:4.2f} (goal 2)"
    )
    print(f"search, empty cache every run    {cold:6.3f} s   ratio {cold / reference:4.2f}")
    print(f"diagnose a small log, warm cache {diagnosed:6.3f} s")
    print(f"heavy modules loaded, warm: search {search_loads}; diagnose {diagnose_loads}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
