"""What the assistant says, and which tab it shows, after each step of a session.

The order of a conversation is the pipeline's: the Session's open question is
asked next; when none is open, the fix and the patch are presented. This class
only turns those states into chat messages.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, TypeVar

from rich.text import Text
from textual.widget import Widget

import assistant.tui.present as present
from assistant.models import Question
from assistant.tree.questions import is_skip
from assistant.tui.answers import match_answer, skip_answer
from assistant.tui.i18n import t
from assistant.tui.literal import literal
from assistant.tui.messages import AnswerChosen
from assistant.tui.session import DocItem, Outcome, Session
from assistant.tui.widgets.chat import Blocks, ChatLog, ChatMessage
from assistant.tui.widgets.docs import DocsPanel, section_title
from assistant.tui.widgets.paste import PastePanel

W = TypeVar("W", bound=Widget)

CHAT_DOCS = 3  # guide sections listed in the chat (the Docs tab lists them all)


class ChatHost(Protocol):
    """What the conversation needs of the App (which owns it): state to read, widgets
    to write to, tabs to show. A protocol, so this module does not import the App."""

    @property
    def lang(self) -> str: ...

    @property
    def session(self) -> Session: ...

    @property
    def question(self) -> Question | None: ...

    def query_one(self, selector: type[W]) -> W: ...

    def focus_chat(self) -> None: ...

    def show_tab(self, name: str) -> None: ...


class Conversation:
    def __init__(self, app: ChatHost) -> None:
        self.app = app
        self.fix_message: ChatMessage | None = None  # fix #1, updated in place per answer

    @property
    def lang(self) -> str:
        return self.app.lang

    def say(self, content: Blocks, role: str = "assistant") -> None:
        self.app.query_one(ChatLog).say(content, role)

    def note(self, key: str, **values: object) -> None:
        self.say(Text(t(key, self.lang, **values)))

    def user(self, text: str) -> None:
        self.say(literal(text), "user")

    def error(self, text: str) -> None:
        self.say(literal("⚠ " + text), "error")

    def welcome(self) -> None:
        self.note("chat.welcome")
        config_path = getattr(self.app.session.config, "path", None)
        if config_path is not None:
            self.note("chat.config_kept", path=str(config_path))

    def log_pasted(self, text: str, *, shown: bool) -> None:
        lines = len(text.splitlines())
        self.say(Text(t("chat.user_pasted", self.lang, lines=lines), style="italic"), "user")
        if not shown:
            self.app.query_one(PastePanel).show_log(text)

    def typed_answer(self, text: str) -> AnswerChosen | None:
        """The open question's answer, when the chat line is one ("skip" takes the default)."""
        question = self.app.session.question
        if question is None or self.app.question is None:
            return None
        if is_skip(text):
            return skip_answer(question, self.lang)
        match = match_answer(question, text, self.lang)
        if match is None:
            return None
        return AnswerChosen(question.id, match[0], match[1])

    def after(self, outcome: Outcome, adopted: bool) -> None:
        """Speak after a job: ``adopted`` says whether its diagnosis became the session's."""
        if outcome.reason == "config":
            self.note("chat.config_loaded", path=str(getattr(outcome.config, "path", "")))
            self.estimate_done()
        if outcome.reason == "ask":
            self.docs_found()
        if not adopted:
            return
        if outcome.reason in ("log", "ask"):
            self.fix_message = None
            self.say(present.summary(outcome.diagnosis, self.lang))  # type: ignore[arg-type]
            if outcome.reason == "log":
                self.app.show_tab("evidence")
        if outcome.reason == "next":  # the fix moved on to: shown, then its questions
            self.fix_message = None
            self.show_fix(always=True)
            self.ask_open_question()
            return
        if outcome.reason == "lang":
            self.show_fix()
            self.ask_open_question()
        else:
            self.next_step()

    def estimate_done(self) -> None:
        """One line on the loaded config's estimate; the Estimate tab has the rest."""
        view = self.app.session.estimate
        if view is None:
            return
        if view.result is None:
            self.say(literal(t("chat.estimate_none", self.lang, error=view.error or "")))
            return
        short = [name for name, e in view.result["engines"].items() if not e["fits"]]
        verdict = (
            t("chat.estimate_not_fit", self.lang, engines=", ".join(short))
            if short
            else t("estimate.all_fit", self.lang)
        )
        self.note("chat.estimate_ready", verdict=verdict)

    def show_fix(self, *, always: bool = False) -> None:
        """Answer first: the fix in focus, provisional while a question can change it.

        Shown before the first question and updated in place after each answer.
        """
        diagnosis = self.app.session.diagnosis
        if diagnosis is None or not diagnosis.report.oom:
            return
        if self.fix_message is None and self.app.session.question is None and not always:
            return  # nothing to ask: the final answer says it all
        text = present.fix_text(
            diagnosis, self.lang, has_config=self.app.session.config is not None
        )
        if self.fix_message is not None and self.fix_message.is_attached:
            self.fix_message.update(text)
        else:
            self.fix_message = self.app.query_one(ChatLog).say(text)

    def ask_open_question(self) -> bool:
        question = self.app.session.question
        if question is not None:
            self.say(present.question_text(question, self.lang))
        return question is not None

    def next_step(self) -> None:
        """Show the fix, ask the next question that can change it, or present the patch."""
        self.show_fix()
        if self.ask_open_question():
            return
        diagnosis = self.app.session.diagnosis
        if diagnosis is None:
            return
        has_config = self.app.session.config is not None
        self.say(present.final_text(diagnosis, self.lang, has_config=has_config))
        self.app.focus_chat()
        if diagnosis.decision.patch:
            self.app.show_tab("patch")

    def doc_entry(self, doc: DocItem) -> tuple[str, str, str, Sequence[str], bool]:
        """What the chat shows of a section: id, title, snippet in this language, terms, weak."""
        snippet = doc.snippet if doc.lang == self.lang else ""
        return doc.section, section_title(doc.section, self.lang), snippet, doc.terms, doc.weak

    def docs_found(self) -> None:
        docs = self.app.session.docs
        if not docs:
            self.note("chat.docs_none")
            return
        listed = [doc for doc in docs if not doc.see_also][:CHAT_DOCS]
        offered = [doc for doc in docs if doc.see_also]
        self.say(
            present.docs_text(
                [self.doc_entry(doc) for doc in listed],
                self.lang,
                see_also=[self.doc_entry(doc) for doc in offered],
            )
        )
        self.app.query_one(DocsPanel).opened = docs[0].section
        self.app.show_tab("docs")
