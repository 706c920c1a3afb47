"""A tab that shows one Diagnosis in one language; the App sets both, the tab recomposes."""

from __future__ import annotations

from collections.abc import Iterable

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.reactive import reactive
from textual.widget import Widget

from assistant.models import Diagnosis


class DiagnosisPanel(VerticalScroll):
    """Base of the Evidence and Patch tabs: subclasses only say which widgets to show."""

    diagnosis: reactive[Diagnosis | None] = reactive(None, init=False, recompose=True)
    lang: reactive[str] = reactive("en", init=False, recompose=True)

    def __init__(self, lang: str, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.set_reactive(type(self).lang, lang)

    def compose(self) -> ComposeResult:
        yield from self.widgets(self.diagnosis, self.lang)

    def widgets(self, diagnosis: Diagnosis | None, lang: str) -> Iterable[Widget]:
        raise NotImplementedError
