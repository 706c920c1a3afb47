"""Whole TUI sessions over the real pipeline: what an on-call user does, end to end.

The questions the tree asks depend on the log and the config, so the session
answers whatever is open, one question at a time, and checks each answer was
recorded; the checks on the result are those the contract fixes (phase, kind,
the patch in the config's own text, a new file written, the original untouched).
"""

from __future__ import annotations

import yaml
from textual.widgets import Collapsible, Input, Static, TabbedContent
from tui_helpers import (
    FIXTURES,
    chat_texts,
    generated_log,
    paste,
    pilot_test,
    settle,
    shown,
    type_line,
)

from assistant.models import Question
from assistant.tui import make_app

SIZE = (120, 40)
MAX_QUESTIONS = 10
NUMBERS = {"longest_conversation_tokens": "6144", "attention_heads": "32", "model_params_b": "7"}


def has_cjk(text: str) -> bool:
    return any("\u4e00" <= char <= "\u9fff" for char in text)


async def answer(pilot, question: Question) -> tuple[str, str]:
    """Answer like a user: a number typed, a choice picked from the list."""
    if question.type == "number":
        value = NUMBERS.get(question.id, "8")
        await pilot.press(*value, "enter")
    else:
        await pilot.press("enter")  # the highlight starts on the default
        value = str(question.default) if question.default is not None else question.choices[0]
    await settle(pilot)
    return value, "user"


async def answer_all(pilot) -> dict[str, tuple[str, str]]:
    app = pilot.app
    given: dict[str, tuple[str, str]] = {}
    for _ in range(MAX_QUESTIONS):
        question = app.question
        if question is None:
            break
        assert question.text in chat_texts(app)[-1]  # asked in the chat, one at a time
        given[question.id] = await answer(pilot, question)
        assert app.session.answers[question.id] == given[question.id]  # recorded
    assert app.question is None, "the tree kept asking"
    return given


async def load_config(pilot, path: str) -> None:
    await pilot.press("ctrl+o")
    pilot.app.screen.query_one(Input).value = path
    await pilot.press("enter")
    await settle(pilot)


@pilot_test
async def test_training_oom_to_a_saved_patched_config(tmp_path):
    config = FIXTURES / "experiment.yaml"
    original = config.read_text()
    app = make_app(config_path=str(config), lang="en")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.session.config is not None
        await paste(pilot, (FIXTURES / "training_oom.log").read_text())
        report = app.session.report
        assert (report.oom, report.phase, report.kind) == (True, "training", "cuda_oom")
        assert report.evidence and "Tried to allocate 6.50 GiB" in report.evidence[0].text
        await answer_all(pilot)

        diagnosis = app.session.diagnosis
        assert diagnosis.decision.patch and diagnosis.patched_config
        assert app.query_one(TabbedContent).active == "tab-patch"
        assert yaml.safe_load(shown(app.query_one("#patch-yaml", Static))) == (
            diagnosis.decision.patch
        )
        assert shown(app.query_one("#patch-diff", Static)) == diagnosis.config_diff.rstrip("\n")

        await pilot.press("ctrl+s")
        target = tmp_path / "experiment.patched.yaml"
        app.screen.query_one(Input).value = str(target)
        await pilot.press("enter")
        await settle(pilot)
        assert target.read_text() == diagnosis.patched_config
        assert "# the training-memory knob" in target.read_text()  # comments kept
        assert config.read_text() == original


@pilot_test
async def test_a_question_about_a_key_opens_the_section_that_explains_it():
    app = make_app(lang="zh")
    async with app.run_test(size=SIZE) as pilot:
        await type_line(pilot, "sglang mem_fraction_static 调多少")
        assert app.session.docs, "no guide section found"
        opened = app.query_one("#docs-section")
        assert app.query_one("#docs").opened == app.session.docs[0].section
        assert "mem_fraction_static" in opened.source and has_cjk(opened.source)
        assert app.query_one(TabbedContent).active == "tab-docs"

        await type_line(pilot, "what does fsdp:d2c2 mean")
        assert "d2c2" in app.query_one("#docs-section").source


@pilot_test
async def test_a_described_failure_starts_the_tree_for_its_phase():
    app = make_app(lang="zh")
    async with app.run_test(size=SIZE) as pilot:
        await type_line(pilot, "训练时显存爆了")
        report = app.session.report
        assert report is not None and report.input_kind == "description"
        assert report.phase == "training"
        assert app.question is not None or app.session.diagnosis.decision.recommendations


@pilot_test
async def test_switching_language_redoes_the_questions_in_it():
    app = make_app(config_path=str(FIXTURES / "experiment.yaml"), lang="en")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await paste(pilot, (FIXTURES / "training_oom.log").read_text())
        assert app.question is not None and not has_cjk(app.question.text)
        await pilot.press("ctrl+l")
        await settle(pilot)
        assert app.lang == "zh" and app.session.diagnosis.lang == "zh"
        assert has_cjk(app.question.text) and app.question.text in chat_texts(app)[-1]
        assert app.query_one(TabbedContent).get_tab("tab-evidence").label.plain == "证据"


@pilot_test
async def test_markup_in_the_log_is_shown_as_written():
    app = make_app(lang="en")
    async with app.run_test(size=SIZE) as pilot:
        await paste(pilot, (FIXTURES / "markup_injection.log").read_text())
        report = app.session.report
        assert report.oom and report.kind == "cuda_oom"
        evidence = "\n".join(shown(s) for s in app.query_one("#evidence").query(Static))
        assert report.evidence[0].text in evidence
        assert "[link=file:///etc/passwd]x[/link]" in evidence


@pilot_test
async def test_a_20000_line_paste_is_diagnosed_and_laid_out_lazily():
    text = generated_log(20_000)
    app = make_app(lang="en")
    async with app.run_test(size=SIZE) as pilot:
        await paste(pilot, text)
        report = app.session.report
        assert report.lines_read == 20_000
        assert (report.phase, report.kind) == ("training", "cuda_oom")
        assert report.evidence[0].line == 20_000
        assert "(pasted a log of 20000 lines)" in chat_texts(app, "user")
        assert app.query_one("#paste").pending == text  # laid out only when shown


@pilot_test
async def test_cascade_after_the_root_cause_is_folded():
    app = make_app(lang="en")
    async with app.run_test(size=SIZE) as pilot:
        await paste(pilot, (FIXTURES / "training_oom.log").read_text())
        consequences = app.session.report.consequences
        folded = list(app.query(Collapsible).filter(".cascade"))
        assert len(folded) == len(consequences) >= 1
        assert all(box.collapsed for box in folded)


@pilot_test
async def test_without_a_config_nothing_is_asked_that_cannot_change_the_fix():
    app = make_app(lang="en")
    async with app.run_test(size=SIZE) as pilot:
        await paste(pilot, (FIXTURES / "training_oom.log").read_text())
        assert app.question is None  # the floor needs the config, whatever the answers
        assert "Try first" in chat_texts(app)[-1]
        assert not any("longest multi-turn conversation" in text for text in chat_texts(app))


@pilot_test
async def test_with_a_config_the_fix_is_shown_then_the_question_that_changes_it():
    app = make_app(config_path=str(FIXTURES / "experiment.yaml"), lang="en")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await paste(pilot, (FIXTURES / "training_oom.log").read_text())
        assert app.question is not None and app.question.id == "multi_turn"
        texts = chat_texts(app)
        assert texts[-2].startswith("Fix #1: Optimize Micro-batch Size")
        assert "Provisional" in texts[-2]
        await pilot.press("enter")  # the default, no
        await settle(pilot)
        assert app.session.answers["multi_turn"] == ("no", "user")
        assert app.question is None


@pilot_test
async def test_a_log_opened_from_a_path_then_a_config():
    app = make_app(lang="en")
    async with app.run_test(size=SIZE) as pilot:
        await load_config(pilot, str(FIXTURES / "training_oom.log"))
        assert app.session.report.files and app.session.report.phase == "training"
        await load_config(pilot, str(FIXTURES / "experiment.yaml"))
        assert app.session.config is not None and "experiment.yaml" in app.sub_title
        await answer_all(pilot)
        assert app.session.diagnosis.config_diff
