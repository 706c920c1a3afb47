"""Files and configs: every file written is named, a config that cannot be read is said
twice (or refused when a file was to be written from it), and a config that does not
belong to the log is called out (issue 21)."""

from __future__ import annotations

import json
from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures"
TRAINING = FIXTURES / "tui/training_oom.log"
CONFIG = FIXTURES / "configs/grpo_fsdp.yaml"
GENERATION = FIXTURES / "logs/signatures/sglang-decode-oom.log"
SFT = """\
experiment_name: sft
actor:
  backend: "fsdp:d8"
  path: Qwen/Qwen2.5-7B
  mb_spec: {max_tokens_per_mb: 8192}
train_dataset:
  type: sft
  max_length: 4096
"""


def test_patch_out_names_the_file_it_wrote(run_cli, tmp_path: Path) -> None:
    out = tmp_path / "fixed.yaml"
    result = run_cli(
        "diagnose", str(TRAINING), "--config", str(CONFIG), "--non-interactive",
        "--patch-out", str(out),
    )  # fmt: skip
    assert result.exit_code == 0
    assert out.exists()
    assert f"areal-doctor: wrote {out}" in result.stderr.splitlines()


def test_patch_out_with_an_unreadable_config_is_exit_2(run_cli, tmp_path: Path) -> None:
    out = tmp_path / "fixed.yaml"
    result = run_cli(
        "diagnose", str(TRAINING), "--config", str(tmp_path / "typo.yaml"), "--non-interactive",
        "--patch-out", str(out),
    )  # fmt: skip
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.startswith("areal-doctor: error: ")
    assert "--patch-out needs a readable --config" in result.stderr
    assert result.stderr.count("\n") == 1
    assert not out.exists()


def test_an_unreadable_config_is_warned_before_and_after_the_output(run_cli, tmp_path) -> None:
    result = run_cli(
        "diagnose", str(TRAINING), "--config", str(tmp_path / "typo.yaml"), "--non-interactive"
    )
    assert result.exit_code == 0 and "Memory failure" in result.stdout
    lines = result.stderr.splitlines()
    assert len(lines) == 2 and lines[0] == lines[-1]
    assert lines[0].startswith("areal-doctor: warning: ") and "typo.yaml" in lines[0]


def test_a_generation_oom_with_an_sft_config_says_they_do_not_match(run_cli, tmp_path) -> None:
    cfg = tmp_path / "sft.yaml"
    cfg.write_text(SFT)
    result = run_cli(
        "diagnose", str(GENERATION), "--config", str(cfg), "--non-interactive", "--format", "json"
    )
    data = json.loads(result.stdout)
    assert data["phase"] == "generation"
    ids = [w["id"] for w in data["warnings"]]
    assert "log-config-mismatch" in ids
    text = run_cli("diagnose", str(GENERATION), "--config", str(cfg), "--non-interactive").stdout
    assert "runs no rollout server" in text and "config of the run that crashed" in text
    assert "without your config" not in text  # a config was given
    zh = run_cli(
        "diagnose", str(GENERATION), "--config", str(cfg), "--non-interactive", "--lang", "zh"
    ).stdout
    assert "log-config-mismatch" in zh and "不运行 rollout 服务" in zh


def test_a_matching_config_and_check_raise_no_mismatch(run_cli, tmp_path) -> None:
    cfg = tmp_path / "sft.yaml"
    cfg.write_text(SFT)
    rl = run_cli(
        "diagnose",
        str(GENERATION),
        "--config",
        str(CONFIG),
        "--non-interactive",
        "--format",
        "json",
    )
    assert "log-config-mismatch" not in [w["id"] for w in json.loads(rl.stdout)["warnings"]]
    training = run_cli(
        "diagnose", str(TRAINING), "--config", str(cfg), "--non-interactive", "--format", "json"
    )
    assert "log-config-mismatch" not in [w["id"] for w in json.loads(training.stdout)["warnings"]]
    check = run_cli("check", "--config", str(cfg), "--format", "json")  # no log to compare
    assert "log-config-mismatch" not in [w["id"] for w in json.loads(check.stdout)["warnings"]]


def test_diagnose_dash_on_a_terminal_prompts_and_ends_on_one_ctrl_d() -> None:
    """A pty as stdin: the prompt is on stderr, and one Ctrl-D after the pasted log
    ends the reading (before, a second Ctrl-D was needed and nothing was said)."""
    import os
    import pty
    import subprocess
    import sys

    root = Path(__file__).parent.parent
    master, slave = pty.openpty()
    env = {**os.environ, "LANG": "en_US.UTF-8", "PYTHONPATH": str(root)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "assistant", "diagnose", "-", "--non-interactive"],
        stdin=slave, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=root,
    )  # fmt: skip
    os.close(slave)
    try:
        for line in TRAINING.read_bytes().splitlines():
            os.write(master, line + b"\n")
        os.write(master, b"\x04")  # one Ctrl-D on an empty line
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
        os.close(master)
    assert proc.returncode == 0, err
    assert b"press Ctrl-D on an empty line" in err.splitlines()[0]
    assert b"Memory failure: phase training" in out
