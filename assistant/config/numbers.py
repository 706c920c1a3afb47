"""Reading numbers out of a config: one rule shared by the checks and the decision tree."""

from __future__ import annotations

import math
from typing import Any


def usable_number(value: Any) -> float | None:
    """A usable number: not a bool, not inf or nan (YAML's ``.inf`` is no setting to scale)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return value
