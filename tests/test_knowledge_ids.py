"""Each id is defined once, in knowledge/, and code refers to it through a loud lookup."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from assistant.logs import read_and_classify, rules

FIXTURES = Path(__file__).parent / "fixtures" / "logs"


@pytest.fixture
def edited_lookalikes(monkeypatch: pytest.MonkeyPatch):
    """Swap lookalikes.yaml for an edited copy, with the rule cache rebuilt around it."""

    def apply(edit) -> None:
        data = copy.deepcopy(rules.load_yaml("lookalikes.yaml"))
        edit(data)
        real = rules.load_yaml

        def fake(name: str) -> Any:
            return data if name == "lookalikes.yaml" else real(name)

        monkeypatch.setattr(rules, "load_yaml", fake)
        rules.load_rules.cache_clear()

    yield apply
    rules.load_rules.cache_clear()


def _rename(data: dict, old: str, new: str) -> None:
    entry = next(x for x in data["lookalikes"] if x["id"] == old)
    entry["id"] = new


@pytest.mark.parametrize(
    "log", ["lookalikes/slurm-hit-memory-limit.log", "lookalikes/vllm-cuda-graph-note.log"]
)
def test_renaming_an_informational_lookalike_keeps_it_a_note(edited_lookalikes, log) -> None:
    """The flag lives on the entry: a new id is still never the run's first error."""
    before = read_and_classify([str(FIXTURES / log)])
    assert "first_error_kind" not in before.facts
    old = Path(log).stem
    edited_lookalikes(lambda data: _rename(data, old, old + "-renamed"))
    after = read_and_classify([str(FIXTURES / log)])
    assert not after.oom
    assert "first_error_kind" not in after.facts
    assert [n.id for n in after.notices] == [n.id for n in before.notices]
