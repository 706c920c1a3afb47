"""Every fixture under tests/fixtures/logs/ against its expectation in expected.yaml."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
import yaml
from test_rule_examples import examples

from assistant.knowledge import load_yaml
from assistant.logs import read_and_classify
from assistant.logs.rules import load_rules

FIXTURES = Path(__file__).parent / "fixtures" / "logs"
EXPECTED = yaml.safe_load((FIXTURES / "expected.yaml").read_text(encoding="utf-8"))


def _ids(entry: dict) -> str:
    return entry["path"]


@pytest.mark.parametrize("entry", EXPECTED, ids=_ids)
def test_fixture_is_classified_as_expected(entry: dict) -> None:
    report = read_and_classify([str(FIXTURES / entry["path"])])
    assert (report.oom, report.phase, report.kind) == (entry["oom"], entry["phase"], entry["kind"])
    if "signature" in entry:
        assert report.findings[0].signature == entry["signature"]
    for key, value in entry.get("metrics", {}).items():
        assert report.metrics.get(key) == pytest.approx(value), key
    if "tags" in entry:
        assert report.facts["signature_tags"] == entry["tags"]
    if "first_error_kind" in entry:
        assert report.facts.get("first_error_kind") == entry["first_error_kind"]
    if "unproven" in entry:
        assert bool(report.facts.get("memory_unproven")) is entry["unproven"]
        assert report.confidence <= 0.5
    if "notices" in entry:
        assert {n.id: n.count for n in report.notices} == entry["notices"]
    _check_ranks(report, entry)


def _check_ranks(report, entry: dict) -> None:
    if "root_file" in entry:
        assert Path(report.evidence[0].file).name == entry["root_file"]
    if "root_line" in entry:
        assert report.evidence[0].line == entry["root_line"]
    if "ranks" in entry:
        assert list(report.findings[0].ranks) == entry["ranks"]
    if "count" in entry:
        assert report.findings[0].count == entry["count"]
    if entry.get("grouped"):
        assert report.findings[0].group_reason
    for what, expected in entry.get("consequences", {}).items():
        found = {c.what: c for c in report.consequences}[what]
        assert (found.count, list(found.ranks)) == (expected["count"], expected["ranks"])


def _inline_examples(file: str, section: str) -> dict[str, int]:
    """How many `match:` examples each entry carries beside it (tests/test_rule_examples.py)."""
    items = load_yaml(file)[section]
    return {item["id"]: len(examples(item, "match")) for item in items}


def test_every_signature_has_two_fixtures_from_different_sources() -> None:
    """A rule fitted to one log shows as a single fixture: each needs a second one. A small
    entry may instead carry two or more example lines of its own (`match:`)."""
    counts = Counter(entry.get("signature") for entry in EXPECTED)
    inline = _inline_examples("signatures.yaml", "signatures")
    thin = [s.id for s in load_rules().signatures if counts[s.id] < 2 and inline[s.id] < 2]
    assert thin == []


def test_every_lookalike_has_two_fixtures_that_are_not_memory_failures() -> None:
    inline = _inline_examples("lookalikes.yaml", "lookalikes")
    for rule in load_rules().lookalikes:
        paths = sorted((FIXTURES / "lookalikes").glob(f"{rule.id}*.log"))
        if inline[rule.id] < 2:  # a small entry's own examples stand for fixtures
            assert (FIXTURES / "lookalikes" / f"{rule.id}.log") in paths, rule.id
            assert len(paths) >= 2, rule.id
        for path in paths:
            report = read_and_classify([str(path)])
            assert report.oom is False, path.name
            if rule.notice:
                assert rule.notice in {n.id for n in report.notices}, path.name


def test_memory_failures_quote_their_line_and_lookalikes_their_first_error() -> None:
    for entry in EXPECTED:
        report = read_and_classify([str(FIXTURES / entry["path"])])
        if report.oom:
            assert report.evidence[0].role == "failure"
            assert 0.0 < report.confidence <= 1.0
        elif "first_error_kind" in entry:
            assert report.first_error is not None
            assert report.first_error == report.evidence[0]
