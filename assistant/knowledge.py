"""Find and load the data files in knowledge/.

knowledge/ sits at the top of the repository so people edit it as data; the wheel
maps it to ``assistant/knowledge``. One function finds it in both layouts
(``assistant/paths.py``).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from assistant import paths
from assistant.errors import KnowledgeError
from assistant.paths import knowledge_dir

__all__ = ["FrozenDict", "FrozenList", "freeze", "knowledge_dir", "knowledge_path", "load_yaml"]


def knowledge_path(*parts: str) -> Path:
    return paths.knowledge_dir().joinpath(*parts)


def safe_loader() -> Any:
    """libyaml's safe loader when PyYAML was built with it (about 10x faster), else PyYAML's."""
    import yaml

    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class FrozenDict(dict[Any, Any]):
    """A mapping of loaded knowledge: reading works as on a dict, changing it raises.

    The loaded files are cached and shared by every caller, so a caller that changed
    one would change every later decision. ``copy.copy``/``copy.deepcopy`` and
    ``thaw`` give a plain, changeable copy (tests edit such copies).
    """

    __slots__ = ()

    def _refuse(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError("knowledge loaded from knowledge/ is read-only (copy it to change it)")

    __setitem__ = __delitem__ = __ior__ = _refuse
    clear = pop = popitem = setdefault = update = _refuse

    def __reduce__(self) -> tuple[Any, ...]:
        return (FrozenDict, (dict(self),))

    def __copy__(self) -> dict[Any, Any]:
        return dict(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> dict[Any, Any]:
        return dict(thaw(self))


class FrozenList(list[Any]):
    """A list of loaded knowledge: read-only like ``FrozenDict``."""

    __slots__ = ()

    def _refuse(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError("knowledge loaded from knowledge/ is read-only (copy it to change it)")

    __setitem__ = __delitem__ = __iadd__ = __imul__ = _refuse
    append = extend = insert = pop = remove = clear = sort = reverse = _refuse

    def __reduce__(self) -> tuple[Any, ...]:
        return (FrozenList, (list(self),))

    def __copy__(self) -> list[Any]:
        return list(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> list[Any]:
        return list(thaw(self))


def freeze(data: Any) -> Any:
    """Loaded YAML made read-only all the way down (dicts and lists; scalars are immutable)."""
    if isinstance(data, dict):
        return FrozenDict({key: freeze(value) for key, value in data.items()})
    if isinstance(data, list):
        return FrozenList(freeze(item) for item in data)
    return data


def thaw(data: Any) -> Any:
    """A plain, changeable deep copy of frozen (or plain) data."""
    if isinstance(data, dict):
        return {key: thaw(value) for key, value in data.items()}
    if isinstance(data, list):
        return [thaw(item) for item in data]
    return data


@cache
def load_yaml(name: str) -> Any:
    """Load knowledge/<name> with the safe loader (cached per process), read-only.

    Parsing YAML costs more than reading a small log, so the parsed data of each file
    is also kept in the one cache (``assistant/cache.py``), whose key changes with any
    knowledge file."""
    cached = _parsed_before(name)
    if cached is not None:
        return cached
    data = _parse(knowledge_path(name), name)
    _remember_parsed(name, data)
    return freeze(data)


def _parse(path: Path, name: str) -> Any:
    import yaml

    try:
        with path.open(encoding="utf-8") as handle:
            return yaml.load(handle, Loader=safe_loader())  # noqa: S506 - a safe loader
    except FileNotFoundError as exc:
        raise KnowledgeError(f"knowledge file missing: {name}") from exc
    except yaml.YAMLError as exc:
        raise KnowledgeError(f"knowledge file {name} is not valid YAML: {exc}") from exc


_PLAIN = (dict, list, str, int, float, bool, type(None))


def _cache_name(name: str) -> str:
    """The parsed file's name in the one cache (whose key covers every knowledge file)."""
    return "yaml-" + name.replace("/", "--") + ".marshal"


def _parsed_before(name: str) -> Any:
    """The parsed data cached for this file, frozen, or None (absent, or holding more
    than YAML's own kinds of value: a cache file is never trusted to hold more)."""
    import marshal

    from assistant.cache import read_bytes

    raw = read_bytes(_cache_name(name))
    if not raw:
        return None
    try:
        data = marshal.loads(raw)
    except (EOFError, ValueError, TypeError):
        return None
    try:
        return _freeze_plain(data)
    except _NotPlain:
        return None


class _NotPlain(Exception):
    """A value other than YAML's own kinds in a cache file."""


_SCALARS = frozenset((str, int, float, bool, type(None)))


def _freeze_plain(data: Any) -> Any:
    """``freeze`` and the check of ``_is_plain`` in one walk (exact types: marshal makes
    no subclasses), for the data read back on every run."""
    kind = type(data)
    if kind is dict:
        if not all(type(key) in _SCALARS for key in data):
            raise _NotPlain
        return FrozenDict({key: _freeze_plain(value) for key, value in data.items()})
    if kind is list:
        return FrozenList([_freeze_plain(item) for item in data])
    if kind in _SCALARS:
        return data
    raise _NotPlain


def _remember_parsed(name: str, data: Any) -> None:
    import marshal

    from assistant.cache import write_bytes

    if _is_plain(data):
        write_bytes(_cache_name(name), marshal.dumps(data))


def _is_plain(data: Any) -> bool:
    """Only YAML's own kinds of value (a cache file is never trusted to hold more)."""
    if isinstance(data, dict):
        return all(_is_plain(k) and _is_plain(v) for k, v in data.items())
    if isinstance(data, list):
        return all(_is_plain(item) for item in data)
    return isinstance(data, _PLAIN)
