"""The Evidence tab: the failure lines in context, where they came from, the cascade folded."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

from rich.text import Text
from textual.widget import Widget
from textual.widgets import Collapsible, Static

from assistant.models import Consequence, Diagnosis, Evidence, Finding, LogReport
from assistant.render.text import format_bytes
from assistant.tui.i18n import t
from assistant.tui.literal import literal
from assistant.tui.present import label, where
from assistant.tui.widgets.panel import DiagnosisPanel

ROLE_STYLES = {
    "failure": "bold red",
    "frame": "dim",
    "context": "",
    "consequence": "yellow",
}
RANKS_SHOWN = 16


def evidence_block(items: Iterable[Evidence], lang: str) -> Text:
    """Each line under its location; a failure line with the lines before it."""
    out = Text(end="")
    seen: set[tuple[str, int]] = set()
    for item in items:
        if (item.file, item.line) in seen:
            continue  # the same line cited twice (as frame and as context) is shown once
        seen.add((item.file, item.line))
        if out:
            out.append("\n")
        out.append(where(item, lang), style="bold blue")
        if item.timestamp:
            out.append(f"  {item.timestamp}", style="dim")
        for before in item.context:
            out.append("\n│ ", style="dim")
            out.append_text(literal(before, "dim"))
        out.append("\n▶ " if item.role == "failure" else "\n│ ", style="dim")
        out.append_text(literal(item.text, ROLE_STYLES.get(item.role, "")))
    return out


def ranks_text(ranks: Sequence[int]) -> str:
    shown = ", ".join(str(rank) for rank in ranks[:RANKS_SHOWN])
    return shown + (" …" if len(ranks) > RANKS_SHOWN else "")


def finding_title(finding: Finding, lang: str) -> Text:
    title = t(
        "evidence.finding",
        lang,
        phase=label("phase", finding.phase, lang),
        kind=label("kind", finding.kind, lang),
        count=finding.count,
    )
    return _with_ranks(title, finding.ranks, lang)


def consequence_title(consequence: Consequence, lang: str) -> Text:
    title = t(
        "evidence.cascade",
        lang,
        what=label("cascade", consequence.what, lang),
        count=consequence.count,
    )
    return _with_ranks(title, consequence.ranks, lang)


def _with_ranks(title: str, ranks: Sequence[int], lang: str) -> Text:
    """A group's title, followed by the ranks that logged it when the log names any."""
    if ranks:
        title += " · " + t("evidence.ranks", lang, ranks=ranks_text(ranks))
    return Text(title)


def figures_text(report: LogReport, lang: str) -> Text:
    out = Text(t("evidence.figures", lang), style="bold", end="")
    for key, value in report.metrics.items():
        shown = format_bytes(value) if key.endswith("_bytes") else str(value)
        name = t(f"metric.{key}", lang)
        out.append(f"\n  {key if name == f'metric.{key}' else name}: {shown}")
    for inference in report.inferences:
        out.append("\n  · ")
        out.append_text(literal(inference.text.get(lang) or inference.text.get("en", "")))
    return out


def evidence_widgets(diagnosis: Diagnosis | None, lang: str) -> Iterator[Widget]:
    """What the tab shows for ``diagnosis`` (a placeholder when there is none)."""
    if diagnosis is None:
        yield Static(Text(t("evidence.empty", lang)), classes="placeholder")
        return
    report = diagnosis.report
    if not report.oom:
        yield Static(Text(t("evidence.no_failure", lang), style="bold green"))
        if report.first_error is not None:
            yield Static(Text(t("evidence.first_error", lang), style="bold"))
            yield Static(evidence_block([report.first_error], lang), classes="evidence")
        return
    if report.input_kind == "description":
        yield Static(Text(t("evidence.description", lang)), classes="placeholder")
        return
    yield from _root_cause(report, lang)
    if report.metrics or report.inferences:
        yield Static(figures_text(report, lang), classes="figures")
    for finding in report.findings[1:]:
        yield Collapsible(
            Static(evidence_block(finding.evidence[:1], lang), classes="evidence"),
            title=Text(t("evidence.other", lang) + " ") + finding_title(finding, lang),  # type: ignore[arg-type]
            collapsed=True,
            classes="other-finding",
        )
    for consequence in report.consequences:
        yield Collapsible(
            Static(evidence_block([consequence.example], lang), classes="evidence"),
            title=consequence_title(consequence, lang),  # type: ignore[arg-type]
            collapsed=True,
            classes="cascade",
        )


def _root_cause(report: LogReport, lang: str) -> Iterator[Widget]:
    heading = Text(t("evidence.root_cause", lang), style="bold")
    if report.findings:
        heading.append("  ")
        heading.append_text(finding_title(report.findings[0], lang))
        files = report.findings[0].files
        if len(files) > 1:
            heading.append("\n" + t("evidence.files", lang, files=", ".join(files)), style="dim")
        reasons = report.findings[0].group_reason
        reason = (reasons.get(lang) or reasons["en"]) if reasons else None
        if reason:
            heading.append("\n" + t("evidence.grouped", lang, reason=reason), style="dim")
    yield Static(heading, classes="heading")
    in_context = [item for item in report.evidence if item.role != "consequence"]
    yield Static(evidence_block(in_context, lang), classes="evidence root")


class EvidencePanel(DiagnosisPanel):
    """Shows ``diagnosis`` in ``lang``; both are set by the App."""

    def widgets(self, diagnosis: Diagnosis | None, lang: str) -> Iterable[Widget]:
        return evidence_widgets(diagnosis, lang)
