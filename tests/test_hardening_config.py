"""Hostile and broken configs: nothing in them runs, every problem is one line, exit 2."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hardening_helpers import (
    CONFIG,
    ROOT,
    TRAINING_OOM,
    assert_config_warning,
    assert_one_line_error,
    run_module,
)


@pytest.fixture
def log(tmp_path: Path) -> str:
    path = tmp_path / "crash.log"
    path.write_text(TRAINING_OOM)
    return str(path)


def _config(tmp_path: Path, text: str, name: str = "exp.yaml") -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


@pytest.mark.parametrize(
    "tag",
    [
        "!!python/object/apply:os.system",
        "!!python/object/apply:subprocess.call",
        "!!python/object/new:os.system",
        "!!python/name:os.system",
    ],
)
def test_python_object_tag_never_executes(run_cli, tmp_path: Path, log: str, tag: str) -> None:
    marker = tmp_path / "executed"
    config = _config(tmp_path, CONFIG + f'seed: {tag} ["touch {marker}"]\n')
    result = run_cli("check", "--config", config)
    assert_one_line_error(result)
    assert "Python-object tag" in result.stderr or "constructor" in result.stderr
    result = run_cli("diagnose", log, "--config", config, "--non-interactive")
    assert_config_warning(result, contains="Python-object tag")
    assert not marker.exists()


def test_python_object_tag_through_the_module(tmp_path: Path) -> None:
    marker = tmp_path / "executed"
    config = _config(tmp_path, f'a: !!python/object/apply:os.system ["touch {marker}"]\n')
    proc = run_module("check", "--config", config)
    assert proc.returncode == 2
    assert proc.stderr.decode() == (
        f"areal-doctor: error: {config}: refusing a Python-object tag in the YAML (line 1)\n"
    )
    assert not marker.exists()


LAUGHS = 'a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]\n'
for previous, name in zip("abcdefgh", "bcdefghi", strict=True):  # 9^9 values once expanded
    LAUGHS += f"{name}: &{name} [{', '.join([f'*{previous}'] * 9)}]\n"
PEAK_PROBE = """
import resource, sys
from assistant.cli import main
code = main(sys.argv[1:])
print("PEAK_KB", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)
raise SystemExit(code)
"""


@pytest.mark.parametrize("command", ["check", "diagnose"])
def test_billion_laughs_is_refused_with_bounded_memory(tmp_path: Path, command: str) -> None:
    config = _config(tmp_path, CONFIG + LAUGHS)
    log = tmp_path / "crash.log"
    log.write_text(TRAINING_OOM)
    args = ["check", "--config", config] if command == "check" else ["diagnose", str(log)]
    if command == "diagnose":
        args += ["--config", config, "--non-interactive"]
    proc = subprocess.run(
        [sys.executable, "-c", PEAK_PROBE, *args],
        capture_output=True,
        cwd=ROOT,
        timeout=60,  # a guard against a hang, not a speed test
        check=False,
    )
    stderr = proc.stderr.decode()
    assert proc.returncode == (2 if command == "check" else 0), stderr  # diagnose goes on
    assert "aliases expand to more than" in stderr.splitlines()[0]
    assert int(stderr.split("PEAK_KB")[1].split()[0]) < 300 * 1024


@pytest.mark.parametrize("text", ["a: &x [*x]\n", "a: &x {b: *x}\n", "a: &x {b: [1, {c: *x}]}\n"])
def test_alias_inside_itself_is_refused(run_cli, tmp_path: Path, log: str, text: str) -> None:
    config = _config(tmp_path, CONFIG + text)
    result = run_cli("diagnose", log, "--config", config, "--non-interactive")
    assert_config_warning(result, contains="an alias refers to the value that contains it")


def test_ordinary_anchors_and_merge_keys_still_load(run_cli, tmp_path: Path) -> None:
    text = CONFIG + "base: &base {lr: 1.0e-6, eps: 1.0e-8}\ncritic:\n  optimizer:\n    <<: *base\n"
    result = run_cli("check", "--config", _config(tmp_path, text))
    assert result.exit_code in (0, 1), result.stderr


@pytest.mark.parametrize(
    ("text", "found"),
    [("- actor\n- rollout\n", "a list"), ("just a string\n", "a string"), ("42\n", "int")],
)
def test_config_that_is_a_list_or_a_scalar(run_cli, tmp_path: Path, text: str, found) -> None:
    result = run_cli("check", "--config", _config(tmp_path, text))
    assert_one_line_error(result, contains=f"top level must be a mapping of keys, found {found}")


def test_duplicate_keys(run_cli, tmp_path: Path, log: str) -> None:
    config = _config(tmp_path, CONFIG + "actor:\n  path: other\n")
    result = run_cli("diagnose", log, "--config", config)
    assert_config_warning(result, contains="key 'actor' appears twice (lines 7 and 16)")


def test_duplicate_nested_keys(run_cli, tmp_path: Path) -> None:
    text = "actor:\n  mb_spec:\n    max_tokens_per_mb: 1\n    max_tokens_per_mb: 2\n"
    result = run_cli("check", "--config", _config(tmp_path, text))
    assert_one_line_error(result, contains="'max_tokens_per_mb' appears twice")


def test_tabs(run_cli, tmp_path: Path) -> None:
    config = _config(tmp_path, "actor:\n\tpath: x\n")
    assert_one_line_error(
        run_cli("check", "--config", config), contains="tab character; YAML indents with spaces"
    )


def test_unresolvable_interpolation_is_not_guessed(run_cli, tmp_path: Path, log: str) -> None:
    text = CONFIG.replace("max_length: 1024", "max_length: ${nowhere.to_be_found}")
    config = _config(tmp_path, text)
    assert run_cli("check", "--config", config).exit_code in (0, 1)
    result = run_cli("diagnose", log, "--config", config, "--non-interactive", "--format", "json")
    data = json.loads(result.stdout)
    assert result.exit_code == 0
    assert "actor.mb_spec.max_tokens_per_mb" not in json.dumps(data["patch"])  # no floor known


@pytest.mark.parametrize(
    "loop",
    [
        "gconfig:\n  max_new_tokens: ${gconfig.max_new_tokens}\n",
        "a: ${b}\nb: ${a}\ngconfig:\n  max_new_tokens: ${a}\n",
        "gconfig: ${gconfig}\n",
    ],
)
def test_self_referencing_interpolation(run_cli, tmp_path: Path, log: str, loop: str) -> None:
    text = CONFIG.replace("gconfig:\n  max_new_tokens: 1024\n", loop)
    config = _config(tmp_path, text)
    result = run_cli("diagnose", log, "--config", config, "--non-interactive", "--format", "json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["oom"]


@pytest.mark.parametrize("value", [".inf", "-.inf", ".nan", "1.0e+308"])
def test_non_finite_numbers_are_no_numbers(run_cli, tmp_path: Path, log: str, value) -> None:
    text = CONFIG.replace("max_length: 1024", f"max_length: {value}").replace(
        "n_nodes: 1", f"n_nodes: {value}"
    )
    text += f"rollout:\n  max_concurrent_rollouts: {value}\n"
    config = _config(tmp_path, text)
    assert run_cli("check", "--config", config).exit_code in (0, 1)
    result = run_cli("diagnose", log, "--config", config, "--non-interactive", "--format", "json")
    assert result.exit_code == 0, result.stderr


@pytest.mark.parametrize("path", ["~no_such_user_here/model", "/models/\x00/x"])
def test_odd_model_paths_are_not_errors(run_cli, tmp_path: Path, path: str) -> None:
    text = CONFIG.replace("Qwen/Qwen2.5-7B-Instruct", json.dumps(path)).replace(
        'backend: "fsdp:d4"', 'backend: "fsdp:d2c3"'
    )
    result = run_cli("check", "--config", _config(tmp_path, text))
    assert result.exit_code in (0, 1), result.stderr


def test_config_not_utf8(run_cli, tmp_path: Path) -> None:
    (tmp_path / "gbk.yaml").write_bytes("# 中文注释\nseed: 1\n".encode("gbk"))
    result = run_cli("check", "--config", str(tmp_path / "gbk.yaml"))
    assert_one_line_error(result, contains="not UTF-8 text")


def test_config_missing(run_cli, tmp_path: Path) -> None:
    result = run_cli("check", "--config", str(tmp_path / "none.yaml"))
    assert_one_line_error(result, contains="config file not found")
