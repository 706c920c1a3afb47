"""Whole TUI sessions driven by Pilot over a stub pipeline (the TUI's own flow).

Each test asserts on state: the question shown, the answer recorded in the
pipeline call, the patch displayed, the file written, the strings switched.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
import yaml
from textual import events
from textual.widgets import Collapsible, Input, OptionList, ProgressBar, Static, TabbedContent
from tui_helpers import (
    FIXTURES,
    StubPipeline,
    chat_texts,
    close_shared,
    paste,
    pilot_test,
    settle,
    shared_app,
    shown,
    type_line,
)

from assistant import pipeline
from assistant.tui import make_app
from assistant.tui.messages import ReadProgress
from assistant.tui.screens import HelpScreen, PathPrompt
from assistant.tui.widgets.paste import PasteArea, PastePanel
from assistant.tui.widgets.question import QuestionPrompt

SIZE = (120, 40)


@pytest.fixture(scope="module", autouse=True)
def _one_app_for_the_module() -> Iterator[None]:
    """The tests that start from a new English App share one (tui_helpers.shared_app)."""
    yield
    close_shared(__name__)


@pytest.fixture
def stub(monkeypatch: pytest.MonkeyPatch) -> StubPipeline:
    return StubPipeline.installed(monkeypatch)


def active_tab(app) -> str:
    return app.query_one(TabbedContent).active


def static_text(app, selector: str) -> str:
    return shown(app.query_one(selector, Static))


@pilot_test
async def test_paste_answer_both_questions_and_save_the_patch(stub, tmp_path):
    async with shared_app(__name__, SIZE) as (app, pilot):
        await paste(pilot, (FIXTURES / "training_oom.log").read_text())
        prompt = app.query_one(QuestionPrompt)
        assert prompt.question is not None and prompt.question.id == "multi_turn"
        assert "(en) Is the rollout multi-turn?" in chat_texts(app)[-1]
        assert active_tab(app) == "tab-evidence"
        assert "Tried to allocate 6.50 GiB" in app.query_one(PastePanel).text
        app.query_one(TabbedContent).active = "tab-log"  # laid out once shown
        await pilot.pause()
        assert "Tried to allocate 6.50 GiB" in app.query_one(PasteArea).text
        app.query_one(TabbedContent).active = "tab-evidence"

        await pilot.click("#choice-answer", offset=(4, 1))  # the first choice: yes
        await settle(pilot)
        assert stub.calls[-1]["answers"] == {"multi_turn": ("yes", "user")}
        assert prompt.question.id == "longest_conversation_tokens"
        assert isinstance(app.focused, Input) and app.focused.id == "number-answer"

        await pilot.press(*"6144", "enter")
        await settle(pilot)
        assert stub.calls[-1]["answers"]["longest_conversation_tokens"] == ("6144", "user")
        assert app.question is None and not prompt.display
        assert active_tab(app) == "tab-patch"
        assert "max_tokens_per_mb: 8192" in static_text(app, "#patch-yaml")
        assert "actor.mb_spec.max_tokens_per_mb=8192" in static_text(app, "#patch-overrides")
        assert chat_texts(app, "user")[-2:] == ["yes", "6144"]

        await pilot.press("ctrl+s")
        assert isinstance(app.screen, PathPrompt)
        target = tmp_path / "patch.yaml"
        app.screen.query_one(Input).value = str(target)
        await pilot.press("enter")
        await settle(pilot)
        saved = yaml.safe_load(target.read_text())
        assert saved == {"actor": {"mb_spec": {"max_tokens_per_mb": 8192}}}
        assert str(target) in chat_texts(app)[-1]


@pilot_test
async def test_the_default_button_and_typed_answers(stub):
    async with shared_app(__name__, SIZE) as (app, pilot):
        await paste(pilot, (FIXTURES / "training_oom.log").read_text())
        await pilot.click("#use-default")
        await settle(pilot)
        assert stub.calls[-1]["answers"] == {"multi_turn": ("no", "default")}
        assert "max_tokens_per_mb: 3072" in static_text(app, "#patch-yaml")

        await pilot.press("ctrl+r")
        await paste(pilot, (FIXTURES / "training_oom.log").read_text())
        await type_line(pilot, "是")  # typed in the chat, in the other language
        assert stub.calls[-1]["answers"] == {"multi_turn": ("yes", "user")}
        await type_line(pilot, "12000")
        assert stub.calls[-1]["answers"]["longest_conversation_tokens"] == ("12000", "user")
        assert "max_tokens_per_mb: 14048" in static_text(app, "#patch-yaml")


@pilot_test
async def test_copy_puts_patch_and_overrides_on_the_clipboard(stub):
    async with shared_app(__name__, SIZE) as (app, pilot):
        await pilot.press("ctrl+y")
        assert app.clipboard == "" and "no patch to copy" in chat_texts(app)[-1]
        await paste(pilot, (FIXTURES / "training_oom.log").read_text())
        await pilot.press("ctrl+y", "ctrl+s")  # a question is open: nothing final yet
        assert app.clipboard == "" and "Answer the open question first" in chat_texts(app)[-1]
        assert not isinstance(app.screen, PathPrompt)
        await pilot.click("#use-default")
        await settle(pilot)
        await pilot.press("ctrl+y")
        copied = app.clipboard
        assert yaml.safe_load(copied) == {"actor": {"mb_spec": {"max_tokens_per_mb": 3072}}}
        assert "actor.mb_spec.max_tokens_per_mb=3072" in copied


@pilot_test
async def test_language_toggle_switches_strings_and_asks_again(stub):
    async with shared_app(__name__, SIZE) as (app, pilot):
        await paste(pilot, (FIXTURES / "training_oom.log").read_text())
        assert app.query_one(TabbedContent).get_tab("tab-patch").label.plain == "Patch"
        await pilot.press("ctrl+l")
        await settle(pilot)
        assert app.lang == "zh" and stub.calls[-1]["lang"] == "zh"
        assert app.query_one(TabbedContent).get_tab("tab-patch").label.plain == "补丁"
        shown = {b.binding.description for b in app.active_bindings.values() if b.binding.show}
        assert {"打开", "保存补丁", "English", "退出"} <= shown
        assert not {"Open", "Quit"} & shown  # each key once, in the current language
        assert "(zh) Is the rollout multi-turn?" in chat_texts(app)[-1]
        options = app.query_one("#choice-answer", OptionList)
        assert [str(options.get_option_at_index(i).prompt) for i in range(2)] == ["1. 是", "2. 否"]
        await pilot.press("ctrl+l")
        await settle(pilot)
        assert app.lang == "en" and "Switched to English." in chat_texts(app)


@pilot_test
async def test_markup_and_escapes_in_a_log_are_shown_as_text(stub):
    log = (FIXTURES / "markup_injection.log").read_text() + "tail \x1b[31mred\x1b[0m [bold]\n"
    async with shared_app(__name__, SIZE) as (app, pilot):
        await paste(pilot, log)
        assert app.question is not None  # diagnosed, not crashed
        evidence = app.query_one("#evidence")
        texts = "\n".join(shown(static) for static in evidence.query(Static))
        assert "[/] [link=file:///etc/passwd]x[/link] [b]." in texts
        summary = next(text for text in chat_texts(app) if "Memory failure" in text)
        assert "[link=file:///etc/passwd]x[/link]" in summary
        app.query_one(TabbedContent).active = "tab-log"
        await pilot.pause()
        # a colour code is neither obeyed nor left as noise: the words it coloured stay
        area = app.query_one(PasteArea).text
        assert "tail red [bold]" in area and "\x1b" not in area and "\u241b" not in area
        await type_line(pilot, "[bold]what[/] [link=x]is this")
        assert "[bold]what[/] [link=x]is this" in chat_texts(app, "user")


@pilot_test
async def test_cascade_is_folded_in_the_evidence_tab(stub):
    async with shared_app(__name__, SIZE) as (app, pilot):
        await paste(pilot, (FIXTURES / "training_oom.log").read_text())
        folded = list(app.query(Collapsible).filter(".cascade"))
        assert len(folded) == 1 and folded[0].collapsed
        assert "NCCL timeout" in str(folded[0].title)


@pilot_test
async def test_a_question_in_the_chat_opens_the_guide(stub):
    async with shared_app(__name__, SIZE) as (app, pilot):
        await type_line(pilot, "what does fsdp:d2c2 mean")
        assert active_tab(app) == "tab-docs"
        docs = app.query_one("#docs")
        assert docs.opened == app.session.docs[0].section
        assert "From the OOM guide" in chat_texts(app)[-1]
        assert app.session.diagnosis is None  # names no phase: no tree started
        await pilot.press("ctrl+l")
        await settle(pilot)
        opened = app.query_one("#docs-section")
        assert opened.source.startswith("# ")
        assert any("\u4e00" <= char <= "\u9fff" for char in opened.source)


@pilot_test
async def test_a_description_that_names_a_phase_starts_the_tree(stub):
    async with shared_app(__name__, SIZE) as (app, pilot):
        await type_line(pilot, "OOM during training step")
        assert app.session.report is not None and app.session.report.input_kind == "description"
        assert app.question is not None and app.question.id == "multi_turn"


@pilot_test
async def test_open_a_config_then_the_patch_has_a_diff_and_save_refuses_the_original(stub):
    config = FIXTURES / "experiment.yaml"
    async with shared_app(__name__, SIZE) as (app, pilot):
        await pilot.press("ctrl+o")
        app.screen.query_one(Input).value = str(config)
        await pilot.press("enter")
        await settle(pilot)
        assert str(getattr(app.session.config, "path", "")) == str(config)
        assert "experiment.yaml" in app.sub_title
        await paste(pilot, (FIXTURES / "training_oom.log").read_text())
        await pilot.click("#use-default")
        await settle(pilot)
        assert "+    max_tokens_per_mb: 3072" in static_text(app, "#patch-diff")

        await pilot.press("ctrl+s")
        app.screen.query_one(Input).value = str(config)
        await pilot.press("enter")
        await settle(pilot)
        assert "already exists" in chat_texts(app)[-1]
        assert "max_tokens_per_mb: 32768" in config.read_text()


@pilot_test
async def test_a_log_given_as_path_is_diagnosed_at_start(stub):
    app = make_app(str(FIXTURES / "training_oom.log"), lang="zh")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.session.report is not None and list(app.session.report.files) == [
            "training_oom.log"
        ]
        assert "(zh) Is the rollout multi-turn?" in chat_texts(app)[-1]


@pilot_test
async def test_help_and_start_over(stub):
    async with shared_app(__name__, SIZE) as (app, pilot):
        await pilot.press("f1")
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        await paste(pilot, (FIXTURES / "training_oom.log").read_text())
        assert app.session.diagnosis is not None
        await pilot.press("ctrl+r")
        await settle(pilot)
        assert app.session.diagnosis is None and app.question is None
        assert len(chat_texts(app)) == 1 and app.query_one(PasteArea).text == ""


@pilot_test
async def test_a_bad_answer_is_reported_and_the_question_stays(stub, monkeypatch):
    from assistant.errors import UserError

    def refuse(*args, **kwargs):
        raise UserError("longest_conversation_tokens must be a positive number")

    async with shared_app(__name__, SIZE) as (app, pilot):
        await paste(pilot, (FIXTURES / "training_oom.log").read_text())
        monkeypatch.setattr(pipeline, "conclude", refuse)
        await type_line(pilot, "yes")
        assert "must be a positive number" in chat_texts(app, "error")[-1]
        assert app.question is not None and app.question.id == "multi_turn"
        assert app.session.answers == {}


@pilot_test
async def test_a_crash_in_a_stage_is_shown_not_raised(stub, monkeypatch):
    def broken(*args, **kwargs):
        raise KeyError("phase")

    monkeypatch.setattr(pipeline, "diagnose_text", broken)
    async with shared_app(__name__, SIZE) as (app, pilot):
        await paste(pilot, (FIXTURES / "training_oom.log").read_text())
        assert "Internal error" in chat_texts(app, "error")[-1]
        assert app.is_running


@pilot_test
async def test_keys_work_while_a_long_diagnosis_runs(stub, monkeypatch):
    release = threading.Event()

    def slow(text, **options):
        release.wait(10)
        return stub.diagnose_text(text, **options)

    monkeypatch.setattr(pipeline, "diagnose_text", slow)
    async with shared_app(__name__, SIZE) as (app, pilot):
        app.query_one("#chat-input").post_message(
            events.Paste((FIXTURES / "training_oom.log").read_text())
        )
        await pilot.pause()
        assert app.query_one("#progress").display  # busy, and shown as such
        await pilot.press("f1")
        assert isinstance(app.screen, HelpScreen)  # the UI thread is free
        await pilot.press("escape")
        release.set()
        await settle(pilot)
        assert app.question is not None and not app.query_one("#progress").display


@pilot_test
async def test_reading_progress_moves_the_bar(stub):
    async with shared_app(__name__, SIZE) as (app, pilot):
        app.post_message(ReadProgress(5_000, 20_000))
        await pilot.pause()
        bar = app.query_one("#progress", ProgressBar)
        assert (bar.progress, bar.total) == (5_000, 20_000)


def message_with(app, text: str):
    (found,) = [m for m in app.query("ChatMessage") if text in m.plain]
    return found


@pilot_test
async def test_the_fix_comes_first_and_each_answer_updates_it_in_place(stub):
    async with shared_app(__name__, SIZE) as (app, pilot):
        await paste(pilot, (FIXTURES / "training_oom.log").read_text())
        texts = chat_texts(app)
        fix_at = next(n for n, text in enumerate(texts) if text.startswith("Fix #1:"))
        question_at = next(n for n, text in enumerate(texts) if "multi-turn?" in text)
        assert fix_at < question_at
        fix = message_with(app, "Fix #1:")
        assert "actor.mb_spec.max_tokens_per_mb=3072" in fix.plain
        assert "Provisional: assumes multi_turn = no" in fix.plain

        await pilot.press("1")  # a digit picks "yes"
        await settle(pilot)
        assert stub.calls[-1]["answers"] == {"multi_turn": ("yes", "user")}
        assert message_with(app, "Fix #1:") is fix  # the same message, updated
        assert "=3072" not in fix.plain and "longest_conversation_tokens" in fix.plain
        await pilot.press(*"6144", "enter")
        await settle(pilot)
        assert "actor.mb_spec.max_tokens_per_mb=8192" in fix.plain
        assert "No open question changes this fix." in fix.plain


@pilot_test
async def test_enter_takes_the_highlighted_default(stub):
    async with shared_app(__name__, SIZE) as (app, pilot):
        await paste(pilot, (FIXTURES / "training_oom.log").read_text())
        choices = app.query_one("#choice-answer", OptionList)
        assert app.focused is choices and choices.highlighted == 1  # "no", the default
        await pilot.press("enter")
        await settle(pilot)
        assert stub.calls[-1]["answers"] == {"multi_turn": ("no", "user")}
        assert "max_tokens_per_mb: 3072" in static_text(app, "#patch-yaml")


@pilot_test
async def test_escape_and_skip_words_take_the_default_and_say_so(stub):
    async with shared_app(__name__, SIZE) as (app, pilot):
        await paste(pilot, (FIXTURES / "training_oom.log").read_text())
        await pilot.press("escape")
        await settle(pilot)
        assert stub.calls[-1]["answers"] == {"multi_turn": ("no", "default")}
        assert "(skipped: default no)" in chat_texts(app, "user")[-1]

        await pilot.press("ctrl+r")
        await paste(pilot, (FIXTURES / "training_oom.log").read_text())
        await pilot.press("1")
        await settle(pilot)
        await pilot.press("enter")  # an empty number box skips
        await settle(pilot)
        assert stub.calls[-1]["answers"]["longest_conversation_tokens"] == ("", "default")
        assert "(skipped: default unknown)" in chat_texts(app, "user")[-1]

        await pilot.press("ctrl+r")
        await paste(pilot, (FIXTURES / "training_oom.log").read_text())
        await type_line(pilot, "不知道")  # typed in the chat line
        assert stub.calls[-1]["answers"] == {"multi_turn": ("no", "default")}


@pilot_test
async def test_the_chat_follows_new_messages(stub):
    app = make_app(lang="en")
    async with app.run_test(size=(100, 24)) as pilot:
        for _ in range(3):
            await paste(pilot, (FIXTURES / "training_oom.log").read_text())
            await pilot.press("escape")
            await settle(pilot)
        await pilot.press("ctrl+s", "escape")
        await settle(pilot)
        chat = app.query_one("#chat")
        assert chat.max_scroll_y > 0 and chat.scroll_y == chat.max_scroll_y


@pilot_test
async def test_tabs_by_number_keys_and_help_lists_them(stub):
    async with shared_app(__name__, SIZE) as (app, pilot):
        await pilot.press("ctrl+3")
        assert active_tab(app) == "tab-patch"
        await pilot.press("alt+4")
        assert active_tab(app) == "tab-docs"
        app.query_one("#chat-input", Input).focus()
        await pilot.press("2")  # typing: the digit goes into the chat line
        assert app.query_one("#chat-input", Input).value == "2" and active_tab(app) == "tab-docs"
        app.set_focus(None)
        await pilot.press("2")
        assert active_tab(app) == "tab-evidence"
        await pilot.press("f1")
        body = app.screen.query_one("#help-body").source
        assert "`ctrl+1`..`ctrl+5`" in body and "ctrl+n" in body


@pilot_test
async def test_copy_says_when_the_clipboard_was_not_reached(stub, monkeypatch):
    from assistant.tui import clipboard

    async with shared_app(__name__, SIZE) as (app, pilot):
        await paste(pilot, (FIXTURES / "training_oom.log").read_text())
        await pilot.press("escape")
        await settle(pilot)
        monkeypatch.setattr(clipboard, "copy_with_tool", lambda text: False)
        await pilot.press("ctrl+y")
        assert "OSC 52" in chat_texts(app)[-1] and "ctrl+s" in chat_texts(app)[-1]
        monkeypatch.setattr(clipboard, "copy_with_tool", lambda text: True)
        before = len(chat_texts(app))
        await pilot.press("ctrl+y")
        await pilot.pause()
        assert len(chat_texts(app)) == before  # a notification, not a chat message
        assert any("copied" in str(n.message) for n in app._notifications)


@pilot_test
async def test_next_fix_moves_the_focus(stub):
    async with shared_app(__name__, SIZE) as (app, pilot):
        await paste(pilot, (FIXTURES / "training_oom.log").read_text())
        await pilot.press("escape")
        await settle(pilot)
        await pilot.press("ctrl+n")
        await settle(pilot)
        assert stub.calls[-1]["focus"] == 1
        assert any(
            text.startswith("Fix #2: Enable gradient checkpointing") for text in chat_texts(app)
        )
        await pilot.press("ctrl+n")
        await settle(pilot)
        assert "That was the last fix." in chat_texts(app)[-1]


def keystrokes(text: str) -> list[events.Key]:
    """``text`` as a terminal without bracketed paste sends it: characters, Enter per line."""
    names = {" ": "space", "\n": "enter", ".": "full_stop", ":": "colon", ",": "comma"}
    return [events.Key(names.get(char, char), "\r" if char == "\n" else char) for char in text]


async def send_all_at_once(pilot, text: str) -> None:
    """Post every key at once, as the driver does with one read of a pasted buffer."""
    for key in keystrokes(text):
        pilot.app.post_message(key)
    await pilot.pause(0.5)
    await settle(pilot)


@pilot_test
async def test_a_log_typed_in_as_keys_is_one_log_not_many_questions(stub):
    """No bracketed paste: the lines arrive as keys with an Enter each, faster than typing."""
    log = "step 12 done\nrank 0 training\ntorch.OutOfMemoryError: CUDA out of memory\nbye\n"
    async with shared_app(__name__, SIZE) as (app, pilot):
        app.query_one("#chat-input", Input).focus()
        await send_all_at_once(pilot, log)
        user = chat_texts(app, "user")
        assert len(user) == 1 and "4 lines" in user[0]
        assert app.session.report is not None and app.session.report.oom
        panel = app.query_one(PastePanel)
        received = panel.pending or app.query_one(PasteArea).text
        assert received.splitlines() == log.splitlines()  # each line whole, in order
        assert app.query_one("#chat-input", Input).value == ""


@pilot_test
async def test_a_line_typed_alone_is_still_a_chat_message(stub):
    async with shared_app(__name__, SIZE) as (app, pilot):
        app.query_one("#chat-input", Input).focus()
        await send_all_at_once(pilot, "what does fsdp mean\n")
        assert chat_texts(app, "user") == ["what does fsdp mean"]
        assert active_tab(app) == "tab-docs"


@pilot_test
async def test_a_question_about_a_note_lists_the_note_first(stub):
    """No guide section is about another process on the GPU: the note leads the results."""
    async with shared_app(__name__, SIZE) as (app, pilot):
        await type_line(pilot, "another process is using the GPU")
        sections = [doc.section for doc in app.session.docs]
        assert sections[0] == "x-foreign-process"
        assert not any(doc.see_also for doc in app.session.docs)
        assert "[x-foreign-process]" in chat_texts(app)[-1]


@pilot_test
async def test_a_note_nearly_as_good_as_the_guide_is_listed_after_it(stub):
    app = make_app(lang="en")
    async with app.run_test(size=SIZE) as pilot:
        await type_line(pilot, "rollout OOM")
        sections = [doc.section for doc in app.session.docs]
        assert sections[-1] == "x-vllm-memory" and app.session.docs[-1].see_also
        assert not any(section.startswith("x-") for section in sections[:-1])
        assert "[x-vllm-memory]" in chat_texts(app)[-1]
