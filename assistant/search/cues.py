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
            "expansions": [_expansion(spec) for spec in data.get("expansions") or []],
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


def _expansion(spec: dict[str, Any]) -> dict[str, Any]:
    size = spec.get("size")
    return {
        "id": str(spec["id"]),
        "add": str(spec["add"]),
        "all_of": [re.compile(p, re.IGNORECASE) for p in spec.get("all_of") or []],
        "size": (
            (re.compile(size["pattern"], re.IGNORECASE), float(size["at_least_gib"]))
            if size
            else None
        ),
    }


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


def set_aside_cues(query: str) -> list[str]:
    """The words of the cues that set something aside ("已经压到最小", "besides"), without
    what they set aside: they say that a fix is used up, not which topic is asked."""
    found = []
    for cues, _end in _cues()["langs"].values():
        for cue in cues:
            for match in cue.finditer(query):
                words = query[match.start() : match.start("aside")]
                words += query[match.end("aside") : match.end()]
                if words.strip():
                    found.append(words.strip())
    return found


def pasted_patterns(query: str) -> list[re.Pattern[str]]:
    """The patterns of program output (pasted_error.patterns) that ``query`` holds."""
    return [cue for cue in _cues()["pasted"] if cue.search(query)]


def pasted_error_hint(lang: str) -> str:
    """The sentence that points from a pasted error to ``diagnose`` (``lang``: en or zh)."""
    hints: dict[str, str] = _cues()["hint"]
    return hints.get(lang, hints["en"])


_UNIT_GIB = {"k": 1 / 1024**2, "m": 1 / 1024, "g": 1.0, "t": 1024.0}


def expansions(query: str) -> list[str]:
    """The ids of the expansions of query_cues.yaml that ``query`` fires, in file order."""
    return [spec["id"] for spec in _cues()["expansions"] if _fires(spec, query)]


def _fires(spec: dict[str, Any], query: str) -> bool:
    if not all(pattern.search(query) for pattern in spec["all_of"]):
        return False
    size = spec["size"]
    if size is None:
        return True
    pattern, at_least = size
    return any(
        float(number) * _UNIT_GIB[unit.lower()] >= at_least
        for number, unit in pattern.findall(query)
    )


def without_generic_error(query: str) -> str:
    """``query`` without the words every CUDA OOM prints ("CUDA out of memory. Tried to
    allocate"); ``query`` itself when nothing else would be left to search. What an
    expansion of query_cues.yaml recognises (a size no GPU can hold, a question of memory
    arithmetic) is said in its note's words instead of being dropped with them."""
    text = query
    # two expansions that say the same note's words (a size, or a question of how to
    # work it out) add them once
    added = dict.fromkeys(spec["add"] for spec in _cues()["expansions"] if _fires(spec, query))
    for words in added:
        text = f"{text} {words}"
    for pattern in _cues()["generic"]:
        text = pattern.sub(" ", text)
    return text if text.strip(" .,:;，。：") else query
