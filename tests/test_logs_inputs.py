"""Reading input: encodings, gzip, stdin, folders, huge lines, binary and missing files."""

from __future__ import annotations

import gzip
import io
import sys
from pathlib import Path

import pytest

from assistant.errors import UserError
from assistant.logs import classify_text, read_and_classify
from assistant.logs.inputs import detect_encoding, looks_binary

FIXTURES = Path(__file__).parent / "fixtures" / "logs"
OOM_LINE = (
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
    "capacity of 23.55 GiB of which 1.00 GiB is free. Including non-PyTorch memory, this process "
    "has 22.50 GiB memory in use. Of the allocated memory 20.00 GiB is allocated by PyTorch, and "
    "2.00 GiB is reserved by PyTorch but unallocated."
)
TRAINING_TRACE = (
    "Traceback (most recent call last):\n"
    '  File "/opt/AReaL/areal/engine/fsdp_engine.py", line 655, in train_batch\n'
    "    loss.backward()\n"
)
CHINESE_LOG = (
    "2026-03-01 10:00:00 信息: 开始训练，模型已加载完成，共八张显卡\n"
    "2026-03-01 10:05:00 信息: 第 100 步，损失 0.31，学习率 1e-6\n"
    "2026-03-01 10:06:00 错误: 训练过程中显存不足，进程退出\n" + TRAINING_TRACE + OOM_LINE + "\n"
)


def _write(path: Path, data: bytes) -> str:
    path.write_bytes(data)
    return str(path)


def test_gbk_log_is_decoded_and_read_as_chinese(tmp_path: Path) -> None:
    path = _write(tmp_path / "zh.log", CHINESE_LOG.encode("gbk"))
    report = read_and_classify([path])
    assert (report.oom, report.kind, report.phase) == (True, "cuda_oom", "training")
    assert report.language == "zh"
    assert report.evidence[0].line == 7


def test_utf16_with_bom_is_decoded(tmp_path: Path) -> None:
    path = _write(tmp_path / "win.log", (TRAINING_TRACE + OOM_LINE + "\r\n").encode("utf-16"))
    report = read_and_classify([path])
    assert report.oom and report.metrics["tried_to_allocate_bytes"] == 2 << 30


def test_invalid_utf8_bytes_around_the_oom_are_replaced(tmp_path: Path) -> None:
    data = b"step 1 \xff\xfe\xfd ok\n" + OOM_LINE.encode() + b" \xc3\x28 tail\n" + b"\x80" * 20
    report = read_and_classify([_write(tmp_path / "bad.log", data)])
    assert report.oom and report.evidence[0].line == 2
    assert report.metrics["free_bytes"] == 1 << 30


def test_crlf_ansi_and_progress_bars_are_cleaned(tmp_path: Path) -> None:
    text = (
        "\x1b[1;38;2;180;140;80m(AReaL)\x1b[0m 20260301-10:00:00.000 RLTrainer \x1b[32mINFO\x1b[0m:"
        " start\r\n"
        "rollout:  10%|#         | 1/10\rrollout:  90%|#########| 9/10\r\n"
        f"\x1b[31m{OOM_LINE}\x1b[0m\r\n"
    )
    report = read_and_classify([_write(tmp_path / "tty.log", text.encode())])
    assert report.evidence[0].text.startswith("torch.OutOfMemoryError")
    assert "\x1b" not in report.evidence[0].text and "\r" not in report.evidence[0].text
    assert report.lines_read == 3


def test_gzip_file_and_corrupt_gzip(tmp_path: Path) -> None:
    good = tmp_path / "rank0.log.gz"
    good.write_bytes(gzip.compress((TRAINING_TRACE + OOM_LINE + "\n").encode()))
    assert read_and_classify([str(good)]).phase == "training"
    broken = tmp_path / "rank1.log.gz"
    broken.write_bytes(gzip.compress(bytes(range(256)) * 200)[:300])
    with pytest.raises(UserError, match="not a valid gzip file"):
        read_and_classify([str(broken)])


def test_stdin_dash(monkeypatch: pytest.MonkeyPatch) -> None:
    stream = io.TextIOWrapper(io.BytesIO((TRAINING_TRACE + OOM_LINE + "\n").encode()))
    monkeypatch.setattr(sys, "stdin", stream)
    report = read_and_classify(["-"])
    assert report.oom and list(report.files) == ["<stdin>"]


def test_folder_is_searched_recursively_for_log_suffixes(tmp_path: Path) -> None:
    nested = tmp_path / "run" / "logs"
    nested.mkdir(parents=True)
    (nested / "actor.out").write_text("(AReaL) 20260301-10:00:00.000 RLTrainer INFO: ok\n")
    (nested / "rollout.err.gz").write_bytes(gzip.compress(OOM_LINE.encode() + b"\n"))
    (nested / "notes.json").write_text('{"error": "CUDA out of memory. Tried to allocate 1 GiB"}')
    (tmp_path / "main.txt").write_text("nothing here\n")
    report = read_and_classify([str(tmp_path)])
    assert report.oom
    assert Path(report.evidence[0].file).name == "rollout.err.gz"
    assert sorted(Path(f).name for f in report.files) == ["actor.out", "main.txt", "rollout.err.gz"]


def test_several_files_are_read_together(tmp_path: Path) -> None:
    first = _write(tmp_path / "a.log", b"all fine\n")
    second = _write(tmp_path / "b.log", OOM_LINE.encode() + b"\n")
    report = read_and_classify([first, second])
    assert report.oom and Path(report.evidence[0].file).name == "b.log"


def test_huge_single_line_uses_a_capped_slice(tmp_path: Path) -> None:
    path = tmp_path / "huge.log"
    with path.open("wb") as handle:
        handle.write(b"{" + b'"k": "v", ' * 1_500_000)  # about 15 MB before the message
        handle.write(OOM_LINE.encode())
        handle.write(b', "pad": "' + b"x" * 15_000_000 + b'"}\n')
    report = read_and_classify([str(path)])
    assert report.oom and report.kind == "cuda_oom"
    assert report.evidence[0].line == 1
    assert len(report.evidence[0].text) <= 600
    assert report.metrics["tried_to_allocate_bytes"] == 2 << 30


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"\x7fELF\x02\x01\x01" + bytes(range(256)) * 40, "not a text log"),
        (bytes(range(256)) * 64, "not a text log"),
        (b"", "empty input"),
        (b"\n  \n\t\n", "empty input"),
    ],
)
def test_unreadable_inputs_are_user_errors(tmp_path: Path, data: bytes, message: str) -> None:
    with pytest.raises(UserError, match=message):
        read_and_classify([_write(tmp_path / "input.log", data)])


def test_missing_path_and_empty_folder(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="no such file"):
        read_and_classify([str(tmp_path / "nope.log")])
    (tmp_path / "empty").mkdir()
    with pytest.raises(UserError, match="no log files in folder"):
        read_and_classify([str(tmp_path / "empty")])
    with pytest.raises(UserError):
        read_and_classify([])


def test_binary_file_inside_a_folder_is_skipped(tmp_path: Path) -> None:
    (tmp_path / "core.log").write_bytes(b"\x7fELF" + bytes(1000))
    (tmp_path / "rank0.log").write_text(OOM_LINE + "\n")
    report = read_and_classify([str(tmp_path)])
    assert report.oom and [Path(f).name for f in report.files] == ["rank0.log"]


def test_truncated_message_with_nul_is_text() -> None:
    sample = b"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU\x00\n"
    assert not looks_binary(sample * 3)
    assert detect_encoding(sample) == "utf-8"


def test_pasted_text_is_classified_without_files() -> None:
    report = classify_text(TRAINING_TRACE + OOM_LINE, name="paste")
    assert (report.oom, report.phase, list(report.files)) == (True, "training", ["paste"])
    with pytest.raises(UserError, match="empty input"):
        classify_text("   ")
