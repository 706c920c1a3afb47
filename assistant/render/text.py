"""Human-readable text output, in the diagnosis's language, coloured only on request."""

from __future__ import annotations

from typing import Any

from assistant.i18n import message
from assistant.models import ConfigWarning, Diagnosis, Evidence, LogReport

BOLD, DIM, RED, GREEN, YELLOW, CYAN, RESET = (
    "\033[1m",
    "\033[2m",
    "\033[31m",
    "\033[32m",
    "\033[33m",
    "\033[36m",
    "\033[0m",
)
TEXT_LIMIT = 400  # characters of a log line shown in text output


class Styler:
    def __init__(self, color: bool) -> None:
        self.color = color

    def __call__(self, text: str, *codes: str) -> str:
        if not self.color or not codes:
            return text
        return "".join(codes) + text + RESET


def render_text(diagnosis: Diagnosis, *, color: bool) -> str:
    s = Styler(color)
    lang = diagnosis.lang
    report = diagnosis.report
    lines: list[str] = []
    if not report.oom:
        lines += _no_failure(report, lang, s)
        lines += _notices(report, lang, s)
        lines += _unread(report, lang, s)
        if "oom" in report.answered:  # an answer overturned the verdict: what the tree says
            qid = report.answered["oom"]
            answer = next((q.answer for q in diagnosis.decision.questions if q.id == qid), "")
            verdict = _t("verdict_from_answer", lang, id=qid, answer=answer)
            lines.insert(1, s(verdict, YELLOW))
            lines += _decision(diagnosis, lang, s)
        else:
            lines += _warnings(diagnosis, lang, s)
        lines[1:1] = _unused_answers(diagnosis, lang, s)
        return "\n".join(lines) + "\n"
    lines += _headline(report, lang, s)
    lines += _unused_answers(diagnosis, lang, s)
    lines += _first_fix(diagnosis, lang, s)
    lines += _unread(report, lang, s)
    lines += _root_cause(report, lang, s)
    lines += _notices(report, lang, s)
    lines += _figures(report, lang, s)
    lines += _allocation(diagnosis, lang, s)
    lines += _decision(diagnosis, lang, s)
    lines += _docs(diagnosis, lang, s)
    return "\n".join(lines) + "\n"


def render_first_fix(
    diagnosis: Diagnosis, *, color: bool, headline: bool = False, updated: bool = False
) -> str:
    """The answer before any question: phase and the fix to try first, with its change."""
    s = Styler(color)
    lines = _headline(diagnosis.report, diagnosis.lang, s) if headline else []
    lines += _first_fix(diagnosis, diagnosis.lang, s, updated=updated)
    return "\n".join(lines) + "\n"


def render_fix(diagnosis: Diagnosis, index: int, *, color: bool, updated: bool = False) -> str:
    """Fix #index+1 as render_first_fix shows fix #1 (the terminal moving on to it)."""
    s = Styler(color)
    return "\n".join(_first_fix(diagnosis, diagnosis.lang, s, updated=updated, index=index)) + "\n"


def _first_fix(
    diagnosis: Diagnosis, lang: str, s: Styler, *, updated: bool = False, index: int = 0
) -> list[str]:
    """A fix (#1 unless ``index``) in a few lines, marked provisional while a question
    could still change it."""
    decision = diagnosis.decision
    if len(decision.recommendations) <= index:
        return []
    first = decision.recommendations[index]
    if index == 0:
        key = "first_fix_updated" if updated else "first_fix"
    else:
        key = "fix_n_updated" if updated else "fix_n"
    if index == decision.patch_from:  # THE patch is this fix's own change
        overrides = decision.cli_overrides
    elif index == decision.focus and decision.patch_from is not None:
        overrides = []  # the patch is a later fix's: this block shows none of it
    else:
        from assistant.tree.engine import override_text

        overrides = [f"{k}={override_text(v)}" for k, v in first.patch.items()]
    heading = _t(key, lang, title=first.title, n=index + 1)
    lines = ["", s(heading, BOLD, CYAN) + s(f"  [{first.section}]", DIM)]
    lines += ["  " + s(override, GREEN) for override in overrides]
    lines += ["  " + s(f"{_t('env', lang)}: {k}={v}", GREEN) for k, v in first.env.items()]
    if first.code_change:
        lines.append(
            "  "
            + s(f"{_t('code_change', lang)}: ", YELLOW)
            + first.code_change.strip().splitlines()[0]
        )
    lines += ["  " + s(check, YELLOW) for check in first.checks]
    if not (overrides or first.env or first.code_change or first.checks):
        lines.append("  " + s(_t("first_fix_no_change", lang), DIM))
    if decision.provisional:
        assumed = ", ".join(
            f"{q.id} = {_answer_text(q, lang)} ({_t('source_default', lang)})"
            for q in decision.provisional
        )
        lines.append("  " + s(_t("provisional", lang, assumed=assumed), YELLOW))
    return lines


def _answer_text(question: Any, lang: str) -> str:
    answer = question.answer if question.source else question.default
    if answer is None:
        return _t("unknown", lang)
    if question.type == "yesno" and str(answer).lower() in ("yes", "no", "true", "false"):
        return _t("answer.yes" if str(answer).lower() in ("yes", "true") else "answer.no", lang)
    return str(answer)


def _t(key: str, lang: str, **values: object) -> str:
    return message(key, lang, **values)


def _section(title: str, s: Styler) -> list[str]:
    return ["", s(title, BOLD)]


def _line(evidence: Evidence) -> str:
    text = evidence.text if len(evidence.text) <= TEXT_LIMIT else evidence.text[:TEXT_LIMIT] + " …"
    return text


def _where(evidence: Evidence) -> str:
    where = f"{evidence.file}:{evidence.line}"
    if evidence.rank is not None:
        where += f" [rank {evidence.rank}]"
    if evidence.timestamp:
        where += f" @ {evidence.timestamp}"
    return where


def _no_failure(report: LogReport, lang: str, s: Styler) -> list[str]:
    lines = [s(_t("headline_none", lang, lines=report.lines_read, files=len(report.files)), GREEN)]
    if report.first_error is not None:
        lines += ["", _t("first_error", lang), f"  {_where(report.first_error)}"]
        lines.append("  " + s(_line(report.first_error), YELLOW))
    what = report.facts.get("first_error_what")
    if isinstance(what, dict) and (what.get(lang) or what.get("en")):
        lines += ["", _t("why_not_memory", lang), f"  {what.get(lang) or what.get('en')}"]
    return lines


def _unread(report: LogReport, lang: str, s: Styler) -> list[str]:
    """Files inside the given folders that were skipped, and lines past the reader's cap:
    the user must know what was not read."""
    lines: list[str] = []
    if report.lines_unread:
        from assistant.logs.scan import MAX_CANDIDATES, RANGE_BYTES

        text = _t(
            "lines_unread",
            lang,
            count=report.lines_unread,
            cap=MAX_CANDIDATES,
            mib=RANGE_BYTES >> 20,
        )
        lines += ["", s(text, YELLOW)]
    if report.unread:
        lines += ["", s(_t("unread", lang, count=len(report.unread)), YELLOW)]
        lines += [f"  - {item}" for item in report.unread]
    return lines


def _headline(report: LogReport, lang: str, s: Styler) -> list[str]:
    key = "headline_description" if report.input_kind == "description" else "headline_oom"
    phase: str = report.phase
    if "phase" in report.answered:
        phase += " " + _t("phase_from_answer", lang, id=report.answered["phase"])
    lines = [
        s(
            _t(key, lang, phase=phase, kind=report.kind, confidence=report.confidence),
            BOLD,
            RED,
        )
    ] + _stage_line(report, lang)
    if report.facts.get("memory_unproven"):
        lines.append(s(_t("unproven", lang), YELLOW))
    return lines


def _notices(report: LogReport, lang: str, s: Styler) -> list[str]:
    """Memory events that are no failure by themselves, with what they mean."""
    if not report.notices:
        return []
    lines = _section(_t("notices", lang), s)
    for notice in report.notices:
        text = notice.text.get(lang) or notice.text.get("en", "")
        lines.append(f"  - {notice.id} x{notice.count}: {text}")
        if notice.evidence:
            first = notice.evidence[0]
            lines.append("    " + s(f"{_where(first)}  {_line(first)}", DIM))
    return lines


def _stage_line(report: LogReport, lang: str) -> list[str]:
    from assistant.logs.stage import stage_name

    name = stage_name(report.stage, lang)
    return [_t("stage_line", lang, stage=name, id=report.stage)] if name else []


def _root_cause(report: LogReport, lang: str, s: Styler) -> list[str]:
    if not report.evidence:
        return []
    root = report.evidence[0]
    lines = _section(_t("root_cause", lang), s)
    lines.append(f"  {_where(root)}")
    lines.append("  " + s(_line(root), RED))
    shown = {(root.file, root.line)}
    for extra in report.evidence[1:]:
        if extra.role in ("frame", "context") and (extra.file, extra.line) not in shown:
            shown.add((extra.file, extra.line))
            lines.append("    " + s(f"{extra.file}:{extra.line}  {_line(extra)}", DIM))
    if report.findings:
        head = report.findings[0]
        if head.count > 1 or len(head.ranks) > 1:
            ranks = ", ".join(str(r) for r in head.ranks)
            key = "ranks_failed" if len(head.ranks) > 1 else "repeated_one_rank"
            key = key if ranks else "repeated"
            lines.append("  " + _t(key, lang, count=head.count, n=len(head.ranks), ranks=ranks))
            if head.group_reason:
                reason = head.group_reason.get(lang) or head.group_reason["en"]
                lines.append("    " + s(f"{_t('grouped_because', lang)}: {reason}", DIM))
        if len(report.findings) > 1:
            lines.append("  " + _t("other_failures", lang) + ":")
            for other in report.findings[1:6]:
                ev = other.evidence[0] if other.evidence else None
                where = _where(ev) if ev else ""
                lines.append(f"    - {other.phase}/{other.kind} x{other.count}  {where}")
    if report.consequences:
        lines.append("  " + _t("consequences", lang) + ":")
        for cons in report.consequences:
            ranks = ", ".join(str(r) for r in cons.ranks[:16])
            more = " …" if len(cons.ranks) > 16 else ""
            lines.append(
                f"    - {cons.what} x{cons.count}" + (f" (ranks {ranks}{more})" if ranks else "")
            )
    return lines


def _figures(report: LogReport, lang: str, s: Styler) -> list[str]:
    lines: list[str] = []
    if report.metrics:
        lines += _section(_t("figures", lang), s)
        labels = _metric_labels(lang)
        width = max(_display_width(labels.get(key, key)) for key in report.metrics) + 2
        for key, value in report.metrics.items():
            label = labels.get(key, key)
            lines.append(f"  {label}{' ' * (width - _display_width(label))}{_human(key, value)}")
    if report.inferences:
        lines += _section(_t("inferences", lang), s)
        for inference in report.inferences:
            text = inference.text.get(lang) or inference.text.get("en", inference.id)
            lines.append(f"  - {text}")
    return lines


def _metric_labels(lang: str) -> dict[str, str]:
    from assistant.knowledge import load_yaml

    table = load_yaml("i18n/cli.yaml").get("metric_labels", {})
    return table.get(lang) or table.get("en") or {}


def _display_width(text: str) -> int:
    """Columns a label takes in a terminal: CJK characters are two wide."""
    return sum(2 if "\u2e80" <= ch <= "\uffef" else 1 for ch in text)


def _human(key: str, value: Any) -> str:
    if key.endswith("_bytes") and isinstance(value, int | float):
        # the log states sizes to two decimals of their unit; the byte count behind
        # them is not more precise than that, so it is not shown (JSON keeps it)
        return format_bytes(value)
    if key.endswith("_fraction") and isinstance(value, float):
        return f"{value:.2f}"
    return str(value)


def format_bytes(value: float) -> str:
    units = ["bytes", "KiB", "MiB", "GiB", "TiB"]
    size = float(value)
    for unit in units:
        if abs(size) < 1024 or unit == units[-1]:
            return f"{size:.2f} {unit}" if unit != "bytes" else f"{int(size)} bytes"
        size /= 1024
    return str(value)


def _allocation(diagnosis: Diagnosis, lang: str, s: Styler) -> list[str]:
    found = diagnosis.allocation
    if not found:
        return []
    lines = _section(_t("allocation", lang), s)
    lines.append(
        "  "
        + _t(
            "allocation_line",
            lang,
            tensor=found["tensor"],
            size=format_bytes(found["bytes"]),
            formula=found["formula"],
        )
    )
    if found.get("note"):
        lines.append("  " + s(str(found["note"]), DIM))
    how = {
        "frame and arithmetic": message("memory.alloc.by_frame", lang),
        "arithmetic": message("memory.alloc.by_arithmetic", lang),
    }.get(str(found.get("matched_by")), found.get("matched_by"))
    source = _t("allocation_source", lang, model=found.get("model"), how=how)
    lines.append("  " + s(source, DIM))
    return lines


def _unused_answers(diagnosis: Diagnosis, lang: str, s: Styler) -> list[str]:
    """One line per answer given ahead that changed nothing, under the headline (an
    answer the output seems to ignore is one the user stops trusting)."""
    return [
        s(_t("answer_not_used", lang, id=qid, answer=answer), YELLOW)
        for qid, answer in diagnosis.unused_answers
    ]


def _decision(diagnosis: Diagnosis, lang: str, s: Styler) -> list[str]:
    decision = diagnosis.decision
    lines: list[str] = []
    if decision.questions:
        lines += _section(_t("questions", lang), s)
        for q in decision.questions:
            note = _t("source_default", lang) if q.source in (None, "default") else q.source
            if q.source in (None, "default") and not q.matters:
                note = _t("source_default_irrelevant", lang)
            lines.append(f"  {q.id} = {_answer_text(q, lang)}  " + s(f"({note}) {q.text}", DIM))
    if decision.recommendations:
        lines += _section(_t("recommendations", lang), s)
        for number, rec in enumerate(decision.recommendations, start=1):
            lines.append(f"  #{number} " + s(rec.title, BOLD, CYAN) + s(f"  [{rec.section}]", DIM))
            for why_line in rec.why.strip().splitlines():
                lines.append(f"     {why_line}")
            for key, value in rec.env.items():
                lines.append("     " + s(f"{_t('env', lang)}: {key}={value}", GREEN))
            if rec.code_change:
                lines.append("     " + s(f"{_t('code_change', lang)}:", YELLOW))
                lines += ["       " + c for c in rec.code_change.strip().splitlines()]
    if decision.skipped:
        lines += _section(_t("skipped", lang), s)
        lines += [f"  - [{sk.section}] {sk.why}" for sk in decision.skipped]
    lines += _warnings(diagnosis, lang, s)
    lines += _patch(diagnosis, lang, s)
    return lines


def _warnings(diagnosis: Diagnosis, lang: str, s: Styler) -> list[str]:
    warnings = diagnosis.decision.warnings
    if not warnings:
        return []
    lines = _section(_t("warnings", lang), s)
    lines += ["  " + s(f"! {w.id}", YELLOW) + f"  {w.text}" for w in warnings]
    return lines


def _patch(diagnosis: Diagnosis, lang: str, s: Styler) -> list[str]:
    decision = diagnosis.decision
    lines = _section(_t("patch", lang), s)
    if not decision.patch:
        return lines + ["  " + _t("no_patch", lang)]
    from assistant.render.data import dump_yaml

    owner = decision.patch_from
    if owner is not None and owner != decision.focus:  # say whose change it is
        title = decision.recommendations[owner].title
        lines.append("  " + s(_t("patch_of_fix_n", lang, n=owner + 1, title=title), DIM))

    lines += ["  " + line for line in dump_yaml(decision.patch).rstrip().splitlines()]
    if decision.cli_overrides:
        lines += _section(_t("overrides", lang), s)
        lines.append("  " + " ".join(decision.cli_overrides))
    if diagnosis.config_diff:
        lines += _section(_t("diff", lang), s)
        for line in diagnosis.config_diff.rstrip().splitlines():
            style = GREEN if line.startswith("+") else RED if line.startswith("-") else DIM
            lines.append(s(line, style))
    return lines


def _docs(diagnosis: Diagnosis, lang: str, s: Styler) -> list[str]:
    if not diagnosis.docs:
        return []
    lines = _section(_t("docs", lang), s)
    for doc in diagnosis.docs:
        lines.append(f"  - {doc.title}  " + s(f"[{doc.section}]", DIM))
    return lines


def render_check_text(config: Any, warnings: list[ConfigWarning], *, color: bool, lang: str) -> str:
    s = Styler(color)
    path = str(config.path)
    if not warnings:
        return s(_t("check_clean", lang, path=path), GREEN) + "\n"
    lines = [s(_t("check_found", lang, path=path, count=len(warnings)), BOLD, YELLOW)]
    for w in warnings:
        lines.append("  " + s(f"! {w.id}", YELLOW) + s(f"  [{w.section}]", DIM))
        lines.append(f"    {w.text}")
    return "\n".join(lines) + "\n"
