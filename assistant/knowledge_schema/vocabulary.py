"""The frame vocabulary's inline examples, checked with the knowledge.

Each entry of ``knowledge/vocabulary/`` carries ``match:`` lines it must fire on and
``no_match:`` near misses it must not. tests/test_vocabulary_examples.py runs them by
id; running them here too means a knowledge folder edited outside the repository (an
installed copy) fails with a one-line error naming the entry, not with a quietly
wrong phase. Validation runs once per change of knowledge/, so this costs nothing on
an ordinary run.
"""

from __future__ import annotations

from assistant.errors import KnowledgeError


def check_vocabulary_examples() -> None:
    from assistant.logs.phase import fires
    from assistant.logs.rules import load_rules

    for pattern in load_rules().phases.patterns:
        where = f"knowledge/vocabulary: entry '{pattern.id}'"
        if not pattern.examples:
            raise KnowledgeError(f"{where} has no 'match:' example")
        missed = [line for line in pattern.examples if not fires(pattern, line)]
        if missed:
            raise KnowledgeError(f"{where} does not fire on its example {missed[0]!r}")
        wrong = [line for line in pattern.counter_examples if fires(pattern, line)]
        if wrong:
            raise KnowledgeError(f"{where} fires on its 'no_match:' line {wrong[0]!r}")
