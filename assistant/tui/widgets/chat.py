"""The chat transcript and the line the user types into."""

from __future__ import annotations

from rich.text import Text
from textual import events
from textual.containers import VerticalScroll
from textual.widgets import Input, Static

from assistant.tui.literal import is_multiline, normalize_paste
from assistant.tui.messages import ChatSubmitted, LogSubmitted


class ChatMessage(Static):
    """One message; ``role`` is assistant, user or error (a CSS class)."""

    def __init__(self, content: Text, role: str) -> None:
        super().__init__(content, classes=f"message {role}", markup=False)
        self.role = role
        self.plain = content.plain


class ChatLog(VerticalScroll):
    """The transcript, newest at the bottom."""

    can_focus = False

    def on_mount(self) -> None:
        # stay at the bottom as messages arrive and grow (Textual's public anchor), until
        # the user scrolls up; scrolling back to the end anchors it again
        self.anchor()

    def on_resize(self, event: events.Resize) -> None:
        """Laid out again (a new message, the question box closing): keep the end in view."""
        self.scroll_end(animate=False, immediate=True)

    def say(self, content: Text, role: str = "assistant") -> ChatMessage:
        """Add a message and bring it into view (mounting alone does not resize the log)."""
        message = ChatMessage(content, role)
        self.mount(message)
        self.call_after_refresh(self.scroll_end, animate=False, immediate=True)
        return message

    def clear(self) -> None:
        self.remove_children()

    @property
    def messages(self) -> list[ChatMessage]:
        return list(self.query(ChatMessage))


class ChatInput(Input):
    """Enter sends a line; a multi-line paste is taken as a log, whole."""

    def _on_paste(self, event: events.Paste) -> None:
        if is_multiline(event.text):
            event.prevent_default()
            event.stop()
            self.post_message(LogSubmitted(normalize_paste(event.text)))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        text = event.value.strip()
        if text:
            self.value = ""
            self.post_message(ChatSubmitted(text))
