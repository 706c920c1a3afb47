"""--patch-out never harms the user's files: refusals, atomic writes, --force."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from hardening_helpers import CONFIG, TRAINING_OOM, assert_one_line_error

from assistant.config import patch as patch_module


@pytest.fixture
def run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_cli):
    """Run diagnose on a training OOM with a config, from inside ``tmp_path``."""
    (tmp_path / "crash.log").write_text(TRAINING_OOM)
    (tmp_path / "exp.yaml").write_text(CONFIG)
    monkeypatch.chdir(tmp_path)

    def diagnose(patch_out: str, *extra: str):
        return run_cli(
            "diagnose",
            "crash.log",
            "--config",
            "exp.yaml",
            "--non-interactive",
            "--patch-out",
            patch_out,
            *extra,
        )

    return diagnose


def _config_untouched(tmp_path: Path) -> None:
    assert (tmp_path / "exp.yaml").read_text() == CONFIG


@pytest.mark.parametrize("spelling", ["exp.yaml", "./exp.yaml", "../{folder}/exp.yaml", "{abs}"])
def test_patch_out_equal_to_config_is_refused(run, tmp_path: Path, spelling: str) -> None:
    target = spelling.format(folder=tmp_path.name, abs=tmp_path / "exp.yaml")
    result = run(target, "--force")
    assert_one_line_error(result, contains="refusing to overwrite the config itself")
    _config_untouched(tmp_path)


def test_patch_out_through_a_symlink_or_hard_link_to_the_config(run, tmp_path: Path) -> None:
    (tmp_path / "soft.yaml").symlink_to(tmp_path / "exp.yaml")
    os.link(tmp_path / "exp.yaml", tmp_path / "hard.yaml")
    for target in ("soft.yaml", "hard.yaml"):
        assert_one_line_error(run(target, "--force"), contains="the config itself")
    _config_untouched(tmp_path)


def test_patch_out_into_a_missing_folder(run, tmp_path: Path) -> None:
    result = run("no/such/folder/fixed.yaml")
    assert_one_line_error(result, contains="folder does not exist: no/such/folder")
    assert not (tmp_path / "no").exists()


def test_patch_out_onto_a_folder(run, tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    assert_one_line_error(run("out", "--force"), contains="out is a folder")


def test_patch_out_empty_name(run) -> None:
    assert_one_line_error(run(""), contains="--patch-out needs a file name")


def test_existing_target_is_not_overwritten_without_force(run, tmp_path: Path) -> None:
    (tmp_path / "fixed.yaml").write_text("mine\n")
    result = run("fixed.yaml")
    assert_one_line_error(result, contains="already exists; remove it or pass --force")
    assert (tmp_path / "fixed.yaml").read_text() == "mine\n"
    assert run("fixed.yaml", "--force").exit_code == 0
    assert "max_tokens_per_mb: 2048" in (tmp_path / "fixed.yaml").read_text()


def test_refusal_comes_before_the_diagnosis(run, tmp_path: Path, monkeypatch) -> None:
    """A bad target is refused before a long log is read, not after."""
    from assistant import pipeline

    def must_not_run(*args, **kwargs):
        raise AssertionError("the log was read before the target was checked")

    monkeypatch.setattr(pipeline, "diagnose_paths", must_not_run)
    assert_one_line_error(run("exp.yaml"), contains="the config itself")


def test_written_file_keeps_comments_and_the_config_permissions(run, tmp_path: Path) -> None:
    os.chmod(tmp_path / "exp.yaml", 0o640)
    assert run("fixed.yaml").exit_code == 0
    written = (tmp_path / "fixed.yaml").read_text()
    assert written.startswith("# GRPO, one node\n") and "# too many" in written
    assert stat.S_IMODE((tmp_path / "fixed.yaml").stat().st_mode) == 0o640
    _config_untouched(tmp_path)


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


def test_interrupted_write_leaves_no_half_file_and_no_temp(run, tmp_path: Path, monkeypatch):
    def crash(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(patch_module.os, "replace", crash)
    result = run("fixed.yaml")
    assert_one_line_error(result, contains="cannot write fixed.yaml: No space left on device")
    assert not (tmp_path / "fixed.yaml").exists()
    assert _leftovers(tmp_path) == []
    _config_untouched(tmp_path)


def test_interrupted_forced_write_keeps_the_old_file(run, tmp_path: Path, monkeypatch):
    (tmp_path / "fixed.yaml").write_text("previous\n")

    def interrupted(src, dst):
        raise KeyboardInterrupt

    monkeypatch.setattr(patch_module.os, "replace", interrupted)
    result = run("fixed.yaml", "--force")
    assert result.exit_code == 130 and result.stderr == "areal-doctor: error: interrupted\n"
    assert (tmp_path / "fixed.yaml").read_text() == "previous\n"
    assert _leftovers(tmp_path) == []


def test_write_that_fails_midway_leaves_no_temp(run, tmp_path: Path, monkeypatch):
    def no_sync(fd):
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(patch_module.os, "fsync", no_sync)
    assert_one_line_error(run("fixed.yaml"), contains="Input/output error")
    assert not (tmp_path / "fixed.yaml").exists() and _leftovers(tmp_path) == []


def test_unwritable_folder(run, tmp_path: Path, monkeypatch) -> None:
    def denied(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(patch_module.tempfile, "mkstemp", denied)
    assert_one_line_error(run("fixed.yaml"), contains="cannot write fixed.yaml: Permission denied")
