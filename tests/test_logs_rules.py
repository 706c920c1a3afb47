"""The rule files are validated when loaded: a broken entry names its file and entry."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from assistant.errors import KnowledgeError
from assistant.logs import rules


def _broken(monkeypatch: pytest.MonkeyPatch, name: str, edit) -> None:
    original = rules.load_yaml(name)
    data = copy.deepcopy(original)
    edit(data)
    real = rules.load_yaml

    def fake(requested: str) -> Any:
        return data if requested == name else real(requested)

    monkeypatch.setattr(rules, "load_yaml", fake)


def _first_signature(data: dict) -> dict:
    return data["signatures"][0]


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: _first_signature(d).update(kind="gpu_oops"), "bad value"),
        (lambda d: _first_signature(d).update(patterns=["(unclosed"]), "does not compile"),
        (lambda d: _first_signature(d).pop("triggers"), "missing 'triggers'"),
        (lambda d: _first_signature(d).update(figures=["no_such_figure"]), "unknown figure"),
        (lambda d: _first_signature(d).update(yields_to=["nobody"]), "unknown yields_to"),
        (lambda d: _first_signature(d).update(confidence=1.5), "bad value"),
        (lambda d: d["signatures"].append(copy.deepcopy(d["signatures"][0])), "duplicate id"),
        (lambda d: d["figures"]["tried"].update(unit="furlongs"), "bad value"),
        (lambda d: d["figures"]["tried"].update(patterns=["Tried to allocate"]), "exactly one"),
        (lambda d: d.pop("signatures"), "top-level 'signatures'"),
    ],
)
def test_broken_signature_entries_are_named(monkeypatch, edit, message: str) -> None:
    _broken(monkeypatch, "signatures.yaml", edit)
    with pytest.raises(KnowledgeError, match=message) as caught:
        rules._load_signatures()
    assert "signatures.yaml" in str(caught.value)


def test_weak_signature_needs_corroboration(monkeypatch) -> None:
    edited: list[str] = []

    def edit(data: dict) -> None:
        weak = next(s for s in data["signatures"] if s.get("weak"))
        weak.pop("corroborate")
        edited.append(weak["id"])

    _broken(monkeypatch, "signatures.yaml", edit)
    with pytest.raises(KnowledgeError, match="'[\\w-]+'.*corroborate") as raised:
        rules._load_signatures()
    assert edited and edited[0] in str(raised.value)


@pytest.mark.parametrize(
    ("name", "loader", "edit", "message"),
    [
        (
            "vocabulary/frameworks/areal.yaml",
            rules._load_phases,
            lambda d: d["entries"][0].update(phase="lunch"),
            "bad value",
        ),
        (
            "vocabulary/frameworks/pytorch.yaml",
            rules._load_phases,
            lambda d: d["entries"][0].update(where=["inside"]),
            "where",
        ),
        (
            "vocabulary/core.yaml",
            rules._load_phases,
            lambda d: d["settings"]["scope_factor"].pop("after"),
            "scope_factor",
        ),
        (
            "vocabulary/core.yaml",
            rules._load_phases,
            lambda d: d["words"][0].update(cancels=["no-such-entry"]),
            "unknown id",
        ),
        (
            "vocabulary/frameworks/vllm.yaml",
            rules._load_phases,
            lambda d: d["entries"][1].update(id="core-train"),
            "used twice",
        ),
        (
            "vocabulary/core.yaml",
            rules._load_phases,
            lambda d: d["words"][1].update(id=d["words"][0]["id"]),
            "duplicate id",
        ),
        (
            "lookalikes.yaml",
            rules._load_lookalikes,
            lambda d: d["lookalikes"][0].pop("what"),
            "missing 'what'",
        ),
        (
            "lookalikes.yaml",
            rules._load_lookalikes,
            lambda d: d["lookalikes"][0]["what"].pop("zh"),
            "'en' and 'zh'",
        ),
        (
            "facts.yaml",
            rules._load_facts,
            lambda d: d["facts"][2].update(patterns=["no group"]),
            "group",
        ),
        (
            "describe.yaml",
            rules._load_describe,
            lambda d: d["phases"].update(lunch=["eat"]),
            "phases.lunch",
        ),
    ],
)
def test_other_rule_files_are_validated(monkeypatch, name, loader, edit, message) -> None:
    _broken(monkeypatch, name, edit)
    with pytest.raises(KnowledgeError, match=message) as caught:
        loader()
    assert name in str(caught.value)


def test_shipped_rules_load_and_every_trigger_compiles() -> None:
    loaded = rules.load_rules()
    assert loaded.signatures and loaded.lookalikes and loaded.phases.patterns
    kinds = {sig.kind for sig in loaded.signatures}
    assert kinds == {"cuda_oom", "cuda_error_oom", "kv_cache", "nccl", "host_oom"}
    assert len(set(loaded.triggers)) == len(loaded.triggers)


def test_validated_rule_files_load_without_compiling_until_a_line_needs_a_pattern(
    tmp_path, monkeypatch
) -> None:
    from assistant import cache

    monkeypatch.setenv("AREAL_DOCTOR_CACHE_DIR", str(tmp_path))
    cache.cache_dir.cache_clear()
    rules.load_rules.cache_clear()
    try:
        first = rules.load_rules()  # validates: every pattern compiled, the verdict stored
        assert all(p._compiled is not None for s in first.signatures for p in s.patterns)
        assert cache.has_stamp(rules.VERDICT)
        rules.load_rules.cache_clear()
        again = rules.load_rules()  # the same files: patterns compile on first use
        assert all(p._compiled is None for s in again.signatures for p in s.patterns)
        pattern = next(p for s in again.signatures for p in s.patterns if p.gate())
        assert pattern.search("no match here") is None  # none of its literals: not compiled
        assert pattern._compiled is None
        pattern.search(f"a line that holds {pattern.gate()[0]}")  # type: ignore[index]
        assert pattern._compiled is not None
    finally:
        rules.load_rules.cache_clear()
        cache.cache_dir.cache_clear()


def test_trigger_gates_are_literal_texts_or_none() -> None:
    from assistant.logs.match import trigger_gate

    assert trigger_gate(("Failed to CUDA", "(?i)Error: out of memory")) == (
        "failed to cuda",
        "error: out of memory",
    )
    assert trigger_gate(("Triton Error \\[",)) == ("triton error [",)
    assert trigger_gate(("exitcode", "(?:status|code):? ?137")) is None


def test_fact_and_consequence_triggers_gate_on_literal_text() -> None:
    """Facts and cascade events are checked on every candidate line; a trigger with regex
    syntax (an unescaped '.') turns its rule's gate off and its patterns run on all of
    them (this cost a tenth of a second on 128 rank logs). Only the model-name rule, a
    real alternation of case variants, may do that."""
    from assistant.logs.match import trigger_gate
    from assistant.logs.rules import load_rules

    rules = load_rules()
    ungated = [f.id for f in rules.facts if trigger_gate(f.triggers) is None]
    ungated += [c.id for c in rules.consequences if trigger_gate(c.triggers) is None]
    assert ungated == ["model-family-name"]


def test_a_quoted_sentence_at_a_line_start_is_not_a_source_line() -> None:
    """Tracebacks indent their source lines: an indented string literal is code quoting a
    message; the same quote at the start of a line is a paste quoting what it was told."""
    from assistant.logs.match import LineMatcher
    from assistant.logs.rules import load_rules

    matcher = LineMatcher(load_rules())
    said = '"Your session crashed after using all available RAM. You may want Colab Pro."'
    assert matcher.signature(said) is not None
    indented = '            "Your session crashed after using all available RAM."'
    assert matcher.signature(indented) is None
