"""What a search question sets aside ("besides X", "不想切 X"), and whether it holds pasted
error output, from knowledge/query_cues.yaml.

The guide section that names the set-aside thing is not the answer the user is after;
engine.search ranks it lower. Error output is better read by ``diagnose`` (output.py
says so).
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any

from assistant.errors import KnowledgeError


@cache
def _cues() -> dict[str, Any]:
    from assistant.knowledge import load_yaml

    data = load_yaml("query_cues.yaml") or {}
    try:
        pasted = data["pasted_error"]
        return {
            "pasted": [re.compile(p, re.IGNORECASE) for p in pasted["patterns"]],
            "generic": [re.compile(p, re.IGNORECASE) for p in pasted.get("generic") or []],
            "hint": {lang: str(pasted["hint"][lang]) for lang in ("en", "zh")},
            "factor": float(data.get("factor", 1.0)),
            "alternatives": (
                float(data["alternatives"]["factor"]),
                [[str(word) for word in group] for group in data["alternatives"]["sets"]],
            ),
            "langs": {
                lang: (
                    [re.compile(p, re.IGNORECASE) for p in data[lang]["cues"]],
                    re.compile(data[lang]["end"], re.IGNORECASE),
                )
                for lang in ("en", "zh")
            },
        }
    except (KeyError, TypeError, re.error) as exc:
        raise KnowledgeError(f"query_cues.yaml: {exc}") from None


def alternatives() -> tuple[float, list[list[str]]]:
    """The factor and the sets of alternatives (one inference server or the other)."""
    factor, groups = _cues()["alternatives"]
    return float(factor), [list(group) for group in groups]


def aside_factor() -> float:
    """How much a section that names a set-aside thing keeps of its score."""
    return float(_cues()["factor"])


def set_aside(query: str) -> list[str]:
    """The texts the query sets aside, each cut at the end of its clause."""
    found = []
    for cues, end in _cues()["langs"].values():
        for cue in cues:
            for match in cue.finditer(query):
                text = match.group("aside")
                stop = end.search(text)
                text = (text[: stop.start()] if stop else text).strip()
                if text:
                    found.append(text)
    return found


def pasted_error(query: str) -> str | None:
    """The first piece of program output found in ``query`` ("CUDA out of memory"), or None."""
    found = [match for cue in _cues()["pasted"] if (match := cue.search(query))]
    if not found:
        return None
    first = min(found, key=lambda match: match.start())
    return str(first.group())


def pasted_error_hint(lang: str) -> str:
    """The sentence that points from a pasted error to ``diagnose`` (``lang``: en or zh)."""
    hints: dict[str, str] = _cues()["hint"]
    return hints.get(lang, hints["en"])


# A single request of this size or more cannot fit on any one GPU with room to spare
# (80 GiB cards are the common largest): the question is about a tensor larger than the
# card, whatever else it says. Its size is the one word that says so, and it is not
# generic, so it is kept and said in the words of the oversized-request note.
LARGE_REQUEST_GIB = 64.0
_UNIT_GIB = {"k": 1 / 1024**2, "m": 1 / 1024, "g": 1.0, "t": 1024.0}
_SIZE = re.compile(
    r"(?:allocat\w*|alloc|申请|分配)[^,，。;；]{0,12}?"
    r"(?<![\w.])(\d+(?:\.\d+)?)\s*(?:多\s*)?([KMGT])(?:i?B)?(?![a-z])",
    re.IGNORECASE,
)
LARGE_REQUEST_WORDS = "one allocation larger than the gpu 单次申请超过显卡容量"  # the note's titles


def large_request(query: str) -> bool:
    """Whether ``query`` asks for a memory size of LARGE_REQUEST_GIB or more ("Tried to
    allocate 96.00 GiB", "申请 200 多 G"); a size without an allocation word is a total
    ("7B 的 Adam 要 84 GB"), not one request."""
    return any(
        float(number) * _UNIT_GIB[unit.lower()] >= LARGE_REQUEST_GIB
        for number, unit in _SIZE.findall(query)
    )


# A model size ("7B", "70 亿", "七十亿参数") in a question of how much memory is the
# arithmetic of the optimizer-memory note (weights + states per parameter), which the
# optimizer-dtype section, sharing every optimizer word, otherwise answered first.
_PARAMS = re.compile(r"(?<![\w.])\d+(?:\.\d+)?\s*B(?![a-z])|\d+\s*亿|[一二三四五六七八九十百千]+亿")
_HOW_MUCH = re.compile(r"\bhow (?:much|many)\b|多少|几个|几 ?G", re.IGNORECASE)
_MEMORY = re.compile(
    r"memory|显存|内存|bytes|字节|\d\s*G(?:i?B)?\b|adam|optimizer|优化器", re.IGNORECASE
)
ARITHMETIC_WORDS = "memory arithmetic 按参数量估算"  # the note's title and concept words


def memory_arithmetic(query: str) -> bool:
    """Whether ``query`` asks how much memory a model of a given size takes."""
    return all(pattern.search(query) for pattern in (_PARAMS, _HOW_MUCH, _MEMORY))


def without_generic_error(query: str) -> str:
    """``query`` without the words every CUDA OOM prints ("CUDA out of memory. Tried to
    allocate"); ``query`` itself when nothing else would be left to search. A size no GPU
    can hold (large_request) is said in words instead of being dropped with them, and so
    is a question of memory arithmetic (memory_arithmetic)."""
    text = query
    if large_request(query):
        text = f"{text} {LARGE_REQUEST_WORDS}"
    if memory_arithmetic(query):
        text = f"{text} {ARITHMETIC_WORDS}"
    for pattern in _cues()["generic"]:
        text = pattern.sub(" ", text)
    return text if text.strip(" .,:;，。：") else query
