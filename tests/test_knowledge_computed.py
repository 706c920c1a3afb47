"""The `computed:` lists of facts.yaml and signatures.yaml against the code that sets them.

The log reader writes some facts and metrics itself (not from a rule's pattern); the
knowledge files list them under `computed:` so the tree's conditions can name them. An
entry the code never sets, or a key the code sets that no file lists, would pass the
validator and fail silently at run time: this test reads assistant/logs/ for every
`facts["x"] = ...`, `metrics["x"] = ...` and `.setdefault("x", ...)` on them.
"""

from __future__ import annotations

import ast
from pathlib import Path

from assistant.knowledge import load_yaml
from assistant.knowledge_schema import names

LOGS = Path(__file__).parent.parent / "assistant" / "logs"
TARGETS = {"facts": "facts", "metrics": "metrics"}


def _target(node: ast.expr) -> str | None:
    """'facts' or 'metrics' for `facts`, `report.facts`, `metrics`, `x.metrics`."""
    if isinstance(node, ast.Name):
        return TARGETS.get(node.id)
    if isinstance(node, ast.Attribute):
        return TARGETS.get(node.attr)
    return None


def keys_set_in_code() -> dict[str, set[str]]:
    found: dict[str, set[str]] = {"facts": set(), "metrics": set()}
    for path in LOGS.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            subscripts = []
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    elements = target.elts if isinstance(target, ast.Tuple) else [target]
                    subscripts += [e for e in elements if isinstance(e, ast.Subscript)]
            for sub in subscripts:
                kind = _target(sub.value)
                if (
                    kind
                    and isinstance(sub.slice, ast.Constant)
                    and isinstance(sub.slice.value, str)
                ):
                    found[kind].add(sub.slice.value)
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "setdefault"
                and _target(node.func.value)
                and node.args
                and isinstance(node.args[0], ast.Constant)
            ):
                found[_target(node.func.value) or ""].add(str(node.args[0].value))
    return found


def test_the_code_sets_keys_and_the_walk_finds_them() -> None:
    code = keys_set_in_code()
    assert {"memory_unproven", "stage", "signature_tags"} <= code["facts"]
    assert {"rank", "other_processes_bytes", "reserved_unallocated_bytes"} <= code["metrics"]


def test_every_computed_fact_is_set_by_the_code() -> None:
    computed = set(load_yaml("facts.yaml").get("computed") or {})
    missing = computed - keys_set_in_code()["facts"]
    assert not missing, f"facts.yaml computed: never set in assistant/logs: {sorted(missing)}"


def test_every_computed_metric_is_set_by_the_code() -> None:
    computed = set(load_yaml("signatures.yaml").get("computed") or {})
    missing = computed - keys_set_in_code()["metrics"]
    assert not missing, f"signatures.yaml computed: never set in assistant/logs: {sorted(missing)}"


def test_every_key_the_code_sets_is_declared() -> None:
    code = keys_set_in_code()
    undeclared_facts = code["facts"] - names.facts()
    undeclared_metrics = code["metrics"] - names.metrics()
    assert not undeclared_facts, f"facts set in code but not in knowledge: {undeclared_facts}"
    assert not undeclared_metrics, f"metrics set in code but not declared: {undeclared_metrics}"
