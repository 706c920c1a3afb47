"""Turn the figures logs print into numbers (bytes, counts, fractions).

PyTorch, vLLM and AReaL print binary units; SGLang prints ``GB`` meaning GiB;
Ray and SGLang's host-memory check print decimal ``GB``; the kernel prints ``kB``
meaning KiB; NCCL prints raw bytes. The unit of each figure is declared in
knowledge/signatures.yaml, so this module only does the arithmetic.
"""

from __future__ import annotations

import re

_BINARY = {
    "b": 1,
    "byte": 1,
    "bytes": 1,
    "kib": 1 << 10,
    "mib": 1 << 20,
    "gib": 1 << 30,
    "tib": 1 << 40,
    "kb": 1 << 10,
    "mb": 1 << 20,
    "gb": 1 << 30,
    "tb": 1 << 40,
}
_DECIMAL = {**_BINARY, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12}
_SIZE = re.compile(r"^\s*(-?\d+(?:\.\d+)?)\s*([A-Za-z]*)\s*$")

# What each placeholder in a figure pattern captures (one group, the value).
PLACEHOLDERS: dict[str, str] = {
    "size": r"(-?\d+(?:\.\d+)?\s*(?:bytes|byte|KiB|MiB|GiB|TiB|KB|kB|MB|GB|TB|B)\b)",
    "num": r"(-?\d+(?:\.\d+)?)",
    "int": r"(\d+)",
}

UNITS = (
    "size", "size_decimal", "bytes", "kib", "mib", "gib", "gb_decimal", "int", "float", "percent",
)  # fmt: skip


def parse_value(text: str, unit: str) -> int | float | None:
    """Convert captured ``text`` according to ``unit``; None when it does not parse."""
    text = text.strip()
    try:
        if unit in ("size", "size_decimal"):
            return parse_size(text, decimal=unit == "size_decimal")
        if unit == "int":
            return int(text)
        if unit == "float":
            return float(text)
        if unit == "percent":  # "95%" as the fraction 0.95
            return float(text) / 100
        scale = {"bytes": 1, "kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "gb_decimal": 10**9}
        return int(round(float(text) * scale[unit]))
    except (ValueError, KeyError):
        return None


def parse_size(text: str, decimal: bool = False) -> int | None:
    """``"2.00 GiB"`` -> 2147483648. A bare number is bytes."""
    found = _SIZE.match(text)
    if not found:
        return None
    number, unit = float(found.group(1)), found.group(2).lower()
    table = _DECIMAL if decimal else _BINARY
    if unit == "":
        return int(round(number))
    if unit not in table:
        return None
    return int(round(number * table[unit]))


def format_bytes(value: float) -> str:
    """Human-readable binary size, for explanations."""
    size = float(value)
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB"):
        if abs(size) < 1024 or unit == "TiB":
            return f"{size:.0f} {unit}" if unit == "bytes" else f"{size:.2f} {unit}"
        size /= 1024
    return f"{size:.2f} TiB"
