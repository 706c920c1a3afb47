"""Classify a short description ("训练时显存爆了", "OOM during weight sync").

The TUI chat and ``diagnose -`` accept a sentence instead of a log; the phase
and kind come from the bilingual keyword lists in knowledge/describe.yaml.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, cast

from assistant.logs.lines import strip_controls
from assistant.logs.report import Names, Verdict
from assistant.models import Evidence, Kind, Lang, LogFacts, Phase

_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_LATIN_WORD = re.compile(r"[A-Za-z]{2,}")


def language_of(text: str) -> Lang:
    """Say "zh" when Chinese carries most of the words of ``text``."""
    cjk = len(_CJK.findall(text))
    latin = len(_LATIN_WORD.findall(text))
    # two Chinese characters make about one word
    return "zh" if cjk / 2 > latin and cjk >= 2 else "en"


def log_language(text: str) -> Lang:
    """The language of a log. Tracebacks and library messages are English anyway, so
    a log whose own lines are often Chinese (a quarter of them or more) is Chinese."""
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        return "en"
    chinese = sum(1 for line in lines if _CJK.search(line))
    return "zh" if chinese * 4 >= len(lines) else language_of(text)


def _contains(text: str, word: str) -> bool:
    if _CJK.search(word):
        return word in text
    return re.search(r"(?<![a-z0-9])" + re.escape(word) + r"(?![a-z0-9])", text) is not None


def _best(table: Mapping[str, list[str]], text: str) -> str | None:
    best, best_count = None, 0
    for name, words in table.items():
        count = sum(1 for word in words if _contains(text, word.lower()))
        if count > best_count:
            best, best_count = name, count
    return best


def _without_hedges(lowered: str, hedges: Sequence[str]) -> str:
    """``lowered`` with the spans that advise avoiding a memory failure cut out
    (describe.yaml ``hedges``): what is left is what the text says happened."""
    for hedge in hedges:
        lowered = re.sub(hedge, " ", lowered, flags=re.IGNORECASE)
    return lowered


def is_short(text: str, rules: Mapping[str, Any]) -> bool:
    return len(text.strip()) <= int(rules["max_chars"]) and text.strip().count("\n") < 4


def describe_phase(text: str, rules: Mapping[str, Any]) -> Phase | None:
    # the keys of describe.yaml ``phases`` are phase ids
    return cast("Phase | None", _best(rules["phases"], text.lower()))


def classify_description(text: str, names: Names, rules: Mapping[str, Any]) -> Verdict:
    """The verdict on a description (the only source): oom from memory words, phase and
    kind from keywords."""
    lowered = text.lower()
    spoken = _without_hedges(lowered, rules.get("hedges") or ())
    oom = any(_contains(spoken, w.lower()) for w in rules["oom_words"]) and not any(
        _contains(lowered, w.lower()) for w in rules.get("not_oom_words", [])
    )
    shown = "\n".join(strip_controls(line) for line in text.strip().splitlines())
    name, line = names.at(0, 1)
    evidence = (Evidence(file=name, line=line, text=shown.strip()[:600], role="context"),)
    language = language_of(text)
    if not oom:
        return Verdict(
            oom=False,
            phase="none",
            kind="none",
            confidence=0.5,
            evidence=evidence,
            facts=LogFacts(),
            language=language,
            input_kind="description",
        )
    kind = cast(Kind, _best(rules["kinds"], lowered) or "cuda_oom")  # describe.yaml kind ids
    phase = describe_phase(text, rules) or "unknown"
    if kind == "host_oom":
        phase = "host_memory"
    elif phase == "host_memory":
        phase = "unknown"
    return Verdict(
        oom=True,
        phase=phase,
        kind=kind,
        confidence=0.6 if phase != "unknown" else 0.45,
        evidence=evidence,
        facts=LogFacts(described_by_user=True),
        language=language,
        input_kind="description",
    )
