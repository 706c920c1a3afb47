"""Run a snippet of Python twice in fresh processes that share one cache folder."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def cold_then_warm(code: str, cache_folder: Path) -> tuple[str, str]:
    """The stripped output of ``code`` run with an empty cache, then with the one it
    filled. Each run is a process of its own: it may import another copy of the
    package than the tests do (an installed one, with another cache key)."""
    env = {**os.environ, "AREAL_DOCTOR_CACHE_DIR": str(cache_folder)}
    cold, warm = (
        subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
        ).stdout.strip()
        for _ in range(2)
    )
    return cold, warm
