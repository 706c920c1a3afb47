"""The Docs tab: guide sections found for the failure or a question; one opened in full.

Sections are listed by id and shown in the UI language, so switching language
switches the titles and the opened text (the search itself is not repeated).
"""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.reactive import reactive
from textual.widgets import Markdown, OptionList
from textual.widgets.option_list import Option

from assistant.tui.i18n import t
from assistant.tui.literal import literal
from assistant.tui.session import DocItem


def section_title(section: str, lang: str) -> str:
    """The section's heading in ``lang`` (its id when the guide lacks it)."""
    from assistant.search import section_title as lookup

    try:
        return lookup(section, lang)
    except Exception:  # noqa: BLE001 - an unknown id must not break the list
        return section


def section_markdown(section: str, lang: str) -> str:
    """The whole section as Markdown, under its heading."""
    from assistant.search import get_section

    try:
        found = get_section(section, lang)
    except Exception:  # noqa: BLE001 - shown as a note instead of a crash
        return t("docs.missing", lang, section=section)
    return f"# {found.title}\n\n{found.body}"


class DocsPanel(Vertical):
    """Lists ``docs``; ``opened`` is the section shown in full, in ``lang``."""

    docs: reactive[list[DocItem]] = reactive(list, init=False, always_update=True)
    opened: reactive[str | None] = reactive(None, init=False)
    lang: reactive[str] = reactive("en", init=False)

    def __init__(self, lang: str, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.set_reactive(DocsPanel.lang, lang)

    def compose(self) -> ComposeResult:
        yield OptionList(id="docs-list")
        with VerticalScroll(id="docs-view"):
            yield Markdown(t("docs.empty", self.lang), id="docs-section")

    def on_mount(self) -> None:
        self._fill_list()

    def watch_docs(self) -> None:
        if self.is_mounted:
            self._fill_list()

    async def watch_lang(self) -> None:
        if self.is_mounted:
            self._fill_list()
            await self._show_opened()

    async def watch_opened(self) -> None:
        if self.is_mounted:
            await self._show_opened()

    def _fill_list(self) -> None:
        options = self.query_one("#docs-list", OptionList)
        options.clear_options()
        for item in self.docs:
            prompt = Text("• ", end="")
            prompt.append_text(literal(section_title(item.section, self.lang)))
            prompt.append(f"  [{item.section}]", style="dim")
            options.add_option(Option(prompt, id=item.section))
        options.display = bool(self.docs)

    async def _show_opened(self) -> None:
        view = self.query_one("#docs-section", Markdown)
        if self.opened is None:
            key = "docs.choose" if self.docs else "docs.empty"
            await view.update(t(key, self.lang))
            return
        await view.update(section_markdown(self.opened, self.lang))
        self.query_one("#docs-view", VerticalScroll).scroll_home(animate=False)

    @on(OptionList.OptionSelected, "#docs-list")
    def _open(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.opened = event.option.id
