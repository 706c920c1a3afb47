"""Answers to the tree's questions: choice labels per language, typed replies, defaults.

Pure functions over a ``Question``; the tree validates the value itself.
"""

from __future__ import annotations

from assistant.models import Question
from assistant.tui.i18n import LANGS, t, words
from assistant.tui.messages import AnswerChosen


def choices_of(question: Question, lang: str) -> list[tuple[str, str]]:
    """(value, label) pairs; yes/no values are labelled in ``lang``."""
    values = [str(choice) for choice in question.choices]
    if question.type == "yesno" and not values:
        values = ["yes", "no"]
    yes_no = {"yes": t("answer.yes", lang), "no": t("answer.no", lang)}
    if question.type != "yesno":
        return [(value, value) for value in values]
    return [(value, yes_no.get(value, value)) for value in values]


def is_number(text: str) -> bool:
    try:
        float(text.replace(",", "").replace("_", ""))
    except ValueError:
        return False
    return True


def default_answer(question: Question, lang: str) -> tuple[str, str]:
    """(value, label) of the question's default (a yes/no default may be a bool)."""
    default = question.default
    value = ("yes" if default else "no") if isinstance(default, bool) else str(default)
    for choice, shown in choices_of(question, lang):
        if choice == value:
            return choice, shown
    return value, value


def skip_answer(question: Question, lang: str) -> AnswerChosen:
    """Skipping (Escape, "skip", 不知道, an empty number): the default, labelled as such."""
    value, shown = default_answer(question, lang)
    if question.default in (None, ""):
        value, shown = "", t("answer.unknown", lang)
    return AnswerChosen(question.id, value, t("answer.skipped", lang, default=shown), "default")


def match_answer(question: Question, text: str, lang: str) -> tuple[str, str] | None:
    """(value, label) when ``text`` typed in the chat answers ``question``, else None.

    A number question takes any number; a choice takes its 1-based index, its
    value or its label; yes/no also take the usual words in either language.
    """
    text = text.strip()
    if question.type == "number":
        return (text, text) if is_number(text) else None
    options = choices_of(question, lang)
    if text.isdigit() and 1 <= int(text) <= len(options):
        return options[int(text) - 1]
    folded = text.casefold()
    for value, shown in options:
        if folded in (value.casefold(), shown.casefold()):
            return value, shown
    if question.type == "yesno":
        for value, shown in options:
            accepted = {
                word.casefold() for code in LANGS for word in words(f"answer.{value}_words", code)
            }
            if folded in accepted:
                return value, shown
    return None
