"""Asking on the terminal: numbered choices, Enter for the default, bad answers asked again."""

from __future__ import annotations

import io
import sys

import pytest

from assistant.models import Question
from assistant.prompting import ask


def ask_with_input(question: Question, typed: str, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setattr(sys, "stdin", io.StringIO(typed))
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    return ask(question, "en")


YESNO = Question("multi_turn", "Multi-turn?", "yesno", ["yes", "no"], "no")
NUMBER = Question("attention_heads", "Heads?", "number", [], None)


def test_number_picks_a_choice(monkeypatch: pytest.MonkeyPatch) -> None:
    assert ask_with_input(YESNO, "1\n", monkeypatch) == "yes"


def test_enter_takes_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    assert ask_with_input(YESNO, "\n", monkeypatch) == "no"


def test_bad_answer_is_asked_again(monkeypatch: pytest.MonkeyPatch) -> None:
    assert ask_with_input(NUMBER, "lots\n40\n", monkeypatch) == "40"


def test_closed_stdin_takes_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    assert ask_with_input(YESNO, "", monkeypatch) == "no"
