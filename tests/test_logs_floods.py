"""Floods of one line shape: read fast, counted exactly, the failure after them found.

An SGLang server under memory pressure prints "KV cache pool is full. Retract requests."
on every retraction, and a trainer may print a stats line holding "out of memory" on
every step. Such a log used to fill the 20,000-candidate cap: the crash at its end was
never read (it said "no memory failure") and the count of retractions stopped at the cap.
"""

from __future__ import annotations

from pathlib import Path

import assistant.logs.classify as classify
import assistant.logs.match as match
import assistant.logs.scan as scan
from assistant.logs import read_and_classify

RETRACT = (
    "[2026-05-21 10:{m:02d}:{s:02d} TP0] KV cache pool is full. Retract requests. "
    "#retracted_reqs: 2, #new_token_ratio: 0.{a}000 -> 0.{b}000\n"
)
STATS = (
    "(AReaL) 20260521-10:{m:02d}:{s:02d}.123 FSDPEngine INFO: Memory-Usage after step {n}: "
    "memory allocated (GB): 61.{a}, out of memory retries 0\n"
)
CRASH = (
    "[2026-05-21 11:00:00 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
    '  File "/sgl/python/sglang/srt/managers/scheduler.py", line 1940, in run_batch\n'
    "    result = self.tp_worker.forward_batch_generation(batch)\n"
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a "
    "total capacity of 79.15 GiB of which 1.02 GiB is free.\n"
)


def _flood(path: Path, template: str, lines: int) -> Path:
    body = "".join(
        template.format(m=n // 60 % 60, s=n % 60, n=1000 + n, a=n % 9, b=(n + 3) % 9)
        for n in range(lines)
    )
    path.write_text(body + CRASH, encoding="utf-8")
    return path


def test_a_retraction_flood_is_counted_whole_and_the_crash_after_it_read(
    tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setattr(scan, "FOLD_AFTER", 50)
    monkeypatch.setattr(scan, "FOLD_KEEP", 20)
    monkeypatch.setattr(scan, "MAX_CANDIDATES", 100)
    report = read_and_classify([str(_flood(tmp_path / "server.log", RETRACT, 600))])
    assert report.oom and report.phase == "generation"
    assert report.evidence[0].line == 600 + 4
    assert {n.id: n.count for n in report.notices} == {"kv-retraction": 600}


def test_status_lines_no_rule_matches_are_classified_a_few_times_only(
    tmp_path: Path, monkeypatch
) -> None:
    calls: list[str] = []
    original = match.LineMatcher.classify

    def counting(self, clean, *args):  # type: ignore[no-untyped-def]
        calls.append(clean.text)
        return original(self, clean, *args)

    monkeypatch.setattr(match.LineMatcher, "classify", counting)
    report = read_and_classify([str(_flood(tmp_path / "trainer.log", STATS, 400))])
    assert report.oom and report.evidence[0].line == 400 + 4
    stats = [text for text in calls if "Memory-Usage" in text]
    assert len(stats) == classify.PLAIN_RUNS  # then the shape is known to match no rule


def test_lines_past_the_cap_are_said_not_to_be_read(tmp_path: Path, monkeypatch, run_cli) -> None:
    """Distinct lines past the candidate cap are not read (only the first and the last
    are): the output says how many, in text and JSON, rather than nothing."""
    import json

    monkeypatch.setattr(scan, "MAX_CANDIDATES", 20)
    monkeypatch.setattr(scan, "TAIL_CANDIDATES", 10)
    words = ["alpha", "bravo", "delta", "gamma", "kappa", "omega", "sigma", "theta"]
    body = "".join(
        f"warning: worker {words[n % 8]}{words[n // 8 % 8]}{words[n // 64 % 8]} was Killed\n"
        for n in range(100)
    )
    log = tmp_path / "many.log"
    log.write_text(body + CRASH, encoding="utf-8")
    result = run_cli("diagnose", str(log), "--non-interactive", "--format", "json")
    data = json.loads(result.stdout)
    assert data["oom"] is True and data["lines_unread"] > 0
    text = run_cli("diagnose", str(log), "--non-interactive").stdout
    assert f"{data['lines_unread']} lines holding the words of a rule were not read" in text


def test_a_crash_after_many_caught_failures_of_its_shape_is_read(
    tmp_path: Path, monkeypatch
) -> None:
    """Folding keeps the last line of each shape: a run that caught hundreds of OOMs
    (each followed by its retry line) and then died of one more is still a memory
    failure, at the last one; had it recovered from that one too, it would not be."""
    monkeypatch.setattr(scan, "FOLD_AFTER", 40)
    monkeypatch.setattr(scan, "FOLD_KEEP", 10)
    caught = "".join(
        f"step {1000 + n}: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate "
        f"2.00 GiB\nstep {1000 + n}: retrying with a smaller micro batch\n"
        for n in range(300)
    )
    quiet = "".join(f"step {1300 + n}: loss 0.31\n" for n in range(30))  # no retry near it
    fatal = "step 1330: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n"
    died = tmp_path / "died.log"
    died.write_text(caught + quiet + fatal, encoding="utf-8")
    report = read_and_classify([str(died)])
    assert report.oom and report.evidence[0].line == 631
    survived = tmp_path / "survived.log"
    survived.write_text(caught, encoding="utf-8")
    assert read_and_classify([str(survived)]).oom is False
