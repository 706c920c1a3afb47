"""The examples beside every rule: each entry of signatures.yaml (signatures and the kills
table's spellings) and lookalikes.yaml (look-alikes and cascade events) carries `match:`
lines, and where useful `no_match:` lines, checked here through the real line matcher
(and the byte prefilter's triggers). An entry without a `match:` example fails by name."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from assistant.knowledge import load_yaml
from assistant.logs.lines import clean_line
from assistant.logs.match import LineMatcher
from assistant.logs.rules import load_rules

RULES = load_rules()
MATCHER = LineMatcher(RULES)
SECTIONS = (
    ("signatures.yaml", "signatures", "signature"),
    ("lookalikes.yaml", "lookalikes", "lookalike"),
    ("lookalikes.yaml", "consequences", "consequence"),
)


def examples(item: Any, key: str) -> list[str]:
    raw = item.get(key) or []
    return [raw] if isinstance(raw, str) else list(raw)


def _rule_entries() -> Iterator[Any]:
    for file, section, category in SECTIONS:
        for item in load_yaml(file)[section]:
            yield pytest.param(category, item, id=f"{section}:{item['id']}")


def _triggers(category: str, ident: str) -> tuple[str, ...]:
    groups = {
        "signature": RULES.signatures,
        "lookalike": RULES.lookalikes,
        "consequence": RULES.consequences,
    }
    return next(rule.triggers for rule in groups[category] if rule.id == ident)


def _prefiltered(line: str, triggers: tuple[str, ...]) -> bool:
    """The byte prefilter's view: a trigger (a regex, (?i) for any case) is on the line."""
    return any(re.search(t if t.startswith("(?i)") else t, line) for t in triggers)


def fires(category: str, ident: str, block: str) -> bool:
    """Some line of ``block`` is classified as this rule, and the prefilter lets it through."""
    triggers = _triggers(category, ident)
    for number, raw in enumerate(block.splitlines(), 1):
        hit = MATCHER.classify(clean_line(raw), 0, number, 0)
        if hit is None or hit.rule != ident:
            continue
        wanted = {category, "raise"} if category == "signature" else {category}
        if hit.category in wanted and _prefiltered(raw, triggers):
            return True
    return False


@pytest.mark.parametrize(("category", "item"), _rule_entries())
def test_rule_examples_match_and_counter_examples_do_not(category: str, item: Any) -> None:
    ident = item["id"]
    matches = examples(item, "match")
    assert matches, f"{ident}: no `match:` example"
    for example in matches:
        assert fires(category, ident, example), f"{ident}: does not match {example!r}"
    for example in examples(item, "no_match"):
        assert not fires(category, ident, example), f"{ident}: matches {example!r}"


def _spellings() -> Iterator[Any]:
    for item in load_yaml("signatures.yaml")["kills"]["spellings"]:
        yield pytest.param(item, id=f"kills:{item['id']}")


@pytest.mark.parametrize("item", _spellings())
def test_kill_spellings_match_their_examples(item: Any) -> None:
    spelling = next(s for s in RULES.kills.spellings if s.id == item["id"])

    def spelt(line: str) -> bool:
        for name, patterns in spelling.patterns.items():
            if any(p.search(line) for p in patterns):
                return _prefiltered(line, spelling.triggers[name])
        return False

    matches = examples(item, "match")
    assert matches, f"{spelling.id}: no `match:` example"
    for example in matches:
        assert spelt(example), f"{spelling.id}: does not match {example!r}"
    for example in examples(item, "no_match"):
        assert not spelt(example), f"{spelling.id}: matches {example!r}"


def test_an_entry_without_examples_fails_by_name() -> None:
    """The check above cannot pass vacuously: a rule without examples is reported."""
    item = {"id": "torch-oom-current"}
    with pytest.raises(AssertionError, match="torch-oom-current: no `match:` example"):
        test_rule_examples_match_and_counter_examples_do_not("signature", item)
    assert not fires("signature", "torch-oom-current", "step 12 loss 0.41")
