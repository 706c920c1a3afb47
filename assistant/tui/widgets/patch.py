"""The Patch tab: the YAML fragment, CLI overrides and config diff first, then the fixes."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from rich.syntax import Syntax
from rich.text import Text
from textual.widget import Widget
from textual.widgets import Static

from assistant.models import Decision, Diagnosis, Recommendation
from assistant.tui.i18n import t
from assistant.tui.literal import literal
from assistant.tui.widgets.code import CodeBlock, unwrapped
from assistant.tui.widgets.panel import DiagnosisPanel

SYNTAX_THEME = "ansi_dark"


def code(text: str, lexer: str) -> Syntax:
    """Highlighted code that is never wrapped (a wrap would split a key or a value)."""
    return Syntax(
        text.rstrip("\n"), lexer, theme=SYNTAX_THEME, background_color="default", word_wrap=False
    )


def heading(key: str, lang: str, **values: object) -> Static:
    return Static(Text(t(key, lang, **values), style="bold"), classes="heading")


def recommendation_text(first: bool, rec: Recommendation, lang: str) -> Text:
    """One fix; the list is best first, the first one marked (titles carry the guide's numbers)."""
    out = Text("▶ " if first else "· ", style="bold", end="")
    out.append_text(literal(rec.title, "bold cyan"))
    out.append(f"  [{rec.section}]", style="dim")
    for line in rec.why.strip().splitlines():
        out.append("\n   ")
        out.append_text(literal(line))
    if rec.code_change:
        out.append(f"\n   {t('patch.code_change', lang)}:", style="yellow")
        for line in rec.code_change.strip().splitlines():
            out.append("\n     ")
            out.append_text(literal(line, "yellow"))
    return out


def change_text(rec: Recommendation, lang: str) -> Text | None:
    """A fix's config keys and environment, one per line, for a copy-safe block."""
    lines = [f"{key}: {_scalar(value)}" for key, value in rec.patch.items()]
    lines += [f"{t('patch.env', lang)}: {key}={value}" for key, value in rec.env.items()]
    return unwrapped(Text("\n".join(lines), style="green", end="")) if lines else None


def _scalar(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def patch_widgets(diagnosis: Diagnosis | None, lang: str) -> Iterator[Widget]:
    """What the tab shows for ``diagnosis`` (a placeholder until there is a patch)."""
    if diagnosis is None or not diagnosis.report.oom:
        yield Static(Text(t("patch.empty", lang)), classes="placeholder")
        return
    decision = diagnosis.decision
    if decision.asking:
        count = len(decision.asking)
        yield Static(
            Text(t("patch.provisional", lang, count=count), style="italic"), classes="note"
        )
    yield from _warnings(decision, lang)
    yield from _fragment(diagnosis, lang)
    if decision.recommendations:
        yield heading("patch.recommendations", lang)
        for number, rec in enumerate(decision.recommendations):
            # the fix in view is marked: the patch above is its change
            shown = number == decision.focus
            yield Static(recommendation_text(shown, rec, lang), classes="recommendation")
            change = change_text(rec, lang)
            if change is not None:
                yield CodeBlock(change)
    if decision.skipped:
        yield heading("patch.skipped", lang)
        skipped = Text(end="")
        for item in decision.skipped:
            skipped.append(f"\n· [{item.section}] " if skipped else f"· [{item.section}] ")
            skipped.append_text(literal(item.why, "dim"))
        yield Static(skipped, classes="skipped")


def _warnings(decision: Decision, lang: str) -> Iterator[Widget]:
    if not decision.warnings:
        return
    yield heading("patch.warnings", lang)
    for warning in decision.warnings:
        text = Text(f"! {warning.id}", style="bold yellow", end="")
        text.append(f"  [{warning.section}]\n  ", style="dim")
        text.append_text(literal(warning.text))
        yield Static(text, classes="warning")


def _fragment(diagnosis: Diagnosis, lang: str) -> Iterator[Widget]:
    decision = diagnosis.decision
    if not decision.patch:
        yield Static(Text(t("patch.none", lang)), classes="placeholder")
        return
    from assistant.render.data import dump_yaml

    yield heading("patch.fragment", lang)
    owner = decision.patch_from
    if owner is not None and owner != decision.focus:  # a later fix's change: say whose
        title = decision.recommendations[owner].title
        yield Static(Text(t("patch.of_fix", lang, n=owner + 1, title=title)), classes="note")
    yield CodeBlock(code(dump_yaml(decision.patch), "yaml"), id="patch-yaml")
    if decision.cli_overrides:
        yield heading("patch.overrides", lang)
        overrides = unwrapped(literal("\n".join(decision.cli_overrides)))
        yield CodeBlock(overrides, id="patch-overrides")
    if diagnosis.config_diff:
        yield heading("patch.diff", lang)
        yield CodeBlock(code(diagnosis.config_diff, "diff"), id="patch-diff")
    elif diagnosis.patched_config is None:
        yield Static(Text(t("patch.no_config", lang), style="dim"), classes="note")
    yield Static(Text(t("patch.keys_hint", lang), style="italic"), classes="note")


class PatchPanel(DiagnosisPanel):
    """Shows the patch of ``diagnosis`` in ``lang``; both are set by the App."""

    def widgets(self, diagnosis: Diagnosis | None, lang: str) -> Iterable[Widget]:
        return patch_widgets(diagnosis, lang)
