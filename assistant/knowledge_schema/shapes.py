"""Small checks shared by the validators: bilingual texts, placeholders, name sets."""

from __future__ import annotations

import string
from collections.abc import Iterable
from typing import Any

from assistant.logs.schema import Entry

LANGS = ("en", "zh")


def placeholders(template: str) -> set[str]:
    """The ``{names}`` a str.format template uses."""
    try:
        return {name for _, name, _, _ in string.Formatter().parse(template) if name}
    except ValueError:
        return {"<malformed braces>"}


def texts(
    entry: Entry, key: str, allowed: Iterable[str] | None = None, required: bool = True
) -> None:
    """``key`` is {en, zh} strings with the same placeholders, all among ``allowed``."""
    value = entry.get(key, dict, ... if required else None)
    if value is None:
        return
    bilingual(entry, value, key, allowed)


def bilingual(entry: Entry, value: Any, where: str, allowed: Iterable[str] | None) -> None:
    if (
        not isinstance(value, dict)
        or set(value) - {*LANGS, "when", "when_vars"}
        or not all(isinstance(value.get(lang), str) and value.get(lang) for lang in LANGS)
    ):
        entry.fail(f"'{where}' needs non-empty 'en' and 'zh' texts and nothing else")
    used = {lang: placeholders(value[lang]) for lang in LANGS}
    if used["en"] != used["zh"]:
        differ = sorted(used["en"] ^ used["zh"])
        entry.fail(f"'{where}': en and zh use different placeholders {differ}")
    if allowed is not None:
        unknown = sorted(used["en"] - set(allowed))
        if unknown:
            entry.fail(f"'{where}': unknown placeholder '{{{unknown[0]}}}'")


def known(entry: Entry, what: str, name: Any, names: Iterable[str], where: str) -> None:
    if name not in set(names):
        entry.fail(f"'{where}' names unknown {what} '{name}'")
