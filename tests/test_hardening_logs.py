"""Hostile and broken log input through the real CLI: a clear answer or one error line."""

from __future__ import annotations

import builtins
import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hardening_helpers import (
    OOM_LINE,
    ROOT,
    TRAINING_OOM,
    assert_one_line_error,
    run_module,
    run_module_in_bash,
)

from assistant.logs import inputs


def _json(result) -> dict:
    assert result.exit_code in (0, 1), result.stderr
    return json.loads(result.stdout)


def test_empty_file(run_cli, tmp_path: Path) -> None:
    (tmp_path / "empty.log").write_bytes(b"")
    assert_one_line_error(run_cli("diagnose", str(tmp_path / "empty.log")), contains="empty input")


def test_binary_file(run_cli, tmp_path: Path) -> None:
    (tmp_path / "core.log").write_bytes(b"\x7fELF\x02\x01\x01" + bytes(range(256)) * 64)
    result = run_cli("diagnose", str(tmp_path / "core.log"))
    assert_one_line_error(result, contains="not a text log")


def test_missing_path(run_cli, tmp_path: Path) -> None:
    result = run_cli("diagnose", str(tmp_path / "nope.log"))
    assert_one_line_error(result, contains="no such file")


def test_empty_folder(run_cli, tmp_path: Path) -> None:
    (tmp_path / "run").mkdir()
    result = run_cli("diagnose", str(tmp_path / "run"))
    assert_one_line_error(result, contains="no log files in folder")


def _deny_reading(monkeypatch: pytest.MonkeyPatch, denied: set[str]) -> None:
    """chmod 000 stops nobody when the tests run as root (CI): make open() refuse too."""
    for path in denied:
        os.chmod(path, 0)
    real_open = builtins.open

    def guarded_open(file, *args, **kwargs):
        if str(file) in denied:
            raise PermissionError(13, "Permission denied", str(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(inputs, "open", guarded_open, raising=False)


def test_folder_of_unreadable_files(run_cli, tmp_path: Path, monkeypatch) -> None:
    folder = tmp_path / "run"
    folder.mkdir()
    denied = set()
    for rank in range(3):
        path = folder / f"rank{rank}.log"
        path.write_text(TRAINING_OOM)
        denied.add(str(path))
    _deny_reading(monkeypatch, denied)
    result = run_cli("diagnose", str(folder))
    assert_one_line_error(result, contains="permission denied")
    assert "no readable text log files" in result.stderr


def test_unreadable_file_in_a_folder_is_skipped_and_named(
    run_cli, tmp_path: Path, monkeypatch
) -> None:
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "rank0.log").write_text(TRAINING_OOM)
    (folder / "rank1.log").write_text("ordinary line\n")
    _deny_reading(monkeypatch, {str(folder / "rank1.log")})
    data = _json(run_cli("diagnose", str(folder), "--format", "json"))
    assert data["oom"] and data["kind"] == "cuda_oom"
    assert data["unread_files"] == [f"{folder / 'rank1.log'} (permission denied)"]
    text = run_cli("diagnose", str(folder))
    assert "rank1.log (permission denied)" in text.stdout


def test_unreadable_file_named_explicitly(run_cli, tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "rank0.log"
    path.write_text(TRAINING_OOM)
    _deny_reading(monkeypatch, {str(path)})
    assert_one_line_error(run_cli("diagnose", str(path)), contains="permission denied")


def test_invalid_utf8_around_a_real_oom(run_cli, tmp_path: Path) -> None:
    data = (
        b"\xff\xfe\xfd garbage \xc3\x28\n"
        + TRAINING_OOM.encode()
        + b"tail \xed\xa0\x80 lone surrogate \xf8\x88\x80\x80\x80\n"
    )
    (tmp_path / "bad.log").write_bytes(data)
    data = _json(run_cli("diagnose", str(tmp_path / "bad.log"), "--format", "json"))
    assert (data["oom"], data["kind"], data["phase"]) == (True, "cuda_oom", "training")
    assert data["metrics"]["tried_to_allocate_bytes"] == 2 << 30


def test_bytes_like_a_utf16_bom_before_utf8_text(run_cli, tmp_path: Path) -> None:
    (tmp_path / "x.log").write_bytes(b"\xff\xfe" + TRAINING_OOM.encode())
    data = _json(run_cli("diagnose", str(tmp_path / "x.log"), "--format", "json"))
    assert data["oom"] and data["kind"] == "cuda_oom"


def test_utf16_with_bom(run_cli, tmp_path: Path) -> None:
    (tmp_path / "win.log").write_bytes(TRAINING_OOM.replace("\n", "\r\n").encode("utf-16"))
    data = _json(run_cli("diagnose", str(tmp_path / "win.log"), "--format", "json"))
    assert data["oom"] and data["evidence"][0]["text"].startswith("torch.OutOfMemoryError")


def test_gbk_with_chinese(run_cli, tmp_path: Path) -> None:
    chinese = [
        "2026-03-01 10:00:00 信息：开始训练，模型已加载完成，共八张显卡",
        "2026-03-01 10:05:00 信息：第 12 步，损失 0.31，学习率 1e-6",
        "2026-03-01 10:06:00 错误：训练过程中显存不足，进程退出",
    ]
    text = "\n".join(chinese) + "\n" + TRAINING_OOM
    (tmp_path / "zh.log").write_bytes(text.encode("gbk"))
    result = run_cli("diagnose", str(tmp_path / "zh.log"), "--format", "json")
    data = _json(result)
    assert data["oom"] and data["phase"] == "training"
    assert data["lang"] == "zh"  # read as Chinese, not as mojibake


MEMORY_PROBE = """
import resource, sys
from assistant.cli import main
code = main(sys.argv[1:])
print("PEAK_KB", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)
raise SystemExit(code)
"""


def test_single_30mb_line_ending_in_an_oom(tmp_path: Path) -> None:
    path = tmp_path / "huge.log"
    with path.open("wb") as handle:
        for _ in range(30):
            handle.write(b'{"k": "v", ' * 95_000)  # about 1 MB, no newline
        handle.write(OOM_LINE.encode() + b"\n")
    assert path.stat().st_size > 30_000_000
    proc = subprocess.run(
        [sys.executable, "-c", MEMORY_PROBE, "diagnose", str(path), "--format", "json"],
        capture_output=True,
        cwd=ROOT,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["kind"] == "cuda_oom" and data["evidence"][0]["line"] == 1
    assert "Tried to allocate 2.00 GiB" in data["evidence"][0]["text"]  # shown, not cut away
    peak_mb = int(proc.stderr.decode().split("PEAK_KB")[1].split()[0]) / 1024
    assert peak_mb < 300, f"peak memory {peak_mb:.0f} MB for a 30 MB line"


def test_gzip_log(run_cli, tmp_path: Path) -> None:
    (tmp_path / "rank0.log.gz").write_bytes(gzip.compress(TRAINING_OOM.encode()))
    data = _json(run_cli("diagnose", str(tmp_path / "rank0.log.gz"), "--format", "json"))
    assert data["oom"] and data["phase"] == "training"


def test_corrupt_gzip(run_cli, tmp_path: Path) -> None:
    packed = gzip.compress(TRAINING_OOM.encode() * 50)
    (tmp_path / "rank0.log.gz").write_bytes(packed[: len(packed) // 2])
    result = run_cli("diagnose", str(tmp_path / "rank0.log.gz"))
    assert_one_line_error(result, contains="not a valid gzip file")


def test_corrupt_gzip_in_a_folder_is_skipped(run_cli, tmp_path: Path) -> None:
    (tmp_path / "a.log.gz").write_bytes(b"\x1f\x8b\x08\x00garbage")
    (tmp_path / "b.log").write_text(TRAINING_OOM)
    data = _json(run_cli("diagnose", str(tmp_path), "--format", "json"))
    assert data["oom"] and "not a valid gzip file" in data["unread_files"][0]


def test_gzip_bomb_is_refused(run_cli, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(inputs, "MIN_UNPACK_LIMIT", 1 << 20)  # small limits, same rule
    monkeypatch.setattr(inputs, "UNPACK_RATIO", 10)
    (tmp_path / "bomb.log.gz").write_bytes(gzip.compress(b"A" * (4 << 20)))
    result = run_cli("diagnose", str(tmp_path / "bomb.log.gz"))
    assert_one_line_error(result, contains="unpacks to more than 1 MiB")


def test_ansi_colour_codes(run_cli, tmp_path: Path) -> None:
    coloured = (
        "\x1b[1;38;2;180;140;80m(AReaL)\x1b[0m 20260301-10:00:00.000 RLTrainer "
        "\x1b[32mINFO\x1b[0m: step 3\n" + f"\x1b[31m{OOM_LINE}\x1b[0m\n"
    )
    (tmp_path / "tty.log").write_text(coloured)
    result = run_cli("diagnose", str(tmp_path / "tty.log"))
    assert result.exit_code == 0
    assert "\x1b" not in result.stdout  # no colour on a pipe, and none copied from the log
    assert OOM_LINE[:60] in result.stdout


def test_terminal_control_sequences_never_reach_the_output(run_cli, tmp_path: Path) -> None:
    hostile = "\x1b]52;c;ZWNobyBwd25lZA==\x07\x9b2J\u202eevil\u202c " + OOM_LINE
    (tmp_path / "osc.log").write_text(hostile + "\n")
    result = run_cli("diagnose", str(tmp_path / "osc.log"), "--format", "json")
    text = json.loads(result.stdout)["evidence"][0]["text"]
    for char in ("\x1b", "\x07", "\x9b", "\u202e"):
        assert char not in text
    assert "Tried to allocate 2.00 GiB" in text


MARKUP = "[bold red]BOOM[/] [link=file:///etc/passwd]x[/link] [/]"


def test_markup_in_log_text_is_shown_literally(run_cli, tmp_path: Path) -> None:
    (tmp_path / "m.log").write_text(TRAINING_OOM.replace("2.00 GiB.", f"2.00 GiB {MARKUP}."))
    text = run_cli("diagnose", str(tmp_path / "m.log"))
    assert MARKUP in text.stdout
    data = _json(run_cli("diagnose", str(tmp_path / "m.log"), "--format", "json"))
    assert MARKUP in data["evidence"][0]["text"]


def test_symlink_loop_in_a_folder(run_cli, tmp_path: Path) -> None:
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "rank0.log").write_text(TRAINING_OOM)
    (folder / "again").symlink_to(folder)  # a folder loop: not followed
    (folder / "self.log").symlink_to(folder / "self.log")  # a file link to itself
    (folder / "gone.log").symlink_to(folder / "deleted.log")  # dangling
    data = _json(run_cli("diagnose", str(folder), "--format", "json"))
    assert data["oom"] and [Path(f).name for f in data["files"]] == ["rank0.log"]
    skipped = " ".join(data["unread_files"])
    assert "self.log" in skipped and "gone.log" in skipped


def test_fifo_in_a_folder_does_not_block(run_cli, tmp_path: Path) -> None:
    (tmp_path / "rank0.log").write_text(TRAINING_OOM)
    os.mkfifo(tmp_path / "pipe.log")
    data = _json(run_cli("diagnose", str(tmp_path), "--format", "json"))
    assert data["oom"] and data["unread_files"] == [f"{tmp_path / 'pipe.log'} (not a regular file)"]


def test_a_named_pipe_is_read_like_stdin(tmp_path: Path) -> None:
    """`areal-doctor diagnose <(kubectl logs ...)` hands over a pipe, not a file."""
    (tmp_path / "x.log").write_text(TRAINING_OOM)
    proc = run_module_in_bash('diagnose <(cat "$1") --format json', str(tmp_path / "x.log"))
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["kind"] == "cuda_oom"


def test_stdin_empty(run_cli) -> None:
    assert_one_line_error(run_cli("diagnose", "-", stdin=b""), contains="empty input")


def test_stdin_closed_in_process(run_cli, monkeypatch) -> None:
    monkeypatch.setattr(sys, "stdin", None)
    result = run_cli("diagnose", "-")
    assert_one_line_error(result, contains="standard input is closed")


def test_stdin_closed_in_a_real_process() -> None:
    proc = run_module_in_bash("diagnose - <&-")
    assert proc.returncode == 2
    assert proc.stderr.decode().strip() == (
        "areal-doctor: error: cannot read <stdin>: standard input is closed"
    )


def test_stdin_with_a_log_through_the_module() -> None:
    proc = run_module("diagnose", "-", "--format", "json", stdin=TRAINING_OOM.encode())
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["files"] == ["<stdin>"]
