"""How many examples a property test tries: its count, scaled by the Hypothesis profile.

``conftest.py`` registers two profiles: ``dev`` (Hypothesis' 100 examples as the unit)
and ``ci`` (a quarter of that), loaded when ``CI`` is set (as CI sets it) or by
``HYPOTHESIS_PROFILE``. A test writes the count it wants on a developer's machine,
``max_examples=examples(150)``; CI runs a quarter of them (never fewer than 10), with
every assertion unchanged.
"""

from __future__ import annotations

from hypothesis import settings

UNIT = 100  # the dev profile's max_examples: counts are written against it
FLOOR = 10


def examples(count: int) -> int:
    return max(FLOOR, count * settings.default.max_examples // UNIT)
