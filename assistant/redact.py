"""Mask what should not be pasted into a public issue: hosts, IPs, users, e-mails, secrets.

The patterns are data (knowledge/redact.yaml); this module only applies them, to
text or to every string inside a JSON-like structure.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any

from assistant.knowledge import load_yaml


@cache
def _rules() -> tuple[tuple[re.Pattern[str], str], ...]:
    rules = []
    for entry in load_yaml("redact.yaml")["rules"]:
        flags = re.IGNORECASE if entry.get("ignore_case") else 0
        rules.append((re.compile(entry["pattern"], flags), entry["replace"]))
    return tuple(rules)


def redact_text(text: str) -> str:
    for pattern, replacement in _rules():
        text = pattern.sub(replacement, text)
    return text


def redact_obj(value: Any) -> Any:
    """Redact every string (keys included) in nested dicts and lists."""
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, dict):
        return {redact_obj(k): redact_obj(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact_obj(v) for v in value]
    return value
