"""What the config tells about the model: size from its name, heads from config.json."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from assistant.config.loader import ExperimentConfig

# "Qwen2.5-7B-Instruct" -> 7, "Qwen3-30B-A3B" -> 30 (total, not active), "gemma-3-12b-it" -> 12
PARAMS_IN_NAME = re.compile(r"(?<![A-Za-z0-9.])(\d+(?:\.\d+)?)\s*[bB](?![A-Za-z0-9])")
VLM_NAME = re.compile(r"(?i)(?:[-_/]vl(?:[-_/]|$)|vision|llava|internvl|minicpm-v|pixtral|-vlm)")
MAX_CONFIG_JSON = 1024 * 1024


def model_path(config: ExperimentConfig | None) -> str | None:
    return config.model_path() if config is not None else None


def params_from_name(name: str | None) -> float | None:
    """Billions of parameters written in a model name, or None."""
    if not name:
        return None
    match = PARAMS_IN_NAME.search(name.rsplit("/", 1)[-1]) or PARAMS_IN_NAME.search(name)
    if match is None:
        return None
    value = float(match.group(1))
    return int(value) if value.is_integer() else value


def looks_like_vlm(name: str | None) -> bool:
    return name is not None and name != "" and VLM_NAME.search(name) is not None


def local_model_config(name: str | None) -> dict[str, Any] | None:
    """``config.json`` of a local model folder; None for hub names or unreadable files."""
    if not name:
        return None
    try:  # "~nobody/x" or a NUL byte in the path are not errors, just not a local folder
        candidate = Path(name).expanduser() / "config.json"
        if not candidate.is_file() or candidate.stat().st_size > MAX_CONFIG_JSON:
            return None
        data = json.loads(candidate.read_text(encoding="utf-8"))
    except (OSError, ValueError, RuntimeError):
        return None
    return data if isinstance(data, dict) else None


def attention_heads(name: str | None, tables: bool = True) -> int | None:
    """``num_attention_heads`` from a local model folder (also a VLM's text_config), else
    (``tables``) from the bundled table of well-known models (knowledge/models.yaml)."""
    data = local_model_config(name)
    if data is None:
        if not tables:
            return None
        from assistant.memory.facts import table_entry

        entry = table_entry(name)
        return entry.heads if entry is not None else None
    for block in (data, data.get("text_config") or {}, data.get("llm_config") or {}):
        heads = block.get("num_attention_heads") if isinstance(block, dict) else None
        if isinstance(heads, int) and not isinstance(heads, bool) and heads > 0:
            return heads
    return None
