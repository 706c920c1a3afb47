"""The line matcher remembers its verdict per line text: the same answer as without.

The same text comes back on every rank of a job (a server's start-up lines, a
watchdog's message after the prefix is peeled off), so a 128-rank folder classifies
each distinct text once. The verdict depends on the text alone; these tests hold the
report of a multi-rank fixture to the one the matcher gives remembering nothing.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import assistant.logs.match as match
from assistant.logs import read_and_classify
from assistant.logs.lines import clean_line
from assistant.logs.rules import load_rules
from assistant.pipeline import conclude
from assistant.render.data import diagnosis_to_dict

MULTIRANK = Path(__file__).parent / "fixtures" / "logs" / "multirank"


def _report_json(paths: list[str]) -> dict:
    return diagnosis_to_dict(conclude(read_and_classify(paths)))


@pytest.mark.parametrize("case", ["four-files", "time-order", "merged.log", "interleaved.log"])
def test_remembered_verdicts_give_the_same_report(case: str, monkeypatch) -> None:
    paths = [str(MULTIRANK / case)]
    remembered = _report_json(paths)
    monkeypatch.setattr(match, "VERDICTS_KEPT", 0)
    assert _report_json(paths) == remembered


def test_a_repeated_text_is_classified_once_and_keeps_its_own_place() -> None:
    matcher = match.LineMatcher(load_rules())
    calls: list[str] = []
    original = matcher._verdict

    def counting(text: str):
        calls.append(text)
        return original(text)

    matcher._verdict = counting  # type: ignore[method-assign]
    clean = clean_line(
        "[rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"
    )
    first = matcher.classify(clean, 0, 10, 100)
    second = matcher.classify(clean, 5, 20, 900)
    assert len(calls) == 1
    assert first is not None and second is not None
    assert (first.category, first.rule, first.start) == (second.category, second.rule, second.start)
    assert (second.source, second.line, second.offset) == (5, 20, 900)
