"""Show log text literally: no markup parsing, no live escape sequences.

Log lines may contain ``[bold]``, ``[/]``, ``[link=...]`` or raw ESC bytes.
Everything the TUI shows from a log goes through ``literal`` (a ``rich.text.Text``,
which Textual never parses as markup), and control characters become their
visible Unicode pictures (ESC -> U+241B), which ``restore`` maps back before the
text is diagnosed again.
"""

from __future__ import annotations

import re

from rich.text import Text

_KEEP = {0x09, 0x0A}  # tab and newline are layout, not hazards
_TO_PICTURE = {code: 0x2400 + code for code in range(0x20) if code not in _KEEP}
_TO_PICTURE[0x7F] = 0x2421  # DEL
_C1 = {code: 0xFFFD for code in range(0x80, 0xA0)}  # C1 controls have no pictures
_DISPLAY = str.maketrans({**_TO_PICTURE, **_C1})
_RESTORE = str.maketrans({picture: code for code, picture in _TO_PICTURE.items()})


def visible(text: str) -> str:
    """``text`` with every control character (but tab and newline) made visible."""
    return text.replace("\r\n", "\n").translate(_DISPLAY)


def is_multiline(text: str) -> bool:
    """A paste of several lines (terminals often send CR, not LF, between them)."""
    return len(text.strip().splitlines()) > 1


def normalize_paste(text: str) -> str:
    """Line ends of a terminal paste as LF: CR LF and a lone CR both end a line."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


_CSI = re.compile(r"\x1b\[[0-9;:?<=>]*[ -/]*[@-~]")


def pasted(text: str) -> str:
    """The log as the user pasted it: terminal line ends as LF, and the escapes the
    paste parser kept as pictures (``pasteparse``) back as ESC."""
    return normalize_paste(text).replace("\u241b", "\x1b")


def without_colour(text: str) -> str:
    """``text`` as a terminal shows it: colour and cursor codes (CSI sequences) gone,
    the words they coloured kept."""
    return _CSI.sub("", text)


def restore(text: str) -> str:
    """Undo ``visible`` (for text the user edited in the paste area)."""
    return text.translate(_RESTORE)


def literal(text: str, style: str = "") -> Text:
    """A Text that shows ``text`` exactly as written."""
    return Text(visible(text), style=style, end="")
