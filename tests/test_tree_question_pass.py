"""Questions come from an explicit pass over what the chosen plan and fixes needed,
not from the order in which tree.yaml writes its conditions."""

from __future__ import annotations

import copy
from typing import Any

import pytest

import assistant.tree.rules as tree_rules
from assistant.config import config_from_text
from assistant.models import Decision, LogReport
from assistant.tree import decide

DISK_TWO_NODES = (
    "cluster: {n_nodes: 2, n_gpus_per_node: 8, fileroot: /shared/x}\n"
    "actor: {weight_update_mode: disk}\n"
)


@pytest.fixture
def edited_tree(monkeypatch: pytest.MonkeyPatch):
    def apply(edit) -> None:
        data = copy.deepcopy(tree_rules.load_yaml("tree.yaml"))
        edit(data)
        real = tree_rules.load_yaml
        monkeypatch.setattr(
            tree_rules, "load_yaml", lambda n: data if n == "tree.yaml" else real(n)
        )
        tree_rules.load_tree.cache_clear()

    yield apply
    tree_rules.load_tree.cache_clear()


def _decide(report: LogReport, config_text: str | None, answers: dict[str, str] | None = None):
    config = config_from_text(config_text) if config_text is not None else None
    flags = {k: (v, "flag") for k, v in (answers or {}).items()}
    return decide(report, config, flags, "en", True)


def _ids(decision: Decision) -> list[str]:
    return [q.id for q in decision.questions]


def _weight_update() -> LogReport:
    return LogReport(True, "weight_update", "cuda_oom", 0.9)


def _reverse_disk_guards(data: dict[str, Any]) -> None:
    data["fixes"]["wu-disk"]["unless"].reverse()


def test_a_config_already_on_disk_is_not_asked_about_the_fileroot() -> None:
    decision = _decide(_weight_update(), DISK_TWO_NODES)
    assert "shared_fileroot" not in _ids(decision)
    skipped = {s.fix: s.why for s in decision.skipped}
    assert skipped["wu-disk"] == "actor.weight_update_mode is already disk"


def test_swapping_the_disk_guards_asks_nothing_more(edited_tree) -> None:
    before = _decide(_weight_update(), DISK_TWO_NODES)
    edited_tree(_reverse_disk_guards)
    after = _decide(_weight_update(), DISK_TWO_NODES)
    assert "shared_fileroot" not in _ids(after)
    assert _ids(after) == _ids(before)
    assert [(s.fix, s.why) for s in after.skipped] == [(s.fix, s.why) for s in before.skipped]


def test_swapped_guards_still_ask_when_the_config_does_not_decide(edited_tree) -> None:
    """Without disk mode the answer decides the guard: the question is asked, as before."""
    text = "cluster: {n_nodes: 2, n_gpus_per_node: 8, fileroot: /shared/x}\n"
    before = _decide(_weight_update(), text)
    assert "shared_fileroot" in _ids(before)
    edited_tree(_reverse_disk_guards)
    after = _decide(_weight_update(), text)
    assert _ids(after) == _ids(before)
    assert [r.fix for r in after.recommendations] == [r.fix for r in before.recommendations]


def test_the_order_of_a_plan_condition_does_not_ask(edited_tree) -> None:
    """`{answer.X: .., facts.Y: ..}` asks X only when facts.Y holds, in either order."""

    def answer_first(data: dict[str, Any]) -> None:
        plan = next(p for p in data["plans"] if p["id"] == "killed-not-for-memory")
        plan["when"] = dict(reversed(list(plan["when"].items())))
        assert next(iter(plan["when"])).startswith("answer.")

    plain = LogReport(True, "host_memory", "host_oom", 0.9)
    unproven = LogReport(True, "host_memory", "host_oom", 0.4, facts={"memory_unproven": True})
    before = (_ids(_decide(plain, None)), _ids(_decide(unproven, None)))
    edited_tree(answer_first)
    assert "killed_by_oom_killer" not in _ids(_decide(plain, None))
    assert (_ids(_decide(plain, None)), _ids(_decide(unproven, None))) == before
    assert "killed_by_oom_killer" in before[1]


def test_reading_an_answer_registers_no_question() -> None:
    from assistant.tree.questions import QuestionBook

    book = QuestionBook(_weight_update(), None, {}, "en", True)
    assert book.value("multi_turn") is False
    assert book.questions([]) == []
    assert [q.id for q in book.questions(["multi_turn", "multi_turn"])] == ["multi_turn"]
