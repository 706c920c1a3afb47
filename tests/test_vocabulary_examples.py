"""Every entry of the frame vocabulary carries its own examples, and they hold.

An entry of knowledge/vocabulary/ (the generic core and every framework file) names
lines it must fire on (`match:`) and lines it must not (`no_match:`); these parametrized
tests check them all through the matcher the classifier uses, so an entry without a
`match:` example, or whose example stops matching, fails here by its id. An example is
the line's text as the classifier reads it: a traceback frame or source line as printed,
a log message with its producer prefix (timestamp, rank, Ray process) peeled off, and
for entries read on the process name, the inside of Ray's prefix ("EngineCore_DP0
pid=1825" from "(EngineCore_DP0 pid=1825) ERROR ...").
"""

from __future__ import annotations

import pytest

from assistant.logs.phase import fires
from assistant.logs.rules import PhasePattern, load_rules

VOCABULARY = list(load_rules().phases.patterns)


def _id(pattern: PhasePattern) -> str:
    return pattern.id


def test_the_core_and_the_framework_files_are_loaded() -> None:
    ids = {p.id for p in VOCABULARY}
    assert {"core-train", "core-serve", "core-load", "core-weight-sync"} <= ids
    # one entry of each framework file, so the examples below cover them too
    assert {
        "areal-train-rpc",
        "verl-actor-update",
        "openrlhf-train",
        "hf-from-pretrained",
        "deepspeed-init",
        "megatron-setup",
        "torch-backward",
        "sglang-server-frames",
        "vllm-server-frames",
        "llamacpp-context",
        "cuda-graph-capture",
    } <= ids
    assert any(not p.generic for p in VOCABULARY)


@pytest.mark.parametrize("pattern", VOCABULARY, ids=_id)
def test_entry_has_a_match_example(pattern: PhasePattern) -> None:
    assert pattern.examples, f"{pattern.id} has no 'match:' example"


@pytest.mark.parametrize("pattern", VOCABULARY, ids=_id)
def test_entry_fires_on_its_examples(pattern: PhasePattern) -> None:
    missed = [line for line in pattern.examples if not fires(pattern, line)]
    assert not missed, f"{pattern.id} does not fire on {missed}"


@pytest.mark.parametrize("pattern", VOCABULARY, ids=_id)
def test_entry_does_not_fire_on_its_counter_examples(pattern: PhasePattern) -> None:
    wrong = [line for line in pattern.counter_examples if fires(pattern, line)]
    assert not wrong, f"{pattern.id} fires on {wrong}"
