"""Resolve the user's paths into readable UTF-8 log files.

A path may be a file, ``-`` (standard input), a folder (every ``*.log *.txt
*.out *.err`` below it, gzipped or not) or several of these. Everything the
scanner reads afterwards is a seekable file of UTF-8 bytes: standard input,
gzip files and logs in GBK or UTF-16 are first copied into temporary files.

A file named explicitly that cannot be read is an error. A file found inside a
folder that cannot be read (permissions, a broken or looping symlink, a FIFO, a
corrupt gzip, binary data) is skipped and listed in ``SourceSet.unread``, so one
bad file does not hide the others and the user is still told what was left out.
"""

from __future__ import annotations

import codecs
import contextlib
import os
import stat
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, cast

from assistant.errors import UserError

LOG_SUFFIXES = (".log", ".txt", ".out", ".err")
SAMPLE_BYTES = 64 * 1024
COPY_CHUNK = 4 * 1024 * 1024
# A gzip file may expand to at most this much, or 200 times its own size if more:
# real logs compress 10-100x; a "zip bomb" (1000x) would fill the disk.
MIN_UNPACK_LIMIT = 2 * 1024**3
UNPACK_RATIO = 200
_BINARY_MAGIC = (
    b"\x7fELF",
    b"\x89PNG",
    b"PK\x03\x04",
    b"%PDF",
    b"\x89HDF",
    b"7z\xbc\xaf",
    b"\xff\xd8\xff",
    b"GIF8",
    b"BZh",
    b"\xfd7zXZ",
    b"\x28\xb5\x2f\xfd",
    b"SQLite format",
    b"\x93NUMPY",
    b"\x80\x02",
    b"\x80\x04",
)
_ODD_CONTROLS = bytes(b for b in range(0x20) if b not in b"\t\n\r\f\b\x1b\x00")
_HIGH_BYTES = bytes(range(0x80, 0x100))


@dataclass(frozen=True)
class Source:
    """One log, ready to scan: ``path`` holds UTF-8 text (maybe with bad bytes)."""

    name: str  # as the user named it (shown in evidence)
    path: str
    size: int
    sample: bytes  # the first bytes, for language detection


def detect_encoding(sample: bytes) -> str | None:
    """The codec of a text sample, or None when it is not text at all."""
    if sample.startswith(codecs.BOM_UTF16_LE) and _utf16_newlines(sample, b"\n\x00"):
        return "utf-16"
    if sample.startswith(codecs.BOM_UTF16_BE) and _utf16_newlines(sample, b"\x00\n"):
        return "utf-16"
    if sample.startswith(codecs.BOM_UTF8):
        return "utf-8"
    even, odd = sample[0::2], sample[1::2]
    if len(sample) >= 8:
        if odd.count(0) > 0.4 * len(odd) and even.count(0) < 0.05 * len(even):
            return "utf-16-le"
        if even.count(0) > 0.4 * len(even) and odd.count(0) < 0.05 * len(odd):
            return "utf-16-be"
    if looks_binary(sample):
        return None
    text = sample.decode("utf-8", errors="replace")
    bad = text.count("\ufffd")
    high = len(sample) - len(sample.translate(None, _HIGH_BYTES))
    if bad <= max(3, high // 20):
        return "utf-8"
    with contextlib.suppress(UnicodeDecodeError):
        sample[: len(sample) - 1].decode("gbk")
        return "gb18030"
    with contextlib.suppress(UnicodeDecodeError):
        sample.decode("gbk")
        return "gb18030"
    return "utf-8"


def _utf16_newlines(sample: bytes, newline: bytes) -> bool:
    """A BOM is believed unless the sample has newlines and none of them is UTF-16:
    a UTF-8 log whose first bytes happen to be 0xff 0xfe is garbage, not UTF-16."""
    return b"\n" not in sample or newline in sample


def looks_binary(sample: bytes) -> bool:
    """Magic numbers, many NUL bytes or many control bytes: not a text log.

    A single NUL is allowed: PyTorch 2.3 printed the device index as a char,
    so "... GPU\\0" ends real OOM messages.
    """
    if sample.startswith(_BINARY_MAGIC):
        return True
    if not sample:
        return False
    if sample.count(0) > max(8, len(sample) // 20):
        return True
    controls = len(sample) - len(sample.translate(None, _ODD_CONTROLS))
    return controls > len(sample) // 20


class SourceSet(contextlib.AbstractContextManager["SourceSet"]):
    """The sources of one run; temporary copies are removed on exit."""

    def __init__(self) -> None:
        self.sources: list[Source] = []
        self.unread: list[str] = []  # "name: why" for files inside folders that were skipped
        self._temps: list[str] = []

    def __exit__(self, *exc: object) -> None:
        for path in self._temps:
            with contextlib.suppress(OSError):
                os.unlink(path)

    def temp_file(self) -> tuple[str, IO[bytes]]:
        # the caller closes it; the file itself is removed in __exit__
        import tempfile  # only stdin, gzip and other encodings need one: not at start-up

        handle = tempfile.NamedTemporaryFile(  # noqa: SIM115
            prefix="areal-doctor-", suffix=".log", delete=False
        )
        self._temps.append(handle.name)
        return handle.name, handle

    @property
    def total_bytes(self) -> int:
        return sum(source.size for source in self.sources)


def open_sources(paths: Sequence[str]) -> SourceSet:
    """Resolve ``paths``; raise UserError for missing, empty or binary input."""
    if not paths:
        raise UserError("no input: give a log file, a folder or - for standard input")
    sources = SourceSet()
    try:
        for name, path, explicit in _expand(paths):
            source = _prepare_or_skip(sources, name, path, explicit)
            if source is not None:
                sources.sources.append(source)
        if not sources.sources:
            raise UserError(_nothing_readable(sources.unread))
        if all(not s.sample.strip() for s in sources.sources):
            raise UserError("empty input")
    except BaseException:
        sources.__exit__(None, None, None)
        raise
    return sources


def _nothing_readable(unread: list[str]) -> str:
    if not unread:
        return "no text log files in the input"
    more = f" and {len(unread) - 1} more" if len(unread) > 1 else ""
    return f"no readable text log files in the input: {unread[0]}{more}"


def _expand(paths: Sequence[str]) -> Iterator[tuple[str, str, bool]]:
    """(display name, path, given explicitly) for every file to read."""
    for raw in paths:
        if raw == "-":
            yield "<stdin>", "-", True
            continue
        path = Path(raw)
        if path.is_dir():
            found = sorted(_folder_logs(path))
            if not found:
                raise UserError(f"no log files in folder: {raw}")
            for item in found:
                yield str(item), str(item), False
        elif path.exists():
            yield raw, raw, True
        else:
            raise UserError(f"no such file: {raw}")


def _folder_logs(folder: Path) -> Iterator[Path]:
    for root, _dirs, files in os.walk(folder):
        for name in files:
            lowered = name.lower().removesuffix(".gz")
            if lowered.endswith(LOG_SUFFIXES):
                yield Path(root) / name


class _Unreadable(Exception):
    """One file cannot be used: ``str()`` is the error message, ``entry`` the short form."""

    def __init__(self, name: str, reason: str, *, read_error: bool = False) -> None:
        super().__init__(f"cannot read {name}: {reason}" if read_error else f"{name}: {reason}")
        self.entry = f"{name} ({reason})"


def _prepare_or_skip(sources: SourceSet, name: str, path: str, explicit: bool) -> Source | None:
    """A file given by name must be readable; one found in a folder is skipped if not."""
    try:
        return _prepare(sources, name, path, explicit)
    except _Unreadable as exc:
        if explicit:
            raise UserError(str(exc)) from None
        sources.unread.append(exc.entry)
        return None


def _prepare(sources: SourceSet, name: str, path: str, explicit: bool) -> Source:
    """Make ``path`` a UTF-8 file on disk."""
    try:
        if path == "-":
            path = _copy_stream(sources, _stdin_bytes(), name)
        elif not _is_regular(path):
            if not explicit:  # a FIFO in a folder would block: only named pipes are read
                raise _Unreadable(name, "not a regular file")
            with open(path, "rb") as stream:  # a pipe such as <(kubectl logs ...)
                path = _copy_stream(sources, stream, name)
        with open(path, "rb") as handle:
            head = handle.read(SAMPLE_BYTES)
    except PermissionError:
        raise _Unreadable(name, "permission denied", read_error=True) from None
    except OSError as exc:
        reason = (exc.strerror or str(exc)).lower()
        raise _Unreadable(name, reason, read_error=True) from None
    if head.startswith(b"\x1f\x8b"):
        path = _gunzip(sources, path, name)
        with open(path, "rb") as handle:
            head = handle.read(SAMPLE_BYTES)
    encoding = detect_encoding(head)
    if encoding is None:
        raise _Unreadable(name, "not a text log")
    if encoding not in ("utf-8",):
        path = _transcode(sources, path, encoding)
        with open(path, "rb") as handle:
            head = handle.read(SAMPLE_BYTES)
    return Source(name=name, path=path, size=os.path.getsize(path), sample=head)


def _is_regular(path: str) -> bool:
    """A plain file (symlinks followed); raises OSError for dangling or looping links."""
    return stat.S_ISREG(os.stat(path).st_mode)


def _stdin_bytes() -> IO[bytes]:
    """The binary standard input; an error when it is closed (``<&-``)."""
    stream = sys.stdin
    if stream is None:
        raise _Unreadable("<stdin>", "standard input is closed", read_error=True)
    buffer: object = getattr(stream, "buffer", stream)
    return cast("IO[bytes]", buffer)


def _copy_stream(sources: SourceSet, stream: IO[bytes], name: str) -> str:
    import shutil

    temp_path, handle = sources.temp_file()
    with handle:
        try:
            shutil.copyfileobj(stream, handle, COPY_CHUNK)
        except (OSError, ValueError) as exc:  # ValueError: a closed stream
            raise _Unreadable(name, str(exc), read_error=True) from None
    return temp_path


def _gunzip(sources: SourceSet, path: str, name: str) -> str:
    import gzip
    import zlib

    limit = max(MIN_UNPACK_LIMIT, UNPACK_RATIO * os.path.getsize(path))
    temp_path, handle = sources.temp_file()
    with handle:
        try:
            with gzip.open(path, "rb") as packed:
                written = 0
                while chunk := packed.read(COPY_CHUNK):
                    written += len(chunk)
                    if written > limit:
                        raise _Unreadable(
                            name,
                            f"unpacks to more than {limit >> 20} MiB; "
                            "unpack the part you need and pass that file",
                        )
                    handle.write(chunk)
        except (OSError, EOFError, zlib.error) as exc:
            raise _Unreadable(name, f"not a valid gzip file: {exc}") from None
    return temp_path


def _transcode(sources: SourceSet, path: str, encoding: str) -> str:
    """Copy ``path`` into a UTF-8 temporary file, bad bytes replaced."""
    decoder = codecs.getincrementaldecoder(encoding)(errors="replace")
    temp_path, handle = sources.temp_file()
    with handle, open(path, "rb") as raw:
        while chunk := raw.read(COPY_CHUNK):
            handle.write(decoder.decode(chunk).encode("utf-8"))
        handle.write(decoder.decode(b"", final=True).encode("utf-8"))
    return temp_path
