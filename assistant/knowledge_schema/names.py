"""The names one knowledge file may use from another (or from the code that reads it).

Each set comes from the place that defines the names: rule files for facts and
metrics, inferences.yaml for inferences, questions.yaml, stages.yaml, and the guide's
files for section ids (the tree's own names, derived values and value functions, are
its loader's: assistant/tree/rules.py). Looked up through the same ``load_yaml`` the
loaders use, so a test that swaps a file sees its names change.
"""

from __future__ import annotations

from typing import Any

from assistant.knowledge import knowledge_path, load_yaml


def facts() -> set[str]:
    """Every fact the log reader can put in LogReport.facts."""
    from assistant.logs.rules import load_rules

    rules = load_rules()
    names = {rule.fact for rule in rules.facts}
    for sig in rules.signatures:
        names |= set(sig.facts)
    for pattern in rules.phases.patterns:
        names |= set(pattern.facts)
    names |= {str(item.get("fact")) for item in load_yaml("stages.yaml").get("status") or []}
    names |= set(load_yaml("facts.yaml").get("computed") or {})
    return names


def metrics() -> set[str]:
    """Every figure the log reader can put in LogReport.metrics."""
    data = load_yaml("signatures.yaml")
    names = {str(spec.get("metric")) for spec in (data.get("figures") or {}).values()}
    return names | set(data.get("computed") or {})


def inferences() -> set[str]:
    return set(load_yaml("inferences.yaml").get("texts") or {})


def questions() -> dict[str, Any]:
    return dict(load_yaml("questions.yaml").get("questions") or {})


def sections() -> set[str]:
    """Guide section ids: a file per id in every language folder."""
    per_lang = [
        {path.stem for path in knowledge_path("guide", lang).glob("*.md")} for lang in ("en", "zh")
    ]
    return set.intersection(*per_lang)


def stages() -> set[str]:
    return {str(item.get("id")) for item in load_yaml("stages.yaml").get("stages") or []}
