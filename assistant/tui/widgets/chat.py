"""The chat transcript and the line the user types into."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.timer import Timer
from textual.widgets import Input, Static

from assistant.tui.literal import is_multiline, pasted
from assistant.tui.messages import ChatSubmitted, LogSubmitted
from assistant.tui.widgets.code import CodeBlock

Blocks = Text | Sequence[Text]


class ChatMessage(Vertical):
    """One message; ``role`` is assistant, user or error (a CSS class).

    The content is a Text, or a list of them: one marked ``no_wrap`` (``unwrapped``),
    a fix's keys and overrides, goes in a copy-safe block that is never wrapped."""

    def __init__(self, content: Blocks, role: str) -> None:
        super().__init__(classes=f"message {role}")
        self.role = role
        self.blocks = _blocks(content)
        self.plain = "\n".join(block.plain for block in self.blocks)

    def compose(self) -> ComposeResult:
        for block in self.blocks:
            if block.no_wrap:
                yield CodeBlock(block)
            else:
                yield Static(block, markup=False, classes="body")

    def update(self, content: Blocks) -> None:
        """Show ``content`` instead (the fix, updated in place after an answer)."""
        self.blocks = _blocks(content)
        self.plain = "\n".join(block.plain for block in self.blocks)
        self.refresh(recompose=True)


def _blocks(content: Blocks) -> list[Text]:
    return [content] if isinstance(content, Text) else list(content)


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

    def say(self, content: Blocks, role: str = "assistant") -> ChatMessage:
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
    """Enter sends a line; a multi-line paste is taken as a log, whole.

    A terminal without bracketed paste (or a tmux/ssh chain that drops it) types a
    pasted log in as keys: each line ends with an Enter. Lines submitted within
    BURST_SECONDS of each other came faster than anyone types, so they are gathered and
    sent together as a log; a line on its own is a chat message, sent when the burst
    window closes (a pause too short to notice).
    """

    BURST_SECONDS = 0.12

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._burst: list[str] = []
        self._burst_timer: Timer | None = None

    def _on_paste(self, event: events.Paste) -> None:
        if is_multiline(event.text):
            event.prevent_default()
            event.stop()
            # the line gave way to a log: nothing of it (nor keys a terminal's parser
            # made of its escape codes, which arrive before the paste) stays to be sent
            self.clear_line()
            self.post_message(LogSubmitted(pasted(event.text)))

    def clear_line(self) -> None:
        """Empty the line and forget a burst being gathered (a paste, Start over)."""
        self.value = ""
        self._burst = []
        if self._burst_timer is not None:
            self._burst_timer.stop()
            self._burst_timer = None

    async def _on_key(self, event: events.Key) -> None:
        """Enter takes the line at once, before the keys queued behind it are typed in.

        Input's own Enter binding runs only after the key has bubbled up to the app; in
        a burst the next line's characters reach the line first, and every line would
        carry the text of those after it.
        """
        if event.key == "enter":
            event.stop()
            event.prevent_default()
            self._line_entered(self.value)
            return
        await super()._on_key(event)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._line_entered(event.value)

    def _line_entered(self, line: str) -> None:
        if not line.strip() and not self._burst:
            return
        self._burst.append(line)
        self.value = ""
        if self._burst_timer is not None:
            self._burst_timer.stop()
        self._burst_timer = self.set_timer(self.BURST_SECONDS, self.flush_burst)

    def flush_burst(self) -> None:
        """Send what the burst gathered: one line as a message, several as a log."""
        lines, self._burst, self._burst_timer = self._burst, [], None
        texts = [line for line in lines if line.strip()]
        if len(texts) > 1:
            self.post_message(LogSubmitted("\n".join(lines).strip("\n")))
        elif texts:
            self.post_message(ChatSubmitted(texts[0].strip()))
