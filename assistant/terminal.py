"""Terminal manners: colour only where wanted, a progress bar only on a terminal."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType

PROGRESS_MIN_BYTES = 32 * 1024 * 1024  # smaller inputs finish before a bar is worth drawing


def use_color(stream: object = None) -> bool:
    """Colour on a terminal, unless NO_COLOR is set (https://no-color.org) or TERM=dumb."""
    stream = stream or sys.stdout
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    return bool(getattr(stream, "isatty", lambda: False)())


def stderr_is_terminal() -> bool:
    return is_terminal(sys.stderr)


def is_terminal(stream: object) -> bool:
    """False also for a closed stream (``<&-`` makes ``sys.stdin`` None)."""
    return stream is not None and bool(getattr(stream, "isatty", lambda: False)())


def read_terminal(stream: object, prompt: str) -> bytes:
    """What the user types or pastes on a terminal, up to one Ctrl-D on an empty line.

    Reading a terminal in blocks (``shutil.copyfileobj``) asks again after the first
    end-of-file, so the user had to press Ctrl-D twice, and nothing said it was
    waiting: here the prompt goes to stderr and each read takes what the terminal
    hands over (a line, or nothing on Ctrl-D)."""
    sys.stderr.write(prompt)
    sys.stderr.flush()
    fd = stream.fileno()  # type: ignore[attr-defined]
    chunks: list[bytes] = []
    while chunk := os.read(fd, 1 << 16):
        chunks.append(chunk)
    return b"".join(chunks)


def write_out(text: str) -> None:
    """Print ``text``; characters the terminal's encoding lacks become escapes, not a crash."""
    stream = sys.stdout
    if stream is None:
        from assistant.errors import UserError

        raise UserError("standard output is closed")
    text = text if text.endswith("\n") else text + "\n"
    try:
        stream.write(text)
    except UnicodeEncodeError:  # e.g. LANG=en_US.ISO-8859-1 and a Chinese diagnosis
        encoding = getattr(stream, "encoding", None) or "ascii"
        stream.write(text.encode(encoding, "backslashreplace").decode(encoding))
    stream.flush()


class ProgressBar:
    """A one-line progress bar on stderr; silent when stderr is not a terminal."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self._last_draw = 0.0
        self._drawn = False

    @classmethod
    def for_paths(cls, paths: Sequence[str]) -> ProgressBar:
        return cls(stderr_is_terminal() and _total_size(paths) >= PROGRESS_MIN_BYTES)

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled or total <= 0:
            return
        now = time.monotonic()
        if now - self._last_draw < 0.1 and done < total:
            return
        self._last_draw = now
        share = min(done / total, 1.0)
        width = 30
        filled = int(share * width)
        bar = "#" * filled + "-" * (width - filled)
        sys.stderr.write(f"\rscanning [{bar}] {share:4.0%} {done >> 20}/{total >> 20} MiB")
        sys.stderr.flush()
        self._drawn = True

    def __enter__(self) -> ProgressBar:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._drawn:
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()


def _total_size(paths: Sequence[str]) -> int:
    total = 0
    for raw in paths:
        if raw == "-":
            continue
        path = Path(raw)
        try:
            if path.is_file():
                total += path.stat().st_size
            elif path.is_dir():
                for folder, _dirs, files in os.walk(path):  # never follows symlinks
                    total += sum(_size(os.path.join(folder, name)) for name in files)
                    if total >= PROGRESS_MIN_BYTES:
                        break
        except OSError:
            continue
        if total >= PROGRESS_MIN_BYTES:
            break
    return total


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0
