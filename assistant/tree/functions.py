"""The table of value functions tree.yaml may name (``fn:`` / ``vars:``).

Built by reading the modules that declare them, once, in one direction: this module
imports ``values`` and ``memory_values``; neither imports the other for its side
effects, and neither imports this table.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType, ModuleType

import assistant.tree.memory_values as memory_values
import assistant.tree.values as values
from assistant.tree.steps import ValueFunction


def _declared(*modules: ModuleType) -> Mapping[str, ValueFunction]:
    found: dict[str, ValueFunction] = {}
    for module in modules:
        for item in vars(module).values():
            if isinstance(item, ValueFunction):
                if item.name in found and found[item.name] is not item:
                    raise RuntimeError(f"two value functions are named {item.name}")
                found[item.name] = item
    return MappingProxyType(found)


VALUE_FUNCTIONS: Mapping[str, ValueFunction] = _declared(values, memory_values)
