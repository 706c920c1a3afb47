"""The open follow-up question: its choices as a list, or a box for a number.

The widget shows the question the Session says is open; it never decides which
question comes next. Choosing posts ``AnswerChosen``.
"""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.reactive import reactive
from textual.widgets import Button, Input, OptionList
from textual.widgets.option_list import Option

from assistant.models import Question
from assistant.tui.answers import choices_of, default_answer
from assistant.tui.i18n import t
from assistant.tui.literal import literal
from assistant.tui.messages import AnswerChosen

DEFAULT_OPTION = "use-default"


class QuestionPrompt(Vertical):
    """Shows ``question`` (None hides it) in ``lang``."""

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
                type="number",
                id="number-answer",
            )
        else:
            options = [
                Option(Text(f"{n}. ") + literal(shown), id=f"choice-{n}")
                for n, (_, shown) in enumerate(choices_of(question, self.lang), start=1)
            ]
            yield OptionList(*options, id="choice-answer")
        if question.default not in (None, ""):
            with Horizontal(id="question-buttons"):
                _, shown = default_answer(question, self.lang)
                yield Button(
                    Text(t("question.use_default", self.lang, default=shown)),
                    id=DEFAULT_OPTION,
                    compact=True,
                )

    async def recompose(self) -> None:
        await super().recompose()
        self.focus_answer()

    def focus_answer(self) -> None:
        for widget in self.query("#number-answer, #choice-answer"):
            widget.focus()
            return

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
        if self.question is not None and text:
            self.post_message(AnswerChosen(self.question.id, text, text))

    @on(Button.Pressed, f"#{DEFAULT_OPTION}")
    def _default_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        question = self.question
        if question is not None:
            value, shown = default_answer(question, self.lang)
            self.post_message(AnswerChosen(question.id, value, shown, source="default"))
