"""Checks that a text meant to be Chinese holds no English sentence."""

from __future__ import annotations

import re

CJK = re.compile(r"[\u4e00-\u9fff]")
# English words no Chinese sentence has reason to hold (identifiers, model names and
# units such as GiB, bf16 or mb_spec.max_tokens_per_mb are not among them)
ENGLISH = {"a", "the", "is", "not", "set", "assumed", "from", "of", "and", "with", "for"}
ENGLISH |= {"per", "no", "its", "by", "unknown", "counted", "in", "all", "are", "memory"}


def english_words(text: str) -> set[str]:
    """The words of ``text`` that are plain English ones: a sentence left untranslated."""
    return {w.strip(",:;()（）.").lower() for w in text.split()} & ENGLISH
