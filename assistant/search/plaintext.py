"""Markdown section bodies as plain sentences, for snippets and for indexing.

Only the Markdown the guide uses is handled: paragraphs hard-wrapped over several
lines, ``-`` and ``1.`` list items, ``>`` quotes, fenced code, tables, ``**bold**``,
`` `code` `` and ``[text](url)`` links.
"""

from __future__ import annotations

import re

_LINK = re.compile(r"\[([^\]]+)\]\([^)]*\)")
_INLINE_MARKUP = re.compile(r"\*\*|`")
_ITEM = re.compile(r"^(?:[-*]|\d+\.)\s+")
_TABLE_RULE = re.compile(r"^\|?[\s:|-]+\|?$")
# End of a sentence: Chinese full stops always; ASCII ones when followed by a space.
_SENTENCE_END = re.compile(r"(?<=[。！？；])|(?<=[.!?;])\s+(?=[A-Z(`*])")


def plain_sentences(body: str) -> list[str]:
    """The body as short plain-text pieces: sentences, list items, table rows, code blocks.

    A fenced code block stays one piece (its lines joined by two spaces), so a snippet
    shows ``actor:  gradient_checkpointing: true`` rather than a lone ``actor:``.
    """
    sentences: list[str] = []
    for block, is_code in _blocks(body):
        pieces = [block] if is_code else _SENTENCE_END.split(block)
        for piece in pieces:
            piece = " ".join(piece.split()) if not is_code else piece
            if piece:
                sentences.append(piece)
    return sentences


def _blocks(body: str) -> list[tuple[str, bool]]:
    """(text, is_code): paragraphs and list items joined back into one line each."""
    blocks: list[tuple[str, bool]] = []
    current: list[str] = []
    code: list[str] | None = None

    def flush() -> None:
        if current:
            blocks.append((_join_wrapped(current), False))
            current.clear()

    for raw in body.splitlines():
        line = raw.strip()
        if line.startswith("```"):
            flush()
            if code is None:
                code = []
            else:
                blocks.append(("  ".join(code), True))
                code = None
            continue
        if code is not None:
            if line:
                code.append(" ".join(line.split()))
            continue
        line = line.lstrip(">").strip()
        if not line or _TABLE_RULE.match(line):
            flush()
            continue
        if line.startswith("|"):
            flush()
            cells = " ".join(cell.strip() for cell in line.strip("|").split("|"))
            blocks.append((_clean(cells), False))
            continue
        if _ITEM.match(line):
            flush()
            line = _ITEM.sub("", line)
        current.append(_clean(line))
    flush()
    if code:
        blocks.append(("  ".join(code), True))
    return blocks


def _clean(line: str) -> str:
    return _INLINE_MARKUP.sub("", _LINK.sub(r"\1", line)).lstrip("#").strip()


def _join_wrapped(lines: list[str]) -> str:
    """Join hard-wrapped lines: no space between two Chinese characters, else one space."""
    text = lines[0]
    for line in lines[1:]:
        joiner = "" if _is_cjk(text[-1:]) and _is_cjk(line[:1]) else " "
        text += joiner + line
    return text


def _is_cjk(char: str) -> bool:
    """Chinese characters and full-width punctuation (no space is written between them)."""
    return bool(char) and ("\u3000" <= char <= "\u9fff" or "\uff00" <= char <= "\uffef")
