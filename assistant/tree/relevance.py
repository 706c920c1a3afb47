"""Which open questions can change the fix the user is shown.

A question is worth asking only when some answer to it changes the fix shown
(which fix comes first, its config patch or its environment), or a fix before
it. That is decided by trying the answers: each choice of a yes/no or choice
question, and for a number the probe values of ``questions.yaml``. The tree is
cheap to walk again (a few milliseconds), and trying answers needs no second
description of which fix reads which question, so a new fix or question in
``tree.yaml`` is covered without code.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from assistant.models import Answers, Decision, Question
from assistant.tree.questions import alternatives

Rerun = Callable[[Answers], Decision]


def shown(decision: Decision, focus: int) -> tuple[Any, ...]:
    """What the user sees of fixes #1 .. #focus+1: ids, patches and environments."""
    return tuple(
        (rec.fix, sorted((k, repr(v)) for k, v in rec.patch.items()), sorted(rec.env.items()))
        for rec in decision.recommendations[: focus + 1]
    )


def mark_relevance(decision: Decision, answers: Answers, rerun: Rerun) -> list[Question]:
    """The questions, each the user, log or config did not answer with ``matters`` set."""
    baseline = shown(decision, decision.focus)
    marked: list[Question] = []
    for question in decision.questions:
        if question.source in (None, "default"):
            matters = any(
                shown(rerun({**answers, question.id: (value, "flag")}), decision.focus) != baseline
                for value in alternatives(question.id)
            )
            question = replace(question, matters=matters)
        marked.append(question)
    return marked
