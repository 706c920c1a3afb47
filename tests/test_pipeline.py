"""The whole pipeline on one log and config: stages chained, docs cited, the config untouched."""

from __future__ import annotations

import json
from pathlib import Path

from assistant import pipeline
from assistant.config import load_config

TUI = Path(__file__).parent / "fixtures" / "tui"


def diagnose(lang: str = "en"):
    config = load_config(str(TUI / "experiment.yaml"))
    return pipeline.diagnose_paths([str(TUI / "training_oom.log")], config=config, lang=lang)


def test_recommended_sections_are_cited_first_in_the_users_language() -> None:
    diagnosis = diagnose("zh")
    first = diagnosis.decision.recommendations[0].section
    assert diagnosis.docs[0].section == first
    assert all(doc.lang == "zh" for doc in diagnosis.docs)
    assert [d.section for d in diagnosis.docs[: len(diagnosis.decision.recommendations)]] == [
        r.section for r in diagnosis.decision.recommendations
    ]


def test_patched_copy_and_diff_come_with_a_config_and_the_original_is_untouched() -> None:
    before = (TUI / "experiment.yaml").read_bytes()
    diagnosis = diagnose()
    flat = pipeline.flat_patch(diagnosis.decision)
    assert flat, "a training OOM with a config yields a config patch"
    key = next(iter(flat))
    assert diagnosis.config_diff and key.split(".")[-1] in diagnosis.config_diff
    assert diagnosis.patched_config != before.decode()
    assert (TUI / "experiment.yaml").read_bytes() == before


def test_answering_a_question_reuses_the_report(monkeypatch) -> None:
    diagnosis = diagnose()
    calls = []
    monkeypatch.setattr("assistant.logs.read_and_classify", lambda *a, **k: calls.append(a))
    again = pipeline.conclude(
        diagnosis.report, answers={"multi_turn": ("yes", "user")}, lang="en", use_defaults=True
    )
    assert calls == []
    assert any(q.id == "multi_turn" and q.source == "user" for q in again.decision.questions)


def test_auto_language_follows_a_chinese_description() -> None:
    diagnosis = pipeline.diagnose_text("训练时显存爆了，反向传播的时候")
    assert diagnosis.lang == "zh"
    assert diagnosis.report.phase == "training"


def test_cli_json_and_exit_code_for_the_same_input(run_cli) -> None:
    result = run_cli(
        "diagnose",
        str(TUI / "training_oom.log"),
        "--config",
        str(TUI / "experiment.yaml"),
        "--format",
        "json",
        "--non-interactive",
    )
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    assert data["oom"] is True and data["phase"] == "training"
    assert data["recommendations"][0]["section"] == data["docs"][0]["section"]
    assert all(
        q["source"] in {"log", "config", "flag", "user", "default"} for q in data["questions"]
    )
