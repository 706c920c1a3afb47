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
    """The body split into short plain-text pieces (sentences, list items, code lines)."""
    sentences: list[str] = []
    for block in _blocks(body):
        for piece in _SENTENCE_END.split(block):
            piece = " ".join(piece.split())
            if piece:
                sentences.append(piece)
    return sentences


def plain_text(body: str) -> str:
    return "\n".join(plain_sentences(body))


def _blocks(body: str) -> list[str]:
    """Paragraphs and list items joined back into one line each; code lines alone."""
    blocks: list[str] = []
    current: list[str] = []
    in_code = False

    def flush() -> None:
        if current:
            blocks.append(_join_wrapped(current))
            current.clear()

    for raw in body.splitlines():
        line = raw.strip()
        if line.startswith("```"):
            flush()
            in_code = not in_code
            continue
        if in_code:
            if line:
                blocks.append(line)
            continue
        line = line.lstrip(">").strip()
        if not line or _TABLE_RULE.match(line):
            flush()
            continue
        if line.startswith("|"):
            flush()
            blocks.append(_clean(" ".join(cell.strip() for cell in line.strip("|").split("|"))))
            continue
        if _ITEM.match(line):
            flush()
            line = _ITEM.sub("", line)
        current.append(_clean(line))
    flush()
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
