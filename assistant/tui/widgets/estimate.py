"""The Estimate tab: per-GPU memory of each engine the loaded config runs, before a run.

The same figures and words as ``areal-doctor estimate`` (``assistant.render.estimate``
builds the table and the per-engine lines); the Session computes the estimate in a job,
with the GPU size the diagnosed log states when it gives one.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import Static

from assistant.tui.i18n import t
from assistant.tui.literal import literal
from assistant.tui.session import EstimateView

GIB = 1 << 30


def table(result: dict[str, Any], lang: str) -> Table:
    """The estimate table turned on its side, to fit the tab: one column per engine, one
    row per part (backend, weights, ..., total, fits); an engine that does not fit is red."""
    from assistant.render.estimate import estimate_table

    header, *rows = estimate_table(result, lang)
    grid = Table(box=None, padding=(0, 1), show_edge=False, header_style="bold")
    grid.add_column(literal(header[0]), no_wrap=True)
    for row, engine in zip(rows, result["engines"].values(), strict=True):
        style = "" if engine["fits"] else "bold red"
        grid.add_column(literal(row[0]), justify="right", style=style, header_style=style)
    for number, label in enumerate(header[1:], start=1):
        grid.add_row(literal(label), *(literal(row[number]) for row in rows))
    return grid


def gpu_line(view: EstimateView, lang: str) -> Text:
    assert view.result is not None
    gib = view.result["gpu_memory_bytes"] / GIB
    key = "estimate.gpu_from_log" if view.gpu_from_log else "estimate.gpu_assumed"
    return Text(t(key, lang, gib=gib))


def estimate_widgets(view: EstimateView | None, lang: str) -> Iterator[Widget]:
    """What the tab shows for ``view`` (a placeholder until a config is loaded)."""
    if view is None:
        yield Static(Text(t("estimate.empty", lang)), classes="placeholder")
        return
    if view.result is None:
        yield Static(literal("⚠ " + (view.error or "")), classes="warning", id="estimate-error")
        yield Static(Text(t("estimate.error_hint", lang), style="dim"), classes="note")
        return
    from assistant.render.estimate import colocated_notes, engine_notes, model_line

    result = view.result
    yield Static(literal(model_line(result, lang), "bold"), id="estimate-model")
    yield Static(gpu_line(view, lang), id="estimate-gpu")
    yield Static(table(result, lang), id="estimate-table", classes="code")
    yield Static(Text(t("estimate.units", lang), style="dim"), classes="note")
    notes = [
        line.strip()
        for name, e in result["engines"].items()
        for line in engine_notes(name, e, lang)
    ] + colocated_notes(result, lang)
    if notes:
        yield Static(literal("\n".join(f"· {line}" for line in notes)), id="estimate-notes")
    verdict = "estimate.all_fit" if result["fits"] else "estimate.not_fit"
    style = "bold green" if result["fits"] else "bold red"
    yield Static(Text(t(verdict, lang), style=style), id="estimate-verdict", classes="heading")
    yield Static(Text(t("estimate.assumptions", lang), style="bold"), classes="heading")
    assumptions = "\n".join(f"· {item}" for item in result["assumptions"])
    yield Static(literal(assumptions, "dim"), id="estimate-assumptions")


class EstimatePanel(VerticalScroll):
    """Shows ``estimate`` in ``lang``; both are set by the App."""

    estimate: reactive[EstimateView | None] = reactive(None, init=False, recompose=True)
    lang: reactive[str] = reactive("en", init=False, recompose=True)

    def __init__(self, lang: str, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.set_reactive(EstimatePanel.lang, lang)

    def compose(self) -> ComposeResult:
        yield from estimate_widgets(self.estimate, self.lang)
