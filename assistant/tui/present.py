"""What the assistant says in the chat, built from a finished Diagnosis.

Only wording lives here: every figure, phase, fix and answer comes from the
pipeline. Every string from a log goes through ``literal`` so it shows as text.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from rich.text import Text

from assistant.models import Diagnosis, Evidence, Question
from assistant.render.text import format_bytes
from assistant.tui.answers import default_answer
from assistant.tui.i18n import t
from assistant.tui.literal import literal
from assistant.tui.widgets.code import unwrapped

LINE_LIMIT = 300  # characters of a log line quoted in the chat
SHOWN_FIGURES = (
    "tried_to_allocate_bytes",
    "total_capacity_bytes",
    "free_bytes",
    "reserved_unallocated_bytes",
)


def label(group: str, value: str, lang: str) -> str:
    """A phase, kind or source id in words (the id itself when unknown)."""
    key = f"{group}.{value}"
    text = t(key, lang)
    return value if text == key else text


def where(evidence: Evidence, lang: str) -> str:
    """``file:line`` plus the rank, when the log gave one."""
    place = f"{evidence.file}:{evidence.line}"
    if evidence.rank is not None:
        place += " · " + t("evidence.rank", lang, rank=evidence.rank)
    return place


def quoted(text: str, style: str = "") -> Text:
    short = text if len(text) <= LINE_LIMIT else text[:LINE_LIMIT] + " …"
    return literal(short, style)


def lines(*parts: Text | str) -> Text:
    """Join parts, one per line (plain strings are taken literally too)."""
    out = Text(end="")
    for number, part in enumerate(parts):
        if number:
            out.append("\n")
        out.append_text(part if isinstance(part, Text) else literal(part))
    return out


def blocks(*parts: Text | str) -> list[Text]:
    """Like ``lines``, but runs of code parts (``unwrapped``: keys, overrides) stay
    blocks of their own, shown never wrapped (a chat message's copy-safe block)."""
    out: list[Text] = []
    run: list[Text | str] = []
    code = False
    for part in [*parts, None]:
        is_code = isinstance(part, Text) and bool(part.no_wrap)
        if part is None or (run and is_code != code):
            if run:
                joined = lines(*run)
                out.append(unwrapped(joined) if code else joined)
            run = []
        if part is not None:
            run.append(part)
            code = is_code
    return out


def summary(diagnosis: Diagnosis, lang: str) -> Text:
    """The first answer after a log or a description: what failed, where, the figures."""
    report = diagnosis.report
    if not report.oom:
        parts: list[Text | str] = [
            Text(t("chat.no_failure", lang, lines=report.lines_read), style="bold green")
        ]
        if report.first_error is not None:
            parts += [t("chat.first_error", lang, where=where(report.first_error, lang))]
            parts.append(quoted(report.first_error.text, "yellow"))
        return lines(*parts)
    names = {
        "phase": label("phase", report.phase, lang),
        "kind": label("kind", report.kind, lang),
    }
    if report.input_kind == "description":
        return Text(t("chat.from_description", lang, **names), style="bold")
    head = t("chat.found", lang, confidence=report.confidence, **names)
    parts = [Text(head, style="bold red")]
    if report.evidence:
        root = report.evidence[0]
        parts += [t("chat.where", lang, where=where(root, lang)), quoted(root.text, "red")]
    parts += [
        _figure(key, report.metrics[key], lang) for key in SHOWN_FIGURES if key in report.metrics
    ]
    parts += [
        "· " + (inf.text.get(lang) or inf.text.get("en", inf.id)) for inf in report.inferences
    ]
    if report.consequences:
        count = sum(cons.count for cons in report.consequences)
        parts.append(Text(t("chat.cascade", lang, count=count), style="dim"))
    if diagnosis.decision.warnings:
        count = len(diagnosis.decision.warnings)
        parts.append(Text(t("chat.config_warnings", lang, count=count), style="yellow"))
    return lines(*parts)


def _figure(key: str, value: float, lang: str) -> str:
    return f"· {t('metric.' + key, lang)}: {format_bytes(value)}"


def question_text(question: Question, lang: str) -> Text:
    """An open question, with its default when it has one."""
    text = Text("? ", style="bold cyan", end="")
    text.append_text(literal(question.text))
    if question.default not in (None, ""):
        _, shown = default_answer(question, lang)
        text.append("\n")
        text.append(t("question.default_hint", lang, default=shown), style="dim")
    return text


def fix_text(diagnosis: Diagnosis, lang: str, *, has_config: bool) -> list[Text]:
    """Answer first: the fix in focus and its change, marked provisional while it may move."""
    decision = diagnosis.decision
    if not decision.recommendations:
        return [Text(t("chat.no_fix", lang), style="yellow")]
    number = decision.focus
    rec = decision.recommendations[number]
    parts: list[Text | str] = [
        Text(t("chat.fix_n", lang, number=number + 1, title=rec.title), style="bold")
    ]
    parts += [code_line(f"{key}={_scalar(value)}") for key, value in rec.patch.items()]
    parts += [code_line(f"{key}={value}") for key, value in rec.env.items()]
    parts += [Text(f"  {check}", style="yellow") for check in rec.checks]
    if not (rec.patch or rec.env or rec.checks):
        key = "chat.fix_no_value" if has_config else "chat.patch_needs_config"
        parts.append(Text(t(key, lang), style="dim"))
    if decision.provisional:
        assumed = ", ".join(f"{q.id} = {_shown_answer(q, lang)}" for q in decision.provisional)
        parts.append(Text(t("chat.provisional", lang, assumed=assumed), style="italic yellow"))
    else:
        parts.append(Text(t("chat.confirmed", lang), style="italic green"))
    return blocks(*parts)


def code_line(text: str) -> Text:
    """A key or override line of a message: in a copy-safe block, never wrapped."""
    return unwrapped(Text(f"  {text}", style="green", end=""))


def _shown_answer(question: Question, lang: str) -> str:
    answer = question.answer if question.source else question.default
    if answer in (None, ""):
        return t("answer.unknown", lang)
    if question.type == "yesno" and str(answer).lower() in ("yes", "no", "true", "false"):
        return t("answer.yes" if str(answer).lower() in ("yes", "true") else "answer.no", lang)
    return str(answer)


def final_text(diagnosis: Diagnosis, lang: str, *, has_config: bool) -> list[Text]:
    """Once no question is open: the fix in view, the others, where the patch is."""
    decision = diagnosis.decision
    if not diagnosis.report.oom:
        return [Text(t("chat.nothing_to_fix", lang), style="dim")]
    if not decision.recommendations:
        return [Text(t("chat.no_fix", lang), style="yellow")]
    recs = decision.recommendations
    first = recs[decision.focus]
    others = [rec for number, rec in enumerate(recs) if number != decision.focus]
    parts: list[Text | str] = [Text(t("chat.first_fix", lang, title=first.title), style="bold")]
    parts += [literal(line) for line in first.why.strip().splitlines()]
    parts += [code_line(f"{key}: {_scalar(value)}") for key, value in first.patch.items()]
    parts += [code_line(f"{key}={value}") for key, value in first.env.items()]
    if others:
        parts.append(t("chat.also", lang, titles="; ".join(rec.title for rec in others)))
    answered = [q for q in decision.questions if q.source not in (None, "user")]
    if answered:
        parts.append(
            Text(t("chat.answers_used", lang, answers=_answers(answered, lang)), style="dim")
        )
    if decision.patch:
        key = "chat.patch_ready"
    else:
        key = "chat.no_patch" if has_config else "chat.patch_needs_config"
    parts.append(Text(t(key, lang), style="italic"))
    return blocks(*parts)


def _answers(questions: Iterable[Question], lang: str) -> str:
    return ", ".join(
        f"{q.id} = {q.answer} ({label('source', q.source or 'default', lang)})" for q in questions
    )


def _scalar(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def docs_text(
    docs: Iterable[tuple[str, str, str, Sequence[str], bool]],
    lang: str,
    *,
    intro_key: str = "chat.docs_intro",
    see_also: Sequence[tuple[str, str, str, Sequence[str], bool]] = (),
) -> Text:
    """Matching guide sections: (section id, title, snippet, matched terms, weak) each;
    ``see_also``, areal-doctor's notes offered beside them, under a heading of their own."""
    parts: list[Text | str] = [Text(t(intro_key, lang), style="bold")]
    parts += _doc_entries(docs, lang)
    if see_also:
        parts.append(Text(t("chat.see_also", lang), style="bold"))
        parts += _doc_entries(see_also, lang)
    parts.append(Text(t("chat.docs_hint", lang), style="italic"))
    return lines(*parts)


def _doc_entries(
    docs: Iterable[tuple[str, str, str, Sequence[str], bool]], lang: str
) -> list[Text | str]:
    parts: list[Text | str] = []
    for section, title, snippet, terms, weak in docs:
        entry = Text("• ", end="")
        entry.append_text(literal(title, "bold cyan"))
        entry.append(f"  [{section}]", style="dim")
        if weak:
            entry.append(f"  {t('chat.weak_match', lang)}", style="yellow")
        parts.append(entry)
        if snippet:
            line = quoted("   " + " ".join(snippet.split()), "dim")
            line.highlight_words(
                [term for term in terms if term], "bold yellow", case_sensitive=False
            )
            parts.append(line)
    return parts
