"""ARCHITECTURE.md's walk-throughs for a new signature and a new vocabulary entry,
followed once the way a newcomer would: a copy of the package and its knowledge/,
ONE data file edited, and the real command run on a log the change is for. Before
the edit the copy reads the log one way; after it, the way the entry says. (The
third walk-through, a new fix, is tests/test_tree_add_a_fix.py.)

The examples a newcomer writes are checked too: the copy's own example tests are the
same loader the command uses, so a bad entry fails the command with a one-line
knowledge error (exit 2), which the last test shows.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import assistant
from assistant.knowledge import knowledge_dir

# Intel Gaudi's (HPU) allocator, which no bundled signature knows
HPU_LOG = (
    "Traceback (most recent call last):\n"
    '  File "/workspace/train.py", line 88, in <module>\n'
    "    loss.backward()\n"
    "RuntimeError: [Rank:0] FATAL ERROR :: MODULE:PT_DEVMEM Allocation failed for "
    "size::2147483648 (2048)MB\n"
)
NEW_SIGNATURE = """
  # walk-through "A new error signature": one entry, its pattern, trigger and examples
  - id: walkthrough-hpu-devmem
    kind: cuda_oom
    priority: 90
    confidence: 0.9
    patterns: ['MODULE:PT_DEVMEM Allocation failed for size::\\d+']
    triggers: ['PT_DEVMEM Allocation failed']
    lines: 1
    match:
      - 'RuntimeError: [Rank:0] FATAL ERROR :: MODULE:PT_DEVMEM Allocation failed for size::2048'
    no_match:
      - 'MODULE:PT_DEVMEM Allocation succeeded'
"""

# Trinity-RFT's explorer (its rollout side): no bundled word says what it was doing
EXPLORER_LOG = (
    "Traceback (most recent call last):\n"
    '  File "/opt/trinity/trinity/explorer/explorer.py", line 140, in explore_step\n'
    "    out = self.engine(batch)\n"
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a "
    "total capacity of 79.10 GiB of which 1.20 GiB is free.\n"
)
NEW_FRAMEWORK = """# walk-through "A new framework": one new file in vocabulary/frameworks/
entries:
  - id: trinity-explorer-frames
    phase: generation
    weight: 2
    pattern: 'trinity/explorer/'
    match:
      - '  File "/opt/trinity/trinity/explorer/explorer.py", line 140, in explore_step'
    no_match:
      - '  File "/opt/trinity/trinity/trainer/trainer.py", line 77, in train_step'
"""


def _copy_project(root: Path) -> Path:
    """The package and its knowledge/ in ``root``, laid out as the installed one is
    (a source checkout keeps knowledge/ beside the package; a wheel inside it)."""
    package = Path(assistant.__file__).resolve().parent
    shutil.copytree(package, root / "assistant", ignore=shutil.ignore_patterns("__pycache__"))
    inside = root / "assistant" / "knowledge"
    if not inside.is_dir():
        shutil.copytree(knowledge_dir(), root / "knowledge")
        return root / "knowledge"
    return inside


def _diagnose(root: Path, log: str) -> tuple[int, dict[str, object] | str]:
    log_path = root / "crash.log"
    log_path.write_text(log, encoding="utf-8")
    env = {
        **os.environ,
        "PYTHONPATH": str(root),
        "AREAL_DOCTOR_CACHE_DIR": str(root / "cache"),
        "NO_COLOR": "1",
    }
    done = subprocess.run(
        [sys.executable, "-m", "assistant", "diagnose", str(log_path), "--format", "json"],
        capture_output=True,
        text=True,
        env=env,
        cwd=root,
        timeout=120,
    )
    if done.returncode == 2:
        return 2, done.stderr
    return done.returncode, json.loads(done.stdout)


@pytest.fixture
def project(tmp_path: Path) -> tuple[Path, Path]:
    return tmp_path, _copy_project(tmp_path)


def test_the_copy_runs_the_copy(project: tuple[Path, Path]) -> None:
    """The command below is the copy's code reading the copy's knowledge/ (a check that
    the walk-throughs below test what they edit, not the installed files)."""
    root, knowledge = project
    env = {**os.environ, "PYTHONPATH": str(root)}
    where = subprocess.run(
        [sys.executable, "-c", "import assistant.knowledge as k; print(k.knowledge_dir())"],
        capture_output=True,
        text=True,
        env=env,
        cwd=root,
        timeout=60,
    )
    assert Path(where.stdout.strip()).resolve() == knowledge.resolve()


def test_a_new_signature_is_one_entry_in_signatures_yaml(project: tuple[Path, Path]) -> None:
    root, knowledge = project
    code, before = _diagnose(root, HPU_LOG)
    assert code == 1 and isinstance(before, dict) and before["oom"] is False
    signatures = knowledge / "signatures.yaml"
    text = signatures.read_text(encoding="utf-8")
    head, tail = text.split("\nsignatures:\n", 1)
    signatures.write_text(f"{head}\nsignatures:\n{NEW_SIGNATURE.lstrip(chr(10))}{tail}", "utf-8")
    code, after = _diagnose(root, HPU_LOG)
    assert code == 0 and isinstance(after, dict)
    assert after["oom"] is True and after["kind"] == "cuda_oom"
    assert "PT_DEVMEM Allocation failed" in json.dumps(after["evidence"])


def test_a_new_framework_is_one_file_of_vocabulary(project: tuple[Path, Path]) -> None:
    root, knowledge = project
    code, before = _diagnose(root, EXPLORER_LOG)
    assert code == 0 and isinstance(before, dict) and before["phase"] == "unknown"
    (knowledge / "vocabulary" / "frameworks" / "trinity.yaml").write_text(NEW_FRAMEWORK, "utf-8")
    code, after = _diagnose(root, EXPLORER_LOG)
    assert code == 0 and isinstance(after, dict) and after["phase"] == "generation"


def test_an_entry_whose_example_does_not_fire_stops_the_command(
    project: tuple[Path, Path],
) -> None:
    """A newcomer's mistake is caught by the loader, by name, before any diagnosis."""
    root, knowledge = project
    wrong = NEW_FRAMEWORK.replace("'trinity/explorer/'", "'trinity/explorers/'")
    (knowledge / "vocabulary" / "frameworks" / "trinity.yaml").write_text(wrong, "utf-8")
    code, said = _diagnose(root, EXPLORER_LOG)
    assert code == 2 and isinstance(said, str)
    assert "trinity-explorer-frames" in said and "Traceback" not in said
