"""The typed shapes of assistant/models.py hold what the stages really exchange."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
import yaml

from assistant import pipeline
from assistant.models import (
    ConfigWarning,
    Decision,
    DocRef,
    LogFacts,
    Recommendation,
    Skipped,
    nested,
)

KNOWLEDGE = Path(__file__).resolve().parent.parent / "knowledge"


def load(name: str) -> Any:
    return yaml.safe_load((KNOWLEDGE / name).read_text(encoding="utf-8"))


def facts_keys_in(node: Any) -> set[str]:
    """Keys of every ``facts: {...}`` mapping anywhere in a YAML document."""
    found: set[str] = set()
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "facts" and isinstance(value, dict):
                found |= set(value)
            else:
                found |= facts_keys_in(value)
    elif isinstance(node, list):
        for item in node:
            found |= facts_keys_in(item)
    return found


def test_every_fact_the_knowledge_can_set_is_a_logfacts_key() -> None:
    keys = set(LogFacts.__annotations__)
    from_facts = {entry["fact"] for entry in load("facts.yaml")["facts"]}
    from_status = {entry["fact"] for entry in load("stages.yaml")["status"]}
    from assistant.logs.rules import CORE_VOCABULARY, framework_files

    vocabulary = [load(name) for name in (CORE_VOCABULARY, *framework_files())]
    from_rules = facts_keys_in(vocabulary) | facts_keys_in(load("signatures.yaml"))
    assert from_facts and from_status and from_rules
    assert from_facts | from_status | from_rules <= keys


def test_every_fact_a_question_reads_is_known_or_flagged() -> None:
    """A question answered from the log reads a fact the reader may write, or one that
    only a description could give (then the question is asked)."""
    keys = set(LogFacts.__annotations__)
    read = {
        source["fact"]
        for spec in load("questions.yaml")["questions"].values()
        for source in spec.get("sources") or []
        if "fact" in source
    }
    assert read, "no question reads a fact"
    unknown = read - keys
    # These are not read from logs today: the question is then asked (or defaulted).
    assert unknown <= {"multi_turn", "attention_heads", "is_vlm", "killed_by_oom_killer"}


def test_nested_patch_is_the_flat_patch_nested() -> None:
    flat = {"actor.mb_spec.max_tokens_per_mb": 4096, "actor.gradient_checkpointing": True}
    assert nested(flat) == {
        "actor": {"mb_spec": {"max_tokens_per_mb": 4096}, "gradient_checkpointing": True}
    }
    decision = Decision(flat_patch=flat)
    assert decision.patch == nested(flat)
    assert pipeline.flat_patch(decision) == flat
    assert Decision().patch == {}


@pytest.mark.parametrize(
    "shape", [Recommendation("s", "t", "w"), Skipped("s", "w"), ConfigWarning("i", "s", "t")]
)
def test_what_later_stages_read_is_frozen(shape: object) -> None:
    field = dataclasses.fields(shape)[0].name  # type: ignore[arg-type]
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(shape, field, "changed")


def test_docref_is_frozen() -> None:
    doc = DocRef("train-micro-batch", "en", "Training 1", 1.0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        doc.score = 2.0  # type: ignore[misc]
