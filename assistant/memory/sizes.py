"""Sizes as logs and spec sheets write them: "80GiB", "79.19 GiB", "141GB", "24576MiB".

GB/MB are read as 1024-based, as PyTorch, SGLang and AReaL logs print them (SGLang's
"GB" and AReaL's "(GB)" both divide by 1024**3); TB/TiB likewise.
"""

from __future__ import annotations

import re

from assistant.errors import UserError

_UNITS = {
    "b": 1,
    "kib": 1 << 10,
    "kb": 1 << 10,
    "k": 1 << 10,
    "mib": 1 << 20,
    "mb": 1 << 20,
    "m": 1 << 20,
    "gib": 1 << 30,
    "gb": 1 << 30,
    "g": 1 << 30,
    "tib": 1 << 40,
    "tb": 1 << 40,
    "t": 1 << 40,
}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*([A-Za-z]+)\s*$")
# PyTorch's format_size (c10/cuda/CUDACachingAllocator.cpp) prints two decimals
PRINTED = re.compile(r"(\d+(?:\.\d+)?)\s*(KiB|MiB|GiB|TiB|bytes|B)\b")


def parse_gpu_size(text: str) -> int:
    """Bytes for a GPU size; UserError with a one-line reason otherwise."""
    found = _SIZE.match(text or "")
    if not found:
        raise UserError(
            f"--gpu-memory: cannot read {text!r}; give a size with a unit, e.g. 80GiB or 24576MiB"
        )
    number, unit = float(found.group(1)), found.group(2).lower()
    if unit not in _UNITS:
        raise UserError(f"--gpu-memory: unknown unit {found.group(2)!r} (use GiB, GB, MiB, MB)")
    value = int(number * _UNITS[unit])
    if value < (1 << 30) or value > (1 << 50):
        raise UserError(f"--gpu-memory: {text!r} is not a plausible GPU memory size")
    return value


def printed_tolerance(text: str, value: int) -> int:
    """Half a unit of the last printed decimal of ``value`` as it appears in ``text``:
    PyTorch rounds "Tried to allocate 9.28 GiB" to two decimals, so the true request
    lies within 0.005 GiB of it. Falls back to 1% when the figure is not found."""
    for match in PRINTED.finditer(text or ""):
        number, unit = match.group(1), match.group(2)
        scale = {"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40}.get(unit, 1)
        if abs(float(number) * scale - value) <= max(scale * 0.01, 1):
            decimals = len(number.partition(".")[2])
            return int(scale * 0.5 * 10**-decimals) + 1
    return max(value // 100, 1)


def gib(value: float) -> float:
    return round(value / (1 << 30), 2)
