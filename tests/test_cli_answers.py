"""Answers change the outcome they claim to, and a fix's block shows only its own change.

Each test here is one of the rough edges a new user hit (issue 21): an answer that was
ignored or contradicted, a number or a word refused, another fix's patch under
"Try first".
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assistant.errors import UserError
from assistant.tree.questions import parse_answer

FIXTURES = Path(__file__).parent / "fixtures"
KILLED = FIXTURES / "logs/signatures/sigkill-exit--bare.log"  # a bare SIGKILL, no message
UNKNOWN = FIXTURES / "logs/signatures/torch-oom-bare--alone.log"  # no frame, no phase
TRAINING = FIXTURES / "tui/training_oom.log"
CONFIG = FIXTURES / "configs/grpo_fsdp.yaml"


def _json(run_cli, *args: str) -> tuple[int, dict]:
    result = run_cli("diagnose", *args, "--non-interactive", "--format", "json")
    return result.exit_code, json.loads(result.stdout)


def test_not_the_oom_killer_means_no_memory_failure(run_cli) -> None:
    assumed, before = _json(run_cli, str(KILLED))
    assert assumed == 0 and before["oom"] is True and before["phase"] == "host_memory"
    code, data = _json(run_cli, str(KILLED), "--answer", "killed_by_oom_killer=no")
    assert code == 1
    assert data["oom"] is False and data["phase"] == "none" and data["kind"] == "none"
    assert data["answered"] == {"oom": "killed_by_oom_killer"}
    text = run_cli(
        "diagnose", str(KILLED), "--non-interactive", "--answer", "killed_by_oom_killer=no"
    )
    assert text.exit_code == 1
    assert text.stdout.startswith("No memory failure")
    assert "killed_by_oom_killer = no says it was not memory" in text.stdout
    assert "Something other than the OOM killer sent SIGKILL" in text.stdout  # the advice
    assert "Memory failure:" not in text.stdout


def test_yes_to_the_oom_killer_keeps_the_host_memory_verdict(run_cli) -> None:
    code, data = _json(run_cli, str(KILLED), "--answer", "killed_by_oom_killer=yes")
    assert code == 0 and data["oom"] is True and data["phase"] == "host_memory"
    assert data["answered"] == {}


@pytest.mark.parametrize("word", ["rollout", "generation", "Rollout", "推理"])
def test_failing_stage_takes_areal_s_word_and_names_the_phase(run_cli, word: str) -> None:
    code, data = _json(run_cli, str(UNKNOWN), "--answer", f"failing_stage={word}")
    assert code == 0
    assert data["phase"] == "generation"
    assert data["answered"] == {"phase": "failing_stage"}
    answer = next(q for q in data["questions"] if q["id"] == "failing_stage")
    assert answer["answer"] == "generation" and answer["source"] == "flag"
    assert data["recommendations"][0]["section"] == "gen-reduce-concurrency"
    text = run_cli(
        "diagnose", str(UNKNOWN), "--non-interactive", "--answer", f"failing_stage={word}"
    )
    head = text.stdout.splitlines()[0]
    assert "phase unknown" not in head
    assert "phase generation (from your answer failing_stage)" in head


def test_an_unanswered_failing_stage_keeps_the_phase_unknown(run_cli) -> None:
    _, data = _json(run_cli, str(UNKNOWN))
    assert data["phase"] == "unknown" and data["answered"] == {}


@pytest.mark.parametrize(
    ("raw", "value"), [("12k", 12288), ("12K", 12288), ("4,096", 4096), ("1.5k", 1536)]
)
def test_a_token_count_takes_k(raw: str, value: int) -> None:
    assert parse_answer("longest_prompt_tokens", raw) == value


def test_model_size_takes_b_and_a_wrong_unit_is_refused() -> None:
    assert parse_answer("model_params_b", "7B") == 7
    with pytest.raises(UserError, match="positive number"):
        parse_answer("longest_prompt_tokens", "12q")
    with pytest.raises(UserError, match="also: .*rollout"):
        parse_answer("failing_stage", "somewhere")


def test_12k_answer_changes_the_floor(run_cli, tmp_path: Path) -> None:
    cfg = tmp_path / "experiment.yaml"
    text = CONFIG.read_text()
    lines = [line for line in text.splitlines() if "max_length" not in line]
    cfg.write_text("\n".join(lines) + "\n")
    _, data = _json(
        run_cli, str(TRAINING), "--config", str(cfg), "--answer", "longest_prompt_tokens=12k"
    )
    mb = next(r for r in data["recommendations"] if r["section"] == "train-micro-batch")
    assert any(value >= 12288 for value in mb["patch"].values()), mb


def _try_first(stdout: str) -> str:
    return stdout.split("Try first:", 1)[1].split("\n\n", 1)[0]


def test_try_first_without_a_config_shows_no_other_fix_s_patch(run_cli) -> None:
    """Fix #1 (micro-batch) needs the config's numbers: its block and the patch carry
    no change, never fix #2's gradient checkpointing."""
    result = run_cli("diagnose", str(TRAINING), "--non-interactive")
    block = _try_first(result.stdout)
    assert "Micro-batch" in block
    assert "gradient_checkpointing" not in block and "fix #2" not in block
    _, data = _json(run_cli, str(TRAINING))
    assert data["recommendations"][0]["section"] == "train-micro-batch"
    assert data["patch"] == {} and data["cli_overrides"] == []


def test_an_unknown_phase_never_gets_a_training_knob_as_its_patch(run_cli) -> None:
    """The phase is a guess: fix #1 (the core parameters) changes no key, and the
    training fixes after it lend it none, with or without a config."""
    for extra in ((), ("--config", str(CONFIG))):
        _, data = _json(run_cli, str(UNKNOWN), *extra)
        assert data["phase"] == "unknown"
        assert data["recommendations"][0]["section"] == "core-parameters"
        assert any(r.get("patch") for r in data["recommendations"][1:])  # they have changes
        assert data["patch"] == {} and data["cli_overrides"] == []
        text = run_cli("diagnose", str(UNKNOWN), *extra, "--non-interactive").stdout
        assert "actor." not in _try_first(text)


def test_a_borrowed_patch_says_whose_it_is(run_cli, tmp_path: Path) -> None:
    """With a config and a known phase, a first fix without a change lends the patch to
    the next fix that has one; the text names it, the Try first block does not show it."""
    log = FIXTURES / "advice/other_process_holds_a_third.log"
    result = run_cli("diagnose", str(log), "--config", str(CONFIG), "--non-interactive")
    block = _try_first(result.stdout)
    patch = result.stdout.split("Config patch (YAML fragment)", 1)[1]
    assert "fix #" in patch.splitlines()[1] and "the fix above it changes no config key" in patch
    overrides = result.stdout.split("Command-line overrides", 1)[1].splitlines()[1].split()
    assert overrides and not any(o in block for o in overrides)


ADVISED = __import__("re").compile(r"answer (\w+)=N")
PROBE = {"yesno": "yes", "number": "2000", "choice": None}


@pytest.mark.parametrize(
    "log",
    [TRAINING, UNKNOWN, *sorted((FIXTURES / "advice").glob("*.log"))[:8]],
    ids=lambda p: p.stem,
)
@pytest.mark.parametrize("with_config", [False, True], ids=["no-config", "config"])
def test_every_answer_the_output_advises_changes_the_advice(
    run_cli, tmp_path: Path, log: Path, with_config: bool
) -> None:
    """A class check: whatever question the text tells the user to answer, answering it
    changes the recommendations (their patches or texts); else it must not be advised."""
    from assistant.tree.questions import question_specs

    cfg = tmp_path / "experiment.yaml"  # a config that leaves the sample length open
    cfg.write_text(
        "\n".join(line for line in CONFIG.read_text().splitlines() if "max_length" not in line)
    )
    extra = ("--config", str(cfg)) if with_config else ()
    base = run_cli("diagnose", str(log), *extra, "--non-interactive")
    if not with_config:
        assert "the config does not give" not in base.stdout
    _, before = _json(run_cli, str(log), *extra)
    advised = sorted(set(ADVISED.findall(base.stdout)))
    if log == TRAINING and with_config:  # the check is not empty: this one is advised
        assert "longest_prompt_tokens" in advised
    for qid in advised:
        value = PROBE[question_specs()[qid]["type"]]
        _, after = _json(run_cli, str(log), *extra, "--answer", f"{qid}={value}")
        assert after["recommendations"] != before["recommendations"], qid


KERNEL_KILL = FIXTURES / "logs/signatures/kernel-oom-killer--dmesg-new.log"


def test_an_answer_the_log_already_settles_is_named_as_not_used(run_cli) -> None:
    """The kernel's own line proves the OOM killer: "no" changes nothing, and says so
    (it used to vanish, the host-memory verdict standing as if the answer were taken)."""
    code, data = _json(run_cli, str(KERNEL_KILL), "--answer", "killed_by_oom_killer=no")
    assert code == 0 and data["phase"] == "host_memory"
    assert data["unused_answers"] == [{"id": "killed_by_oom_killer", "answer": "no"}]
    text = run_cli("diagnose", str(KERNEL_KILL), "--answer", "killed_by_oom_killer=no")
    assert "Not used: --answer killed_by_oom_killer=no." in text.stdout.splitlines()[1]


def test_a_failing_stage_the_frames_show_is_named_as_not_used(run_cli) -> None:
    code, data = _json(run_cli, str(TRAINING), "--answer", "failing_stage=generation")
    assert code == 0 and data["phase"] == "training"
    assert data["unused_answers"] == [{"id": "failing_stage", "answer": "generation"}]


def test_answers_the_decision_read_are_not_named(run_cli) -> None:
    _code, data = _json(run_cli, str(UNKNOWN), "--answer", "failing_stage=rollout")
    assert data["unused_answers"] == []
    _code, data = _json(run_cli, str(KILLED), "--answer", "killed_by_oom_killer=no")
    assert data["unused_answers"] == []


def test_answers_read_as_given_by_checks_and_arithmetic_are_not_named(run_cli, tmp_path) -> None:
    """shared_fileroot feeds the config checks and areal_memory the memory arithmetic;
    neither is a question of the decision, and both were named "not used" although read."""
    log = tmp_path / "bare.log"
    log.write_text(
        "RuntimeError: CUDA error: out of memory\n"
        '  File "/opt/AReaL/areal/engine/fsdp_engine.py", line 688, in train_batch\n'
    )
    _code, data = _json(
        run_cli,
        str(log),
        "--config",
        str(CONFIG),
        "--answer",
        "areal_memory=code-2026-05",
        "--answer",
        "shared_fileroot=yes",
    )
    assert data["allocation"] is None  # the arithmetic of a stated request did not run
    assert data["unused_answers"] == []
