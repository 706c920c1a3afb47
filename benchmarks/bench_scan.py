"""Speed and memory of read_and_classify against grep on big synthetic logs.

usage: python benchmarks/bench_scan.py [FOLDER] [--size-mb 400] [--ranks 128] [--rank-mb 2]
                                       [--keep] [--repeat 3]

Generates (once; reused when present) in FOLDER (default benchmarks/data/):
  big.log       an AReaL-style training log of about --size-mb MB, OOM near its end
  ranks/        --ranks rank logs of --rank-mb MB each; one rank OOMs first, the
                others die of NCCL watchdog timeouts and SIGTERM afterwards
Then times `grep -c -E PATTERN` (and `grep -r -c` for the folder) against
read_and_classify in a fresh Python process, and reports the peak RSS of that
process and of its scan workers. Goals: <= 3x grep time, <= 150 MB peak.
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

ROOT = Path(__file__).resolve().parent.parent
GREP_PATTERN = "out of memory|OutOfMemoryError|OOM"
ANSI_HEAD = "\x1b[1;38;2;180;140;80m(AReaL)\x1b[0m"

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


def generate(folder: Path, size_mb: int, ranks: int, rank_mb: int) -> tuple[Path, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    big = folder / "big.log"
    if not big.exists() or big.stat().st_size < size_mb * 1_000_000 * 0.95:
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
    return big, rank_dir


def best_of(repeat: int, command: list[str]) -> tuple[float, str]:
    best, output = float("inf"), ""
    for _ in range(repeat):
        started = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, check=False)
        best = min(best, time.perf_counter() - started)
        output = done.stdout
    return best, output


def measure(name: str, grep_cmd: list[str], target: list[str], repeat: int) -> dict:
    best_of(1, grep_cmd)  # warm the page cache
    grep_s, _ = best_of(repeat, grep_cmd)
    ours_s, out = best_of(repeat, [sys.executable, "-c", _RUNNER, *target])
    result = json.loads(out.strip().splitlines()[-1]) if out.strip() else {"error": "no output"}
    result.update(name=name, grep_s=round(grep_s, 3), ours_s=round(ours_s, 3))
    result["ratio"] = round(ours_s / grep_s, 2) if grep_s else None
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", nargs="?", type=Path, default=ROOT / "benchmarks" / "data")
    parser.add_argument("--size-mb", type=int, default=400)
    parser.add_argument("--ranks", type=int, default=128)
    parser.add_argument("--rank-mb", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    big, rank_dir = generate(args.folder, args.size_mb, args.ranks, args.rank_mb)
    results = [
        measure(
            "single file", ["grep", "-c", "-E", GREP_PATTERN, str(big)], [str(big)], args.repeat
        ),
        measure(
            "rank folder",
            ["grep", "-r", "-c", "-E", GREP_PATTERN, str(rank_dir)],
            [str(rank_dir)],
            args.repeat,
        ),
    ]
    for item in results:
        print(json.dumps(item, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONPATH", str(ROOT))
    raise SystemExit(main())
