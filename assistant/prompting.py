"""Asking a follow-up question on the terminal (stderr), with numbered choices.

Every question can be skipped: Enter on an empty line, "skip", "unknown",
不知道, Escape or Ctrl-D take the default, and the prompt says so.
"""

from __future__ import annotations

import sys

from assistant.errors import UserError
from assistant.i18n import message
from assistant.models import Question


def ask(question: Question, lang: str) -> str | None:
    """The user's answer, or None when the question was skipped (take its default)."""
    from assistant.tree.questions import is_skip

    choices = question.choices or (["yes", "no"] if question.type == "yesno" else [])
    print(f"\n? {question.text}", file=sys.stderr)
    for number, choice in enumerate(choices, start=1):
        print(f"  {number}) {choice}", file=sys.stderr)
    hint = message("prompt_default", lang, default=shown_default(question, lang))
    while True:
        sys.stderr.write(f"> {hint}")
        sys.stderr.flush()
        line = sys.stdin.readline()
        if not line:  # Ctrl-D or stdin closed: nothing more will come
            sys.stderr.write("\n")
            skipped(question, lang)
            return None
        reply = line.strip()
        if is_skip(reply):
            skipped(question, lang)
            return None
        if choices and reply.isdigit() and 1 <= int(reply) <= len(choices):
            return choices[int(reply) - 1]
        if _valid(question.id, reply, lang):
            return reply


def offer(text: str, lang: str) -> bool:
    """A yes/no offer whose default is no: Enter, skip, Escape or Ctrl-D decline it."""
    from assistant.tree.questions import is_yes

    sys.stderr.write(f"\n? {text} " + message("offer_hint", lang))
    sys.stderr.flush()
    line = sys.stdin.readline()
    if not line:
        sys.stderr.write("\n")
    return bool(line) and is_yes(line)


def shown_default(question: Question, lang: str) -> str:
    default = question.default
    return message("unknown", lang) if default in (None, "") else str(default)


def skipped(question: Question, lang: str) -> None:
    print(
        "  " + message("took_default", lang, default=shown_default(question, lang)), file=sys.stderr
    )


def _valid(question_id: str, reply: str, lang: str) -> bool:
    """A bad answer is explained and asked again, not a reason to exit."""
    from assistant.tree import parse_answer

    try:
        parse_answer(question_id, reply)
    except UserError as exc:
        print(f"  {exc} " + message("skip_hint", lang), file=sys.stderr)
        return False
    return True
