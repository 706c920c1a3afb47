"""The parsed knowledge files are kept in the one cache (assistant/cache.py); its key
follows every knowledge file (tests/test_cache.py)."""

from __future__ import annotations

import marshal
from pathlib import Path

import pytest

from assistant import cache, knowledge


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
    stored = list(private_cache.glob("k-*/yaml-*.marshal"))
    assert len(stored) == 1
    knowledge.load_yaml.cache_clear()
    assert knowledge.thaw(knowledge.load_yaml("questions.yaml")) == first


def test_a_cache_file_that_holds_more_than_yaml_data_is_ignored(
    private_cache: Path, tmp_path: Path, monkeypatch
) -> None:
    folder = tmp_path / "knowledge"
    folder.mkdir()
    (folder / "y.yaml").write_text("b: [1, 2]\n", encoding="utf-8")
    monkeypatch.setattr(knowledge, "knowledge_path", lambda *parts: folder.joinpath(*parts))
    name = knowledge._cache_name("y.yaml")
    stored = cache.cache_dir()
    assert stored is not None
    (stored / name).write_bytes(marshal.dumps({"b": (1, 2), "c": b"bytes"}))
    assert knowledge.load_yaml("y.yaml") == {"b": [1, 2]}
