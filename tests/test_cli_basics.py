"""The CLI's manners: help with examples, version, one-line usage errors, exit code 2."""

from __future__ import annotations

import subprocess
import sys

import pytest

from assistant import __version__


def test_version(run_cli) -> None:
    with pytest.raises(SystemExit) as exc:
        run_cli("--version")
    assert exc.value.code == 0


def test_help_lists_commands_and_examples(capsys) -> None:
    from assistant.cli import main

    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    for command in ("diagnose", "search", "check", "tui"):
        assert command in out
    assert "examples:" in out


@pytest.mark.parametrize("command", ["diagnose", "search", "check", "tui"])
def test_each_command_has_help_with_examples(command: str, capsys) -> None:
    from assistant.cli import main

    with pytest.raises(SystemExit) as exc:
        main([command, "--help"])
    assert exc.value.code == 0
    assert "examples:" in capsys.readouterr().out


@pytest.mark.parametrize(
    "args",
    [
        ["diagnose"],
        ["diagnose", "x.log", "--format", "xml"],
        ["diagnose", "x.log", "--lang", "fr"],
        ["search", "oom", "--lang", "de"],
        ["search", "oom", "-k", "0"],
        ["check"],
        ["frobnicate"],
    ],
)
def test_usage_errors_are_one_line_exit_2(run_cli, args: list[str]) -> None:
    result = run_cli(*args)
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1
    assert result.stderr.startswith("areal-doctor: error:")
    assert "Traceback" not in result.stderr


def test_no_arguments_without_terminal_prints_help_not_tui(run_cli) -> None:
    result = run_cli()
    assert result.exit_code == 2
    assert "diagnose" in result.stdout


def test_answer_needs_id_equals_value(run_cli, tmp_path) -> None:
    log = tmp_path / "x.log"
    log.write_text("hello\n")
    result = run_cli("diagnose", str(log), "--answer", "multi_turn")
    assert result.exit_code == 2
    assert "ID=VALUE" in result.stderr


def test_patch_out_needs_config(run_cli, tmp_path) -> None:
    log = tmp_path / "x.log"
    log.write_text("hello\n")
    result = run_cli("diagnose", str(log), "--patch-out", str(tmp_path / "out.yaml"))
    assert result.exit_code == 2
    assert "--config" in result.stderr


def test_python_dash_m_runs_the_same_cli() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "assistant", "--version"], capture_output=True, text=True
    )
    assert proc.returncode == 0
    assert __version__ in proc.stdout


def test_a_missing_config_is_a_warning_and_the_diagnosis_is_printed(run_cli, tmp_path) -> None:
    from hardening_helpers import TRAINING_OOM, assert_config_warning

    log = tmp_path / "crash.log"
    log.write_text(TRAINING_OOM)
    result = run_cli("diagnose", str(log), "--config", str(tmp_path / "nope.yaml"))
    assert_config_warning(result, contains="config file not found")


def test_without_a_config_defaults_are_marked_as_assumptions(run_cli, tmp_path) -> None:
    log = tmp_path / "crash.log"
    log.write_text(
        "[rollout] torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 GiB.\n"
        '  File "/x/sglang/srt/model_executor/model_runner.py", line 1, in forward\n'
    )
    result = run_cli("diagnose", str(log), "--non-interactive")
    assert result.exit_code == 0, result.stderr
    first = result.stdout.split("Root cause")[0]
    assert "Check your value of sglang.mem_fraction_static" in first
    assert "most configs already set 0.8" in first
    assert "mem_fraction_static=0.8" not in result.stdout  # no no-op patch
    log.write_text(
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 GiB.\n"
        '  File "/x/areal/engine/fsdp_engine.py", line 9, in train_batch\n'
    )
    result = run_cli("diagnose", str(log), "--non-interactive")
    assert "actor.gradient_checkpointing: false (AReaL default, assumed) -> true" in result.stdout
