"""Read an AReaL experiment YAML safely and answer dotted-key questions about it.

Loading uses ``yaml.safe_load`` semantics: tags such as ``!!python/object`` are
refused (never constructed), and a key written twice in one mapping is an error,
because YAML would silently keep the last one and the user would be debugging a
value they cannot see.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import assistant.config.defaults as defaults
from assistant.config.interpolate import UNKNOWN, Resolver
from assistant.errors import UserError

MAX_CONFIG_BYTES = 5 * 1024 * 1024
# Values a document may hold once its aliases are expanded. Configs hold hundreds; a
# "billion laughs" document holds 10^9 while its text is a few lines, and every later
# walk over it (interpolation, patch verification) would take minutes.
MAX_EXPANDED_VALUES = 100_000


def _strict_loader() -> type:
    """A SafeLoader subclass that rejects duplicate keys and alias bombs (lazy: yaml)."""
    import yaml

    class StrictSafeLoader(yaml.SafeLoader):
        def construct_document(self, node: Any) -> Any:
            problem = _alias_problem(node)
            if problem:
                raise yaml.constructor.ConstructorError(None, None, problem, node.start_mark)
            return super().construct_document(node)

        def construct_mapping(self, node: Any, deep: bool = False) -> Any:
            seen: dict[Any, int] = {}
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    continue
                key = self.construct_object(key_node, deep=True)
                line = key_node.start_mark.line + 1
                try:
                    first = seen.get(key)
                    seen[key] = line
                except TypeError:  # unhashable key: let PyYAML report it
                    continue
                if first is not None:
                    raise yaml.constructor.ConstructorError(
                        None, None, f"key {key!r} appears twice (lines {first} and {line})"
                    )
            return super().construct_mapping(node, deep=deep)

    return StrictSafeLoader


def _alias_problem(root: Any) -> str | None:
    """Why the node graph cannot be loaded (an alias inside itself, too many values)."""
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()  # nodes whose children are still being counted
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        children = _children(node)
        if children_done:
            open_nodes.discard(id(node))
            sizes[id(node)] = 1 + sum(sizes[id(child)] for child in children)
            if sizes[id(node)] > MAX_EXPANDED_VALUES:
                return f"aliases expand to more than {MAX_EXPANDED_VALUES} values"
            continue
        if id(node) in sizes:
            continue
        if id(node) in open_nodes:
            return "an alias refers to the value that contains it"
        open_nodes.add(id(node))
        stack.append((node, True))
        stack.extend((child, False) for child in children if id(child) not in sizes)
    return None


def _children(node: Any) -> list[Any]:
    value = node.value
    if not isinstance(value, list):
        return []
    if value and isinstance(value[0], tuple):  # a mapping: (key, value) pairs
        return [part for pair in value for part in pair]
    return value


def parse_yaml_text(text: str, name: str) -> dict[str, Any]:
    """The top-level mapping of ``text``; every problem is one ``UserError`` line."""
    import yaml

    try:
        data = yaml.load(text, Loader=_strict_loader())  # noqa: S506 - a SafeLoader subclass
    except yaml.constructor.ConstructorError as exc:
        problem = str(exc.problem or exc)
        if "python/" in problem or "python/" in str(exc):
            raise UserError(
                f"{name}: refusing a Python-object tag in the YAML {_where(exc)}".rstrip()
            ) from None
        raise UserError(f"{name}: {problem} {_where(exc)}".rstrip()) from None
    except yaml.YAMLError as exc:
        problem = getattr(exc, "problem", None) or "not valid YAML"
        if "'\\t'" in problem:
            problem = "a tab character; YAML indents with spaces only"
        raise UserError(f"{name}: not valid YAML: {problem} {_where(exc)}".rstrip()) from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise UserError(f"{name}: the top level must be a mapping of keys, found {_kind(data)}")
    return data


def _where(exc: Any) -> str:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    return f"(line {mark.line + 1})" if mark is not None else ""


def _kind(value: Any) -> str:
    names: dict[type, str] = {list: "a list", str: "a string"}
    return names.get(type(value), type(value).__name__)


@dataclass
class ExperimentConfig:
    """A loaded experiment config: the text as written and the mapping it holds."""

    path: str
    text: str
    data: dict[str, Any]
    _resolver: Resolver = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._resolver = Resolver(self.data)

    def model_path(self) -> str | None:
        """The model the actor trains (``actor.path``), when the config names one."""
        value = self.get("actor.path")
        return value if isinstance(value, str) and value else None

    def raw(self, key: str) -> Any:
        """The value as written at ``key`` (no interpolation), ``UNKNOWN`` if absent."""
        return self._resolver.lookup(key, resolve=False)

    def written(self, key: str) -> bool:
        """True when the file itself sets ``key`` (or one of its aliases) to a non-null value."""
        return self.location(key) is not None

    def location(self, key: str) -> str | None:
        """The dotted key where the file keeps ``key``: itself or an alias; None if absent."""
        for candidate in defaults.locations(key):
            if self.raw(candidate) not in (UNKNOWN, None):
                return candidate
        return None

    def write_key(self, key: str) -> str:
        """Where a patch of ``key`` should go: where the file has it, else the canonical key."""
        return self.location(key) or defaults.canonical(key)

    def get(self, key: str) -> Any:
        """Value at a dotted key: interpolations resolved, AReaL defaults applied.

        None when neither the file nor the defaults know it, or when an
        interpolation it uses cannot be resolved.
        """
        value, _ = self._lookup(key)
        return value

    def source(self, key: str) -> str | None:
        """``"config"`` when the file sets it, ``"default"`` for AReaL's default, else None."""
        _, origin = self._lookup(key)
        return origin

    def _lookup(self, key: str) -> tuple[Any, str | None]:
        where = self.location(key)
        if where is not None:
            value = self._resolver.lookup(where)
            return (None, "config") if value is UNKNOWN else (value, "config")
        default = defaults.default_for(defaults.canonical(key))
        if default is UNKNOWN:
            return None, None
        value = self._resolver.resolve_value(default)
        if value is UNKNOWN or value is None:
            return None, None
        return value, "default"

    def with_patch(self, flat_patch: Mapping[str, Any]) -> ExperimentConfig:
        """A copy whose data has ``flat_patch`` applied (text unchanged): for validation."""
        data = copy.deepcopy(self.data)
        for key, value in flat_patch.items():
            set_dotted(data, key, value)
        return ExperimentConfig(self.path, self.text, data)


def set_dotted(data: dict[str, Any], key: str, value: Any) -> None:
    """Set ``a.b.c`` in nested dicts, creating (or replacing non-mapping) parents.

    A number after a list names an existing item (``actor.scheduling_spec.0.env_vars``).
    """
    parts = key.split(".")
    node: Any = data
    for depth, part in enumerate(parts[:-1]):
        if isinstance(node, list):
            child = node[int(part)]
            if not isinstance(child, dict):
                child = node[int(part)] = {}
            node = child
            continue
        child = node.get(part)
        following = parts[depth + 1]
        into_list = isinstance(child, list) and following.isdigit() and int(following) < len(child)
        if not isinstance(child, dict) and not into_list:
            child = {}
            node[part] = child
        node = child
    node[parts[-1]] = value


def config_from_text(text: str, path: str = "<config>") -> ExperimentConfig:
    return ExperimentConfig(path, text, parse_yaml_text(text, path))


def load_config(path: str) -> ExperimentConfig:
    """Load the experiment YAML at ``path`` (read only)."""
    file = Path(path)
    if not file.is_file():
        raise UserError(f"config file not found: {path}")
    try:
        if file.stat().st_size > MAX_CONFIG_BYTES:
            raise UserError(f"{path}: larger than 5 MiB; not an experiment config")
        text = file.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise UserError(f"{path}: not UTF-8 text") from None
    except OSError as exc:
        raise UserError(f"cannot read {path}: {exc.strerror or exc}") from None
    return config_from_text(text, path)
