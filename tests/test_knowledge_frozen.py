"""Loaded knowledge is read-only: a caller cannot change what later decisions read."""

from __future__ import annotations

import copy
import pickle

import pytest

from assistant.knowledge import FrozenDict, FrozenList, load_yaml, thaw


@pytest.mark.parametrize(
    "mutate",
    [
        lambda t: t.__setitem__("fallback", "micro-batch"),
        lambda t: t["fixes"].pop("micro-batch"),
        lambda t: t["plans"].append({"id": "mine"}),
        lambda t: t["plans"][0]["fixes"].__setitem__(0, "micro-batch"),
        lambda t: t["reasons"]["mb-at-floor"].update(en="changed"),
        lambda t: t["settings"].setdefault("new", 1),
        lambda t: t["plans"].sort(key=str),
        lambda t: t["leads"].__delitem__(0),
    ],
)
def test_loaded_knowledge_refuses_changes(mutate) -> None:
    tree = load_yaml("tree.yaml")
    before = thaw(tree)
    with pytest.raises(TypeError, match="read-only"):
        mutate(tree)
    assert thaw(load_yaml("tree.yaml")) == before


def test_a_copy_is_plain_and_changeable() -> None:
    tree = load_yaml("tree.yaml")
    assert isinstance(tree, FrozenDict) and isinstance(tree["plans"], FrozenList)
    mine = copy.deepcopy(tree)
    assert type(mine) is dict and type(mine["plans"]) is list
    mine["plans"].append({"id": "mine"})
    assert len(mine["plans"]) == len(tree["plans"]) + 1
    assert pickle.loads(pickle.dumps(tree)) == tree  # the search cache may pickle it
