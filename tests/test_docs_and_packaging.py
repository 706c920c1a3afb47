"""The README documents every command and option of the contract; the wheel ships knowledge/."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from assistant.cli import build_parser

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")

CONTRACT_DIAGNOSE_OPTIONS = [
    "--format",
    "--config",
    "--answer",
    "--non-interactive",
    "--patch-out",
    "--lang",
]
CONTRACT_QUESTION_IDS = [
    "multi_turn",
    "longest_conversation_tokens",
    "attention_heads",
    "model_params_b",
    "shared_fileroot",
    "can_add_gpus",
    "is_vlm",
]


def subcommands() -> dict:
    parser = build_parser()
    action = next(a for a in parser._actions if a.dest == "command")
    return action.choices


@pytest.mark.parametrize("command", ["diagnose", "search", "check", "tui"])
def test_contract_commands_exist_and_are_documented(command: str) -> None:
    assert command in subcommands()
    assert f"areal-doctor {command}" in README


@pytest.mark.parametrize("option", CONTRACT_DIAGNOSE_OPTIONS)
def test_contract_diagnose_options_exist_and_are_documented(option: str) -> None:
    diagnose = subcommands()["diagnose"]
    assert option in diagnose._option_string_actions
    assert f"`{option}" in README


@pytest.mark.parametrize("question", CONTRACT_QUESTION_IDS)
def test_question_ids_are_documented(question: str) -> None:
    assert f"`{question}`" in README


def test_readme_opens_with_two_setup_commands() -> None:
    blocks = README.split("```bash")[1:3]
    assert "pip install ." in blocks[0] and "areal-doctor diagnose" in blocks[0]
    assert "'.[test]'" in blocks[1] and "pytest" in blocks[1]
    for check in ("ruff check .", "ruff format --check .", "mypy"):
        assert f"&& {check} &&" in blocks[1]
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    # CI runs exactly the README's command: its last line, nothing more, nothing less
    assert ci.strip().splitlines()[-1] == blocks[1].split("```")[0].strip()


def _readme_sample():  # docs/readme_sample.py, loaded by path (it is no package)
    spec = importlib.util.spec_from_file_location("readme_sample", ROOT / "docs/readme_sample.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_readme_sample_output_is_what_the_first_command_prints(capsys) -> None:
    """Generated from the command and checked here (as sqlite-utils' cog --check): the
    README's "What it prints" cannot drift from the program."""
    sample = _readme_sample()
    first = README.split("```bash")[1].split("```")[0]
    assert "areal-doctor " + " ".join(sample.ARGS) in first  # the command run is the README's
    assert sample.BEGIN in README and sample.END in README
    assert sample.main(["--check"]) == 0, capsys.readouterr().out
    block = README.split(sample.BEGIN)[1].split(sample.END)[0]
    assert "Memory failure: phase training" in block and "Try first:" in block


def test_readme_sample_check_fails_on_a_stale_readme(tmp_path: Path, monkeypatch) -> None:
    sample = _readme_sample()
    stale = tmp_path / "README.md"
    stale.write_text(README.replace("Try first:", "Try this first:"), encoding="utf-8")
    monkeypatch.setattr(sample, "README", stale)
    assert sample.main(["--check"]) == 1
    assert sample.main([]) == 0 and stale.read_text(encoding="utf-8") == README


@pytest.mark.skipif(importlib.util.find_spec("hatchling") is None, reason="needs hatchling")
def test_wheel_ships_knowledge_inside_the_package(tmp_path: Path) -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(tmp_path),
            str(ROOT),
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    wheel = next(tmp_path.glob("areal_doctor-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    assert "assistant/knowledge/signatures.yaml" in names
    assert any(n.startswith("assistant/knowledge/guide/zh/") for n in names)
    assert any(n.startswith("assistant/knowledge/guide/en/") for n in names)


def test_installed_command_runs_from_another_folder(tmp_path: Path) -> None:
    """Whatever layout is installed, the command finds its data from any folder."""
    proc = subprocess.run(
        [sys.executable, "-m", "assistant", "search", "OOM", "--json"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    assert '"results"' in proc.stdout
