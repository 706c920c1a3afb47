"""User-facing strings of the CLI renderers, kept as data in knowledge/i18n/cli.yaml."""

from __future__ import annotations

from assistant.knowledge import load_yaml


def message(key: str, lang: str, /, **values: object) -> str:
    table = load_yaml("i18n/cli.yaml")
    entry = table.get(key, {})
    text = entry.get(lang) or entry.get("en") or key
    return text.format(**values) if values else text
