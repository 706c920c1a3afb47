"""The one cache of everything derived from knowledge/: one folder, keyed one way.

Every artefact that only saves time lives here: the parsed YAML of each knowledge file,
the verdicts "the knowledge passed validation" and "the rule files passed validation",
the literal gates of the rule regexes, the log prefilter's compiled Hyperscan database,
the guide's parsed sections, the compiled search index with rank-bm25's scores of each
index term, and jieba's prefix dictionary.

The folder is ``ROOT/k-KEY``. ROOT is ``$AREAL_DOCTOR_CACHE_DIR`` if set, else
``$XDG_CACHE_HOME/areal-doctor``, else ``~/.cache/areal-doctor``. KEY is one fingerprint
of what every artefact is derived from: this package's version, Python's version (whose
``re`` compiled and checked the patterns), and the path, size and change time of every
file under knowledge/ (YAML, guide Markdown, jieba dictionaries: a change to any of them
is a new folder) and of the package's own modules (an edited checkout). So no
artefact carries a key of its own, and none can outlive the files it was built from.

When the folder cannot be created or written, callers get ``None`` (reads miss, writes
are dropped) and build in memory: the cache only costs time, it never changes results.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from functools import cache
from pathlib import Path
from typing import Any

PREFIX = "k-"
KNOWLEDGE_VALID = "knowledge-valid"  # the verdict "every knowledge file and reference is valid"
STALE_DAYS = 30  # a key folder not written this long goes when a new one is made


def _configured_dir() -> Path:
    explicit = os.environ.get("AREAL_DOCTOR_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "areal-doctor"


def _stats(folder: str, suffix: str = "") -> list[str]:
    """Path (below ``folder``), size and change time of every file ending in ``suffix``,
    in a stable order; hidden files and bytecode left out."""
    found: list[str] = []
    for base, dirs, names in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "__pycache__")
        for name in sorted(names):
            if name.endswith(suffix) and not name.startswith("."):
                stat = os.stat(os.path.join(base, name))
                found.append(f"{base[len(folder) :]}/{name}:{stat.st_size}:{stat.st_mtime_ns}")
    return found


def knowledge_key() -> str:
    """The one key: package and Python version, and the path, size and change time of
    every file of knowledge/ and of the package's modules (a stat is cheap; reading and
    hashing the megabyte of knowledge/ on every run would cost more than it protects)."""
    import hashlib
    import sys

    from assistant import __version__, paths

    knowledge, package = str(paths.knowledge_dir()), os.path.dirname(os.path.abspath(__file__))
    parts = [__version__, str(sys.version_info[:2]), knowledge, *_stats(knowledge)]
    parts += [package, *_stats(package, ".py")]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:24]


@cache
def cache_dir() -> Path | None:
    """This key's folder, or None when it cannot be created or written."""
    root = _configured_dir()
    try:
        folder = root / f"{PREFIX}{knowledge_key()}"
    except OSError:  # an unreadable knowledge file: the loaders will say so
        return None
    if not folder.is_dir():
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError:
            return None
        _prune(root, keep=folder)
    return folder if os.access(folder, os.W_OK) else None


# what earlier versions kept loose in the root, each with a key of its own
_LEGACY = ("yaml-*.marshal", "rules-valid-*", "knowledge-valid-*", "prefilter-*.hsdb",
           "search-index.json", "jieba.u*.cache")  # fmt: skip


def _prune(root: Path, keep: Path) -> None:
    """Remove key folders (and loose files of earlier versions) not written for
    STALE_DAYS; other checkouts or versions may still use recent ones, and a removed one
    is only built again. Nothing else in the root is touched (it may be a shared folder)."""
    import fnmatch
    import shutil

    cutoff = time.time() - STALE_DAYS * 86400
    with contextlib.suppress(OSError):
        for entry in root.iterdir():
            if entry == keep or entry.stat().st_mtime >= cutoff:
                continue
            if entry.name.startswith(PREFIX) and entry.is_dir():
                shutil.rmtree(entry, ignore_errors=True)
            elif entry.is_file() and any(fnmatch.fnmatch(entry.name, p) for p in _LEGACY):
                with contextlib.suppress(OSError):
                    entry.unlink()


def clear() -> None:
    """Forget the folder found in this process (tests, or after editing knowledge/)."""
    cache_dir.cache_clear()


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


def read_marshal(name: str) -> Any | None:
    """The cached marshal data ``name``, or None when absent, empty or unreadable (the
    caller checks its shape: a cache file is never trusted to hold what it expects)."""
    import marshal

    data = read_bytes(name)
    if not data:
        return None
    try:
        return marshal.loads(data)
    except (EOFError, ValueError, TypeError):
        return None


def write_marshal(name: str, data: Any) -> None:
    """Store plain data with marshal (atomically; failures are ignored)."""
    import marshal

    write_bytes(name, marshal.dumps(data))


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
