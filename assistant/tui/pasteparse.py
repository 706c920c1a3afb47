"""Bracketed pastes that carry escape codes arrive whole, as one paste.

Textual's terminal parser (8.x) reads an ESC inside a bracketed paste as the start
of a key sequence: what follows it (up to 32 characters, or the next ESC) is sent
as key presses to the focused widget and is missing from the paste. A log with
colour codes (AReaL's own ``\\x1b[36m(AReaL)\\x1b[0m`` prefix) then leaves its
pieces, escape codes and all, in the chat line, and the log that is diagnosed has
lost the start of every coloured line.

``PasteSafeParser`` rewrites each ESC between the paste brackets (``ESC[200~`` ..
``ESC[201~``) as its visible picture U+241B before Textual's parser sees it; the
paste handlers turn the pictures back (``literal.restore``), so the log diagnosed
is the text as pasted. Outside a paste nothing changes.
"""

from __future__ import annotations

from collections.abc import Iterable

from textual._xterm_parser import XTermParser
from textual.message import Message

PASTE_START = "\x1b[200~"
PASTE_END = "\x1b[201~"
ESC_PICTURE = "\u241b"


class PasteEscapes:
    """The rewriting, kept apart from Textual: feed terminal input, get it back safe."""

    def __init__(self) -> None:
        self.in_paste = False
        self.held = ""  # a chunk's end that may begin a bracket, kept for the next chunk
        self.bare_esc = False  # the last chunk ended with an ESC, passed on at once

    def __call__(self, data: str) -> str:
        if self.bare_esc and not self.in_paste and data.startswith(PASTE_START[1:]):
            self.in_paste, data = True, data[len(PASTE_START) - 1 :]  # ESC | [200~
            out = [PASTE_START[1:]]
        else:
            out = []
        self.bare_esc = False
        data, self.held = self.held + data, ""
        index = 0
        while index < len(data):
            if not self.in_paste:
                start = data.find(PASTE_START, index)
                if start < 0:
                    out.append(self._outside(data[index:]))
                    break
                end = start + len(PASTE_START)
                out.append(data[index:end])
                self.in_paste, index = True, end
                continue
            esc = data.find("\x1b", index)
            if esc < 0:
                out.append(data[index:])
                break
            out.append(data[index:esc])
            rest = data[esc:]
            if rest.startswith(PASTE_END):
                out.append(PASTE_END)
                self.in_paste, index = False, esc + len(PASTE_END)
            elif PASTE_END.startswith(rest):  # the closing bracket, cut by the chunk
                self.held = rest
                break
            else:
                out.append(ESC_PICTURE)
                index = esc + 1
        return "".join(out)

    def _outside(self, data: str) -> str:
        """Text outside a paste, passed on; a cut opening bracket at its end is held
        (never a lone ESC: that may be the Escape key, which must not wait)."""
        for size in range(len(PASTE_START) - 1, 1, -1):
            if data.endswith(PASTE_START[:size]):
                self.held = PASTE_START[:size]
                return data[:-size]
        self.bare_esc = data.endswith("\x1b")
        return data


class PasteSafeParser(XTermParser):
    """Textual's ``XTermParser`` whose ``feed`` rewrites the escapes of a paste first."""

    def __init__(self, debug: bool = False) -> None:
        super().__init__(debug)
        self._paste_escapes = PasteEscapes()

    def feed(self, data: str) -> Iterable[Message]:
        safe = self._paste_escapes(data)
        if data and not safe:  # all of it held for the next chunk ("" would mean EOF)
            return []
        return super().feed(safe)


def install() -> bool:
    """Have Textual's terminal driver build the paste-safe parser (for ``run_tui``);
    True when it took effect.

    The driver names the parser class as a module attribute, which is not Textual's
    public API. Where a Textual version lays it out otherwise, nothing is changed and
    False comes back: the TUI then says once that pasted colour codes may be read as
    keys, so the gap is never silent (``tests/test_tui_rough_edges.py`` also fails on
    such a version).
    """
    try:
        from textual.drivers import linux_driver
    except ImportError:  # no Linux driver here (Windows): Textual's own parser is used
        return False
    current = getattr(linux_driver, "XTermParser", None)
    if current is XTermParser:
        setattr(linux_driver, "XTermParser", PasteSafeParser)  # noqa: B010 - a private name
        return True
    return current is PasteSafeParser
