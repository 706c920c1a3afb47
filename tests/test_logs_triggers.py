"""Prefilter triggers are rare in healthy logs, so no trigger can swamp the scan.

The pool under tests/fixtures/healthy/ (written by benchmarks/healthy_pool.py) is what
runs print when nothing fails: AReaL's logger lines and stats tables, SGLang's prefill /
decode status lines, vLLM's throughput lines, tqdm bars, wandb, torchrun / NCCL / Ray
start-up noise and config dumps (``max_concurrent_rollouts: 256``, ``max_new_tokens``).
A trigger that keeps more than 0.5% of those lines sends every such line through every
Python rule; heading- and prose-style rules are tried near a failure instead
(lookalikes.yaml ``scope: window``).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from assistant.errors import KnowledgeError
from assistant.logs import classify_text, read_and_classify
from assistant.logs import rules as rules_module
from assistant.logs.rules import load_rules
from assistant.logs.scan import Prefilter, _to_python, scan_range

POOL = Path(__file__).parent / "fixtures" / "healthy"
MAX_SHARE = 0.005


def _pool_files() -> list[Path]:
    files = sorted(POOL.glob("*.log"))
    assert len(files) >= 5, "the healthy pool is missing"
    return files


def _pool_lines() -> list[str]:
    return [line for path in _pool_files() for line in path.read_text("utf-8").splitlines()]


def test_the_pool_is_varied_and_large_enough_for_the_share() -> None:
    lines = _pool_lines()
    assert len(lines) >= 5000  # 0.5% of it is 25 lines: one template cannot hide
    text = "\n".join(lines)
    for sample in ("Prefill batch. #new-seq:", "Decode batch.", "Avg prompt throughput:",
                   "max_concurrent_rollouts", "max_new_tokens", "wandb:", "it/s]",
                   "NCCL INFO", "Finish and accept rollout."):  # fmt: skip
        assert sample in text, sample


def test_no_trigger_keeps_more_than_half_a_percent_of_healthy_lines() -> None:
    lines = _pool_lines()
    too_common = []
    for trigger in load_rules().triggers:
        pattern = re.compile(_to_python(trigger))
        kept = sum(1 for line in lines if pattern.search(line))
        if kept > MAX_SHARE * len(lines):
            too_common.append(f"{trigger!r} keeps {kept} of {len(lines)} healthy lines")
    assert not too_common, "; ".join(too_common)


def test_the_prefilter_keeps_what_its_triggers_match(tmp_path: Path) -> None:
    """The per-trigger count above is what the real byte prefilter does."""
    triggers = load_rules().triggers
    any_trigger = re.compile("|".join(_to_python(t) for t in triggers))
    lines = _pool_lines()
    expected = sum(1 for line in lines if any_trigger.search(line))
    kept = 0
    for path in _pool_files():
        kept += len(
            scan_range(str(path), 0, path.stat().st_size, Prefilter(triggers, ())).candidates
        )
    assert kept == expected
    assert kept <= MAX_SHARE * len(lines)


def test_the_pool_is_healthy() -> None:
    for path in _pool_files():
        report = read_and_classify([str(path)])
        assert report.oom is False, path.name
        assert report.first_error is None, (path.name, report.first_error)


def test_heading_rules_are_no_prefilter_triggers() -> None:
    rules = load_rules()
    headings = [x for x in rules.lookalikes if x.past]
    assert headings and all(x.scope == "window" for x in headings)
    assert "(?i)new" in rules.window_triggers
    assert not set(rules.window_triggers) & set(rules.triggers)


def test_a_heading_with_no_other_trigger_still_marks_the_past_block() -> None:
    """The header line holds no global trigger: it is found in the window above the OOM."""
    oom = (
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.50 GiB. "
        "GPU 0 has a total capacity of 79.19 GiB of which 1.10 GiB is free."
    )
    assert classify_text(f"=== 之前的日志（已解决）===\n{oom}\n").oom is False
    assert classify_text(f"Some context first\n{oom}\n").oom is True


@pytest.fixture
def edited_lookalikes(monkeypatch: pytest.MonkeyPatch) -> Iterator[object]:
    real = rules_module.load_yaml

    def edit(change: object) -> None:
        data = copy.deepcopy(real("lookalikes.yaml"))
        change(data)  # type: ignore[operator]
        monkeypatch.setattr(
            rules_module,
            "load_yaml",
            lambda name: data if name == "lookalikes.yaml" else real(name),
        )
        rules_module.load_rules.cache_clear()

    yield edit
    rules_module.load_rules.cache_clear()


def _entry(data: dict[str, list[dict[str, object]]], ident: str) -> dict[str, object]:
    return next(x for x in data["lookalikes"] if x["id"] == ident)


def test_a_past_header_must_be_a_window_rule(edited_lookalikes) -> None:
    edited_lookalikes(lambda data: _entry(data, "current-error-header").pop("scope"))
    with pytest.raises(KnowledgeError, match="current-error-header.*scope: window"):
        rules_module.load_rules()


def test_a_scope_is_log_or_window(edited_lookalikes) -> None:
    edited_lookalikes(lambda data: _entry(data, "past-error-header").update(scope="near"))
    with pytest.raises(KnowledgeError, match="past-error-header.*'scope' has a bad value"):
        rules_module.load_rules()
