"""Renderers read a finished Diagnosis: contract JSON shape, text in both languages, colour."""

from __future__ import annotations

import json

import yaml

from assistant.models import (
    ConfigWarning,
    Consequence,
    Decision,
    Diagnosis,
    DocRef,
    Evidence,
    Finding,
    LogReport,
    Question,
    Recommendation,
    Skipped,
)
from assistant.render import render_diagnosis

CONTRACT_FIELDS = {
    "schema",
    "oom",
    "phase",
    "kind",
    "confidence",
    "evidence",
    "metrics",
    "questions",
    "recommendations",
    "patch",
    "cli_overrides",
    "skipped",
    "warnings",
    "docs",
}


def sample_diagnosis(lang: str = "en") -> Diagnosis:
    root = Evidence(
        "rank3.log",
        1204,
        "torch.OutOfMemoryError: CUDA out of memory. [bold]x[/]",
        rank=3,
        timestamp="20261128-03:22:07.511",
    )
    report = LogReport(
        oom=True,
        phase="training",
        kind="cuda_oom",
        confidence=0.93,
        evidence=[
            root,
            Evidence("rank3.log", 1199, 'File "fsdp_engine.py", line 742', rank=3, role="frame"),
        ],
        metrics={"tried_to_allocate_bytes": 2147483648, "gpu_index": 3},
        findings=[
            Finding(
                "torch-oom",
                "cuda_oom",
                "training",
                [root],
                count=3,
                ranks=[1, 2, 3],
                group_reason={"en": "same message with numbers and ranks masked", "zh": "同一消息"},
            )
        ],
        consequences=[
            Consequence(
                "nccl_timeout",
                5,
                [0, 4, 5, 6, 7],
                Evidence("rank0.log", 88, "Watchdog caught ...", rank=0, role="consequence"),
            )
        ],
        files=["rank3.log"],
        lines_read=2000,
    )
    decision = Decision(
        questions=[
            Question(
                "multi_turn",
                "Is the workflow multi-turn?",
                "yesno",
                ["yes", "no"],
                "no",
                "no",
                "default",
            )
        ],
        recommendations=[
            Recommendation(
                "train-micro-batch",
                "Training 1. Optimize Micro-batch Size",
                "Cut tokens per micro-batch to the floor.",
                {"actor.mb_spec.max_tokens_per_mb": 4096},
            )
        ],
        skipped=[
            Skipped("train-grad-checkpointing", "actor.gradient_checkpointing is already true")
        ],
        warnings=[ConfigWarning("micro-batch-below-floor", "train-micro-batch", "too low")],
        flat_patch={"actor.mb_spec.max_tokens_per_mb": 4096},
        cli_overrides=["actor.mb_spec.max_tokens_per_mb=4096"],
    )
    docs = [DocRef("train-micro-batch", lang, "1. Optimize", 7.1)]
    return Diagnosis(report=report, decision=decision, docs=docs, lang=lang)


def test_json_has_every_contract_field_with_contract_types() -> None:
    data = json.loads(render_diagnosis(sample_diagnosis(), "json", color=False, redact=False))
    assert data.keys() >= CONTRACT_FIELDS
    assert data["schema"] == "areal-doctor/diagnosis/v1"
    assert data["evidence"][0] == {
        "file": "rank3.log",
        "line": 1204,
        "rank": 3,
        "role": "failure",
        "text": "torch.OutOfMemoryError: CUDA out of memory. [bold]x[/]",
        "timestamp": "20261128-03:22:07.511",
    }
    assert data["recommendations"][0]["section"] == "train-micro-batch"
    assert data["recommendations"][0]["patch"] == {"actor.mb_spec.max_tokens_per_mb": 4096}
    assert data["questions"][0]["source"] == "default"
    assert data["cli_overrides"] == ["actor.mb_spec.max_tokens_per_mb=4096"]
    assert data["skipped"][0]["section"] == "train-grad-checkpointing"
    assert data["warnings"][0]["id"] == "micro-batch-below-floor"
    assert data["docs"][0] == {
        "section": "train-micro-batch",
        "lang": "en",
        "title": "1. Optimize",
        "score": 7.1,
        "snippet": "",
    }


def test_yaml_is_the_same_data_as_json() -> None:
    diagnosis = sample_diagnosis()
    as_json = json.loads(render_diagnosis(diagnosis, "json", color=False, redact=False))
    as_yaml = yaml.safe_load(render_diagnosis(diagnosis, "yaml", color=False, redact=False))
    assert as_yaml == as_json


def test_text_names_root_cause_ranks_and_cascade() -> None:
    text = render_diagnosis(sample_diagnosis(), "text", color=False, redact=False)
    assert "rank3.log:1204 [rank 3]" in text
    assert "3 times, on 3 ranks: 1, 2, 3" in text
    assert "nccl_timeout x5" in text
    assert "actor.mb_spec.max_tokens_per_mb=4096" in text
    assert "[bold]x[/]" in text  # log text is shown literally
    assert "\033[" not in text


def test_text_in_chinese() -> None:
    text = render_diagnosis(sample_diagnosis("zh"), "text", color=False, redact=False)
    assert "根因" in text and "建议的修复" in text


def test_colour_only_when_asked() -> None:
    assert "\033[" in render_diagnosis(sample_diagnosis(), "text", color=True, redact=False)


def test_no_failure_text_names_first_error() -> None:
    first = Evidence(
        "a.log", 7, "RuntimeError: CUDA error: an illegal memory access was encountered"
    )
    report = LogReport(
        oom=False,
        phase="none",
        kind="none",
        confidence=0.9,
        first_error=first,
        files=["a.log"],
        lines_read=10,
    )
    text = render_diagnosis(Diagnosis(report=report), "text", color=False, redact=False)
    assert "No memory failure found in 10 lines" in text
    assert "a.log:7" in text and "illegal memory access" in text


def test_no_failure_text_says_why_it_is_not_memory() -> None:
    first = Evidence("a.log", 3, "RuntimeError: CUDA error: device-side assert triggered")
    report = LogReport(
        oom=False,
        phase="none",
        kind="none",
        confidence=0.9,
        first_error=first,
        facts={"first_error_what": {"en": "an assertion in a kernel", "zh": "内核断言"}},
        files=["a.log"],
        lines_read=3,
    )
    text = render_diagnosis(Diagnosis(report=report, lang="zh"), "text", color=False, redact=False)
    assert "为什么这不是内存故障" in text and "内核断言" in text


def test_figures_have_readable_labels_and_units() -> None:
    text = render_diagnosis(sample_diagnosis(), "text", color=False, redact=False)
    assert "tried to allocate" in text
    assert "2.00 GiB" in text
    assert "2,147,483,648" not in text  # no more precision than the log's own figure
    assert "tried_to_allocate_bytes" not in text


def test_the_first_fix_comes_right_after_the_headline() -> None:
    text = render_diagnosis(sample_diagnosis(), "text", color=False, redact=False)
    head = text.splitlines()[:5]
    assert head[0].startswith("Memory failure: phase training")
    assert head[2].startswith("Try first:")
    assert head[3].strip() == "actor.mb_spec.max_tokens_per_mb=4096"
    assert text.index("Try first:") < text.index("Root cause")


def test_why_lines_were_grouped_is_said_in_the_reports_language() -> None:
    from assistant.pipeline import diagnose_text

    ranks = "".join(
        f"[rank{r}]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. "
        f"GPU {r} has a total capacity of 79.19 GiB of which 1.00 GiB is free.\n"
        for r in range(4)
    )
    zh = render_diagnosis(diagnose_text(ranks, lang="zh"), "text", color=False, redact=False)
    en = render_diagnosis(diagnose_text(ranks, lang="en"), "text", color=False, redact=False)
    assert "同一条消息" in zh and "carry the same message" not in zh
    assert "carry the same message" in en


def test_a_yes_no_assumption_is_said_in_the_reports_language() -> None:
    from assistant.models import Question
    from assistant.render.text import _answer_text

    question = Question("multi_turn", "?", "yesno", ["yes", "no"], default="no")
    assert _answer_text(question, "zh") == "否"
    assert _answer_text(question, "en") == "no"
    number = Question("longest_conversation_tokens", "?", "number", default=None)
    assert _answer_text(number, "zh") not in ("None", "")
