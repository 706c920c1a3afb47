"""Each id is defined once, in knowledge/, and code refers to it through a loud lookup."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from assistant.logs import read_and_classify, rules

FIXTURES = Path(__file__).parent / "fixtures" / "logs"


@pytest.fixture
def edited_lookalikes(monkeypatch: pytest.MonkeyPatch):
    """Swap lookalikes.yaml for an edited copy, with the rule cache rebuilt around it."""

    def apply(edit) -> None:
        data = copy.deepcopy(rules.load_yaml("lookalikes.yaml"))
        edit(data)
        real = rules.load_yaml

        def fake(name: str) -> Any:
            return data if name == "lookalikes.yaml" else real(name)

        monkeypatch.setattr(rules, "load_yaml", fake)
        rules.load_rules.cache_clear()

    yield apply
    rules.load_rules.cache_clear()


def _rename(data: dict, old: str, new: str) -> None:
    entry = next(x for x in data["lookalikes"] if x["id"] == old)
    entry["id"] = new


@pytest.mark.parametrize(
    "log", ["lookalikes/slurm-hit-memory-limit.log", "lookalikes/vllm-cuda-graph-note.log"]
)
def test_renaming_an_informational_lookalike_keeps_it_a_note(edited_lookalikes, log) -> None:
    """The flag lives on the entry: a new id is still never the run's first error."""
    before = read_and_classify([str(FIXTURES / log)])
    assert "first_error_kind" not in before.facts
    old = Path(log).stem
    edited_lookalikes(lambda data: _rename(data, old, old + "-renamed"))
    after = read_and_classify([str(FIXTURES / log)])
    assert not after.oom
    assert "first_error_kind" not in after.facts
    assert [n.id for n in after.notices] == [n.id for n in before.notices]


# --- ids in code: only through a lookup that fails loudly, or declared -------------------

# calls that take a knowledge id as an argument and fail loudly on an unknown one
LOOKUPS = {"answer", "value", "inference", "inference_id", "NotApplicable", "reason"}
# (file, id) where a knowledge id is used as a plain string on purpose, and why
ALLOWED = {
    # the names of the "known" facts the engine hands the config checks (assistant/tree/
    # engine.py _known_facts -> assistant/config/constraints.py): answers reused as facts
    ("assistant/config/constraints.py", "attention_heads"),
    ("assistant/config/constraints.py", "shared_fileroot"),
    ("assistant/tree/engine.py", "attention_heads"),
    ("assistant/tree/engine.py", "shared_fileroot"),
    ("assistant/config/constraints.py", "areal_memory"),
    ("assistant/tree/engine.py", "areal_memory"),
    ("assistant/tree/memory_values.py", "areal_memory"),
    ("assistant/pipeline.py", "areal_memory"),
    # the fact and derived value of the same name as the question (a model size in a log)
    ("assistant/logs/report.py", "model_params_b"),
    ("assistant/tree/derived.py", "model_params_b"),
    # the `fragmentation` block of cut-offs in inferences.yaml (not an id)
    ("assistant/logs/infer.py", "fragmentation"),
    ("assistant/tree/derived.py", "fragmentation"),
    ("assistant/knowledge_schema/files.py", "fragmentation"),
}


def _knowledge_ids() -> dict[str, str]:
    from assistant.knowledge import load_yaml

    ids: dict[str, str] = {}
    tree = load_yaml("tree.yaml")
    lookalikes = load_yaml("lookalikes.yaml")["lookalikes"]
    groups = {
        "reason": list(tree["reasons"]),
        "question": list(load_yaml("questions.yaml")["questions"]),
        "inference": list(load_yaml("inferences.yaml")["ids"]),
        "look-alike": [x["id"] for x in lookalikes],
        "notice": [x["notice"] for x in lookalikes if x.get("notice")],
        "signature": [x["id"] for x in load_yaml("signatures.yaml")["signatures"]],
        "warning": [x["id"] for x in load_yaml("constraints.yaml")["constraints"]],
    }
    for kind, names in groups.items():
        for name in names:
            ids.setdefault(name, kind)
    return ids


def _declared(node, parents) -> bool:
    """An id inside a declaration: ``@value_fn(..., reasons=(...))`` or ENGINE_REASONS."""
    import ast

    parent = parents.get(node)
    while isinstance(parent, ast.Tuple):
        parent = parents.get(parent)
    if isinstance(parent, ast.keyword) and parent.arg == "reasons":
        return True
    if isinstance(parent, ast.Dict) and node in parent.keys:
        target = parents.get(parent)
        return isinstance(target, ast.Assign) and any(
            getattr(t, "id", "") == "ENGINE_REASONS" for t in target.targets
        )
    return False


def test_code_names_knowledge_ids_only_through_loud_lookups() -> None:
    import ast

    root = Path(__file__).parent.parent
    ids = _knowledge_ids()
    stray: list[str] = []
    for path in sorted((root / "assistant").rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Constant) and node.value in ids):
                continue
            call = parents.get(node)
            if isinstance(call, ast.Call) and node in call.args:
                func = call.func
                name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                if name in LOOKUPS:
                    continue
            if _declared(node, parents) or (rel, node.value) in ALLOWED:
                continue
            stray.append(f"{rel}:{node.lineno} {ids[node.value]} id {node.value!r}")
    assert not stray, "ids defined in knowledge/ spelled out in code:\n" + "\n".join(stray)
