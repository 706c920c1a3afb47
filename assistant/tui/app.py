"""The areal-doctor TUI: a chat beside tabs (Log, Evidence, Patch, Docs, Estimate).

The App wires widgets to a ``Session`` and runs pipeline jobs in a worker
thread; what the assistant then says is decided by ``Conversation``. Widgets
receive state through reactive attributes bound here and render it.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from textual import events, work
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.reactive import reactive
from textual.screen import ModalScreen
from textual.widgets import Footer, Header, ProgressBar, TabbedContent, TabPane
from textual.worker import get_current_worker

from assistant.errors import UserError
from assistant.models import Diagnosis, Question
from assistant.tui.conversation import Conversation
from assistant.tui.i18n import LANGS, t, toggled
from assistant.tui.literal import is_multiline, pasted
from assistant.tui.messages import (
    AnswerChosen,
    ChatSubmitted,
    JobFailed,
    JobFinished,
    LogSubmitted,
    ReadProgress,
)
from assistant.tui.screens import HelpScreen, PathPrompt
from assistant.tui.session import DocItem, EstimateView, Job, Session, is_config_path
from assistant.tui.widgets.chat import ChatInput, ChatLog
from assistant.tui.widgets.docs import DocsPanel
from assistant.tui.widgets.estimate import EstimatePanel
from assistant.tui.widgets.evidence import EvidencePanel
from assistant.tui.widgets.paste import PastePanel
from assistant.tui.widgets.patch import PatchPanel
from assistant.tui.widgets.question import QuestionPrompt

# (key, action): the footer's descriptions come from tui.yaml as "key.<action>".
KEYS: tuple[tuple[str, str], ...] = (
    ("ctrl+n", "next_fix"),
    ("ctrl+o", "open"),
    ("ctrl+s", "save"),
    ("ctrl+y", "copy"),
    ("ctrl+l", "toggle_lang"),
    ("ctrl+r", "restart"),
    ("f1", "help"),
    ("ctrl+q", "quit"),
)
TABS: tuple[str, ...] = ("log", "evidence", "patch", "docs", "estimate")
NARROW_BELOW = 78  # columns: the chat (min 36) and the tabs (min 40) side by side, + border


def key_bindings() -> list[BindingType]:
    """Each key once per language, labelled in it; ``check_action`` keeps the current
    language's (Textual's dynamic actions: there is no public way to relabel a binding).

    The App does not inherit Textual's default bindings, so that the footer lists ours
    in this order; the one default it needs back (ctrl+c explains how to quit) is last.
    """
    shown: list[BindingType] = []
    for lang in LANGS:
        for key, action in KEYS:
            label = t(f"key.{action}", lang)
            shown.append(Binding(key, f"key('{action}', '{lang}')", label, priority=True))
            if action == "next_fix":  # the tab keys next: at 80 columns the footer ends early
                shown.append(tab_key(lang))
    return [*shown, *tab_bindings(), Binding("ctrl+c", "help_quit", show=False, system=True)]


def tab_key(lang: str) -> Binding:
    """f2, shown as "f2-f6 Tabs" (f3..f6 work the same, unlisted)."""
    return Binding(
        "f2", f"tab_key('{lang}')", t("key.tabs", lang), key_display=f"f2-f{len(TABS) + 1}",
        priority=True,
    )  # fmt: skip


def tab_bindings() -> list[BindingType]:
    """Tabs: F2..F6 and ctrl+pageup/ctrl+pagedown everywhere (keys tmux and every
    terminal pass on; the footer shows "f2-f6" once per language), ctrl+1..5 and
    alt+1..5 where the terminal sends them, 1..5 when not typing."""
    keys: list[BindingType] = []
    for number, name in enumerate(TABS, start=1):
        keys.append(
            Binding(f"ctrl+{number},alt+{number}", f"show_tab('{name}')", show=False, priority=True)
        )
        keys.append(Binding(str(number), f"show_tab('{name}')", show=False))
        if number > 1:
            keys.append(Binding(f"f{number + 1}", f"show_tab('{name}')", show=False, priority=True))
    keys += [
        Binding("ctrl+pagedown", "cycle_tab(1)", show=False, priority=True),
        Binding("ctrl+pageup", "cycle_tab(-1)", show=False, priority=True),
    ]
    return keys


class DoctorApp(App[int], inherit_bindings=False):
    """Paste a crash log, answer the questions, leave with the patch."""

    CSS_PATH = "app.tcss"
    TITLE = "areal-doctor"
    ENABLE_COMMAND_PALETTE = False  # every action has its key in the footer
    BINDINGS: ClassVar[list[BindingType]] = key_bindings()

    lang: reactive[str] = reactive("en")
    diagnosis: reactive[Diagnosis | None] = reactive(None, always_update=True)
    question: reactive[Question | None] = reactive(None, always_update=True)
    docs: reactive[list[DocItem]] = reactive(list, always_update=True)
    estimate: reactive[EstimateView | None] = reactive(None)

    def __init__(
        self, path: str | None, config_path: str | None, lang: str, redact: bool = False
    ) -> None:
        super().__init__()
        self.start_path = path
        self.start_config = config_path
        self.session = Session(lang=lang, redact=redact)
        self.set_reactive(DoctorApp.lang, lang)
        self.talk = Conversation(self)
        self.paste_safe = True  # run_tui sets False where the paste-safe parser is not in

    def compose(self) -> ComposeResult:
        yield Header(icon="✚")
        with Horizontal(id="main"):
            with Vertical(id="chat-column"):
                yield ChatLog(id="chat")
                yield ProgressBar(id="progress", show_eta=False)
                yield QuestionPrompt(self.lang, id="question").data_bind(
                    DoctorApp.question, DoctorApp.lang
                )
                yield ChatInput(id="chat-input")
            with TabbedContent(id="tabs"):
                with TabPane(t("tab.log", self.lang), id="tab-log"):
                    yield PastePanel(self.lang, id="paste").data_bind(DoctorApp.lang)
                with TabPane(t("tab.evidence", self.lang), id="tab-evidence"):
                    yield EvidencePanel(self.lang, id="evidence").data_bind(
                        DoctorApp.diagnosis, DoctorApp.lang
                    )
                with TabPane(t("tab.patch", self.lang), id="tab-patch"):
                    yield PatchPanel(self.lang, id="patch").data_bind(
                        DoctorApp.diagnosis, DoctorApp.lang
                    )
                with TabPane(t("tab.docs", self.lang), id="tab-docs"):
                    yield DocsPanel(self.lang, id="docs").data_bind(DoctorApp.docs, DoctorApp.lang)
                with TabPane(t("tab.estimate", self.lang), id="tab-estimate"):
                    yield EstimatePanel(self.lang, id="estimate").data_bind(
                        DoctorApp.estimate, DoctorApp.lang
                    )
        yield Footer(compact=True)

    def on_resize(self, event: events.Resize) -> None:
        """Too narrow for chat and tabs side by side: one above the other, so both stay
        on screen (side by side they need NARROW_BELOW columns)."""
        self.screen.set_class(event.size.width < NARROW_BELOW, "-narrow")

    def on_mount(self) -> None:
        self.screen.set_class(self.size.width < NARROW_BELOW, "-narrow")
        self.query_one("#progress").display = False
        self.watch_lang(self.lang)
        self.talk.welcome()
        if not self.paste_safe:
            self.talk.note("chat.paste_unsafe")
        if self.start_path:
            self.start(self.session.diagnose_path(self.start_path, self.start_config))
        elif self.start_config:
            self.start(self.session.load_config(self.start_config))
        self.focus_chat()

    async def action_key(self, action: str, lang: str) -> None:
        """A key of ``KEYS`` (its binding for ``lang``): run its action."""
        await self.run_action(action)

    def watch_lang(self, lang: str) -> None:
        """Relabel what is not bound to ``lang``: keys, tabs, placeholder, subtitle."""
        self.refresh_bindings()
        self.sub_title = self.subtitle()
        tabs = self.query_one(TabbedContent)
        for name in TABS:
            tabs.get_tab(f"tab-{name}").label = t(f"tab.{name}", lang)
        self.query_one(ChatInput).placeholder = t("chat.placeholder", lang)

    def subtitle(self) -> str:
        config_path = getattr(self.session.config, "path", None)
        text = t("app.subtitle", self.lang)
        return f"{text} · {Path(config_path).name}" if config_path else text

    def publish(self) -> None:
        """Push the session's state into the bound reactives (and so into the widgets)."""
        self.diagnosis = self.session.diagnosis
        self.question = self.session.question
        self.docs = list(self.session.docs)
        self.estimate = self.session.estimate
        self.sub_title = self.subtitle()

    def focus_chat(self) -> None:
        self.query_one(ChatInput).focus()

    def fill_log_tab(self) -> None:
        """A log kept for the Log tab is laid out after the answer, if that tab stays up."""
        if self.query_one(TabbedContent).active == "tab-log":
            self.call_after_refresh(self.query_one(PastePanel).flush)

    def show_tab(self, name: str) -> None:
        self.query_one(TabbedContent).active = f"tab-{name}"

    def action_show_tab(self, name: str) -> None:
        self.show_tab(name)

    def action_tab_key(self, lang: str) -> None:
        """f2, the first of the tab keys (the footer's "f2-f6 Tabs")."""
        self.show_tab(TABS[0])

    def action_cycle_tab(self, step: int) -> None:
        """The next (1) or previous (-1) tab, wrapping around."""
        active = self.query_one(TabbedContent).active.removeprefix("tab-")
        index = TABS.index(active) if active in TABS else 0
        self.show_tab(TABS[(index + step) % len(TABS)])

    # -- running the pipeline off the UI thread ------------------------------------

    def start(self, job: Job) -> None:
        """Run ``job`` in the worker; a newer job replaces one still running."""
        bar = self.query_one("#progress", ProgressBar)
        bar.update(total=None, progress=0)
        bar.display = True
        self.run_job(job)

    @work(thread=True, exclusive=True, group="pipeline")
    def run_job(self, job: Job) -> None:
        worker = get_current_worker()

        def progress(done: int, total: int) -> None:
            if not worker.is_cancelled:
                self.post_message(ReadProgress(done, total))

        message: JobFinished | JobFailed
        try:
            message = JobFinished(job, job.run(progress))
        except UserError as exc:
            message = JobFailed(job, str(exc))
        except Exception as exc:  # noqa: BLE001 - a stage's bug must not end the session
            message = JobFailed(job, t("error.internal", self.lang, error=repr(exc)))
        if not worker.is_cancelled:
            self.post_message(message)

    def on_read_progress(self, message: ReadProgress) -> None:
        self.query_one("#progress", ProgressBar).update(
            total=message.total or None, progress=message.done
        )

    def on_job_finished(self, message: JobFinished) -> None:
        self.query_one("#progress").display = False
        adopted = self.session.accept(message.outcome)
        self.publish()
        if adopted and message.outcome.log_text is not None:  # a log opened from a file
            self.query_one(PastePanel).show_log(message.outcome.log_text)
        elif adopted and message.outcome.log_not_shown is not None:
            self.query_one(PastePanel).show_absence(*message.outcome.log_not_shown)
        self.talk.after(message.outcome, adopted)
        self.fill_log_tab()

    def on_job_failed(self, message: JobFailed) -> None:
        self.query_one("#progress").display = False
        self.talk.error(message.error)
        self.publish()
        self.fill_log_tab()

    # -- what the user does -------------------------------------------------------

    def on_log_submitted(self, message: LogSubmitted) -> None:
        self.talk.log_pasted(message.text, shown=message.shown)
        self.question = None
        self.start(self.session.diagnose_text(message.text, message.name))

    def on_chat_submitted(self, message: ChatSubmitted) -> None:
        answer = self.talk.typed_answer(message.text)
        if answer is not None:
            self.post_message(answer)
            return
        self.talk.user(message.text)
        self.start(self.session.ask(message.text))

    def on_answer_chosen(self, message: AnswerChosen) -> None:
        self.talk.user(message.label)
        self.question = None  # hidden until the tree says what comes next
        self.start(self.session.answer(message.question_id, message.value, message.source))

    def on_paste(self, event: events.Paste) -> None:
        """A multi-line paste outside the chat line and the paste area is a log too."""
        if is_multiline(event.text):
            self.post_message(LogSubmitted(pasted(event.text)))

    # -- keys ----------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """While a dialog is open, only quitting stays bound at the app level; a key's
        binding in another language than the current one is hidden and off."""
        if action == "key":  # key(ACTION, LANG): see key_bindings
            if parameters[1] != self.lang:
                return False
            action = str(parameters[0])
        if action == "tab_key" and parameters[0] != self.lang:  # f2, labelled per language
            return False
        return action == "quit" or not isinstance(self.screen, ModalScreen)

    def action_open(self) -> None:
        prompt = PathPrompt(t("dialog.open_title", self.lang), "", self.lang)
        self.push_screen(prompt, self._open_path)

    def _open_path(self, path: str | None) -> None:
        if not path:
            return
        path = str(Path(path).expanduser())
        self.talk.user(path)
        if is_config_path(path):
            self.start(self.session.load_config(path))
        else:
            self.question = None
            self.start(self.session.diagnose_path(path))

    def patch_blocked(self, nothing_key: str) -> bool:
        """Say why there is nothing final to save or copy yet (a question still open)."""
        if self.session.question is not None:
            self.talk.note("chat.answer_first")
            return True
        if not self.session.patch_ready:
            self.talk.note(nothing_key)
            return True
        return False

    def action_save(self) -> None:
        if self.patch_blocked("chat.nothing_to_save"):
            return
        has_config = self.session.config is not None
        title = t("dialog.save_title" if has_config else "dialog.save_fragment_title", self.lang)
        prompt = PathPrompt(title, self.session.suggested_save_path(), self.lang)
        self.push_screen(prompt, self._save_to)

    def _save_to(self, path: str | None) -> None:
        if not path:
            return
        target = Path(path).expanduser()
        if target.exists():
            self.talk.error(t("chat.save_exists", self.lang, path=str(target)))
            return
        try:
            self.session.save_patch(str(target))
        except (UserError, OSError) as exc:
            self.talk.error(str(exc))
            return
        self.talk.note("chat.saved", path=str(target))

    def action_copy(self) -> None:
        """Copy, and say "copied" only when a clipboard program confirmed it."""
        from assistant.tui.clipboard import copy_with_tool

        text = self.session.clipboard_text()
        if self.patch_blocked("chat.nothing_to_copy") or text is None:
            return
        self.copy_to_clipboard(text)  # OSC 52: works where the terminal passes it on
        if copy_with_tool(text):
            self.notify(t("chat.copied", self.lang))
        else:
            self.talk.note("chat.copy_sent")

    def action_next_fix(self) -> None:
        """Move on to the next fix; its questions are asked then."""
        job = self.session.next_fix()
        if job is None:
            self.talk.note(
                "chat.next_fix_none" if self.session.diagnosis else "chat.nothing_to_copy"
            )
            return
        self.question = None
        self.start(job)

    def action_toggle_lang(self) -> None:
        self.lang = toggled(self.lang)
        job = self.session.switch_lang(self.lang)
        self.talk.note("chat.lang_switched")
        if job is not None:
            self.start(job)

    def action_restart(self) -> None:
        self.workers.cancel_group(self, "pipeline")
        self.query_one("#progress").display = False
        self.session.reset()
        self.publish()
        self.query_one(PastePanel).clear()
        self.query_one(ChatLog).clear()
        self.query_one(ChatInput).clear_line()
        self.talk.welcome()
        self.show_tab("log")
        self.focus_chat()

    def action_help(self) -> None:
        self.push_screen(HelpScreen(self.lang))
