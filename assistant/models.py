"""The data shapes that flow through the pipeline.

read log -> classify  produces a ``LogReport``
decide (tree)         produces a ``Decision``
retrieve docs         produces ``DocRef`` items
``Diagnosis`` joins them; every renderer (text, JSON, YAML, TUI) reads only it.

Stages never mutate what an earlier stage produced.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

Phase = Literal[
    "generation", "training", "weight_update", "model_loading", "host_memory", "unknown", "none"
]
Kind = Literal["cuda_oom", "cuda_error_oom", "kv_cache", "nccl", "host_oom", "none"]
AnswerSource = Literal["log", "config", "flag", "user", "default"]
Lang = Literal["zh", "en"]

PHASES: tuple[str, ...] = (
    "generation",
    "training",
    "weight_update",
    "model_loading",
    "host_memory",
    "unknown",
    "none",
)
KINDS: tuple[str, ...] = ("cuda_oom", "cuda_error_oom", "kv_cache", "nccl", "host_oom", "none")


@dataclass(frozen=True)
class Evidence:
    """One log line that supports a finding."""

    file: str
    line: int  # 1-based line number inside ``file``
    text: str  # the cleaned line (ANSI and rank/worker prefixes removed), capped in length
    rank: int | None = None
    timestamp: str | None = None  # as written in the log, when it had one
    role: str = "failure"  # failure | frame | context | consequence
    context: tuple[str, ...] = ()  # a few cleaned lines before it, for display


@dataclass
class Finding:
    """One memory failure, possibly repeated on many ranks (grouped by fingerprint)."""

    signature: str  # id in knowledge/signatures.yaml
    kind: str
    phase: str
    evidence: list[Evidence]  # evidence[0] is the failure line itself
    metrics: dict[str, int | float] = field(default_factory=dict)
    phase_reasons: list[str] = field(default_factory=list)  # which phase patterns fired
    count: int = 1
    ranks: list[int] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    fingerprint: str = ""
    group_reason: dict[str, str] | None = None  # {"en", "zh"}: why repeated lines were merged


@dataclass
class Consequence:
    """A cascade event after the root cause (NCCL timeout, SIGTERM, connection reset)."""

    what: str  # e.g. nccl_timeout, sigterm, connection_reset, child_failed
    count: int
    ranks: list[int]
    example: Evidence


@dataclass
class Inference:
    """Arithmetic the log's own figures allow (e.g. reserved-but-unallocated share)."""

    id: str
    value: float | int | None
    text: dict[str, str]  # {"en": ..., "zh": ...}


@dataclass(frozen=True)
class Notice:
    """A memory event that is not a failure by itself (KV retraction, preemption,
    object spilling, allocator warnings), counted over the whole input."""

    id: str  # e.g. kv-retraction (knowledge/lookalikes.yaml `notice`)
    count: int
    text: dict[str, str]  # {"en": ..., "zh": ...}: what it means
    evidence: tuple[Evidence, ...] = ()


@dataclass
class LogReport:
    """What reading and classifying the input found."""

    oom: bool
    phase: str
    kind: str
    confidence: float
    evidence: list[Evidence] = field(default_factory=list)
    metrics: dict[str, int | float] = field(default_factory=dict)
    inferences: list[Inference] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)  # root cause first
    consequences: list[Consequence] = field(default_factory=list)
    first_error: Evidence | None = None  # when oom is false: the first real error, if any
    # Facts read from the log that the decision tree may use, e.g.
    # {"expandable_segments": True, "vllm_sleep_mode": True, "server": "sglang",
    #  "signature_tags": ["startup_kv_pool"], "model_params_b": 7}
    facts: dict[str, Any] = field(default_factory=dict)
    # where inside the phase it failed (knowledge/stages.yaml), e.g. "optimizer_state_init"
    stage: str | None = None
    language: str = "en"  # language the input is written in ("zh" or "en")
    files: list[str] = field(default_factory=list)
    lines_read: int = 0
    input_kind: str = "log"  # "log" or "description" (a short text such as "训练时显存爆了")
    unread: list[str] = field(default_factory=list)  # "file: why" for files skipped in folders
    notices: list[Notice] = field(default_factory=list)


@dataclass
class Question:
    id: str
    text: str
    type: str  # choice | number | yesno
    choices: list[str] = field(default_factory=list)
    default: Any = None
    answer: Any = None
    source: str | None = None  # AnswerSource, or None while still open
    # False when no answer can change the fix shown (#1, or the fix the user moved
    # to): such a question is not asked, and takes its default at the end
    matters: bool = True


@dataclass
class Recommendation:
    section: str
    title: str
    why: str
    patch: dict[str, Any] = field(default_factory=dict)  # flat dotted keys
    fix: str = ""  # id of the fix in knowledge/tree.yaml
    env: dict[str, str] = field(default_factory=dict)  # environment variables to set
    code_change: str | None = None  # a change that is code, not config (shown as such)
    checks: list[str] = field(default_factory=list)  # "check your value" instead of a patch


@dataclass
class Skipped:
    section: str
    why: str
    fix: str = ""


@dataclass
class ConfigWarning:
    id: str
    section: str
    text: str


@dataclass
class Decision:
    questions: list[Question] = field(default_factory=list)
    recommendations: list[Recommendation] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    warnings: list[ConfigWarning] = field(default_factory=list)
    patch: dict[str, Any] = field(default_factory=dict)  # nested YAML fragment
    cli_overrides: list[str] = field(default_factory=list)
    focus: int = 0  # index of the recommendation whose questions are asked (0: fix #1)

    @property
    def open_questions(self) -> list[Question]:
        return [q for q in self.questions if q.source is None]

    @property
    def asking(self) -> list[Question]:
        """Open questions whose answer can change the fix shown: the ones to ask."""
        return [q for q in self.open_questions if q.matters]

    @property
    def provisional(self) -> list[Question]:
        """Questions not answered by the user, log or config that could change the fix shown."""
        return [q for q in self.questions if q.matters and q.source in (None, "default")]


@dataclass
class DocRef:
    section: str
    lang: str
    title: str
    score: float
    snippet: str = ""


@dataclass
class Diagnosis:
    report: LogReport
    decision: Decision = field(default_factory=Decision)
    docs: list[DocRef] = field(default_factory=list)
    lang: str = "en"
    patched_config: str | None = None  # text of the patched copy of --config
    config_diff: str | None = None  # unified diff of that copy against the original
    # the failed request explained from the config and the model (assistant/memory)
    allocation: dict[str, Any] | None = None


def to_plain(value: Any) -> Any:
    """Dataclasses to plain dicts/lists for JSON and YAML output."""
    if hasattr(value, "__dataclass_fields__"):
        return {k: to_plain(v) for k, v in asdict(value).items()}
    if isinstance(value, dict):
        return {str(k): to_plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_plain(v) for v in value]
    return value
