"""Measure the TUI: first paint after launch, and a pasted 20,000-line log diagnosed.

    .venv/bin/python benchmarks/bench_tui.py [LOG] [--lines 20000] [--runs 5]

First paint: a fresh Python process imports the TUI, builds the App and runs it
headless; the time is taken when the first frame has been composed (process
start to frame, and import to frame). Goal: <= 1 s.

Paste: LOG (or, without LOG, a built-in training OOM) preceded by ordinary
training-log lines up to --lines lines, pasted into the chat line of a headless
session and timed until the frame that shows the assistant's answer (no job
running, the next question composed). Goal: <= 1 s. Prints medians.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
GOAL_S = 1.0

FIRST_PAINT = r"""
import json, sys, time
started = time.perf_counter()
sys.path.insert(0, {root!r})
from assistant.tui import make_app
from assistant.tui.app import DoctorApp
imported = time.perf_counter()
marks = {{}}

def painted(app, event):  # Ready: the DOM is ready and the first frame was displayed
    marks["frame"] = time.perf_counter()
    app.exit()

DoctorApp.on_ready = painted
make_app(lang="en").run(headless=True, size=(120, 40))
print(json.dumps({{"import_s": imported - started, "to_frame_s": marks["frame"] - started}}))
"""


def first_paint(runs: int) -> dict[str, float]:
    code = FIRST_PAINT.format(root=str(ROOT))
    results = []
    for _ in range(runs):
        began = time.perf_counter()
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
        )
        wall = time.perf_counter() - began
        figures = json.loads(out.stdout.strip().splitlines()[-1])
        results.append({**figures, "process_s": wall})
    return {key: statistics.median(r[key] for r in results) for key in results[0]}


OOM_TAIL = [
    "[actor]   [rank2]: Traceback (most recent call last):",
    '[actor]   [rank2]:   File "/srv/AReaL/areal/engine/fsdp_engine.py", line 755,'
    " in forward_backward_batch",
    "[actor]   [rank2]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate"
    " 4.00 GiB. GPU 2 has a total capacity of 79.11 GiB of which 1.10 GiB is free.",
]


def chatter(lines: int) -> list[str]:
    """Ordinary training-log lines: step reports and rollout decode batches."""
    rows = []
    for number in range(lines):
        if number % 4 == 0:
            rows.append(f"[main]    (AReaL) 20270105-10:00:00.000 StatsLogger INFO: step {number}")
        else:
            rows.append(
                f"[rollout] [2027-01-05 10:00:00] Decode batch. #running-req: {number % 97},"
                f" #token: {number * 13 % 500000}, token usage: 0.51, #queue-req: 3"
            )
    return rows


def log_of(lines: int, crash: str | None) -> str:
    """``lines`` lines: chatter, then ``crash`` (a real log, whole) or a built-in OOM."""
    tail = crash.splitlines() if crash else OOM_TAIL
    return "\n".join(chatter(max(0, lines - len(tail))) + tail) + "\n"


async def paste_once(text: str) -> float:
    """Seconds from the paste to the frame that shows the assistant's answer to it."""
    from textual import events

    from assistant.tui import make_app

    app = make_app(lang="en")
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        before = len(app.query("ChatMessage"))
        began = time.perf_counter()
        app.query_one("#chat-input").post_message(events.Paste(text))
        while not answered(app, before):
            await asyncio.sleep(0.002)
        painted: asyncio.Future[float] = asyncio.get_running_loop().create_future()
        app.call_after_refresh(lambda: painted.set_result(time.perf_counter()))
        return await painted - began


def answered(app: Any, before: int) -> bool:
    """The pasted note, the summary and the next step (question or fix) are in the chat."""
    busy = any(worker.is_running for worker in app.workers)
    prompt = app.query_one("#question")
    composed = app.question is None or bool(prompt.children)
    return not busy and composed and len(app.query("ChatMessage")) >= before + 3


def paste_timing(text: str, runs: int) -> float:
    asyncio.run(paste_once(text))  # warm: imports and the search index, as in a session
    return statistics.median(asyncio.run(paste_once(text)) for _ in range(runs))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("log", nargs="?", help="a crash log to paste (default: synthetic)")
    parser.add_argument("--lines", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))

    paint = first_paint(args.runs)
    print(f"first paint (median of {args.runs} fresh processes):")
    print(f"  import assistant.tui        {paint['import_s']:.3f} s")
    print(f"  process start -> 1st frame  {paint['to_frame_s']:.3f} s  (goal <= {GOAL_S:.1f} s)")
    print(f"  whole process incl. exit    {paint['process_s']:.3f} s")

    crash = Path(args.log).read_text(encoding="utf-8", errors="replace") if args.log else None
    text = log_of(args.lines, crash)
    seconds = paste_timing(text, args.runs)
    print(
        f"paste {len(text.splitlines()):,} lines -> diagnosis on screen "
        f"(median of {args.runs}): {seconds:.3f} s  (goal <= {GOAL_S:.1f} s)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
