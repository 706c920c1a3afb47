"""Only questions whose answer can change the fix shown are asked.

Each test answers the questions for real and checks the shown fix: a question
marked to be asked has an answer that changes fix #1 (or the fix in focus); a
question left unasked has none.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from assistant.config import config_from_text, load_config
from assistant.models import Decision, LogReport
from assistant.tree import decide
from assistant.tree.questions import alternatives

CONFIGS = Path(__file__).parent / "fixtures" / "configs"
GIB = 1024**3
FRAGMENTED = {
    "tried_to_allocate_bytes": 2 * GIB,  # 15x over in the cache: fragmentation leads
    "total_capacity_bytes": 80 * GIB,
    "reserved_unallocated_bytes": 30 * GIB,
}


def report(phase: str, kind: str = "cuda_oom", **facts: Any) -> LogReport:
    metrics = facts.pop("metrics", {})
    return LogReport(True, phase, kind, 0.9, metrics=metrics, facts=facts)


def first_fix(decision: Decision, upto: int = 0) -> list[tuple[str, dict[str, Any]]]:
    return [(r.fix, r.patch, r.env) for r in decision.recommendations[: upto + 1]]


def asked(decision: Decision) -> list[str]:
    return [q.id for q in decision.asking]


def test_with_a_config_multi_turn_is_asked_and_heads_wait() -> None:
    decision = decide(
        report("training"), load_config(str(CONFIGS / "grpo_fsdp.yaml")), {}, "en", False
    )
    assert asked(decision) == ["multi_turn"]
    # Qwen2.5-7B's head count is in the bundled table: never a question
    assert [q.id for q in decision.open_questions] == ["multi_turn"]
    text = (CONFIGS / "grpo_fsdp.yaml").read_text(encoding="utf-8")
    unknown = text.replace("Qwen/Qwen2.5-7B-Instruct", "acme/house-model-7b")
    assert unknown != text
    from assistant.config import config_from_text

    other = decide(report("training"), config_from_text(unknown), {}, "en", False)
    assert asked(other) == ["multi_turn"]
    assert [q.id for q in other.open_questions] == ["multi_turn", "attention_heads"]


def test_without_a_config_the_floor_cannot_be_computed_so_nothing_is_asked() -> None:
    decision = decide(report("training"), None, {}, "en", False)
    assert decision.recommendations[0].fix == "micro-batch"
    assert asked(decision) == []


def test_a_fragmented_cache_leads_with_expandable_segments_and_asks_nothing() -> None:
    cfg = load_config(str(CONFIGS / "grpo_fsdp.yaml"))
    decision = decide(report("training", metrics=FRAGMENTED), cfg, {}, "en", False)
    assert decision.recommendations[0].fix == "fragmentation"
    assert asked(decision) == []


def test_multi_turn_yes_then_asks_the_longest_conversation() -> None:
    cfg = load_config(str(CONFIGS / "grpo_fsdp.yaml"))
    decision = decide(report("training"), cfg, {"multi_turn": ("yes", "user")}, "en", False)
    assert asked(decision) == ["longest_conversation_tokens"]


def test_moving_to_a_later_fix_asks_its_questions() -> None:
    cfg = config_from_text(
        "cluster: {n_nodes: 1, n_gpus_per_node: 8}\nrollout: {backend: 'sglang:d4'}\n"
        "gconfig: {max_new_tokens: 1024}\ntrain_dataset: {max_length: 1024}\n"
        "actor:\n  backend: fsdp:d4\n  mb_spec: {max_tokens_per_mb: 8192}\n"
    )
    first = decide(report("training"), cfg, {}, "en", False)
    assert "attention_heads" not in asked(first)
    shard = [
        r.fix
        for r in decide(
            report("training"), cfg, {"attention_heads": ("32", "user")}, "en", False
        ).recommendations
    ].index("train-shard")
    later = decide(report("training"), cfg, {}, "en", False, focus=shard)
    assert "attention_heads" in asked(later)


def test_a_skipped_question_takes_its_default_and_says_so() -> None:
    cfg = load_config(str(CONFIGS / "grpo_fsdp.yaml"))
    answers = {"multi_turn": ("yes", "user"), "longest_conversation_tokens": ("", "default")}
    decision = decide(report("training"), cfg, answers, "en", False)
    (longest,) = [q for q in decision.questions if q.id == "longest_conversation_tokens"]
    assert (longest.answer, longest.source) == (None, "default")
    assert asked(decision) == []
    assert [q.id for q in decision.provisional] == ["longest_conversation_tokens"]


CASES = [
    ("training", {}, "grpo_fsdp.yaml"),
    ("training", {}, "agent_megatron.yaml"),
    ("training", {}, "minimal.yaml"),
    ("training", {}, None),
    ("training", {"metrics": FRAGMENTED}, "grpo_fsdp.yaml"),
    ("model_loading", {}, "grpo_fsdp.yaml"),
    ("weight_update", {}, "grpo_fsdp.yaml"),
    ("weight_update", {}, None),
    ("generation", {"server": "sglang"}, "grpo_fsdp.yaml"),
    ("unknown", {}, "grpo_fsdp.yaml"),
]


@pytest.mark.parametrize(("phase", "facts", "config_name"), CASES)
@pytest.mark.parametrize("focus", [0, 1, 2])
def test_asked_exactly_when_an_answer_changes_the_fix_in_focus(
    phase: str, facts: dict[str, Any], config_name: str | None, focus: int
) -> None:
    cfg = load_config(str(CONFIGS / config_name)) if config_name else None
    rep = report(phase, **dict(facts))
    decision = decide(rep, cfg, {}, "en", False, focus=focus)
    shown = first_fix(decision, decision.focus)
    for question in decision.open_questions:
        changed = [
            value
            for value in alternatives(question.id)
            if first_fix(
                decide(rep, cfg, {question.id: (value, "user")}, "en", False), decision.focus
            )
            != shown
        ]
        assert bool(changed) == question.matters, (question.id, changed)
