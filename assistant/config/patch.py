"""Patch the config TEXT in place of the changed scalars only, diff it, write it safely.

Why not re-emit the document (e.g. ruamel.yaml round-trip)? Re-emitting rewrites
layout the user chose: sequence indentation, flow spacing, long lines, number
spellings such as ``1e-8``. Here PyYAML's composer gives the exact character span
of every scalar, so a patch replaces those characters and nothing else; a key the
file lacks is inserted as new lines at the indentation of its siblings. The result
is re-parsed and compared with the intended data before it is returned.
"""

from __future__ import annotations

import contextlib
import copy
import difflib
import json
import os
import re
import stat
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from assistant.config.interpolate import has_interpolation
from assistant.config.loader import ExperimentConfig, parse_yaml_text, set_dotted
from assistant.errors import UserError

DEFAULT_INDENT = 2


class PatchError(UserError):
    """The config cannot be patched safely at a key (aliases, block scalars, lists)."""


def patched_text(config: ExperimentConfig, flat_patch: Mapping[str, Any]) -> str:
    """The config text with ``flat_patch`` (dotted key -> value) applied."""
    text = config.text
    for key, value in flat_patch.items():
        text = _apply(text, key, value, config.path)
    expected = copy.deepcopy(config.data)
    for key, value in flat_patch.items():
        set_dotted(expected, key, value)
    try:
        same = parse_yaml_text(text, config.path) == expected
    except UserError:
        same = False
    if not same:
        raise PatchError(f"{config.path}: patching {', '.join(flat_patch)} did not round-trip")
    return text


def unified_diff(config: ExperimentConfig, new_text: str) -> str:
    lines = difflib.unified_diff(
        config.text.splitlines(keepends=True),
        new_text.splitlines(keepends=True),
        fromfile=config.path,
        tofile=f"{config.path} (patched)",
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def check_target(target: str, *, config_path: str | None, force: bool = False) -> Path:
    """Refuse a target that would overwrite the config, lies in no folder or exists.

    Called before the (possibly long) diagnosis and again right before writing.
    """
    if not target.strip():
        raise UserError("--patch-out needs a file name")
    path = Path(target).expanduser()
    if config_path is not None and _same_file(path, Path(config_path)):
        raise UserError(
            f"refusing to overwrite the config itself ({config_path}); pick another file"
        )
    folder = path.parent
    if not folder.is_dir():
        raise UserError(f"folder does not exist: {folder}")
    if path.is_dir():
        raise UserError(f"{target} is a folder")
    if (path.exists() or path.is_symlink()) and not force:
        raise UserError(f"{target} already exists; remove it or pass --force")
    return path


def write_atomic(target: str, text: str, *, config_path: str | None, force: bool = False) -> None:
    """Write ``text`` to ``target`` via a temp file in the same folder and ``os.replace``.

    An interrupted write leaves the target as it was and no temp file behind. The new
    file gets the permissions of the file it replaces, else those of the config.
    """
    path = check_target(target, config_path=config_path, force=force)
    mode = _mode_of(path)
    if mode is None and config_path is not None:
        mode = _mode_of(Path(config_path))
    try:
        handle, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise UserError(f"cannot write {target}: {exc.strerror or exc}") from None
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        if mode is not None:
            os.chmod(temp, mode)
        os.replace(temp, path)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        if isinstance(exc, OSError):
            raise UserError(f"cannot write {target}: {exc.strerror or exc}") from None
        raise


def _mode_of(path: Path) -> int | None:
    try:
        return stat.S_IMODE(path.stat().st_mode) if path.is_file() else None
    except OSError:
        return None


def _same_file(a: Path, b: Path) -> bool:
    try:
        if a.exists() and b.exists():
            return a.samefile(b)
    except OSError:
        pass
    return a.resolve() == b.resolve()


# --- one key ---------------------------------------------------------------------------


def _compose(text: str) -> Any:
    import yaml

    return yaml.compose(text, Loader=yaml.SafeLoader)


def _apply(text: str, key: str, value: Any, name: str) -> str:
    import yaml

    root = _compose(text)
    if root is None:
        return _append_block(text, key.split("."), value, 0)
    parts = key.split(".")
    node = root
    skip = False
    for depth, part in enumerate(parts):
        if skip:  # the list index consumed below
            skip = False
            continue
        pair = _find_pair(node, part)
        if pair is None:
            return _insert(text, node, parts[depth:], value, depth == 0)
        key_node, value_node = pair
        last = depth == len(parts) - 1
        is_alias = value_node.start_mark.index < key_node.end_mark.index
        if last:
            if is_alias:
                return _replace_alias(text, key_node, value)
            return _replace_scalar(text, value_node, value, key)
        if isinstance(value_node, yaml.MappingNode) and not is_alias:
            node = value_node
            continue
        item = _list_item(value_node, parts, depth) if not is_alias else None
        if item is not None:  # ``scheduling_spec.0.env_vars``: into an item of a list
            node, skip = item, True
            continue
        if _is_null(value_node) and not is_alias and node.flow_style:
            return _fill_null_flow(text, value_node, parts[depth + 1 :], value)
        if _is_null(value_node) and not is_alias:
            return _fill_null(text, key_node, value_node, parts[depth + 1 :], value)
        where = ".".join(parts[: depth + 1])
        raise PatchError(f"{name}: cannot patch {key}: {where} is not a plain mapping here")
    raise AssertionError("unreachable")


def _list_item(node: Any, parts: list[str], depth: int) -> Any:
    """The mapping item of a block or flow list that ``parts[depth + 1]`` indexes."""
    import yaml

    if not isinstance(node, yaml.SequenceNode) or depth + 2 >= len(parts):
        return None  # a list item itself is never replaced, only keys inside it
    index = parts[depth + 1]
    if not index.isdigit() or int(index) >= len(node.value):
        return None
    item = node.value[int(index)]
    return item if isinstance(item, yaml.MappingNode) else None


def _find_pair(node: Any, part: str) -> tuple[Any, Any] | None:
    import yaml

    if not isinstance(node, yaml.MappingNode):
        return None
    for key_node, value_node in node.value:
        if isinstance(key_node, yaml.ScalarNode) and key_node.value == part:
            return key_node, value_node
    return None


def _is_null(node: Any) -> bool:
    return bool(node.tag == "tag:yaml.org,2002:null")


def _replace_scalar(text: str, node: Any, value: Any, key: str) -> str:
    import yaml

    if not isinstance(node, yaml.ScalarNode) or node.style in ("|", ">"):
        raise PatchError(f"cannot patch {key}: its value is not a one-line scalar")
    start, end = node.start_mark.index, node.end_mark.index
    new = format_scalar(value, node.style)
    if node.style is None and has_interpolation(node.value):
        new += f"  # was {node.value}"
    if start == end:  # "key:" with no value
        new = " " + new
    return text[:start] + new + text[end:]


def _replace_alias(text: str, key_node: Any, value: Any) -> str:
    """``key: *anchor`` -> ``key: value`` (the anchor itself is left alone)."""
    start = text.index("*", key_node.end_mark.index)
    end = start + 1
    while end < len(text) and not text[end].isspace() and text[end] not in ",]}":
        end += 1
    return text[:start] + format_scalar(value, None) + text[end:]


def _fill_null(text: str, key_node: Any, value_node: Any, rest: list[str], value: Any) -> str:
    """``fsdp: null`` (or ``fsdp:``) becomes a block mapping holding the new key."""
    start, end = value_node.start_mark.index, value_node.end_mark.index
    text = text[:start].rstrip(" ") + text[end:] if end > start else text
    column = key_node.start_mark.column
    line_end = _line_end(text, key_node.end_mark.index)
    block = _block_lines(rest, value, column + _indent_step(text))
    return text[:line_end] + block + text[line_end:]


def _insert(text: str, node: Any, rest: list[str], value: Any, at_root: bool) -> str:
    import yaml

    if not isinstance(node, yaml.MappingNode):
        raise PatchError("cannot insert a key below a list")
    if node.flow_style:
        return _insert_flow(text, node, rest, value)
    pairs = [p for p in node.value if p[0].tag != "tag:yaml.org,2002:merge"] or node.value
    if not pairs:
        raise PatchError("cannot insert into an empty mapping")
    column = pairs[0][0].start_mark.column
    scalar_pairs = [p for p in pairs if isinstance(p[1], yaml.ScalarNode)]
    if len(rest) > 1 and at_root or not scalar_pairs:
        anchor_end = _content_end(pairs[-1][1])
        position = _line_end(text, anchor_end)
        blank = "\n" if at_root else ""
        return (
            text[:position]
            + _ensure_newline(text, position)
            + blank
            + _block_lines(rest, value, column, step=_indent_step(text))
            + text[position:]
        )
    anchor = scalar_pairs[-1][1]
    position = _line_end(text, anchor.end_mark.index)
    block = _block_lines(rest, value, column, step=_indent_step(text))
    return text[:position] + _ensure_newline(text, position) + block + text[position:]


def _fill_null_flow(text: str, value_node: Any, rest: list[str], value: Any) -> str:
    """``{fsdp: null}`` becomes ``{fsdp: {key: value}}``: a block cannot go inside a flow."""
    start, end = value_node.start_mark.index, value_node.end_mark.index
    new = _inline(rest, value)
    return text[:start] + (" " + new if start == end else new) + text[end:]


def _inline(rest: list[str], value: Any) -> str:
    """``{a: {b: value}}`` for the keys ``rest`` (just the value when there are none)."""
    inline = format_scalar(value, None)
    for part in reversed(rest):
        inline = f"{{{part}: {inline}}}"
    return inline


def _insert_flow(text: str, node: Any, rest: list[str], value: Any) -> str:
    close = node.end_mark.index - 1
    if text[close] != "}":
        raise PatchError("cannot find the end of a flow mapping")
    entry = f"{rest[0]}: {_inline(rest[1:], value)}"
    before = text[:close].rstrip()
    sep = "" if before.endswith("{") else ", "
    return before + sep + entry + text[close:]


def _content_end(node: Any) -> int:
    """End index of the last scalar inside ``node`` (a block's own end runs past comments)."""
    import yaml

    while (
        isinstance(node, yaml.MappingNode | yaml.SequenceNode)
        and node.value
        and not node.flow_style
    ):
        last = node.value[-1]
        node = last[1] if isinstance(node, yaml.MappingNode) else last
    return int(node.end_mark.index)


def _line_end(text: str, index: int) -> int:
    """Index just after the newline that ends the line holding ``index - 1``."""
    newline = text.find("\n", max(index - 1, 0))
    return len(text) if newline < 0 else newline + 1


def _ensure_newline(text: str, position: int) -> str:
    return "" if position == 0 or text[position - 1] == "\n" else "\n"


def _block_lines(rest: list[str], value: Any, column: int, step: int = DEFAULT_INDENT) -> str:
    lines = []
    for depth, part in enumerate(rest[:-1]):
        lines.append(" " * (column + depth * step) + f"{part}:")
    indent = " " * (column + (len(rest) - 1) * step)
    lines.append(f"{indent}{rest[-1]}: {format_scalar(value, None)}")
    return "\n".join(lines) + "\n"


def _append_block(text: str, parts: list[str], value: Any, column: int) -> str:
    return text + _ensure_newline(text, len(text)) + _block_lines(parts, value, column)


def _indent_step(text: str) -> int:
    """The file's mapping indentation step (the smallest non-zero key indentation)."""
    steps = []
    for line in text.splitlines():
        stripped = line.lstrip(" ")
        if stripped and not stripped.startswith(("#", "-")) and ":" in stripped:
            indent = len(line) - len(stripped)
            if indent:
                steps.append(indent)
    return min(steps) if steps else DEFAULT_INDENT


# --- scalars ---------------------------------------------------------------------------


def format_scalar(value: Any, style: str | None) -> str:
    """YAML text for ``value``; strings keep the quote style they had."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _format_float(value)
    text = str(value)
    if style == "'" and not _UNPRINTABLE.search(text) and text.isprintable():
        return "'" + text.replace("'", "''") + "'"
    if style in ('"', "'") or not _plain_safe(text):
        quoted = json.dumps(text, ensure_ascii=False)  # JSON escapes are YAML escapes
        return _UNPRINTABLE.sub(lambda m: f"\\u{ord(m.group()):04x}", quoted)
    return text


# Characters that cannot stand raw inside YAML quotes: not allowed in a document (DEL,
# C1 controls, surrogates, non-characters) or read as line breaks (NEL, U+2028/9).
# json.dumps leaves them raw with ensure_ascii=False.
_UNPRINTABLE = re.compile("[\x7f-\x9f\u2028\u2029\ud800-\udfff\ufffe\uffff]")


def _format_float(value: float) -> str:
    text = repr(value)
    if "e" in text and "." not in text.split("e")[0]:
        mantissa, exponent = text.split("e")
        text = f"{mantissa}.0e{exponent}"  # PyYAML reads 1e-05 as a string
    return text


def _plain_safe(text: str) -> bool:
    """True when ``text`` reads back as itself unquoted, in block and in flow context
    (``{a: 1, b: x,y}`` splits at the comma, so flow indicators are quoted)."""
    import yaml

    if not text or text != text.strip() or "\n" in text or "#" in text:
        return False
    try:
        block, flow = yaml.safe_load(f"k: {text}"), yaml.safe_load(f"{{k: {text}}}")
    except yaml.YAMLError:
        return False
    return bool(block == flow == {"k": text})
