"""Where the knowledge folder is, in a source checkout and in an installed wheel.

A module of its own, importing nothing of the package, so that the one cache
(``assistant/cache.py``, keyed by the folder's files) and the loader
(``assistant/knowledge.py``, which keeps parsed files in that cache) both use it
without importing each other.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from assistant.errors import KnowledgeError


@cache
def knowledge_dir() -> Path:
    """The knowledge folder of an installed wheel, or of a source checkout."""
    here = Path(__file__).resolve().parent
    for candidate in (here / "knowledge", here.parent / "knowledge"):
        if candidate.is_dir():
            return candidate
    raise KnowledgeError("knowledge/ folder not found next to the assistant package")
