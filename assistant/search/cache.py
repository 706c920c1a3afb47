"""Where the compiled search index, jieba's prefix dictionary and the log prefilter's
compiled Hyperscan database are cached.

``$AREAL_DOCTOR_CACHE_DIR`` if set, else ``$XDG_CACHE_HOME/areal-doctor``, else
``~/.cache/areal-doctor``. When the folder cannot be created or written, callers get
``None`` and simply build in memory: the cache only saves time, it never changes results.
"""

from __future__ import annotations

import contextlib
import json
import os
from functools import cache
from pathlib import Path
from typing import Any


@cache
def cache_dir() -> Path | None:
    folder = _configured_dir()
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return folder if os.access(folder, os.W_OK) else None


def _configured_dir() -> Path:
    explicit = os.environ.get("AREAL_DOCTOR_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "areal-doctor"


def read_json(name: str) -> Any | None:
    """The cached JSON document ``name``, or None when absent or unreadable."""
    folder = cache_dir()
    if folder is None:
        return None
    try:
        with (folder / name).open(encoding="utf-8") as handle:
            return json.load(handle)
    except (OSError, ValueError):
        return None


def write_json(name: str, data: Any) -> None:
    """Store ``data`` atomically (write a temporary file, then rename); failures are ignored."""
    import tempfile

    folder = cache_dir()
    if folder is None:
        return
    try:
        fd, temp = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=".json")
    except OSError:
        return
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle, ensure_ascii=False, separators=(",", ":"))
        os.replace(temp, folder / name)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(temp)


def read_bytes(name: str) -> bytes | None:
    """The cached bytes ``name``, or None when absent or unreadable."""
    folder = cache_dir()
    if folder is None:
        return None
    try:
        return (folder / name).read_bytes()
    except OSError:
        return None


def write_bytes(name: str, data: bytes) -> None:
    """Store ``data`` atomically; failures are ignored (the cache only saves time)."""
    import tempfile

    folder = cache_dir()
    if folder is None:
        return
    try:
        fd, temp = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=".bin")
    except OSError:
        return
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(temp, folder / name)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(temp)
