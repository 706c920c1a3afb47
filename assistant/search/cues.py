"""What a search question sets aside ("besides X", "不想切 X"), from knowledge/query_cues.yaml.

The guide section that names the set-aside thing is not the answer the user is after;
engine.search ranks it lower.
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
        return {
            "factor": float(data.get("factor", 1.0)),
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
