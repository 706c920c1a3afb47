"""The search index's cache: the one cache of derived artefacts, ``assistant/cache.py``.

Kept so that the search modules import it by its old name; every artefact shares that
module's folder and key.
"""

from __future__ import annotations

from assistant.cache import (
    cache_dir,
    has_stamp,
    read_bytes,
    read_json,
    read_marshal,
    set_stamp,
    write_bytes,
    write_json,
    write_marshal,
)

__all__ = [
    "cache_dir",
    "has_stamp",
    "read_bytes",
    "read_json",
    "read_marshal",
    "set_stamp",
    "write_bytes",
    "write_json",
    "write_marshal",
]
