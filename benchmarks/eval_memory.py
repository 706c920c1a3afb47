"""Check the memory formulas against figures real logs print next to their inputs,
and time `areal-doctor estimate`.

    .venv/bin/python benchmarks/eval_memory.py [--runs 7] [--corpus /work/shared/corpus/logs]

Each comparison names the log (corpus file and the GitHub issue it comes from), the
inputs the log or its issue states, what the formula gives, and the log's own figure.
When --corpus is given (and readable) the quoted log line is looked up there first, so
a comparison never rests on a figure that is not in the log. Goal: weights, KV bytes
per token and KV pool figures within 5% of the logs.

The timing runs `python -m assistant estimate` in fresh processes (median of --runs)
and checks that no torch module was imported (goal: under 0.5 s, no GPU, no network).

With --configs DIR, `areal-doctor estimate --config F --format json` runs in a fresh
process for every *.yaml / *.yml below DIR: each must exit 0 or 1 (never 2 for a
readable config, never a traceback), print the contract's JSON, and take under 0.5 s:

    .venv/bin/python benchmarks/eval_memory.py --configs /work/shared/reference/areal-configs
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from assistant.memory import formulas  # noqa: E402
from assistant.memory.facts import table_entry  # noqa: E402

GIB = 1 << 30


def comparisons() -> list[dict]:
    llama8b = table_entry("meta-llama/Llama-3.1-8B-Instruct")
    qwen72b = table_entry("Qwen/Qwen2.5-72B-Instruct")
    out = []

    # dev/028.log (vllm-project/vllm#10517): Llama-3.1-8B, vLLM V0, RTX 3090, TP 1,
    # max_model_len 29000 (chunked prefill off: the profile runs 29000 tokens)
    weights = formulas.server_weight_bytes(llama8b, 2, 1)
    out.append(
        {
            "what": "vLLM weights, Llama-3.1-8B bf16, TP1",
            "log": "dev/028.log",
            "quote": "Loading model weights took 14.9888 GB",
            "formula": weights / GIB,
            "stated": 14.9888,
            "unit": "GiB",
        }
    )
    peak = formulas.vllm_profile_peak_bytes(llama8b, 29000, 1, 2)
    out.append(
        {
            "what": "vLLM profiling activation peak, 29000 batched tokens",
            "log": "dev/028.log",
            "quote": "peak_torch_memory=17.98GiB",
            "formula": peak / GIB,
            "stated": 17.98 - 14.9888,
            "unit": "GiB (peak_torch_memory - weights)",
        }
    )
    # the log's own figures as inputs of vLLM's formula: total 23.58, util 0.90,
    # peak torch 17.98, non-torch 0.35 -> KV 2.89 GiB -> blocks of 16 x 131072 bytes
    available, tokens = formulas.vllm_kv_pool(
        int(23.58 * GIB),
        int(17.98 * GIB),
        0.90,
        formulas.kv_bytes_per_token(llama8b),
        non_torch_bytes=int(0.35 * GIB),
    )
    out.append(
        {
            "what": "vLLM KV cache bytes from the log's memory profile",
            "log": "dev/028.log",
            "quote": "kv_cache_size=2.89GiB",
            "formula": available / GIB,
            "stated": 2.89,
            "unit": "GiB",
        }
    )
    out.append(
        {
            "what": "vLLM KV tokens (# GPU blocks x 16) from kv_cache_size=2.89GiB",
            "log": "dev/028.log",
            "quote": "# GPU blocks: 1478",
            "formula": int(2.89 * GIB) // (formulas.kv_bytes_per_token(llama8b) * 16) * 16,
            "stated": 1478 * 16,
            "unit": "tokens",
        }
    )
    # dev/057.log (vllm-project/vllm#19964): a Llama model (llama.py frames), vLLM V1:
    # Available KV cache memory 66.87 GiB -> 547,776 tokens. 131072 bytes per token is
    # Llama-3.x-8B's KV geometry (32 layers x 8 KV heads x 128 x 2 x 2 bytes); the
    # log does not name the model, so this checks the per-token figure only.
    per_token = formulas.kv_bytes_per_token(llama8b)
    out.append(
        {
            "what": "vLLM V1 KV tokens from Available KV cache memory (Llama-3.x-8B geometry)",
            "log": "dev/057.log",
            "quote": "GPU KV cache size: 547,776 tokens",
            "formula": int(66.87 * GIB) // (per_token * 16) * 16,
            "stated": 547776,
            "unit": "tokens",
        }
    )
    # dev/003.log (vllm-project/vllm#16570): Qwen2.5-VL-72B on 4 x A100-40G, TP 4. The
    # table holds the language model (Qwen2.5-72B geometry); the vision tower (~0.67 B
    # parameters) is not counted, so the formula is expected to be ~1-2% low.
    out.append(
        {
            "what": "vLLM weights per TP rank, Qwen2.5-VL-72B (language model only), TP4",
            "log": "dev/003.log",
            "quote": "Model loading took 34.4340 GiB",
            "formula": formulas.server_weight_bytes(qwen72b, 2, 4) / GIB,
            "stated": 34.4340,
            "unit": "GiB",
        }
    )
    return out


def check_quotes(rows: list[dict], corpus: Path | None) -> None:
    if corpus is None or not corpus.is_dir():
        for row in rows:
            row["quoted"] = "not checked"
        return
    for row in rows:
        path = corpus / row["log"]
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            row["quoted"] = "log missing"
            continue
        row["quoted"] = "yes" if row["quote"] in text else "NOT FOUND"


def time_estimate(runs: int) -> tuple[float, bool]:
    config = ROOT / "examples" / "gsm8k-grpo.yaml"
    argv = ["areal-doctor", "estimate", "--config", str(config), "--format", "json"]
    code = (
        f"import sys; sys.argv={argv!r};"
        "import assistant.cli as c; rc=c.main(sys.argv[1:]);"
        "sys.stderr.write('TORCH' if any(m=='torch' or m.startswith('torch.') "
        "for m in sys.modules) else 'NOTORCH')"
    )
    times, clean = [], True
    for _ in range(runs):
        start = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT
        )
        times.append(time.perf_counter() - start)
        clean = clean and done.stderr.strip().endswith("NOTORCH")
    return statistics.median(times), clean


CONFIG_GOAL_S = 0.5


def sweep_configs(folder: Path) -> bool:
    """estimate over every YAML below ``folder``: exit code, JSON shape, wall time."""
    import json

    paths = sorted(p for p in folder.rglob("*") if p.suffix in (".yaml", ".yml"))
    ok = True
    slowest = 0.0
    print(f"\nestimate --config over {len(paths)} configs in {folder}")
    for path in paths:
        start = time.perf_counter()
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "assistant",
                "estimate",
                "--config",
                str(path),
                "--format",
                "json",
            ],
            capture_output=True,
            text=True,
            cwd=ROOT,
        )
        took = time.perf_counter() - start
        slowest = max(slowest, took)
        problems = []
        if done.returncode not in (0, 1):
            problems.append(f"exit {done.returncode}: {done.stderr.strip()[:120]}")
        if "Traceback" in done.stderr:
            problems.append("traceback")
        if done.returncode in (0, 1):
            try:
                data = json.loads(done.stdout)
                engines = set(data["engines"])
                if data["schema"] != "areal-doctor/estimate/v1" or not engines <= {
                    "actor",
                    "ref",
                    "critic",
                    "teacher",
                    "rollout",
                }:
                    problems.append("not the contract's JSON")
                if data["fits"] != (done.returncode == 0):
                    problems.append("exit code disagrees with fits")
                stand_in = data["model"].get("stand_in_for")
            except (ValueError, KeyError) as exc:
                problems.append(f"bad JSON ({exc.__class__.__name__})")
                engines, stand_in = set(), None
        else:
            engines, stand_in = set(), None
        if took >= CONFIG_GOAL_S:
            problems.append(f"slow ({took:.2f} s)")
        ok = ok and not problems
        model = f"  model: stand-in for {stand_in}" if stand_in else ""
        print(
            f"  {path.name[:52]:52} exit {done.returncode}  {took:.2f} s  "
            f"{','.join(sorted(engines)) or '-':26} {'; '.join(problems) or 'ok'}{model}"
        )
    print(
        f"slowest: {slowest:.2f} s (goal < {CONFIG_GOAL_S} s each); "
        f"all fine: {'yes' if ok else 'NO'}"
    )
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--corpus", type=Path, default=None)
    parser.add_argument("--configs", type=Path, default=None, help="folder of AReaL YAMLs")
    args = parser.parse_args()
    rows = comparisons()
    check_quotes(rows, args.corpus)
    worst = 0.0
    print(f"{'comparison':74} {'formula':>12} {'log':>12} {'diff':>7}  quoted")
    for row in rows:
        diff = (row["formula"] - row["stated"]) / row["stated"] * 100
        worst = max(worst, abs(diff))
        print(
            f"{row['what'][:74]:74} {row['formula']:12.4f} {row['stated']:12.4f} "
            f"{diff:+6.2f}%  {row['quoted']}"
        )
        print(f"    {row['log']}: {row['quote']!r} ({row['unit']})")
    print(f"worst difference: {worst:.2f}% (goal: within 5%)")
    median, clean = time_estimate(args.runs)
    print(
        f"estimate, fresh process, median of {args.runs}: {median:.3f} s "
        f"(goal < 0.5 s); torch imported: {'no' if clean else 'YES'}"
    )
    configs_ok = sweep_configs(args.configs) if args.configs is not None else True
    return 0 if worst <= 5 and median < 0.5 and clean and configs_ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
