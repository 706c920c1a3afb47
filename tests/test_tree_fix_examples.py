"""Every fix of knowledge/tree.yaml carries a ``match:`` example: a diagnosis (what the
log shows, a config, answers) that selects it. Each runs through the real tree and must
list the fix among the recommendations; a fix without an example fails by name, as a
signature without ``match:`` lines does (tests/test_rule_examples.py)."""

from __future__ import annotations

import pytest
from tree_examples import decide_example

from assistant.tree.rules import load_tree

FIXES = load_tree().fixes


@pytest.mark.parametrize("fix_id", sorted(FIXES))
def test_each_fix_has_an_example(fix_id: str) -> None:
    assert FIXES[fix_id].match, f"fix {fix_id} of tree.yaml has no `match:` example"


@pytest.mark.parametrize(
    ("fix_id", "index"),
    [(fix_id, i) for fix_id in sorted(FIXES) for i in range(len(FIXES[fix_id].match))],
)
def test_the_example_selects_the_fix(fix_id: str, index: int) -> None:
    decision = decide_example(FIXES[fix_id].match[index])
    chosen = [rec.fix for rec in decision.recommendations]
    skipped = {s.fix: s.why for s in decision.skipped}
    assert fix_id in chosen, f"match #{index + 1} of {fix_id}: chose {chosen}, skipped {skipped}"
