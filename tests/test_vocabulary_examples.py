"""Every entry of the frame vocabulary carries its own examples, and they hold.

An entry of knowledge/vocabulary/ names lines it must fire on (`match:`) and lines it
must not (`no_match:`); this one parametrized test checks them all through the matcher
the classifier uses, so an entry whose example stops matching fails here by its id.
"""

from __future__ import annotations

import pytest

from assistant.logs.phase import fires
from assistant.logs.rules import PhasePattern, load_rules

VOCABULARY = [p for p in load_rules().phases.patterns if p.examples or p.generic]


def _id(pattern: PhasePattern) -> str:
    return pattern.id


def test_the_core_vocabulary_is_loaded() -> None:
    ids = {p.id for p in VOCABULARY}
    assert {"core-train", "core-serve", "core-load", "core-weight-sync"} <= ids


@pytest.mark.parametrize("pattern", VOCABULARY, ids=_id)
def test_entry_has_a_match_example(pattern: PhasePattern) -> None:
    assert pattern.examples, f"{pattern.id} has no 'match:' example"


@pytest.mark.parametrize("pattern", VOCABULARY, ids=_id)
def test_entry_fires_on_its_examples(pattern: PhasePattern) -> None:
    missed = [line for line in pattern.examples if not fires(pattern, line)]
    assert not missed, f"{pattern.id} does not fire on {missed}"


@pytest.mark.parametrize("pattern", VOCABULARY, ids=_id)
def test_entry_does_not_fire_on_its_counter_examples(pattern: PhasePattern) -> None:
    wrong = [line for line in pattern.counter_examples if fires(pattern, line)]
    assert not wrong, f"{pattern.id} fires on {wrong}"
