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


FIXTURES = __import__("pathlib").Path(__file__).parent / "fixtures"


def answer_in_terminal(typed: str, monkeypatch: pytest.MonkeyPatch) -> tuple[object, str]:
    """The terminal conversation of `diagnose` on a log whose fix #1 asks nothing but
    whose fix #2 (micro-batch) depends on multi_turn."""
    from assistant import pipeline
    from assistant.commands import ask_open_questions
    from assistant.config import load_config

    config = load_config(str(FIXTURES / "configs" / "grpo_fsdp.yaml"))
    log = FIXTURES / "advice" / "other_process_holds_a_third.log"
    diagnosis = pipeline.diagnose_paths([str(log)], config=config, use_defaults=False)
    assert not diagnosis.decision.asking  # fix #1 needs no answer
    err = io.StringIO()
    monkeypatch.setattr(sys, "stdin", io.StringIO(typed))
    monkeypatch.setattr(sys, "stderr", err)
    return ask_open_questions(diagnosis, config, {}), err.getvalue()


def source_of(diagnosis: object, qid: str) -> tuple[object, object]:
    question = {q.id: q for q in diagnosis.decision.questions}[qid]  # type: ignore[attr-defined]
    return question.answer, question.source


def test_the_terminal_offers_a_later_fix_questions_and_asks_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    final, err = answer_in_terminal("y\n1\n\n", monkeypatch)
    assert err.index("Try first:") < err.index("Fix #1 is settled. Fix #2")
    assert "Fix #2: Optimize Micro-batch Size" in err
    assert "multi-turn" in err
    assert source_of(final, "multi_turn") == ("yes", "user")


def test_declining_the_offer_keeps_the_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    final, err = answer_in_terminal("\n", monkeypatch)
    assert "Fix #1 is settled" in err
    assert "multi-turn" not in err  # its question was not asked
    assert source_of(final, "multi_turn") == ("no", "default")
    # the default floor (multi_turn = no); the memory fit check may add what it also needs
    patch = final.decision.recommendations[1].patch  # type: ignore[attr-defined]
    assert patch["actor.mb_spec.max_tokens_per_mb"] == 4096


def test_closed_stdin_declines_the_offer(monkeypatch: pytest.MonkeyPatch) -> None:
    final, _ = answer_in_terminal("", monkeypatch)
    assert source_of(final, "multi_turn") == ("no", "default")


def test_a_first_fix_without_a_change_shows_no_other_fix_s_patch(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Fix #1 (other processes) changes no key: its block shows no change, never
    fix #2's (micro-batch 4096); the patch below says whose change it is."""
    final, err = answer_in_terminal("\n", monkeypatch)
    first_block = err.split("Try first:", 1)[1].split("?", 1)[0]
    assert "max_tokens_per_mb" not in first_block
    assert "no config value computed" in first_block
    assert final.decision.recommendations[0].patch == {}  # type: ignore[attr-defined]
    assert final.decision.patch_from == 1  # type: ignore[attr-defined]
