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
    data = read_bytes(name)
    if data is None:
        return None
    try:
        return json.loads(data.decode("utf-8"))
    except ValueError:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        return None


def write_json(name: str, data: Any) -> None:
    """Store ``data`` as compact UTF-8 JSON (atomically; failures are ignored)."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    write_bytes(name, text.encode("utf-8"))


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
    """Store ``data`` atomically (a temporary file, then a rename); failures are ignored:
    the cache only saves time, it never changes results."""
    import tempfile

    folder = cache_dir()
    if folder is None:
        return
    try:
        fd, temp = tempfile.mkstemp(dir=folder, prefix=".tmp-")
    except OSError:
        return
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(temp, folder / name)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(temp)


def has_stamp(name: str) -> bool:
    """A verdict kept as an empty file (e.g. "these files passed validation")."""
    folder = cache_dir()
    return folder is not None and (folder / name).exists()


def set_stamp(name: str) -> None:
    """Keep a verdict; a read-only cache only costs the check next time."""
    folder = cache_dir()
    if folder is None:
        return
    with contextlib.suppress(OSError):
        (folder / name).touch()
