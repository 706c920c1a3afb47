"""The pipeline: read log -> classify -> decide -> patch -> retrieve docs.

CLI and TUI both call these functions; neither holds diagnosis logic of its own.
Heavy stages are imported inside the functions so that ``--help`` and ``search``
do not pay for them.
"""

from __future__ import annotations

import locale
import os
from collections.abc import Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING

from assistant.models import (
    Allocation,
    Answers,
    Decision,
    Diagnosis,
    DocRef,
    FlatPatch,
    Lang,
    LogReport,
    Progress,
)

if TYPE_CHECKING:
    from assistant.config import ExperimentConfig

DOCS_LIMIT = 5


def diagnose_paths(
    paths: Sequence[str],
    *,
    config: ExperimentConfig | None = None,
    answers: Answers | None = None,
    lang: str = "auto",
    use_defaults: bool = True,
    progress: Progress | None = None,
    model_config: str | None = None,
) -> Diagnosis:
    """Diagnose log files (``"-"`` is standard input)."""
    from assistant.logs import read_and_classify

    report = read_and_classify(list(paths), progress=progress)
    return conclude(
        report,
        config=config,
        answers=answers,
        lang=lang,
        use_defaults=use_defaults,
        model_config=model_config,
    )


def diagnose_text(
    text: str,
    *,
    name: str = "<pasted>",
    config: ExperimentConfig | None = None,
    answers: Answers | None = None,
    lang: str = "auto",
    use_defaults: bool = True,
) -> Diagnosis:
    """Diagnose pasted text: a log, or a short description such as "训练时显存爆了"."""
    from assistant.logs import classify_text

    report = classify_text(text, name=name)
    return conclude(report, config=config, answers=answers, lang=lang, use_defaults=use_defaults)


def conclude(
    report: LogReport,
    *,
    config: ExperimentConfig | None = None,
    answers: Answers | None = None,
    lang: str = "auto",
    use_defaults: bool = True,
    model_config: str | None = None,
    focus: int = 0,
) -> Diagnosis:
    """Run the stages after classification: decide, patch, retrieve docs.

    ``focus`` is the fix the user is looking at (0: fix #1): only questions whose
    answer can change it, or a fix before it, are marked to be asked.

    Answering a follow-up question calls this again with the same report, so the
    log is never read twice.
    """
    from assistant.tree import decide

    report = report.as_read or report  # a verdict an earlier answer changed is walked anew
    out_lang = resolve_lang(lang, report)
    decision = decide(report, config, answers or {}, out_lang, use_defaults, focus)
    report = answered_report(report, decision)
    told = (answers or {}).get(MEMORY_BEHAVIOUR)  # which AReaL memory behaviour, if said
    allocation = explain_allocation(
        report, config, model_config, out_lang, told[0] if told else None
    )
    patched = diff = None
    if config is not None and decision.patch:
        from assistant.config import patched_text, unified_diff

        patched = patched_text(config, flat_patch(decision))
        diff = unified_diff(config, patched)
    return Diagnosis(
        report=report,
        decision=decision,
        docs=tuple(retrieve_docs(report, decision, out_lang)),
        lang=out_lang,
        patched_config=patched,
        config_diff=diff,
        allocation=allocation,
        unused_answers=unused_answers(answers or {}, decision, allocation),
    )


# The question whose answer the allocation's arithmetic reads here, beside the tree
MEMORY_BEHAVIOUR = "areal_memory"


def unused_answers(
    answers: Answers, decision: Decision, allocation: Allocation | None
) -> tuple[tuple[str, str], ...]:
    """The answers the user gave ahead (flag or TUI) that no step of the decision read:
    ``killed_by_oom_killer=no`` for a log whose kernel line proves the OOM killer, a
    ``failing_stage`` when the frames show the phase. The output says so, so an answer
    never looks taken when it changed nothing."""
    read = {question.id for question in decision.questions} | set(decision.answers_read)
    if allocation is not None:
        read.add(MEMORY_BEHAVIOUR)
    return tuple(
        (qid, raw)
        for qid, (raw, source) in answers.items()
        if source in ("flag", "user") and qid not in read
    )


def answered_report(report: LogReport, decision: Decision) -> LogReport:
    """The report with what the user's answers decide (questions.yaml ``outcome``):
    ``killed_by_oom_killer=no`` makes it no memory failure, ``failing_stage`` names
    the phase. ``as_read`` keeps the report the log gave."""
    from dataclasses import replace

    from assistant.tree.questions import answer_outcome

    changes = answer_outcome(decision.questions)
    if not changes:
        return report
    values = {name: value for name, (value, _qid) in changes.items()}
    if values.get("oom") is False:
        values.update(kind="none", phase="none")
        if report.first_error is None and report.evidence:
            values["first_error"] = report.evidence[0]
    answered = MappingProxyType({name: qid for name, (_value, qid) in changes.items()})
    return replace(report, **values, answered=answered, as_read=report)


def explain_allocation(
    report: LogReport,
    config: ExperimentConfig | None,
    model_config: str | None = None,
    lang: str = "en",
    memory_behaviour: str | None = None,
) -> Allocation | None:
    """The failed request explained by the memory arithmetic (None when it cannot be),
    its formula and note in ``lang``; ``memory_behaviour`` is the version of AReaL's
    memory behaviour the user's answer chose (None: the stated default)."""
    if not report.oom or "tried_to_allocate_bytes" not in report.metrics:
        return None
    from assistant.memory.allocation import explain
    from assistant.memory.facts import model_for

    model = model_for(report, config, model_config)
    return explain(report, config, model, lang, memory_behaviour)


def flat_patch(decision: Decision) -> FlatPatch:
    """The dotted-key form of the patch (what ``patched_text`` takes)."""
    return dict(decision.flat_patch)


def resolve_lang(requested: str, report: LogReport | None = None) -> Lang:
    """``zh``/``en`` as asked; ``auto`` follows the input's language, then the locale."""
    if requested == "zh":
        return "zh"
    if requested == "en":
        return "en"
    if report is not None and report.language == "zh":
        return "zh"
    return system_lang()


def system_lang() -> Lang:
    for var in ("LC_ALL", "LC_MESSAGES", "LANG", "LANGUAGE"):
        value = os.environ.get(var)
        if value:
            return "zh" if value.lower().startswith("zh") else "en"
    try:
        loc = locale.getlocale()[0] or ""
    except ValueError:
        loc = ""
    return "zh" if loc.lower().startswith("zh") else "en"


def retrieve_docs(report: LogReport, decision: Decision, lang: Lang) -> list[DocRef]:
    """Guide sections to cite, in the user's language.

    The recommended sections come first, in the tree's order, each with its BM25
    score for a query built from the failure itself (phase words and the failure
    line); then other sections that query finds, so the user also sees related
    reading.
    """
    if not report.oom:
        return []
    from assistant.search import search

    query = docs_query(report, lang)
    scores: dict[str, tuple[float, str, str]] = {}
    if query.strip():
        for hit in search(query, lang=lang, k=20, include_extra=True):
            scores.setdefault(hit.section, (hit.score, hit.title, hit.snippet))
    docs: list[DocRef] = []
    seen: set[str] = set()
    wanted = [rec.section for rec in decision.recommendations]
    for section in wanted:
        if section in seen:
            continue
        seen.add(section)
        score, title, snippet = scores.get(section, (0.0, "", ""))
        docs.append(DocRef(section, lang, title or _title(section, lang), round(score, 3), snippet))
    for section, (score, title, snippet) in scores.items():
        if len(docs) >= max(DOCS_LIMIT, len(wanted)):
            break
        if section not in seen:
            seen.add(section)
            docs.append(DocRef(section, lang, title, round(score, 3), snippet))
    return docs


def docs_query(report: LogReport, lang: str) -> str:
    """A search query describing the failure: phase words plus the failure line."""
    from assistant.knowledge import load_yaml

    phase_words = load_yaml("docs_query.yaml").get(lang, {})
    parts = [phase_words.get(report.phase, ""), phase_words.get(report.kind, "")]
    if report.evidence:
        parts.append(report.evidence[0].text[:300])
    return " ".join(p for p in parts if p)


def _title(section: str, lang: str) -> str:
    from assistant.search import section_title

    try:
        return section_title(section, lang)
    except Exception:  # noqa: BLE001 - a missing title must not sink a diagnosis
        return section
