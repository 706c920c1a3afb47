"""UI strings of the TUI in Chinese and English, read from knowledge/i18n/tui.yaml.

Keys are flat ("key.open", "tab.patch"); each maps to {"en": ..., "zh": ...}.
``{name}`` fields are filled with ``str.format``; the result is always shown as
plain text (never parsed as markup), so values from a log cannot restyle it.
"""

from __future__ import annotations

from typing import Any

from assistant.knowledge import load_yaml

LANGS: tuple[str, str] = ("zh", "en")
STRINGS_FILE = "i18n/tui.yaml"


def strings() -> dict[str, dict[str, Any]]:
    """The whole table (cached by ``load_yaml``)."""
    table: dict[str, dict[str, Any]] = load_yaml(STRINGS_FILE)
    return table


def t(key: str, lang: str, **values: object) -> str:
    """The string ``key`` in ``lang``; English when that language lacks it.

    A missing key shows the key itself rather than failing: a typo must not take
    the user's session down (the tests check every key the code uses).
    """
    entry = strings().get(key) or {}
    text = entry.get(lang) or entry.get("en") or key
    return text.format(**values) if values else str(text)


def words(key: str, lang: str) -> list[str]:
    """A list-valued entry (e.g. the words accepted as "yes")."""
    entry = strings().get(key) or {}
    return [str(word) for word in entry.get(lang) or entry.get("en") or []]


def toggled(lang: str) -> str:
    """The other language: what ctrl+l switches to."""
    return "en" if lang == "zh" else "zh"
