"""The contract's JSON/YAML shape (schema areal-doctor/diagnosis/v1) of a Diagnosis."""

from __future__ import annotations

import json
from typing import Any

from assistant.models import ConfigWarning, Diagnosis, Evidence, to_plain

SCHEMA = "areal-doctor/diagnosis/v1"
CHECK_SCHEMA = "areal-doctor/check/v1"


def diagnosis_to_dict(diagnosis: Diagnosis) -> dict[str, Any]:
    report, decision = diagnosis.report, diagnosis.decision
    return {
        "schema": SCHEMA,
        "oom": report.oom,
        "phase": report.phase,
        "kind": report.kind,
        "stage": report.stage,
        "confidence": round(report.confidence, 3),
        "evidence": [evidence_dict(e) for e in report.evidence],
        "metrics": dict(report.metrics),
        "questions": [
            {
                "id": q.id,
                "text": q.text,
                "type": q.type,
                "choices": list(q.choices),
                "default": q.default,
                "answer": q.answer if q.source else q.default,
                "source": q.source or "default",
            }
            for q in decision.questions
        ],
        "recommendations": [
            {k: v for k, v in to_plain(rec).items() if v not in (None, {}, "")}
            for rec in decision.recommendations
        ],
        "patch": to_plain(decision.patch),
        "cli_overrides": list(decision.cli_overrides),
        "skipped": to_plain(decision.skipped),
        "warnings": to_plain(decision.warnings),
        "docs": to_plain(diagnosis.docs),
        "notices": [
            {
                "id": n.id,
                "count": n.count,
                "text": n.text.get(diagnosis.lang, n.text.get("en", "")),
                "evidence": [evidence_dict(e) for e in n.evidence],
            }
            for n in report.notices
        ],
        "allocation": to_plain(diagnosis.allocation),
        # Fields beyond the contract's example (adding is allowed, renaming is not).
        "lang": diagnosis.lang,
        "answered": dict(report.answered),
        "unused_answers": [
            {"id": qid, "answer": answer} for qid, answer in diagnosis.unused_answers
        ],
        "input_kind": report.input_kind,
        "inferences": to_plain(report.inferences),
        "findings": [finding_dict(f, diagnosis.lang) for f in report.findings],
        "consequences": [
            {
                "what": c.what,
                "count": c.count,
                "ranks": list(c.ranks),
                "example": evidence_dict(c.example),
            }
            for c in report.consequences
        ],
        "first_error": evidence_dict(report.first_error) if report.first_error else None,
        "facts": to_plain(report.facts),
        "files": list(report.files),
        "unread_files": list(report.unread),
        "lines_unread": report.lines_unread,
        "lines_read": report.lines_read,
        "config_diff": diagnosis.config_diff,
    }


def evidence_dict(evidence: Evidence) -> dict[str, Any]:
    out: dict[str, Any] = {"file": evidence.file, "line": evidence.line, "text": evidence.text}
    if evidence.rank is not None:
        out["rank"] = evidence.rank
    if evidence.timestamp:
        out["timestamp"] = evidence.timestamp
    out["role"] = evidence.role
    return out


def finding_dict(finding: Any, lang: str = "en") -> dict[str, Any]:
    reasons = finding.group_reason
    return {
        "signature": finding.signature,
        "phase": finding.phase,
        "kind": finding.kind,
        "count": finding.count,
        "ranks": list(finding.ranks),
        "files": list(finding.files),
        "fingerprint": finding.fingerprint,
        "group_reason": (reasons.get(lang) or reasons["en"]) if reasons else None,
        "phase_reasons": list(finding.phase_reasons),
        "evidence": evidence_dict(finding.evidence[0]) if finding.evidence else None,
    }


def check_to_dict(config: Any, warnings: list[ConfigWarning]) -> dict[str, Any]:
    return {
        "schema": CHECK_SCHEMA,
        "config": str(config.path),
        "ok": not warnings,
        "warnings": to_plain(warnings),
    }


def dump_json(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, indent=2) + "\n"


def dump_yaml(data: Any) -> str:
    import yaml

    return yaml.safe_dump(data, allow_unicode=True, sort_keys=False, width=100)
