"""Every user-facing string the code asks for exists in the i18n files, in both languages
with the same placeholders: a renamed or misspelt key would show the key itself."""

from __future__ import annotations

import ast
import string
from pathlib import Path

import pytest

from assistant.knowledge import load_yaml
from assistant.logs.infer import inference_id

ROOT = Path(__file__).resolve().parent.parent / "assistant"
# the lookups and what they read; _t is render/text.py's short name for message()
TABLES = {"message": "i18n/cli.yaml", "_t": "i18n/cli.yaml", "t": "i18n/tui.yaml"}


def _calls() -> list[tuple[str, str, str]]:
    """(function, literal key, where) for each message("...")/_t("...")/t("...") call in
    assistant/."""
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call) or not node.args:
                continue
            name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
            first = node.args[0]
            if name in TABLES and isinstance(first, ast.Constant) and isinstance(first.value, str):
                found.append((name, first.value, f"{path.name}:{node.lineno}"))
    return found


CALLS = _calls()


def _names(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


def test_the_scan_finds_the_calls() -> None:
    assert len(CALLS) > 40
    assert {name for name, _, _ in CALLS} == set(TABLES)


def test_the_scan_reaches_every_sentence_of_the_memory_arithmetic() -> None:
    """Each memory.* sentence is asked for by a message() call with its key written out
    (in assistant/memory and the renderers), so the test above checks every one."""
    table = load_yaml("i18n/cli.yaml")
    defined = {key for key in table if key.startswith("memory.")}
    asked = {key for name, key, _ in CALLS if name == "message" and key.startswith("memory.")}
    assert len(defined) > 40
    assert asked == defined, f"unused: {sorted(defined - asked)}"
    places = {where.split(":")[0] for name, key, where in CALLS if key.startswith("memory.")}
    assert {"estimate.py", "allocation.py", "text.py"} <= places


@pytest.mark.parametrize(("function", "key", "where"), CALLS, ids=[c[2] for c in CALLS])
def test_every_key_the_code_uses_exists_in_both_languages(
    function: str, key: str, where: str
) -> None:
    table = load_yaml(TABLES[function])
    assert key in table, f"{where}: '{key}' missing from knowledge/{TABLES[function]}"
    entry = table[key]
    assert {"en", "zh"} <= set(entry), f"{where}: '{key}' needs en and zh"
    if isinstance(entry["en"], str):
        assert _names(entry["en"]) == _names(entry["zh"]), f"'{key}': placeholders differ"


@pytest.mark.parametrize(
    "key",
    [
        "reserved-unallocated-share",
        "fragmentation",
        "held-by-other-processes",
        "request-exceeds-gpu",
        "request-exceeds-free",
        "request-below-free",
    ],
)
def test_every_inference_has_its_sentence(key: str) -> None:
    table = load_yaml("i18n/cli.yaml")
    assert f"inference.{inference_id(key)}" in table
