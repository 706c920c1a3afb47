"""Typo tolerance: an unknown English query word is read as the guide word one slip away.

People type ``optimzer``, ``memroy`` or ``chekpointing`` in a hurry. A plain query word
whose stem the index does not know, long enough not to be an abbreviation, is replaced
by the known term reached by one slip of the word (a missing or extra letter, or two
adjacent letters swapped; then stemming); when several are, by the one found in most
sections. Chinese, numbers and config keys are left alone.

Substituted letters are not tried, nor a changed first letter: those mostly turn real
English words into guide words (``patched`` -> ``batched``, ``stopped`` -> ``stepped``).
"""

from __future__ import annotations

from collections.abc import Mapping

from assistant.search.tokenize import stem

# Shorter words are too often abbreviations (mbs, ckpt, vram) or real words one letter
# from a guide word (match/batch) to be "corrected".
MIN_TYPO_LENGTH = 6
_LETTERS = "abcdefghijklmnopqrstuvwxyz"


def correct(word: str, doc_counts: Mapping[str, int]) -> str | None:
    """The known term one slip away from ``word`` (most frequent first), or None.

    ``doc_counts`` maps each index term to the number of sections that have it.
    """
    if len(word) < MIN_TYPO_LENGTH or not (word.isascii() and word.isalpha()):
        return None
    if stem(word) in doc_counts:
        return None
    found = {stem(variant) for variant in slips(word) if variant[:1] == word[:1]}
    known = [term for term in found if term in doc_counts]
    if not known:
        return None
    return max(known, key=lambda term: (doc_counts[term], term))


def slips(word: str) -> set[str]:
    """Every string one deleted letter, inserted letter or adjacent swap away from ``word``."""
    splits = [(word[:i], word[i:]) for i in range(len(word) + 1)]
    deletes = {a + b[1:] for a, b in splits if b}
    swaps = {a + b[1] + b[0] + b[2:] for a, b in splits if len(b) > 1}
    inserts = {a + c + b for a, b in splits for c in _LETTERS}
    return (deletes | swaps | inserts) - {word}
