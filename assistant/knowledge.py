"""Find and load the data files in knowledge/.

knowledge/ sits at the top of the repository so people edit it as data; the wheel
maps it to ``assistant/knowledge``. One function finds it in both layouts.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from assistant.errors import KnowledgeError


@cache
def knowledge_dir() -> Path:
    """The knowledge folder of an installed wheel, or of a source checkout."""
    here = Path(__file__).resolve().parent
    for candidate in (here / "knowledge", here.parent / "knowledge"):
        if candidate.is_dir():
            return candidate
    raise KnowledgeError("knowledge/ folder not found next to the assistant package")


def knowledge_path(*parts: str) -> Path:
    return knowledge_dir().joinpath(*parts)


def safe_loader() -> Any:
    """libyaml's safe loader when PyYAML was built with it (about 10x faster), else PyYAML's."""
    import yaml

    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@cache
def load_yaml(name: str) -> Any:
    """Load knowledge/<name> with the safe loader (cached per process)."""
    import yaml

    path = knowledge_path(name)
    try:
        with path.open(encoding="utf-8") as handle:
            return yaml.load(handle, Loader=safe_loader())  # noqa: S506 - a safe loader
    except FileNotFoundError as exc:
        raise KnowledgeError(f"knowledge file missing: {name}") from exc
    except yaml.YAMLError as exc:
        raise KnowledgeError(f"knowledge file {name} is not valid YAML: {exc}") from exc
