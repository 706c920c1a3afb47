"""A paste whose words lean to a phase without showing it: the phase stays unknown
(failing_stage is asked), but that phase's fixes come first."""

from __future__ import annotations

from pathlib import Path

from assistant.logs import classify_text
from assistant.pipeline import diagnose_paths

FIXTURE = Path(__file__).parent / "fixtures" / "logs" / "vocabulary"


def test_a_lean_keeps_the_phase_unknown_and_asks_the_stage() -> None:
    diagnosis = diagnose_paths([str(FIXTURE / "training-lean-below-the-bar.log")])
    assert diagnosis.report.phase == "unknown"
    assert diagnosis.report.facts.get("phase_leaning") == "training"
    assert "failing_stage" in [q.id for q in diagnosis.decision.questions]


def test_the_leaning_phase_fixes_come_first() -> None:
    diagnosis = diagnose_paths([str(FIXTURE / "training-lean-below-the-bar.log")])
    assert diagnosis.decision.recommendations[0].section == "train-micro-batch"


def test_no_words_no_lean() -> None:
    report = classify_text(
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. "
        "GPU 0 has a total capacity of 23.64 GiB of which 1.12 GiB is free.\n"
    )
    assert report.phase == "unknown"
    assert "phase_leaning" not in report.facts


def test_a_lean_only_entry_never_shows_the_phase() -> None:
    # the deepspeed launcher's lines say a DeepSpeed job ran, not where it failed
    diagnosis = diagnose_paths([str(FIXTURE / "launcher-only-leans.log")])
    assert diagnosis.report.phase == "unknown"
    assert diagnosis.report.facts.get("phase_leaning") == "training"
    assert diagnosis.decision.recommendations[0].section == "train-micro-batch"
