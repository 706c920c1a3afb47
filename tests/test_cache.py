"""The one cache (assistant/cache.py): one folder per key, every artefact inside it, a
new key for any change to a knowledge file, and an unwritable folder costs only time."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from assistant import cache, knowledge, paths

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "fixtures" / "logs" / "phases" / "backward-source-line-after-error.log"


@pytest.fixture
def private_knowledge(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A copy of knowledge/ that the loaders and the cache key read, and an empty cache."""
    copy = tmp_path / "knowledge"
    shutil.copytree(knowledge.knowledge_dir(), copy)
    monkeypatch.setattr(paths, "knowledge_dir", lambda: copy)
    monkeypatch.setenv("AREAL_DOCTOR_CACHE_DIR", str(tmp_path / "cache"))
    cache.clear()
    knowledge.load_yaml.cache_clear()
    yield copy
    cache.clear()
    knowledge.load_yaml.cache_clear()


def _edit(path: Path, old: bytes, new: bytes) -> None:
    """Change a file as an editor does: new bytes, a later change time."""
    before = path.stat()
    data = path.read_bytes()
    assert old in data
    path.write_bytes(data.replace(old, new, 1))
    after = path.stat()
    if (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns):
        os.utime(path, ns=(after.st_atime_ns, after.st_mtime_ns + 1_000_000))  # coarse clock


def _first_guide_file(copy: Path) -> str:
    return (
        next(p for p in sorted((copy / "guide" / "en").glob("*.md"))).relative_to(copy).as_posix()
    )


@pytest.mark.parametrize(
    "name",
    [
        "questions.yaml",
        "vocabulary/frameworks/areal.yaml",
        "guide",  # a guide section's Markdown
        "jieba/dict.txt",
        "jieba/compounds.txt",
    ],
)
def test_a_change_to_any_knowledge_file_is_a_new_cache(private_knowledge: Path, name: str) -> None:
    if name == "guide":
        name = _first_guide_file(private_knowledge)
    first = cache.cache_dir()
    assert first is not None
    cache.write_bytes("artefact", b"derived from the old files")
    assert cache.read_bytes("artefact") == b"derived from the old files"
    _edit(private_knowledge / name, b"e", b"E")  # same size: only the change time tells
    cache.clear()
    second = cache.cache_dir()
    assert second is not None and second != first
    assert cache.read_bytes("artefact") is None
    cache.clear()
    assert cache.cache_dir() == second  # the same files: the same key


def test_an_edited_yaml_file_is_parsed_again_not_read_from_the_cache(
    private_knowledge: Path,
) -> None:
    assert knowledge.load_yaml("questions.yaml")  # parsed, and kept in the cache
    folder = cache.cache_dir()
    assert folder is not None and list(folder.glob("yaml-*.marshal"))
    knowledge.load_yaml.cache_clear()
    cache.clear()
    path = private_knowledge / "questions.yaml"
    path.write_text("questions: []\n", encoding="utf-8")
    assert knowledge.thaw(knowledge.load_yaml("questions.yaml")) == {"questions": []}


def _diagnose(env: dict[str, str]) -> str:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "assistant",
            "diagnose",
            str(FIXTURE),
            "--format",
            "json",
            "--non-interactive",
        ],  # fmt: skip
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        check=False,  # fmt: skip
    )
    assert done.returncode in (0, 1), done.stderr
    assert "Traceback" not in done.stderr
    return done.stdout


def test_every_artefact_lives_in_the_one_folder_and_an_unwritable_cache_costs_only_time(
    tmp_path: Path,
) -> None:
    # one hash seed: a snippet's sentence choice varies with it (a search matter, not the cache's)
    env = {**os.environ, "AREAL_DOCTOR_CACHE_DIR": str(tmp_path / "cache"), "PYTHONHASHSEED": "0"}
    cold = _diagnose(env)
    warm = _diagnose(env)  # from the cache: verdicts, parsed YAML, gates, index
    entries = list((tmp_path / "cache").iterdir())
    assert len(entries) == 1 and entries[0].name.startswith(cache.PREFIX)
    stored = {p.name for p in entries[0].iterdir()}
    assert {"rules-valid", "knowledge-valid"} <= stored
    assert any(n.startswith("yaml-") for n in stored)
    # the guide's sections and rank-bm25's per-term scores of the index the diagnosis used
    assert any(n.startswith("guide-sections-") for n in stored)
    assert any(n.startswith("bm25-") for n in stored)
    blocked = tmp_path / "a-file"
    blocked.write_text("a cache folder cannot be made below a file\n", encoding="utf-8")
    unwritable = _diagnose({**env, "AREAL_DOCTOR_CACHE_DIR": str(blocked / "cache")})
    assert cold == warm == unwritable
    assert cold.strip().startswith("{")


@contextmanager
def cache_at(folder: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The one cache rooted at ``folder`` for the block, forgotten before and after."""
    monkeypatch.setenv("AREAL_DOCTOR_CACHE_DIR", str(folder))
    cache.clear()
    try:
        yield
    finally:
        cache.clear()


def test_an_unwritable_folder_gives_none_and_reads_miss(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_text("", encoding="utf-8")
    with cache_at(blocked / "cache", monkeypatch):
        assert cache.cache_dir() is None
        cache.write_bytes("x", b"1")
        cache.set_stamp("verdict")
        assert cache.read_bytes("x") is None and not cache.has_stamp("verdict")


def test_marshal_data_round_trips_and_a_damaged_file_reads_as_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with cache_at(tmp_path, monkeypatch):
        data = [1, "二", [3.5, None], {"k": (b"\x00", b"")}]
        cache.write_marshal("table.marshal", data)
        assert cache.read_marshal("table.marshal") == data
        cache.write_bytes("table.marshal", b"\xffnot marshal")
        assert cache.read_marshal("table.marshal") is None
        cache.write_bytes("table.marshal", b"")
        assert cache.read_marshal("table.marshal") is None
        assert cache.read_marshal("absent.marshal") is None


def test_old_key_folders_and_loose_files_go_when_a_new_one_is_made_recent_ones_stay(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AREAL_DOCTOR_CACHE_DIR", str(tmp_path))
    old, recent = tmp_path / f"{cache.PREFIX}old", tmp_path / f"{cache.PREFIX}recent"
    old.mkdir()
    recent.mkdir()
    loose, foreign = tmp_path / "rules-valid-0123", tmp_path / "someone-elses.txt"
    loose.write_bytes(b"")
    foreign.write_bytes(b"")
    stale = (cache.STALE_DAYS + 1) * 86400
    for path in (old, loose, foreign):
        os.utime(path, (path.stat().st_atime - stale, path.stat().st_mtime - stale))
    cache.clear()
    try:
        current = cache.cache_dir()
    finally:
        cache.clear()
    assert current is not None and current.is_dir()
    assert not old.exists() and not loose.exists()  # an earlier version's loose verdict too
    assert recent.exists() and foreign.exists()  # the root may be a shared folder
