"""Window lines for the heading rules (lookalikes.yaml ``scope: window``).

Their triggers are common words ("new", "current", "now"), so the lines that hold one are
also checked for the other words a heading needs (the rules' gate) before they are
cleaned: an SGLang server prints "#new-seq" on every prefill.
"""

from __future__ import annotations

from pathlib import Path

from assistant.logs.lazyre import union_gate
from assistant.logs.rules import load_rules
from assistant.logs.scan import window_prefilter
from assistant.logs.windows import marked_before

PREFILL = "[2026-05-21 10:11:12 TP0] Prefill batch. #new-seq: 1, #new-token: 8192, #running-req: 3"


def _window_gate() -> tuple[str, ...] | None:
    rules = [rule for rule in load_rules().lookalikes if rule.scope == "window"]
    return union_gate(p for rule in rules for p in rule.patterns)


def _marked(tmp_path: Path, lines: list[str], needs: tuple[str, ...] | None) -> list[str]:
    log = tmp_path / "paste.log"
    text = "\n".join([*lines, "torch.OutOfMemoryError: CUDA out of memory."]) + "\n"
    log.write_text(text, encoding="utf-8")
    offset = len(text[: text.rindex("torch.OutOfMemoryError")].encode())
    prefilter = window_prefilter()
    assert prefilter is not None
    marked = marked_before(str(log), offset, len(lines) + 1, prefilter, needs)
    return [line.text for _offset, line in marked.lines]


def test_status_lines_with_a_trigger_word_are_left_out(tmp_path: Path) -> None:
    lines = [PREFILL] * 50 + ["=== New error (today) ===", PREFILL]
    gate = _window_gate()
    assert gate is not None and "error" in gate
    without_gate = _marked(tmp_path, lines, None)
    assert len(without_gate) == 52  # every prefill line holds "new"
    assert _marked(tmp_path, lines, gate) == ["=== New error (today) ==="]


def test_coloured_and_chinese_headings_are_never_left_out(tmp_path: Path) -> None:
    lines = ["\x1b[1m=== Current err\x1b[0mor ===", "=== 现在的报错 ===", PREFILL]
    found = _marked(tmp_path, lines, _window_gate())
    assert found[:2] == ["=== Current error ===", "=== 现在的报错 ==="]
