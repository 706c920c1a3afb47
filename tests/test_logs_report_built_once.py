"""The log report is built once: what it holds cannot be changed, and the figures that
join it last (another process on the GPU, from nvidia-smi) are its own, not the root
finding's too (they used to share one dict)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from assistant.logs import read_and_classify

LOGS = Path(__file__).parent / "fixtures" / "logs"
SMI_OTHERS = LOGS / "signatures" / "torch-oom-current--nvidia-smi-others.log"


def test_processes_from_nvidia_smi_join_the_report_not_the_finding() -> None:
    report = read_and_classify([str(SMI_OTHERS)])
    assert report.oom and report.metrics["other_processes_bytes"] > 0
    assert "other_processes_bytes" not in report.findings[0].metrics
    # the inference the figure allows is part of the report as built, not added later
    assert "held-by-other-processes" in {i.id for i in report.inferences}


def test_evidence_findings_and_metrics_are_read_only() -> None:
    report = read_and_classify([str(SMI_OTHERS)])
    finding = report.findings[0]
    with pytest.raises(dataclasses.FrozenInstanceError):
        report.confidence = 0.1  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        finding.phase = "generation"  # type: ignore[misc]
    with pytest.raises(TypeError):
        report.metrics["rank"] = 3  # type: ignore[index]
    with pytest.raises(TypeError):
        finding.metrics["rank"] = 3  # type: ignore[index]
    assert isinstance(report.evidence, tuple) and isinstance(report.findings, tuple)
    assert isinstance(finding.evidence, tuple) and isinstance(finding.phase_reasons, tuple)


def test_facts_are_read_only_and_never_shared_with_a_replaced_report() -> None:
    report = read_and_classify([str(SMI_OTHERS)])
    with pytest.raises(TypeError):
        report.facts["server"] = "vllm"  # type: ignore[index]
    source = {"server": "sglang"}
    made = dataclasses.replace(report, facts=source)
    source["server"] = "vllm"
    assert made.facts["server"] == "sglang"
