"""The TUI's rough edges a new user hit in tmux (issue 21), each with a Pilot test.

Pasted text never stays in the chat line (a terminal paste with colour codes, Start
over); the Patch tab and ctrl+s follow the fix in view; tab keys that tmux passes on;
keys and overrides never wrapped; every pane reachable at 60x20; a log opened as
``tui PATH`` in the Log tab with its coloured lines whole.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from textual import events
from textual.widgets import Input, Static, TabbedContent
from tui_helpers import FIXTURES, StubPipeline, paste, pilot_test, settle, shown

from assistant.tui import make_app
from assistant.tui.pasteparse import ESC_PICTURE, PasteEscapes, PasteSafeParser, install
from assistant.tui.widgets.chat import ChatInput, ChatMessage
from assistant.tui.widgets.code import CodeBlock
from assistant.tui.widgets.paste import PastePanel

COLOURED = (
    "\x1b[36m(AReaL)\x1b[0m 20260105-10:00:00.000 Trainer INFO: step 12 start\n"
    "\x1b[36m(AReaL)\x1b[0m [rank2]: Traceback (most recent call last):\n"
    '\x1b[36m(AReaL)\x1b[0m [rank2]:   File "/srv/AReaL/areal/engine/fsdp_engine.py", line 755,'
    " in forward_backward_batch\n"
    "\x1b[31m(AReaL)\x1b[0m [rank2]: torch.OutOfMemoryError: CUDA out of memory. Tried to"
    " allocate 4.00 GiB. GPU 2 has a total capacity of 79.11 GiB of which 1.10 GiB is free.\n"
)
SIZE = (80, 24)


@pytest.fixture
def stub(monkeypatch: pytest.MonkeyPatch) -> StubPipeline:
    return StubPipeline.installed(monkeypatch)


# --- a terminal paste with colour codes -------------------------------------------------


def _parse(parser: PasteSafeParser, chunks: list[str]) -> list[object]:
    return [event for chunk in chunks for event in parser.feed(chunk)]


RAW = "\x1b[200~" + COLOURED + "\x1b[201~"


@pytest.mark.parametrize("cut", [None, 1, 3, len(RAW) - 6, len(RAW) - 3, len(RAW) // 2])
def test_a_bracketed_paste_with_colour_codes_arrives_whole(cut: int | None) -> None:
    """One Paste with every character (ESC as its picture), no key press: before, each
    ESC started a 'key sequence' and up to 32 characters after it went to the focused
    widget as keys, missing from the log. ``cut`` splits the input (inside a bracket)."""
    chunks = [RAW] if cut is None else [RAW[:cut], RAW[cut:]]
    events_ = _parse(PasteSafeParser(), chunks)
    keys = [e for e in events_ if isinstance(e, events.Key)]
    pastes = [e for e in events_ if isinstance(e, events.Paste)]
    assert keys == []
    assert [p.text for p in pastes] == [COLOURED.replace("\x1b", ESC_PICTURE)]


def test_escapes_outside_a_paste_are_left_to_textual() -> None:
    rewrite = PasteEscapes()
    assert rewrite("\x1b[A\x1bOP") == "\x1b[A\x1bOP"  # an arrow key and F1 stay keys
    assert rewrite("\x1b[200~a\x1b[0mb\x1b[201~\x1b[B") == "\x1b[200~a\u241b[0mb\x1b[201~\x1b[B"


def test_install_makes_the_linux_driver_build_the_paste_safe_parser(monkeypatch) -> None:
    from textual._xterm_parser import XTermParser
    from textual.drivers import linux_driver

    monkeypatch.setattr(linux_driver, "XTermParser", XTermParser)
    assert install() is True
    assert linux_driver.XTermParser is PasteSafeParser
    assert install() is True  # a second call finds it in and changes nothing


def test_install_says_so_where_textual_lays_its_driver_out_otherwise(monkeypatch) -> None:
    """A Textual whose driver names no parser class: nothing is patched, and False
    comes back so the TUI can say so (before, this case was silent)."""
    from textual.drivers import linux_driver

    monkeypatch.delattr(linux_driver, "XTermParser")
    assert install() is False
    assert not hasattr(linux_driver, "XTermParser")


@pilot_test
async def test_the_chat_says_once_when_pastes_are_not_paste_safe(stub):
    app = make_app(lang="en")
    app.paste_safe = False
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        said = [m.plain for m in app.query(ChatMessage) if "escape code" in m.plain]
        assert len(said) == 1 and "areal-doctor tui LOG" in said[0]
    safe = make_app(lang="en")
    async with safe.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert not [m for m in safe.query(ChatMessage) if "escape code" in m.plain]


@pilot_test
async def test_a_paste_leaves_nothing_in_the_chat_line_and_the_log_whole(stub):
    """Keys a terminal's parser made of the paste (they arrive first) and the paste
    itself: none of it stays in the chat line; the log diagnosed has its ESC back."""
    app = make_app(lang="en")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        chat = app.query_one("#chat-input", Input)
        await pilot.press(*"[36m(AReaL)")  # what Textual's parser sent as key presses
        assert chat.value == "[36m(AReaL)"
        await paste(pilot, COLOURED.replace("\x1b", ESC_PICTURE))
        assert chat.value == ""
        text = app.query_one(PastePanel).text
        assert "\x1b[36m(AReaL)\x1b[0m 20260105-10:00:00.000 Trainer INFO" in text
        await pilot.press("enter")  # nothing left to send as a question
        await settle(pilot)
        assert not [m for m in app.query(ChatMessage) if m.role == "user" and "[36m" in m.plain]


@pilot_test
async def test_start_over_clears_the_chat_line(stub):
    app = make_app(lang="en")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press(*"half a question")
        await pilot.press("ctrl+r")
        await settle(pilot)
        assert app.query_one("#chat-input", Input).value == ""


# --- the fix in view ----------------------------------------------------------------------


@pilot_test
async def test_the_patch_tab_and_ctrl_s_follow_the_fix_in_view(tmp_path: Path):
    """ctrl+n moves to fix #2: the Patch tab's fragment, its marker and what ctrl+s
    saves are fix #2's change (gradient checkpointing), no longer fix #1's."""
    log, config = FIXTURES / "training_oom.log", FIXTURES / "experiment.yaml"
    app = make_app(path=str(log), config_path=str(config), lang="en")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        while app.question is not None:
            await pilot.press("escape")
            await settle(pilot)
        first = shown(app.query_one("#patch-yaml", Static))
        assert "max_tokens_per_mb" in first and "gradient_checkpointing" not in first
        await pilot.press("ctrl+n")
        await settle(pilot)
        while app.question is not None:
            await pilot.press("escape")
            await settle(pilot)
        assert app.session.focus == 1
        second = shown(app.query_one("#patch-yaml", Static))
        assert "gradient_checkpointing: true" in second and "max_tokens_per_mb" not in second
        marked = [s for s in app.query(".recommendation") if shown(s).startswith("▶")]
        assert len(marked) == 1 and "Gradient Checkpointing" in shown(marked[0])
        saved = tmp_path / "fixed.yaml"
        app.session.save_patch(str(saved))
        text = saved.read_text()
        assert "gradient_checkpointing: true" in text
        assert "max_tokens_per_mb: 32768" in text  # fix #1's change is not in it


# --- keys ---------------------------------------------------------------------------------


@pilot_test
async def test_tab_keys_that_tmux_passes_work_while_typing_and_the_footer_shows_them(stub):
    app = make_app(lang="en")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        tabs = app.query_one(TabbedContent)
        chat = app.query_one("#chat-input", Input)
        assert app.focused is chat
        for key, tab in [("f4", "tab-patch"), ("f6", "tab-estimate"), ("f2", "tab-log"),
                         ("f3", "tab-evidence"), ("f5", "tab-docs")]:  # fmt: skip
            await pilot.press(key)
            assert tabs.active == tab, key
        await pilot.press("ctrl+pagedown")
        assert tabs.active == "tab-estimate"
        await pilot.press("ctrl+pagedown")
        assert tabs.active == "tab-log"  # wraps around
        await pilot.press("ctrl+pageup")
        assert tabs.active == "tab-estimate"
        await pilot.press("3")
        assert chat.value == "3" and tabs.active == "tab-estimate"  # typed, not a tab
        footer = " ".join(
            f"{b.key_display or b.key} {b.description}"
            for (_, b, enabled, _) in app.active_bindings.values()
            if b.show and enabled
        )
        assert "f2-f6 Tabs" in footer
        await pilot.press("ctrl+l")
        await settle(pilot)
        footer = [b.description for (_, b, on, _) in app.active_bindings.values() if b.show and on]
        assert "标签页" in footer and "Tabs" not in footer


# --- wrapping and narrow terminals -------------------------------------------------------


def _fits_unwrapped(block: CodeBlock) -> None:
    """The block's text is laid out at its own width: no line was broken."""
    inner = block.query_one(Static)
    longest = max(len(line) for line in shown(inner).splitlines())
    assert inner.size.width >= longest, (inner.size.width, shown(inner))


@pilot_test
async def test_keys_and_overrides_are_never_wrapped_at_80_columns():
    log, config = FIXTURES / "training_oom.log", FIXTURES / "experiment.yaml"
    app = make_app(path=str(log), config_path=str(config), lang="en")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        while app.question is not None:
            await pilot.press("escape")
            await settle(pilot)
        await pilot.press("f4")
        await settle(pilot)
        overrides = app.query_one("#patch-overrides", Static)
        assert "actor.mb_spec.max_tokens_per_mb=3072" in shown(overrides).splitlines()
        # and at 80 columns it fits the panel's width whole: no sideways scroll needed (a
        # longer patch above it, as the memory fit check may add, scrolls it down)
        panel = app.query_one("#patch").content_region
        assert panel.x <= overrides.region.x and overrides.region.right <= panel.right
        blocks = list(app.query(CodeBlock))
        assert len(blocks) >= 3  # fragment, overrides, diff, each fix's keys
        for block in blocks:
            _fits_unwrapped(block)
        in_chat = [b for m in app.query(ChatMessage) for b in m.query(CodeBlock)]
        assert in_chat and any("max_tokens_per_mb" in shown(b.query_one(Static)) for b in in_chat)
        for block in in_chat:
            _fits_unwrapped(block)


@pilot_test
async def test_every_pane_is_reachable_at_60x20(stub):
    app = make_app(lang="en")
    async with app.run_test(size=(60, 20)) as pilot:
        await paste(pilot, (FIXTURES / "training_oom.log").read_text())
        assert app.screen.has_class("-narrow")
        screen = app.screen.region
        for selector in ("#chat", "#chat-input", "#tabs", "#tab-evidence"):
            region = app.query_one(selector).region
            assert region.width > 20 and region.height > 0, selector
            assert screen.contains_region(region), (selector, region)
        await pilot.press("f4")
        await settle(pilot)
        assert app.query_one("#patch-yaml").region.height > 0
        await pilot.resize_terminal(100, 30)
        await settle(pilot)
        assert not app.screen.has_class("-narrow")  # side by side again when wide


# --- a log opened from a file --------------------------------------------------------------


def _opened_on_the_log_tab(log: Path):
    """The app as `tui PATH` starts it, on a coloured AReaL log written to ``log``."""
    log.write_text(COLOURED)
    return make_app(path=str(log), lang="en")


async def _show_log_tab(pilot) -> None:
    await settle(pilot)
    await pilot.press("f2")
    await settle(pilot)


@pilot_test
async def test_a_log_opened_as_tui_path_is_in_the_log_tab_with_coloured_lines_whole(
    tmp_path: Path,
):
    app = _opened_on_the_log_tab(tmp_path / "coloured.log")
    async with app.run_test(size=(120, 40)) as pilot:
        await _show_log_tab(pilot)
        area = app.query_one("#paste-area").text
        assert "(AReaL) 20260105-10:00:00.000 Trainer INFO: step 12 start" in area
        assert "(AReaL) [rank2]: torch.OutOfMemoryError: CUDA out of memory" in area
        assert "\x1b" not in area and ESC_PICTURE not in area
        assert app.session.diagnosis is not None and app.session.diagnosis.report.oom
        assert isinstance(app.query_one("#chat-input"), ChatInput)


@pilot_test
async def test_a_log_too_big_for_the_log_tab_says_so_there(tmp_path: Path, monkeypatch):
    """A file over the Log tab's limit (or a folder) left an empty paste box, as if the
    file had not been opened; the box now says why, and where its lines are."""
    import assistant.tui.session as session

    monkeypatch.setattr(session, "LOG_TAB_LIMIT", 64)
    app = _opened_on_the_log_tab(tmp_path / "big.log")
    async with app.run_test(size=(120, 40)) as pilot:
        await _show_log_tab(pilot)
        area = app.query_one("#paste-area")
        assert area.text == ""
        assert "big.log" in str(area.placeholder) and "Evidence tab" in str(area.placeholder)
        await pilot.press("ctrl+l")  # the note follows the language
        await settle(pilot)
        assert "Evidence 标签页" in str(app.query_one("#paste-area").placeholder)
