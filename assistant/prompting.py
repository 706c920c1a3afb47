"""Asking a follow-up question on the terminal (stderr), with numbered choices."""

from __future__ import annotations

import sys

from assistant.errors import UserError
from assistant.i18n import message
from assistant.models import Question


def ask(question: Question, lang: str) -> str:
    """Prompt until the user gives a usable answer; Enter takes the default."""
    choices = question.choices or (["yes", "no"] if question.type == "yesno" else [])
    print(f"\n? {question.text}", file=sys.stderr)
    for number, choice in enumerate(choices, start=1):
        print(f"  {number}) {choice}", file=sys.stderr)
    default = "" if question.default is None else str(question.default)
    hint = message("prompt_default", lang, default=default) if default else ""
    while True:
        sys.stderr.write(f"> {hint}")
        sys.stderr.flush()
        line = sys.stdin.readline()
        if not line:  # stdin closed: nothing more will come, take the default
            return default
        reply = line.strip()
        if not reply and default:
            return default
        if choices and reply.isdigit() and 1 <= int(reply) <= len(choices):
            return choices[int(reply) - 1]
        if reply and _valid(question.id, reply):
            return reply


def _valid(question_id: str, reply: str) -> bool:
    """A bad answer is explained and asked again, not a reason to exit."""
    from assistant.tree import parse_answer

    try:
        parse_answer(question_id, reply)
    except UserError as exc:
        print(f"  {exc}", file=sys.stderr)
        return False
    return True
