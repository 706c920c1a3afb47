"""The parsed knowledge files are kept in the user's cache, keyed by size and change time."""

from __future__ import annotations

import marshal
import os
from pathlib import Path

import pytest

from assistant import knowledge
from assistant.search import cache


@pytest.fixture
def private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("AREAL_DOCTOR_CACHE_DIR", str(tmp_path / "cache"))
    cache.cache_dir.cache_clear()
    knowledge.load_yaml.cache_clear()
    yield tmp_path / "cache"
    cache.cache_dir.cache_clear()
    knowledge.load_yaml.cache_clear()


def test_second_load_reads_the_parsed_data_back(private_cache: Path) -> None:
    first = knowledge.thaw(knowledge.load_yaml("questions.yaml"))
    stored = list(private_cache.glob("yaml-*.marshal"))
    assert len(stored) == 1
    knowledge.load_yaml.cache_clear()
    assert knowledge.thaw(knowledge.load_yaml("questions.yaml")) == first


def test_a_changed_file_is_parsed_again(private_cache: Path, tmp_path: Path, monkeypatch) -> None:
    folder = tmp_path / "knowledge"
    folder.mkdir()
    (folder / "x.yaml").write_text("a: 1\n", encoding="utf-8")
    monkeypatch.setattr(knowledge, "knowledge_path", lambda *parts: folder.joinpath(*parts))
    assert knowledge.load_yaml("x.yaml") == {"a": 1}
    knowledge.load_yaml.cache_clear()
    (folder / "x.yaml").write_text("a: 22\n", encoding="utf-8")
    stat = (folder / "x.yaml").stat()
    os.utime(folder / "x.yaml", ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
    assert knowledge.load_yaml("x.yaml") == {"a": 22}


def test_a_cache_file_that_holds_more_than_yaml_data_is_ignored(
    private_cache: Path, tmp_path: Path, monkeypatch
) -> None:
    folder = tmp_path / "knowledge"
    folder.mkdir()
    (folder / "y.yaml").write_text("b: [1, 2]\n", encoding="utf-8")
    monkeypatch.setattr(knowledge, "knowledge_path", lambda *parts: folder.joinpath(*parts))
    name = knowledge._cache_name(folder / "y.yaml")
    assert name is not None
    private_cache.mkdir(parents=True, exist_ok=True)
    (private_cache / name).write_bytes(marshal.dumps({"b": (1, 2), "c": b"bytes"}))
    assert knowledge.load_yaml("y.yaml") == {"b": [1, 2]}
