"""Run a fix's ``match:`` example (knowledge/tree.yaml) through the real tree."""

from __future__ import annotations

from typing import Any, cast

import yaml

from assistant.config import config_from_text
from assistant.models import Decision, LogFacts, LogReport, Phase
from assistant.tree import decide
from assistant.tree.rules import Example


def example_report(example: Example) -> LogReport:
    return LogReport(
        True,
        cast(Phase, example.phase),
        cast(Any, example.kind),
        0.9,
        facts=cast(LogFacts, dict(example.facts)),
        metrics=dict(example.metrics),
        stage=example.stage,
    )


def decide_example(example: Example) -> Decision:
    """The decision for the example's log, config and answers (given as flags)."""
    config = None
    if example.config is not None:
        config = config_from_text(yaml.safe_dump(_plain(example.config)), "example.yaml")
    answers = {qid: (value, "flag") for qid, value in example.answers.items()}
    return decide(example_report(example), config, answers, "en", True)


def _plain(value: Any) -> Any:
    if isinstance(value, dict) or hasattr(value, "items"):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value
