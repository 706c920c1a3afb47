"""Shared test helpers: paths to fixtures and a CLI runner that captures output."""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import settings

FIXTURES = Path(__file__).parent / "fixtures"

# Property tests scale their example counts by the profile (tests/hypothesis_budget.py):
# CI (CI=true, as CI sets it) runs a quarter of what a developer's run tries.
settings.register_profile("dev", max_examples=100)
settings.register_profile("ci", max_examples=25)
settings.load_profile(
    os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "dev")
)


@pytest.fixture(autouse=True, scope="session")
def _private_index_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Keep the compiled search index out of the user's ~/.cache during tests."""
    mp = pytest.MonkeyPatch()
    mp.setenv("AREAL_DOCTOR_CACHE_DIR", str(tmp_path_factory.mktemp("index-cache")))
    yield
    mp.undo()


@dataclass
class CliResult:
    exit_code: int
    stdout: str
    stderr: str


@contextmanager
def _stdin(text: str | bytes | None) -> Iterator[None]:
    if text is None:
        yield
        return
    raw = text.encode() if isinstance(text, str) else text
    fake = io.TextIOWrapper(io.BytesIO(raw), encoding="utf-8")
    old = sys.stdin
    sys.stdin = fake
    try:
        yield
    finally:
        sys.stdin = old


@pytest.fixture
def run_cli(monkeypatch: pytest.MonkeyPatch):
    """Run `areal-doctor ARGS` in-process; stdout is not a terminal, as in a pipe."""
    monkeypatch.setenv("LANG", "en_US.UTF-8")
    monkeypatch.delenv("LC_ALL", raising=False)
    monkeypatch.delenv("LC_MESSAGES", raising=False)

    def run(*args: str, stdin: str | bytes | None = None) -> CliResult:
        from assistant.cli import main

        out, err = io.StringIO(), io.StringIO()
        with redirect_stdout(out), redirect_stderr(err), _stdin(stdin):
            code = main(list(args))
        return CliResult(code, out.getvalue(), err.getvalue())

    return run


@pytest.fixture
def fixtures() -> Path:
    return FIXTURES
