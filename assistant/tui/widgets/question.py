"""The open follow-up question: its choices as a list, or a box for a number.

The widget shows the question the Session says is open; it never decides which
question comes next. Choosing posts ``AnswerChosen``. The highlight starts on
the default, so Enter takes it; a digit picks that choice; Escape (or Enter on
an empty number box, or "skip" typed in it) skips the question: it takes its
default, and the chat says so.
"""

from __future__ import annotations

from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.reactive import reactive
from textual.widgets import Button, Input, OptionList, Static
from textual.widgets.option_list import Option

from assistant.models import Question
from assistant.tree.questions import is_skip
from assistant.tui.answers import choices_of, default_answer, skip_answer
from assistant.tui.i18n import t
from assistant.tui.literal import literal
from assistant.tui.messages import AnswerChosen

DEFAULT_OPTION = "use-default"


class ChoiceList(OptionList):
    """Choices; a digit key picks the choice with that number."""

    def on_key(self, event: events.Key) -> None:
        if event.character and event.character.isdigit():
            number = int(event.character)
            if 1 <= number <= self.option_count:
                event.stop()
                event.prevent_default()
                self.highlighted = number - 1
                self.action_select()


class QuestionPrompt(Vertical):
    """Shows ``question`` (None hides it) in ``lang``."""

    BINDINGS = [Binding("escape", "skip", show=False)]

    question: reactive[Question | None] = reactive(
        None, init=False, always_update=True, recompose=True, toggle_class="-open"
    )
    lang: reactive[str] = reactive("en", init=False, recompose=True)

    def __init__(self, lang: str, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.set_reactive(QuestionPrompt.lang, lang)

    def compose(self) -> ComposeResult:
        question = self.question
        if question is None:
            return
        if question.type == "number":
            yield Input(
                placeholder=t("question.number_placeholder", self.lang),
                id="number-answer",
            )
        else:
            choices = choices_of(question, self.lang)
            options = [
                Option(Text(f"{n}. ") + literal(shown), id=f"choice-{n}")
                for n, (_, shown) in enumerate(choices, start=1)
            ]
            listing = ChoiceList(*options, id="choice-answer")
            value, _ = default_answer(question, self.lang)
            values = [choice for choice, _ in choices]
            if value in values:
                listing.highlighted = values.index(value)
            yield listing
        with Horizontal(id="question-buttons"):
            yield Button(
                Text(t("question.use_default", self.lang, default=self._default_shown())),
                id=DEFAULT_OPTION,
                compact=True,
            )
            yield Static(
                Text(
                    t("question.skip_hint", self.lang, default=self._default_shown()), style="dim"
                ),
                id="question-hint",
            )

    def _default_shown(self) -> str:
        question = self.question
        if question is None or question.default in (None, ""):
            return t("answer.unknown", self.lang)
        return default_answer(question, self.lang)[1]

    async def recompose(self) -> None:
        await super().recompose()
        self.focus_answer()

    def focus_answer(self) -> None:
        for widget in self.query("#number-answer, #choice-answer"):
            widget.focus()
            return

    def action_skip(self) -> None:
        if self.question is not None:
            self.post_message(skip_answer(self.question, self.lang))

    @on(OptionList.OptionSelected, "#choice-answer")
    def _choice_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if self.question is None:
            return
        value, shown = choices_of(self.question, self.lang)[event.option_index]
        self.post_message(AnswerChosen(self.question.id, value, shown))

    @on(Input.Submitted, "#number-answer")
    def _number_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        text = event.value.strip()
        if self.question is None:
            return
        if is_skip(text):
            self.post_message(skip_answer(self.question, self.lang))
        else:
            self.post_message(AnswerChosen(self.question.id, text, text))

    @on(Button.Pressed, f"#{DEFAULT_OPTION}")
    def _default_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.action_skip()
