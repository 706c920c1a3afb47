"""Snapshots of the TUI's main states in both languages (pytest-textual-snapshot).

Fixed terminal size, solid cursors, paths relative to the fixtures folder, no
clock. Regenerate after an intended change with
``python -m pytest tests/test_tui_snapshots.py --snapshot-update`` and look at
the SVGs before committing them.
"""

from __future__ import annotations

import pytest
from textual.pilot import Pilot
from tui_helpers import FIXTURES, blink_off, paste, settle, type_line

from assistant.tui import make_app

SIZE = (120, 40)
LANGS = ["en", "zh"]


@pytest.fixture(autouse=True)
def in_fixtures(monkeypatch: pytest.MonkeyPatch) -> None:
    """Paths shown in the app are the short names typed here, wherever the repo is."""
    monkeypatch.chdir(FIXTURES)


async def finish(pilot: Pilot) -> None:
    await settle(pilot)
    blink_off(pilot.app)
    await pilot.pause()


async def answer_with_defaults(pilot: Pilot) -> None:
    for _ in range(10):
        if pilot.app.question is None:
            return
        if pilot.app.query("#use-default"):
            await pilot.click("#use-default")
        else:
            await pilot.press(*"8", "enter")
        await settle(pilot)


@pytest.mark.parametrize("lang", LANGS)
def test_start(snap_compare, lang):
    assert snap_compare(make_app(lang=lang), terminal_size=SIZE, run_before=finish)


@pytest.mark.parametrize("lang", LANGS)
def test_first_question_after_a_pasted_oom(snap_compare, lang):
    """Answer first: the fix (provisional) above the one question that can change it."""

    async def run_before(pilot: Pilot) -> None:
        await settle(pilot)
        await paste(pilot, (FIXTURES / "training_oom.log").read_text())
        await finish(pilot)

    app = make_app(config_path="experiment.yaml", lang=lang)
    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


@pytest.mark.parametrize("lang", LANGS)
def test_patch_against_a_config(snap_compare, lang):
    async def run_before(pilot: Pilot) -> None:
        await settle(pilot)
        await paste(pilot, (FIXTURES / "training_oom.log").read_text())
        await answer_with_defaults(pilot)
        await finish(pilot)

    app = make_app(config_path="experiment.yaml", lang=lang)
    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


@pytest.mark.parametrize("lang", LANGS)
def test_docs_for_a_question(snap_compare, lang):
    async def run_before(pilot: Pilot) -> None:
        await type_line(pilot, "sglang mem_fraction_static 调多少")
        await finish(pilot)

    assert snap_compare(make_app(lang=lang), terminal_size=SIZE, run_before=run_before)


def test_a_note_offered_beside_the_guide(snap_compare):
    async def run_before(pilot: Pilot) -> None:
        # nearly as good as the guide, not clearly better: offered beside, not leading
        await type_line(pilot, "rollout OOM")
        await finish(pilot)

    assert snap_compare(make_app(lang="en"), terminal_size=SIZE, run_before=run_before)


def test_evidence_of_a_log_full_of_markup(snap_compare):
    async def run_before(pilot: Pilot) -> None:
        await settle(pilot)  # mounted and laid out before the paste, as in the other tests
        await paste(pilot, (FIXTURES / "markup_injection.log").read_text())
        await finish(pilot)
        # ChatLog.say scrolls to the end after the next refresh; on a loaded machine that
        # can run before the last message is laid out (the chat shown from its top). This
        # snapshot is about the markup, so the chat's end is brought into view here.
        pilot.app.query_one("#chat").scroll_end(animate=False, immediate=True)
        await pilot.pause()

    assert snap_compare(make_app(lang="en"), terminal_size=SIZE, run_before=run_before)


def test_help(snap_compare):
    async def run_before(pilot: Pilot) -> None:
        await pilot.press("f1")
        await finish(pilot)

    assert snap_compare(make_app(lang="zh"), terminal_size=SIZE, run_before=run_before)


@pytest.mark.parametrize("lang", LANGS)
def test_estimate_on_the_logs_gpu(snap_compare, lang):
    """The Estimate tab after a config and a log: the log's GPU capacity, a row in red."""

    async def run_before(pilot: Pilot) -> None:
        await settle(pilot)
        await paste(pilot, (FIXTURES / "training_oom.log").read_text())
        await pilot.press("ctrl+5")
        await finish(pilot)

    app = make_app(config_path="experiment.yaml", lang=lang)
    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_patch_tab_at_80x24(snap_compare):
    """Copy-safe blocks: the fragment, the overrides and each fix's keys are never
    wrapped mid-token; a line too wide scrolls sideways. The footer shows f2-f6."""

    async def run_before(pilot: Pilot) -> None:
        await settle(pilot)
        await paste(pilot, (FIXTURES / "training_oom.log").read_text())
        await answer_with_defaults(pilot)
        await pilot.press("f4")
        await finish(pilot)

    app = make_app(config_path="experiment.yaml", lang="en")
    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)


def test_narrow_60x20_keeps_chat_and_tabs(snap_compare):
    async def run_before(pilot: Pilot) -> None:
        await settle(pilot)
        await paste(pilot, (FIXTURES / "training_oom.log").read_text())
        await finish(pilot)

    app = make_app(config_path="experiment.yaml", lang="en")
    assert snap_compare(app, terminal_size=(60, 20), run_before=run_before)
