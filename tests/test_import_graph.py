"""No import cycle inside ``assistant/``: data flows one way, so imports do too.

The graph is read from the source with ``ast`` (nothing is imported): every ``import``
and ``from ... import`` anywhere in a module counts, at module level, inside functions
and under ``if TYPE_CHECKING:`` alike, relative imports resolved. ``from pkg import x``
is an edge to the submodule ``pkg.x`` when there is one, else to ``pkg`` itself (a name
its ``__init__`` defines), so a submodule that takes a name from its own package's
``__init__`` while that ``__init__`` imports it back is a cycle.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent / "assistant"

Graph = dict[str, set[str]]


def module_files(root: Path) -> dict[str, Path]:
    """Dotted module name -> file, for every ``.py`` under ``root`` (a package)."""
    out: dict[str, Path] = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _imported(node: ast.AST, module: str, is_package: bool, known: set[str]) -> Iterable[str]:
    if isinstance(node, ast.Import):
        for alias in node.names:
            name = alias.name  # "a.b.c": the deepest part that is one of ours
            while name and name not in known:
                name = name.rpartition(".")[0]
            if name:
                yield name
    elif isinstance(node, ast.ImportFrom):
        if node.level:
            base = module.split(".") if is_package else module.split(".")[:-1]
            base = base[: len(base) - (node.level - 1)]
            target = ".".join([*base, *([node.module] if node.module else [])])
        else:
            target = node.module or ""
        for alias in node.names:
            sub = f"{target}.{alias.name}"
            if sub in known:
                yield sub
            elif target in known:
                yield target


def import_graph(root: Path) -> Graph:
    """Each module of the package at ``root`` -> the modules of it that it imports."""
    files = module_files(root)
    known = set(files)
    graph: Graph = {name: set() for name in files}
    for name, path in files.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        is_package = path.name == "__init__.py"
        for node in ast.walk(tree):
            for target in _imported(node, name, is_package, known):
                if target != name:
                    graph[name].add(target)
    return graph


def cycles(graph: Mapping[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component: set[str] = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(frozenset(component))
    return found


def cycle_path(graph: Mapping[str, set[str]], component: frozenset[str]) -> list[str]:
    """One closed walk through the component, to show how the cycle goes round."""
    start = min(component)
    seen = {start: ""}
    queue = [start]
    while queue:  # breadth-first back to start, staying inside the component
        node = queue.pop(0)
        for child in sorted(graph[node] & component):
            if child == start:
                path = [node]
                while seen[path[-1]]:
                    path.append(seen[path[-1]])
                return [*reversed(path), start]
            if child not in seen:
                seen[child] = node
                queue.append(child)
    return sorted(component)


def describe(graph: Mapping[str, set[str]], component: frozenset[str]) -> str:
    return f"{len(component)} modules: " + " -> ".join(cycle_path(graph, component))


def test_no_import_cycle_in_assistant() -> None:
    graph = import_graph(ROOT)
    bad = cycles(graph)
    assert not bad, "import cycles:\n" + "\n".join(describe(graph, c) for c in bad)


CASES = {
    # an import inside a function, a relative one, and a name of pkg's own __init__
    "cycle": (
        {
            "pkg/__init__.py": "from pkg.a import run\n",
            "pkg/a.py": "def run():\n    from .sub import b\n",
            "pkg/sub/__init__.py": "",
            "pkg/sub/b.py": "from pkg import run\n",
            "pkg/c.py": "from pkg import a\nimport pkg.sub.b\n",  # submodules: no edge to pkg
        },
        {"pkg.a": {"pkg.sub.b"}, "pkg.sub.b": {"pkg"}, "pkg.c": {"pkg.a", "pkg.sub.b"}},
        ["3 modules: pkg -> pkg.a -> pkg.sub.b -> pkg"],
    ),
    # a chain, one link only for type checking: no cycle
    "chain": (
        {
            "pkg/__init__.py": "",
            "pkg/a.py": "from . import b\n",
            "pkg/b.py": "import typing\nif typing.TYPE_CHECKING:\n    from pkg import c\n",
            "pkg/c.py": "import os\n",
        },
        {"pkg.a": {"pkg.b"}, "pkg.b": {"pkg.c"}, "pkg.c": set()},
        [],
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_walker_on_a_small_package(tmp_path: Path, case: str) -> None:
    files, edges, expected = CASES[case]
    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    graph = import_graph(tmp_path / "pkg")
    assert {name: graph[name] for name in edges} == edges
    assert [describe(graph, c) for c in cycles(graph)] == expected
