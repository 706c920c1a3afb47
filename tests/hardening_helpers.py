"""Shared pieces of the hardening tests: a real-looking OOM, a config, the error check."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

OOM_LINE = (
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
    "capacity of 79.11 GiB of which 1.02 GiB is free. Including non-PyTorch memory, this process "
    "has 78.07 GiB memory in use. Of the allocated memory 74.20 GiB is allocated by PyTorch, and "
    "2.31 GiB is reserved by PyTorch but unallocated."
)
TRAINING_OOM = (
    "(AReaL) 20260301-10:00:00.000 RLTrainer INFO: step 12 started\n"
    "Traceback (most recent call last):\n"
    '  File "/opt/AReaL/areal/engine/fsdp_engine.py", line 655, in train_batch\n'
    "    loss.backward()\n" + OOM_LINE + "\n"
)
CONFIG = """\
# GRPO, one node
experiment_name: hardening
trial_name: t1
cluster:
  n_nodes: 1
  n_gpus_per_node: 8
actor:
  backend: "fsdp:d4"
  path: Qwen/Qwen2.5-7B-Instruct
  mb_spec:
    max_tokens_per_mb: 32768   # too many
train_dataset:
  max_length: 1024
gconfig:
  max_new_tokens: 1024
"""


def assert_one_line_error(result, *, contains: str = "", code: int = 2) -> None:
    """The contract for every refused input: exit code, one stderr line, no traceback."""
    assert result.exit_code == code, (result.exit_code, result.stderr)
    assert result.stderr.startswith("areal-doctor: error: "), result.stderr
    assert result.stderr.count("\n") == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert contains in result.stderr, result.stderr


def assert_config_warning(result, *, contains: str = "") -> None:
    """An unreadable --config of diagnose: one warning line, and the diagnosis goes on."""
    assert result.exit_code == 0, (result.exit_code, result.stderr)
    first = result.stderr.splitlines()[0]
    assert first.startswith("areal-doctor: warning: "), result.stderr
    assert "diagnosing without it" in first and contains in first, result.stderr
    assert result.stderr.splitlines()[-1] == first  # said again after a long output
    assert "Traceback" not in result.stderr
    assert "Memory failure" in result.stdout


def run_module(
    *args: str,
    stdin: bytes | None = None,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 120,
) -> subprocess.CompletedProcess[bytes]:
    """``python -m assistant ARGS`` in a new process (stdout and stderr captured)."""
    full_env = {**os.environ, "LANG": "en_US.UTF-8", "PYTHONPATH": str(ROOT), **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "assistant", *args],
        input=stdin,
        capture_output=True,
        cwd=cwd or ROOT,
        env=full_env,
        timeout=timeout,
        check=False,
    )


def run_module_in_bash(tail: str, *args: str) -> subprocess.CompletedProcess[bytes]:
    """``bash -c "python -m assistant TAIL" bash ARGS``: for redirections a shell sets up
    (closed descriptors, pipes, process substitution); ARGS are the script's $1, $2..."""
    return subprocess.run(
        ["bash", "-c", f"{sys.executable} -m assistant {tail}", "bash", *args],
        capture_output=True,
        cwd=ROOT,
        timeout=120,
        check=False,
    )
