"""Typo correction of English query words against the index vocabulary."""

from __future__ import annotations

import pytest

from assistant.search.spelling import MIN_TYPO_LENGTH, correct, slips
from assistant.search.tokenize import stem

KNOWN = {stem(word): count for word, count in [("memory", 12), ("optimizer", 5), ("batch", 4)]}


@pytest.mark.parametrize(
    ("typed", "meant"),
    [("memroy", "memory"), ("optimzer", "optimizer"), ("optimizzer", "optimizer")],
)
def test_a_swapped_missing_or_extra_letter_is_corrected(typed, meant):
    assert correct(typed, KNOWN) == stem(meant)


def test_known_words_short_words_and_non_words_are_left_alone():
    assert correct("memory", KNOWN) is None
    assert correct("memroy"[: MIN_TYPO_LENGTH - 1], KNOWN) is None
    assert correct("fp32bf", KNOWN) is None
    assert correct("显存不足啊啊", KNOWN) is None


def test_substituted_or_changed_first_letters_are_not_corrections():
    # "patched" is one letter from "batched": a real word, not a typo of one
    assert correct("patched", KNOWN) is None
    assert correct("memery", KNOWN) is None


def test_the_candidate_found_in_most_sections_wins():
    assert correct("qwrtzk", {"qwrtz": 1, "qwrtzkp": 5}) == "qwrtzkp"
    assert correct("qwrtzk", {"qwrtz": 6, "qwrtzkp": 5}) == "qwrtz"


def test_slips_are_one_edit_away():
    variants = slips("abc")
    assert {"ab", "bac", "abxc"} <= variants
    assert "abc" not in variants
    assert "xbc" not in variants  # substitution
