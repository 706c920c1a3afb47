"""Copy-safe blocks: code, keys and overrides shown as written, never wrapped."""

from __future__ import annotations

from rich.syntax import Syntax
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import HorizontalScroll
from textual.widgets import Static


class CodeBlock(HorizontalScroll):
    """Lines as written, never wrapped (a wrap would split a key or a value, and a
    mouse copy would carry the break); a line too wide scrolls sideways."""

    def __init__(self, content: Syntax | Text, *, id: str | None = None) -> None:
        super().__init__(classes="code-block")
        self._content = content
        self._inner_id = id

    def compose(self) -> ComposeResult:
        yield Static(self._content, id=self._inner_id, classes="code", markup=False)


def unwrapped(text: Text) -> Text:
    """Mark ``text`` as code: shown in a CodeBlock, never wrapped."""
    text.no_wrap = True
    text.overflow = "ignore"
    return text
