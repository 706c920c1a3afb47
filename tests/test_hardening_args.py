"""Bad arguments, internal errors and closed pipes: one line on stderr, never a traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from hardening_helpers import (
    ROOT,
    TRAINING_OOM,
    assert_one_line_error,
    run_module,
    run_module_in_bash,
)

from assistant.tree import question_ids


@pytest.fixture
def log(tmp_path: Path) -> str:
    path = tmp_path / "crash.log"
    path.write_text(TRAINING_OOM)
    return str(path)


def test_unknown_answer_id_lists_the_valid_ids(run_cli, log: str) -> None:
    result = run_cli("diagnose", log, "--answer", "colour=blue")
    assert_one_line_error(result, contains="unknown question id 'colour'")
    for qid in question_ids():
        assert qid in result.stderr


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("multi_turn=maybe", "yes or no"),
        ("is_vlm=2", "yes or no"),
        ("attention_heads=many", "positive number"),
        ("attention_heads=-4", "positive number"),
        ("model_params_b=nan", "positive number"),
        ("model_params_b=inf", "positive number"),
        ("longest_conversation_tokens=0", "positive number"),
    ],
)
def test_bad_answer_values_name_the_valid_choices(run_cli, log, answer, expected) -> None:
    assert_one_line_error(run_cli("diagnose", log, "--answer", answer), contains=expected)


@pytest.mark.parametrize("raw", ["multi_turn", "=yes", "multi_turn=", " = "])
def test_answer_without_id_or_value(run_cli, log: str, raw: str) -> None:
    assert_one_line_error(run_cli("diagnose", log, "--answer", raw), contains="ID=VALUE")


@pytest.mark.parametrize("query", [[""], ["   "], ["", " "]])
def test_empty_search_query(run_cli, query: list[str]) -> None:
    assert_one_line_error(run_cli("search", *query), contains="empty search query")


def test_search_query_of_punctuation_only_answers(run_cli) -> None:
    result = run_cli("search", "?!…——", "--json")
    assert result.exit_code == 0 and '"results"' in result.stdout


@pytest.mark.parametrize(
    ("args", "valid"),
    [
        (["diagnose", "{log}", "--lang", "fr"], "'zh', 'en', 'auto'"),
        (["diagnose", "{log}", "--format", "xml"], "'text', 'json', 'yaml'"),
        (["search", "oom", "--lang", "de"], "'zh', 'en', 'all'"),
        (["check", "--config", "x.yaml", "--format", "yaml"], "'text', 'json'"),
        (["tui", "--lang", "jp"], "'zh', 'en', 'auto'"),
    ],
)
def test_unknown_lang_or_format_lists_the_choices(run_cli, log, args, valid) -> None:
    result = run_cli(*[a.format(log=log) for a in args])
    assert_one_line_error(result, contains=valid)


def test_internal_error_is_one_line_without_debug(run_cli, log: str, monkeypatch) -> None:
    from assistant import pipeline

    def broken_stage(*args, **kwargs):
        raise RuntimeError("stage exploded\nsecond line")

    monkeypatch.setattr(pipeline, "diagnose_paths", broken_stage)
    result = run_cli("diagnose", log)
    assert_one_line_error(result, contains="internal error: RuntimeError: stage exploded")
    assert "--debug" in result.stderr


def test_internal_error_with_debug_shows_the_traceback(log: str, tmp_path: Path) -> None:
    script = (
        "import sys\n"
        "from assistant import pipeline\n"
        "def broken(*a, **k):\n"
        "    raise RuntimeError('stage exploded')\n"
        "pipeline.diagnose_paths = broken\n"
        "from assistant.cli import main\n"
        "raise SystemExit(main(sys.argv[1:]))\n"
    )
    for debug in ([], ["--debug"]):
        proc = subprocess.run(
            [sys.executable, "-c", script, *debug, "diagnose", log],
            capture_output=True,
            cwd=ROOT,
            timeout=120,
            check=False,
        )
        stderr = proc.stderr.decode()
        if debug:
            assert proc.returncode == 1  # Python's own exit for an uncaught exception
            assert "Traceback (most recent call last)" in stderr and "stage exploded" in stderr
        else:
            assert proc.returncode == 2 and "Traceback" not in stderr
            assert stderr.count("\n") == 1


def test_keyboard_interrupt_is_one_line(run_cli, log: str, monkeypatch) -> None:
    from assistant import pipeline

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(pipeline, "diagnose_paths", interrupted)
    result = run_cli("diagnose", log)
    assert result.exit_code == 130 and result.stderr == "areal-doctor: error: interrupted\n"


def test_broken_pipe_exits_quietly(tmp_path: Path) -> None:
    """`areal-doctor diagnose x.log --format json | head -1`: no error, no traceback.

    The reading end is closed before the tool starts writing, so every write fails.
    """
    log = tmp_path / "crash.log"
    log.write_text(TRAINING_OOM)
    command = [sys.executable, "-m", "assistant", "diagnose", str(log), "--format", "json"]
    producer = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert producer.stdout is not None
    producer.stdout.close()
    _, stderr = producer.communicate(timeout=120)
    assert producer.returncode == 0, stderr
    assert stderr == b""


def test_broken_pipe_with_a_reader_that_leaves_at_once() -> None:
    proc = run_module_in_bash("search 显存不足 -k 10 | true")
    assert proc.returncode == 0
    assert proc.stderr == b""


@pytest.mark.parametrize("encoding", ["ascii", "latin-1"])
def test_chinese_output_on_a_terminal_that_cannot_show_it(log: str, encoding: str) -> None:
    proc = run_module("diagnose", log, "--lang", "zh", env={"PYTHONIOENCODING": encoding})
    assert proc.returncode == 0, proc.stderr
    assert b"\\u" in proc.stdout  # escaped, not a crash
    assert b"2.00 GiB" in proc.stdout


def test_closed_stdout_is_one_line(tmp_path: Path) -> None:
    proc = run_module_in_bash("search oom >&-")
    assert proc.returncode == 2
    assert proc.stderr.decode() == "areal-doctor: error: standard output is closed\n"


def test_usage_errors_through_the_module() -> None:
    proc = run_module("diagnose", "--format", "xml", "x.log")
    assert proc.returncode == 2
    lines = proc.stderr.decode().splitlines()
    assert len(lines) == 1 and lines[0].startswith("areal-doctor: error: argument --format")


def test_search_json_offers_a_note_beside_the_results(run_cli) -> None:
    import json

    result = run_cli("search", "rollout", "OOM", "-k", "3", "--json")
    document = json.loads(result.stdout)
    assert [item["section"] for item in document["see_also"]] == ["x-vllm-memory"]
    assert "x-vllm-memory" not in [item["section"] for item in document["results"]]
    leading = json.loads(run_cli("search", "another process is using the GPU", "--json").stdout)
    assert leading["results"][0]["section"] == "x-foreign-process"
    assert leading["see_also"] == []
    together = json.loads(
        run_cli("search", "another process on the GPU", "--extra", "--json").stdout
    )
    assert together["see_also"] == []
