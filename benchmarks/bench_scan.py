"""Speed and memory of read_and_classify against grep on big logs, with two noise sources.

usage: python benchmarks/bench_scan.py [FOLDER] [--size-mb 400] [--prefill-mb 40]
                                       [--ranks 128] [--rank-mb 2] [--repeat 3]
                                       [--noise pool,old] [--pythonpath DIR]

Generates (once; reused when present) in FOLDER (default benchmarks/data/), per noise:
  pool/   noise drawn from the healthy lines of tests/fixtures/healthy/ (AReaL's logger
          lines and stats tables, SGLang / vLLM status lines, tqdm, wandb, torchrun, NCCL
          and Ray start-up noise, config dumps: benchmarks/healthy_pool.py), and
          prefill.log: --prefill-mb MB of SGLang's own "Prefill batch. #new-seq: ..."
          lines; retract.log: as many MB of its decode lines and "KV cache pool is full.
          Retract requests." lines, one of each in turn (a server under memory pressure:
          every other line a candidate, a few line shapes); the rank folder follows the
          layout of a weight update that fails on two ranks: rank 77's NCCL "Cuda
          failure 2 'out of memory'" at 03:55:00.100 comes before rank 90's CUDA OOM at
          03:55:02.400 (each traceback under a timestamped "Begin update_weights" line,
          rank 77's below its communicator's NCCL INFO lines); the other ranks die of
          NCCL watchdog timeouts and SIGTERM later
  old/    the earlier generator's own noise lines (step / ppo_update / Memory-Usage /
          Decode batch); one rank (--ranks // 3) OOMs first
          status.log: 20 MB of its SGLang server and AReaL trainer lines, timed through
          the whole CLI (`diagnose --format json`, warm cache) as well
  big.log  about --size-mb MB, an OOM near its end
  ranks/   --ranks rank logs of --rank-mb MB each
Then times `grep -c -E PATTERN` (and `grep -r -c` for the folder) against
read_and_classify in a fresh Python process (best of --repeat), and reports the peak RSS
of that process and of its scan workers, the root cause found and whether it is the
expected one. Goals: <= 3x grep time, <= 150 MB peak. A log of the failure alone gives the
fixed cost every run pays (start-up, rules, the failure's window); marginal_ratio is
what the noise adds, against grep. --pythonpath runs another copy of
the code (a checkout of an earlier commit) on the same files, for before/after figures.

The code runs from bytecode, as an installed wheel does: the copy's modules are compiled
once before timing and PYTHONDONTWRITEBYTECODE is dropped for the timed processes (a
sandbox that sets it would otherwise charge every run for compiling the package's
sources, about 0.1 s). --source-only keeps the variable as it is.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
POOL = ROOT / "tests" / "fixtures" / "healthy"
GREP_PATTERN = "out of memory|OutOfMemoryError|OOM"
ANSI_HEAD = "\x1b[1;38;2;180;140;80m(AReaL)\x1b[0m"
GOAL_RATIO = 3.0
GOAL_RSS_MB = 150.0

_RUNNER = r"""
import json, resource, sys, time
started = time.perf_counter()
from assistant.logs import read_and_classify
report = read_and_classify(sys.argv[1:])
elapsed = time.perf_counter() - started
kib_self = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
kib_children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(json.dumps({"seconds_in_process": elapsed, "rss_main_mb": kib_self / 1024,
                  "rss_worker_mb": kib_children / 1024, "oom": report.oom,
                  "phase": report.phase, "kind": report.kind,
                  "root": f"{report.evidence[0].file}:{report.evidence[0].line}",
                  "count": report.findings[0].count if report.findings else 0,
                  "consequences": {c.what: c.count for c in report.consequences}}))
"""


def _stamp(second: int) -> str:
    hours, rest = divmod(second, 3600)
    return f"20260521-{10 + hours % 12:02d}:{rest // 60:02d}:{rest % 60:02d}.{second % 1000:03d}"


def _train_line(rng: random.Random, step: int, rank: int, second: int) -> str:
    kind = rng.random()
    head = f"{ANSI_HEAD} {_stamp(second)}"
    if kind < 0.55:
        return (
            f"{head} [FSDPEngine Rank {rank}] INFO: step {step} micro-batch {rng.randint(0, 7)} "
            f"loss={rng.random():.5f} grad_norm={rng.random() * 3:.4f} "
            f"tokens={rng.randint(2000, 16000)} lr=1.0e-06\n"
        )
    if kind < 0.8:
        return (
            f"{head} PPOActor INFO: ppo_update stats: kl={rng.random() / 100:.6f} "
            f"clip_ratio={rng.random() / 10:.5f} entropy={rng.random():.4f} "
            f"adv_mean={rng.random() - 0.5:.4f} reward={rng.random():.4f}\n"
        )
    if kind < 0.9:
        return (
            f"{head} IOStruct INFO: Memory-Usage after onload model: memory allocated (GB): "
            f"{rng.random() * 60:.2f}, memory reserved (GB): {rng.random() * 70:.2f}, "
            f"device memory used/total (GB): {rng.random() * 75:.2f}/79.25\n"
        )
    if kind < 0.97:
        return (
            f"[2026-05-21 10:{second // 60 % 60:02d}:{second % 60:02d} TP{rank % 8}] Decode batch. "
            f"#running-req: {rng.randint(1, 256)}, #token: {rng.randint(1000, 900000)}, "
            f"token usage: {rng.random():.2f}, "
            f"gen throughput (token/s): {rng.random() * 5000:.2f}\n"
        )
    done = f"Epoch 1/3 Step {step}/100000 Train step {step}/300000 done."
    return f"{head} StatsLogger INFO: {done}\n"


HEADER = (
    "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\n"
    f"{ANSI_HEAD} 20260521-10:00:00.000 RLTrainer INFO: actor.path: /models/Qwen2.5-7B-Instruct\n"
    f"{ANSI_HEAD} 20260521-10:00:00.001 RLTrainer INFO: weight_update_mode: xccl\n"
)


def _oom_block(rank: int, second: int) -> str:
    head = f"{ANSI_HEAD} {_stamp(second)} [FSDPEngine Rank {rank}] ERROR:"
    return (
        f"{head} train_batch failed\n"
        "Traceback (most recent call last):\n"
        '  File "/opt/AReaL/areal/trainer/ppo/actor.py", line 310, in ppo_update\n'
        "    stats = self.engine.train_batch(mb, loss_fn)\n"
        '  File "/opt/AReaL/areal/engine/fsdp_engine.py", line 702, in train_batch\n'
        "    loss.backward()\n"
        '  File "/usr/lib/python3/site-packages/torch/_tensor.py", line 626, in backward\n'
        "    torch.autograd.backward(\n"
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.91 GiB. GPU 0 has a "
        "total capacity of 79.25 GiB of which 1.02 GiB is free. Including non-PyTorch memory, "
        "this process has 78.21 GiB memory in use. Of the allocated memory 61.37 GiB is "
        "allocated by PyTorch, and 15.40 GiB is reserved by PyTorch but unallocated. If reserved "
        "but unallocated memory is large try setting "
        "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See "
        "documentation for Memory Management  "
        "(https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)\n"
    )


def _cascade_block(rank: int, second: int) -> str:
    return (
        f"[rank{rank}]:[E0521 {_stamp(second)[9:]} ProcessGroupNCCL.cpp:616] [Rank {rank}] "
        "Watchdog caught collective operation timeout: WorkNCCL(SeqNum=88123, "
        "OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600012 "
        "milliseconds before timing out.\n"
        f"W0521 {_stamp(second + 2)[9:]} 1234 torch/distributed/elastic/multiprocessing/api.py:897]"
        f" Sending process {40000 + rank} closing signal SIGTERM\n"
    )


def write_log(path: Path, size: int, rank: int, seed: int, tail: str | None) -> None:
    rng = random.Random(seed)
    written, step, second = 0, 0, 0
    with path.open("w", encoding="utf-8") as handle:
        handle.write(HEADER)
        chunk: list[str] = []
        while written < size:
            step += 1
            second += rng.random() < 0.2
            line = _train_line(rng, step, rank, second)
            chunk.append(line)
            written += len(line)
            if len(chunk) >= 20000:
                handle.write("".join(chunk))
                chunk.clear()
        handle.write("".join(chunk))
        if tail:
            handle.write(tail)


def _missing(path: Path, size: int) -> bool:
    return not path.exists() or path.stat().st_size < size * 0.95


def generate(folder: Path, size_mb: int, ranks: int, rank_mb: int) -> tuple[Path, Path, str]:
    """The earlier generator's big log and rank folder, and the expected root file."""
    folder.mkdir(parents=True, exist_ok=True)
    big = folder / "big.log"
    if _missing(big, size_mb * 1_000_000):
        print(f"writing {big} ({size_mb} MB) ...", file=sys.stderr)
        tail = _oom_block(3, 30000) + "".join(_cascade_block(r, 30600) for r in range(8))
        write_log(big, size_mb * 1_000_000, 3, 1, tail)
    rank_dir = folder / "ranks"
    rank_dir.mkdir(exist_ok=True)
    failing = ranks // 3
    for rank in range(ranks):
        path = rank_dir / f"rank{rank:03d}.log"
        if path.exists():
            continue
        tail = _oom_block(rank, 5000) if rank == failing else _cascade_block(rank, 5600)
        write_log(path, rank_mb * 1_000_000, rank, rank + 100, tail)
    return big, rank_dir, f"rank{failing:03d}.log"


# --------------------------------------------------------------- noise from the healthy pool
def pool_lines() -> list[str]:
    """Every line of the healthy pool (tests/fixtures/healthy/*.log)."""
    lines = [
        line
        for path in sorted(POOL.glob("*.log"))
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    if not lines:
        raise SystemExit(f"no healthy pool in {POOL}: run benchmarks/healthy_pool.py")
    return lines


STATUS_MB = 20


def status_lines() -> list[str]:
    """The pool's SGLang server and AReaL trainer lines: what the whole CLI reads most."""
    names = ("sglang_server.log", "areal_trainer.log")
    return [
        line
        for name in names
        for line in (POOL / name).read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]


def write_noise(path: Path, size: int, lines: list[str], seed: int, tail: str) -> None:
    """About ``size`` bytes of lines drawn from ``lines``, then ``tail``."""
    rng = random.Random(seed)
    written = 0
    with path.open("w", encoding="utf-8") as handle:
        while written < size:
            chunk = "\n".join(rng.choices(lines, k=5000)) + "\n"
            handle.write(chunk)
            written += len(chunk.encode("utf-8"))
        handle.write(tail)


def _stamp_at(clock: str) -> str:
    return f"(AReaL) 20260522-{clock}"


def _begin_update(rank: int, clock: str) -> str:
    return f"{_stamp_at(clock)} [FSDPEngine Rank {rank}] INFO: Begin update_weights\n"


def _nccl_failure_block(rank: int, clock: str) -> str:
    """NCCL's CUDA failure during a weight broadcast, under the communicator's INFO lines."""
    init = "".join(
        f"node-10:4321:4400 [{rank % 8}] NCCL INFO Channel {i % 24:02d}/0 : "
        f"{rank}[{rank % 8}] -> {i % 128}[{i % 8}] via P2P/CUMEM/read\n"
        for i in range(450)
    )
    return (
        _begin_update(rank, clock) + init + "Traceback (most recent call last):\n"
        '  File "/opt/AReaL/areal/engine/fsdp_engine.py", line 612, in update_weights\n'
        "    dist.broadcast(tensor, src=0, group=self.weight_update_group)\n"
        "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/"
        "NCCLUtils.hpp:317, unhandled cuda error (run with NCCL_DEBUG=INFO for details), "
        "NCCL version 2.21.5\n"
        "ncclUnhandledCudaError: Call to CUDA function failed.\n"
        "Last error:\n"
        "Cuda failure 2 'out of memory'\n"
    )


def _cuda_oom_after_begin(rank: int, clock: str) -> str:
    lines = _oom_block(rank, 0).splitlines(keepends=True)[1:]  # the traceback, no head line
    return _begin_update(rank, clock) + "".join(lines)


def _late_cascade(rank: int) -> str:
    return (
        f"[rank{rank}]:[E0522 03:56:02.500000 7{rank:03d} ProcessGroupNCCL.cpp:616] [Rank {rank}] "
        "Watchdog caught collective operation timeout: WorkNCCL(SeqNum=88123, "
        "OpType=BROADCAST, NumelIn=1, NumelOut=1, Timeout(ms)=60000) ran for 60012 "
        "milliseconds before timing out.\n"
        f"W0522 03:56:04.000000 1234 torch/distributed/elastic/multiprocessing/api.py:897]"
        f" Sending process {40000 + rank} closing signal SIGTERM\n"
    )


def generate_pool(
    folder: Path, size_mb: int, prefill_mb: int, ranks: int, rank_mb: int
) -> tuple[Path, Path, Path, str, Path]:
    """Big log, SGLang prefill log and rank folder from the healthy pool, the expected root
    file, and a log of the failure alone (what every run pays whatever the noise)."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = pool_lines()
    big = folder / "big.log"
    if _missing(big, size_mb * 1_000_000):
        print(f"writing {big} ({size_mb} MB of healthy-pool lines) ...", file=sys.stderr)
        tail = _cuda_oom_after_begin(3, "03:55:02.400") + "".join(
            _late_cascade(r) for r in range(8)
        )
        write_noise(big, size_mb * 1_000_000, lines, 1, tail)
    prefill = folder / "prefill.log"
    if _missing(prefill, prefill_mb * 1_000_000):
        print(f"writing {prefill} ({prefill_mb} MB of SGLang prefill lines) ...", file=sys.stderr)
        prefills = [line for line in lines if "Prefill batch." in line]
        write_noise(
            prefill, prefill_mb * 1_000_000, prefills, 2, _cuda_oom_after_begin(0, "03:55:02.400")
        )
    retract = folder / "retract.log"
    if _missing(retract, prefill_mb * 1_000_000):
        print(
            f"writing {retract} ({prefill_mb} MB of SGLang decode/retract lines) ...",
            file=sys.stderr,
        )
        write_noise(
            retract,
            prefill_mb * 1_000_000,
            _retraction_flood(lines),
            3,
            _cuda_oom_after_begin(0, "03:55:02.400"),
        )
    status = folder / "status.log"
    if _missing(status, STATUS_MB * 1_000_000):
        print(
            f"writing {status} ({STATUS_MB} MB of SGLang/AReaL status lines) ...", file=sys.stderr
        )
        write_noise(
            status,
            STATUS_MB * 1_000_000,
            status_lines(),
            4,
            _cuda_oom_after_begin(0, "03:55:02.400"),
        )
    alone = folder / "failure-alone.log"
    if not alone.exists():  # the fixed cost: start-up, rules, the failure's window
        alone.write_text(_cuda_oom_after_begin(0, "03:55:02.400"), encoding="utf-8")
    rank_dir = folder / "ranks"
    rank_dir.mkdir(exist_ok=True)
    first, second = (77, 90) if ranks > 90 else (ranks // 3, ranks // 2)
    for rank in range(ranks):
        path = rank_dir / f"rank{rank:03d}.log"
        if path.exists():
            continue
        if rank == first:
            tail = _nccl_failure_block(rank, "03:55:00.100")
        elif rank == second:
            tail = _cuda_oom_after_begin(rank, "03:55:02.400")
        else:
            tail = _late_cascade(rank)
        write_noise(path, rank_mb * 1_000_000, lines, rank + 100, tail)
    return big, prefill, retract, rank_dir, f"rank{first:03d}.log", alone


def measure_cli(name: str, path: Path, repeat: int, source_only: bool) -> dict[str, Any]:
    """The whole ``diagnose`` (read, tree, docs, render to JSON) of ``path`` with a warm
    cache, against ``grep -c``: what a user waits for, start-up included."""
    env = dict(os.environ)
    if not source_only:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    grep_cmd = ["grep", "-c", "-E", GREP_PATTERN, str(path)]
    best_of(1, grep_cmd)
    grep_s, _ = best_of(repeat, grep_cmd)
    command = [sys.executable, "-m", "assistant", "diagnose", str(path), "--non-interactive"]
    command += ["--format", "json"]
    best_run(1, command, env)  # the cache warm, as after a first use
    ours_s, times, out = best_run(repeat, command, env)
    try:
        found = json.loads(out)
        result: dict[str, Any] = {"oom": found.get("oom"), "phase": found.get("phase")}
    except json.JSONDecodeError:
        result = {"error": out.strip().splitlines()[-1:] or "no output"}
    result.update(name=name, grep_s=round(grep_s, 3), ours_s=round(ours_s, 3))
    result["runs_s"] = [round(t, 2) for t in times]
    result["ratio"] = round(ours_s / grep_s, 2) if grep_s else None
    result["goal_time"] = bool(result["ratio"] is not None and result["ratio"] <= GOAL_RATIO)
    return result


def _retraction_flood(lines: list[str]) -> list[str]:
    """A server under memory pressure: the pool's SGLang decode lines, and a KV-pool
    retraction (SGLang's own words, scheduler.py) as often as one: hundreds of thousands
    of candidate lines of a few shapes."""
    decodes = [line for line in lines if "Decode batch." in line]
    retracts = [
        f"[2026-05-22 03:{m:02d}:{s:02d} TP0] KV cache pool is full. Retract requests. "
        f"#retracted_reqs: {1 + s % 4}, #new_token_ratio: 0.{s % 9}000 -> 0.{(s + 3) % 9}000"
        for m in range(60)
        for s in range(0, 60, 7)
    ]
    return decodes + retracts[: max(1, len(decodes))]


def best_of(repeat: int, command: list[str]) -> tuple[float, str]:
    best, output = float("inf"), ""
    for _ in range(repeat):
        started = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, check=False)
        best = min(best, time.perf_counter() - started)
        output = done.stdout
    return best, output


def best_run(
    repeat: int, command: list[str], env: dict[str, str], cwd: str | Path = ROOT
) -> tuple[float, list[float], str]:
    """Best wall time of ``repeat`` runs, every time, and the last output."""
    times, output = [], ""
    for _ in range(repeat):
        started = time.perf_counter()
        done = subprocess.run(
            command, capture_output=True, text=True, cwd=cwd, check=False, env=env
        )
        times.append(time.perf_counter() - started)
        output = done.stdout or done.stderr
    return min(times), times, output


def measure(
    name: str,
    grep_cmd: list[str],
    target: list[str],
    repeat: int,
    expected_root: str | None = None,
    pythonpath: str | None = None,
    source_only: bool = False,
) -> dict[str, Any]:
    env = dict(os.environ)
    if not source_only:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        code = Path(pythonpath or ROOT) / "assistant"
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(code)], check=False, env=env)
    if pythonpath:
        env["PYTHONPATH"] = os.pathsep.join([pythonpath, env.get("PYTHONPATH", "")])
    best_of(1, grep_cmd)  # warm the page cache
    grep_s, _ = best_of(repeat, grep_cmd)
    # `python -c` puts its working folder first on sys.path: run in the copy's folder
    ours_s, times, out = best_run(
        repeat, [sys.executable, "-c", _RUNNER, *target], env, pythonpath or ROOT
    )
    lines = out.strip().splitlines()
    try:
        result: dict[str, Any] = json.loads(lines[-1])
    except (IndexError, json.JSONDecodeError):
        result = {"error": lines[-1] if lines else "no output"}
    result.update(name=name, grep_s=round(grep_s, 3), ours_s=round(ours_s, 3))
    result["runs_s"] = [round(t, 2) for t in times]
    result["ratio"] = round(ours_s / grep_s, 2) if grep_s else None
    rss = max(result.get("rss_main_mb", 0.0), result.get("rss_worker_mb", 0.0))
    result["goal_time"] = bool(result["ratio"] is not None and result["ratio"] <= GOAL_RATIO)
    result["goal_rss"] = bool(0 < rss <= GOAL_RSS_MB)
    if expected_root is not None:
        result["expected_root"] = expected_root
        result["root_ok"] = str(result.get("root", "")).split(":")[0].endswith(expected_root)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("folder", nargs="?", type=Path, default=ROOT / "benchmarks" / "data")
    parser.add_argument("--size-mb", type=int, default=400)
    parser.add_argument("--prefill-mb", type=int, default=40)
    parser.add_argument("--ranks", type=int, default=128)
    parser.add_argument("--rank-mb", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--noise", default="pool,old", help="pool, old or both (pool,old)")
    parser.add_argument("--pythonpath", default=None, help="run this copy of the code")
    parser.add_argument(
        "--source-only", action="store_true", help="keep PYTHONDONTWRITEBYTECODE as it is"
    )
    args = parser.parse_args(argv)
    noises = [n.strip() for n in args.noise.split(",") if n.strip()]
    cases: list[tuple[str, Path, str | None, bool]] = []  # name, target, expected root, folder
    if "pool" in noises:
        big, prefill, retract, ranks, root, alone = generate_pool(
            args.folder / "pool", args.size_mb, args.prefill_mb, args.ranks, args.rank_mb
        )
        status = args.folder / "pool" / "status.log"
        cases += [
            ("fixed cost: the failure alone", alone, None, False),
            ("pool: single file", big, None, False),
            ("pool: SGLang prefill lines", prefill, None, False),
            ("pool: SGLang retraction flood", retract, None, False),
            ("pool: rank folder", ranks, root, True),
        ]
    if "old" in noises:
        big, ranks, root = generate(args.folder / "old", args.size_mb, args.ranks, args.rank_mb)
        cases += [("old: single file", big, None, False), ("old: rank folder", ranks, root, True)]
    fixed_s: float | None = None
    for name, target, root, folder in cases:
        grep = ["grep", "-r", "-c"] if folder else ["grep", "-c"]
        item = measure(
            name,
            [*grep, "-E", GREP_PATTERN, str(target)],
            [str(target.resolve())],
            args.repeat,
            root,
            args.pythonpath,
            args.source_only,
        )
        if name.startswith("fixed cost"):
            fixed_s = item["ours_s"]
        elif fixed_s is not None and item["grep_s"]:
            # what the noise itself costs against grep, the fixed cost set aside
            item["marginal_ratio"] = round((item["ours_s"] - fixed_s) / item["grep_s"], 2)
        print(json.dumps(item, ensure_ascii=False), flush=True)
    if "pool" in noises:
        fixed_cli: float | None = None
        for name, path in (
            ("cli: diagnose the failure alone", args.folder / "pool" / "failure-alone.log"),
            (f"cli: diagnose {STATUS_MB} MB of SGLang/AReaL status lines", status),
        ):
            item = measure_cli(name, path, args.repeat, args.source_only)
            if path == status and fixed_cli is not None and item["grep_s"]:
                item["marginal_ratio"] = round((item["ours_s"] - fixed_cli) / item["grep_s"], 2)
            fixed_cli = item["ours_s"] if path != status else fixed_cli
            print(json.dumps(item, ensure_ascii=False), flush=True)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONPATH", str(ROOT))
    raise SystemExit(main())
