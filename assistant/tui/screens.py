"""Modal screens: asking for a path (open, save as) and the help page."""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Markdown, Static

from assistant.tui.i18n import t


class PathPrompt(ModalScreen[str | None]):
    """Asks for one path; dismisses with it, or with None when cancelled."""

    BINDINGS = [Binding("escape", "cancel", show=False)]

    def __init__(self, title: str, value: str, lang: str) -> None:
        super().__init__()
        self.title_text = title
        self.initial = value
        self.lang = lang

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(Text(self.title_text, style="bold"), id="dialog-title")
            yield Input(value=self.initial, id="path-input")
            yield Static(Text(""), id="dialog-error")
            with Horizontal(id="dialog-buttons"):
                yield Button(
                    t("dialog.ok", self.lang), id="dialog-ok", variant="primary", compact=True
                )
                yield Button(t("dialog.cancel", self.lang), id="dialog-cancel", compact=True)

    def on_mount(self) -> None:
        self.query_one("#path-input", Input).focus()

    @on(Input.Submitted, "#path-input")
    @on(Button.Pressed, "#dialog-ok")
    def _accept(self, event: Input.Submitted | Button.Pressed) -> None:
        event.stop()
        value = self.query_one("#path-input", Input).value.strip()
        if not value:
            self.query_one("#dialog-error", Static).update(Text(t("dialog.empty", self.lang)))
            return
        self.dismiss(value)

    @on(Button.Pressed, "#dialog-cancel")
    def _cancel_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(None)

    def action_cancel(self) -> None:
        self.dismiss(None)


class HelpScreen(ModalScreen[None]):
    """The keys and how a session goes, in the UI language."""

    BINDINGS = [Binding("escape,f1,q", "close", show=False)]

    def __init__(self, lang: str) -> None:
        super().__init__()
        self.lang = lang

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog", classes="help"):
            with VerticalScroll():
                yield Markdown(t("help.body", self.lang), id="help-body")
            with Horizontal(id="dialog-buttons"):
                yield Button(t("dialog.close", self.lang), id="dialog-close", compact=True)

    @on(Button.Pressed, "#dialog-close")
    def _close_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(None)

    def action_close(self) -> None:
        self.dismiss(None)
