"""Asking on the terminal: numbered choices, every question skippable, bad answers asked again.

``ask`` returns None for a skipped question: the caller records the default.
"""

from __future__ import annotations

import io
import sys

import pytest

from assistant.models import Question
from assistant.prompting import ask


def ask_with_input(
    question: Question, typed: str, monkeypatch: pytest.MonkeyPatch, lang: str = "en"
) -> str | None:
    monkeypatch.setattr(sys, "stdin", io.StringIO(typed))
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    return ask(question, lang)


YESNO = Question("multi_turn", "Multi-turn?", "yesno", ["yes", "no"], "no")
NUMBER = Question("attention_heads", "Heads?", "number", [], None)


def test_number_picks_a_choice(monkeypatch: pytest.MonkeyPatch) -> None:
    assert ask_with_input(YESNO, "1\n", monkeypatch) == "yes"


def test_enter_skips_and_says_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    assert ask_with_input(YESNO, "\n", monkeypatch) is None
    assert "skipped: taking the default (no)" in sys.stderr.getvalue()


@pytest.mark.parametrize("typed", ["\n", "skip\n", "unknown\n", "不知道\n", "\x1b\n", ""])
def test_a_number_question_can_be_skipped(monkeypatch: pytest.MonkeyPatch, typed: str) -> None:
    assert ask_with_input(NUMBER, typed, monkeypatch) is None
    assert "taking the default (unknown)" in sys.stderr.getvalue()


def test_skipping_in_chinese_says_so_in_chinese(monkeypatch: pytest.MonkeyPatch) -> None:
    assert ask_with_input(NUMBER, "跳过\n", monkeypatch, lang="zh") is None
    assert "已跳过：采用默认值（未知）" in sys.stderr.getvalue()


def test_bad_answer_is_asked_again(monkeypatch: pytest.MonkeyPatch) -> None:
    assert ask_with_input(NUMBER, "lots\n40\n", monkeypatch) == "40"


def test_closed_stdin_takes_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    assert ask_with_input(YESNO, "", monkeypatch) is None
    assert "taking the default (no)" in sys.stderr.getvalue()
