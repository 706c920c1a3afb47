"""The paste area: a crash log pasted, loaded from a file, or typed and submitted."""

from __future__ import annotations

from textual import events, on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.reactive import reactive
from textual.widgets import Button, TextArea

from assistant.tui.i18n import t
from assistant.tui.literal import is_multiline, pasted, restore, visible, without_colour
from assistant.tui.messages import LogSubmitted


class PasteArea(TextArea):
    """A multi-line paste replaces the contents and is diagnosed at once.

    The area shows control characters as visible pictures; the log that is
    diagnosed is the text as pasted.
    """

    def on_paste(self, event: events.Paste) -> None:
        # runs before TextArea's own paste handler; prevent_default() skips that one
        if not is_multiline(event.text):
            return  # a short snippet: let the TextArea insert it
        event.prevent_default()
        event.stop()
        text = pasted(event.text)
        self.show_log(text)
        self.post_message(LogSubmitted(text, shown=True))

    def show_log(self, text: str) -> None:
        """The log as a terminal shows it: colour codes gone, their text kept."""
        self.load_text(visible(without_colour(text)))


class PastePanel(Vertical):
    """The paste area with its buttons.

    A log pasted into the chat line is put in the area only when the Log tab is
    next shown, or after its diagnosis is on screen: laying out 20,000 lines costs
    a third of a second that the diagnosis should not wait for.
    """

    lang: reactive[str] = reactive("en", init=False)

    def __init__(self, lang: str, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.set_reactive(PastePanel.lang, lang)
        self.pending: str | None = None
        self.absence: tuple[str, dict[str, str]] | None = None  # why a log is not shown

    def compose(self) -> ComposeResult:
        yield PasteArea(
            id="paste-area",
            soft_wrap=False,
            show_line_numbers=True,
            placeholder=t("paste.placeholder", self.lang),
        )
        with Horizontal(id="paste-buttons"):
            yield Button(
                t("paste.diagnose", self.lang), id="paste-diagnose", variant="primary", compact=True
            )
            yield Button(t("paste.clear", self.lang), id="paste-clear", compact=True)

    def watch_lang(self, lang: str) -> None:
        if not self.is_mounted:
            return
        area = self.query_one(PasteArea)
        key, values = self.absence or ("paste.placeholder", {})
        area.placeholder = t(key, lang, **values)
        self.query_one("#paste-diagnose", Button).label = t("paste.diagnose", lang)
        self.query_one("#paste-clear", Button).label = t("paste.clear", lang)

    @property
    def area(self) -> PasteArea:
        return self.query_one(PasteArea)

    def show_log(self, text: str) -> None:
        """Keep ``text`` for the area; it is laid out when shown or once diagnosed."""
        self.pending = text
        self.absence = None

    def clear(self) -> None:
        self.pending = None
        self.absence = None
        self.area.clear()
        self.area.placeholder = t("paste.placeholder", self.lang)

    def show_absence(self, key: str, values: dict[str, str]) -> None:
        """Say in the empty area why the log opened from a path is not shown there (too
        big, a folder): an empty paste box read as if the file had not been opened."""
        self.pending = None
        self.absence = (key, values)
        self.area.clear()
        self.area.placeholder = t(key, self.lang, **values)

    def on_show(self) -> None:
        self.flush()

    def flush(self) -> None:
        """Lay out a kept log now."""
        if self.pending is not None:
            text, self.pending = self.pending, None
            self.area.show_log(text)

    @property
    def text(self) -> str:
        """The log in the area (a pending one counts), as it would be diagnosed."""
        return self.pending if self.pending is not None else restore(self.area.text)

    @on(Button.Pressed, "#paste-diagnose")
    def _diagnose(self, event: Button.Pressed) -> None:
        event.stop()
        text = self.text
        if text.strip():
            self.post_message(LogSubmitted(text, shown=True))

    @on(Button.Pressed, "#paste-clear")
    def _clear(self, event: Button.Pressed) -> None:
        event.stop()
        self.clear()
