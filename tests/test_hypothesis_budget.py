"""The CI profile shortens property tests; a developer's run keeps their counts."""

from __future__ import annotations

import os

from hypothesis import settings
from hypothesis_budget import examples


def test_the_profile_follows_ci() -> None:
    wanted = os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "dev")
    assert settings.default.max_examples == settings.get_profile(wanted).max_examples
    assert settings.get_profile("ci").max_examples < settings.get_profile("dev").max_examples


def test_counts_scale_with_the_profile() -> None:
    settings.load_profile("ci")
    try:
        assert examples(150) == 37 and examples(20) == 10  # a quarter, never below 10
    finally:
        settings.load_profile("dev")
    assert examples(150) == 150
    wanted = os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "dev")
    settings.load_profile(wanted)
