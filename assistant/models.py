"""The data shapes that flow through the pipeline.

read log -> classify  produces a ``LogReport``
decide (tree)         produces a ``Decision``
retrieve docs         produces ``DocRef`` items
``Diagnosis`` joins them; every renderer (text, JSON, YAML, TUI) reads only it.

Stages never mutate what an earlier stage produced.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from types import MappingProxyType
from typing import Any, Literal, TypedDict

Phase = Literal[
    "generation", "training", "weight_update", "model_loading", "host_memory", "unknown", "none"
]
Kind = Literal["cuda_oom", "cuda_error_oom", "kv_cache", "nccl", "host_oom", "none"]
AnswerSource = Literal["log", "config", "flag", "user", "default"]
Lang = Literal["zh", "en"]
QuestionType = Literal["choice", "number", "yesno"]

# An answer to a follow-up question: (value as given, where it came from: an AnswerSource).
Answer = tuple[str, str]
# A question's default or answer in force, typed (questions.yaml: yes/no, a choice, a number).
AnswerValue = str | int | float | bool | None
# Answers given ahead of the tree (flags, the user in the TUI), by question id.
Answers = Mapping[str, Answer]
# Reading progress: (bytes or lines done, total).
Progress = Callable[[int, int], None]

# A value a fix writes into the config (YAML scalars; a list for a few keys).
PatchValue = str | int | float | bool | None | list[str | int | float | bool]
# A config change as dotted keys: {"actor.mb_spec.max_tokens_per_mb": 4096}. This is the
# form fixes are written in, validated in, and applied to a config file with.
FlatPatch = dict[str, PatchValue]
# The same change as a nested YAML fragment: {"actor": {"mb_spec": {...}}}. Only for
# output (JSON/YAML ``patch``, the TUI's Patch tab); made from a FlatPatch by ``nested``.
NestedPatch = dict[str, "PatchValue | NestedPatch"]

# The log's own figures (bytes, counts, the rank): read-only once a report holds them.
Metrics = Mapping[str, int | float]
NO_METRICS: Metrics = MappingProxyType({})
# Texts per language ({"en": ..., "zh": ...}), read-only.
Texts = Mapping[str, str]


def frozen_metrics(values: Mapping[str, int | float]) -> Metrics:
    """A read-only copy: a report and its findings never share a changeable dict."""
    return MappingProxyType(dict(values))


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


class LogFacts(TypedDict, total=False):
    """What the log reveals that the decision tree may use (``LogReport.facts``).

    The contract between the log reader and the tree: every key the reader writes is
    listed here (from knowledge/facts.yaml ``fact``, the ``facts`` of vocabulary/ and
    signatures.yaml, the ``status`` lines of stages.yaml, and assistant/logs). A key is
    absent when the log does not say; tests/test_models_types.py checks the YAML's keys.
    """

    # knowledge/facts.yaml: settings stated anywhere in the log
    expandable_segments: bool
    alloc_conf: str  # PYTORCH_CUDA_ALLOC_CONF as written
    sleep_mode: bool  # vLLM sleep mode / SGLang torch_memory_saver
    train_engine: str  # fsdp | megatron | archon | deepspeed
    weight_update_mode: str  # xccl | disk | awex | nccl
    model_name: str  # last part of the model path
    colocated: bool  # trainer and inference server share GPUs (offload, colocation)
    failing_role: str  # AReaL worker role whose engine call failed (actor, ref, critic ...)
    weight_buffer_mb: str  # the weight-update buffer the run sets, in MiB (as the log writes it)
    engine_in_process: bool  # a vLLM engine inside the trainer's process (LLM(...), TRL colocate)
    ranks_share_gpu: bool  # nvidia-smi: several processes of one program on one GPU
    # signatures.yaml / vocabulary/ facts of the root failure
    server: str  # sglang | vllm
    signature_tags: list[str]  # tags of the root signature and phase patterns
    model_params_b: float  # model size read from the model name, in billions
    # assistant/logs/stage.py: the sub-stage and the status lines before the failure
    stage: str
    running_req: int | float
    token_usage: int | float
    queue_req: int | float
    kv_cache_tokens_total: int | float
    # assistant/logs: how the report came about
    memory_unproven: bool  # a bare kill counted as host memory at a low confidence
    kill_signal: str  # the signal a process died of, however the log spells it (SIGKILL)
    kill_signal_number: int  # its number (9)
    # the phase the vocabulary's words lean to when they do not show one (phase unknown)
    phase_leaning: str
    described_by_user: bool  # a short description, not a log
    first_error_kind: str  # no memory failure: the look-alike that explains the first error
    first_error_what: dict[str, str]  # its explanation, {"en": ..., "zh": ...}


class Allocation(TypedDict, total=False):
    """The failed request explained (the contract's ``allocation``; assistant/memory)."""

    tensor: str  # logits, kv_cache, weights, gradients, optimizer_state, activations, ...
    bytes: int  # what the arithmetic gives for it
    formula: str  # the arithmetic, in the output language
    inputs: Mapping[str, object]  # the figures the formula used (tokens, vocabulary, ...)
    requested_bytes: int  # what the log says was asked for
    matches_request: bool
    matched_by: str  # "frame and arithmetic" | "arithmetic"
    model: str
    model_source: str  # "table" | "config.json"
    frame: str  # the failing frame that named the tensor
    note: str
    arithmetic_check: Mapping[str, object]  # a training rank's estimate against the log


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


@dataclass(frozen=True)
class Finding:
    """One memory failure, possibly repeated on many ranks (grouped by fingerprint)."""

    signature: str  # id in knowledge/signatures.yaml
    kind: Kind
    phase: Phase
    evidence: tuple[Evidence, ...]  # evidence[0] is the failure line itself
    metrics: Metrics = field(default_factory=lambda: NO_METRICS)
    phase_reasons: tuple[str, ...] = ()  # which phase patterns fired
    count: int = 1
    ranks: tuple[int, ...] = ()
    files: tuple[str, ...] = ()
    fingerprint: str = ""
    group_reason: Texts | None = None  # {"en", "zh"}: why repeated lines were merged


@dataclass(frozen=True)
class Consequence:
    """A cascade event after the root cause (NCCL timeout, SIGTERM, connection reset)."""

    what: str  # e.g. nccl_timeout, hang, sigterm, connection_reset, child_failed
    count: int
    ranks: tuple[int, ...]
    example: Evidence


@dataclass(frozen=True)
class Inference:
    """Arithmetic the log's own figures allow (e.g. reserved-but-unallocated share)."""

    id: str
    value: float | int | None
    text: Texts  # {"en": ..., "zh": ...}


@dataclass(frozen=True)
class Notice:
    """A memory event that is not a failure by itself (KV retraction, preemption,
    object spilling, allocator warnings), counted over the whole input."""

    id: str  # e.g. kv-retraction (knowledge/lookalikes.yaml `notice`)
    count: int
    text: Texts  # {"en": ..., "zh": ...}: what it means
    evidence: tuple[Evidence, ...] = ()


@dataclass(frozen=True)
class LogReport:
    """What reading and classifying the input found.

    Built once, from its parts (``assistant/logs/report.py``); a later stage that
    decides otherwise (an answer of the user) makes a new one with ``replace``.
    """

    oom: bool
    phase: Phase
    kind: Kind
    confidence: float
    evidence: tuple[Evidence, ...] = ()
    metrics: Metrics = field(default_factory=lambda: NO_METRICS)
    inferences: tuple[Inference, ...] = ()
    findings: tuple[Finding, ...] = ()  # root cause first
    consequences: tuple[Consequence, ...] = ()
    first_error: Evidence | None = None  # when oom is false: the first real error, if any
    # Facts read from the log that the decision tree may use, e.g.
    # {"expandable_segments": True, "sleep_mode": True, "server": "sglang",
    #  "signature_tags": ["startup_kv_pool"], "model_params_b": 7}
    facts: LogFacts = field(default_factory=lambda: LogFacts())
    # where inside the phase it failed (knowledge/stages.yaml), e.g. "optimizer_state_init"
    stage: str | None = None
    language: Lang = "en"  # language the input is written in
    files: tuple[str, ...] = ()
    lines_read: int = 0
    input_kind: str = "log"  # "log" or "description" (a short text such as "训练时显存爆了")
    unread: tuple[str, ...] = ()  # "file: why" for files skipped in folders
    lines_unread: int = 0  # lines with a rule's words past the reader's cap, not read
    notices: tuple[Notice, ...] = ()
    # what an answer of the user changed in the verdict: field -> question id
    # (questions.yaml ``outcome``), and the report as the log was read, which the
    # tree walks again when answers change (``pipeline.conclude``)
    answered: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    as_read: LogReport | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        # the facts a report holds are read-only, like its metrics: the builder fills a
        # plain dict, and a report made from another (``replace``) never shares it
        if not isinstance(self.facts, MappingProxyType):
            object.__setattr__(self, "facts", MappingProxyType(dict(self.facts)))


@dataclass(frozen=True)
class Question:
    id: str
    text: str
    type: QuestionType
    choices: list[str] = field(default_factory=list)
    default: AnswerValue = None
    answer: AnswerValue = None  # as shown: yes/no, a choice, a number
    source: AnswerSource | None = None  # None while still open
    # False when no answer can change the fix shown (#1, or the fix the user moved
    # to): such a question is not asked, and takes its default at the end
    matters: bool = True


@dataclass(frozen=True)
class Recommendation:
    section: str
    title: str
    why: str
    patch: FlatPatch = field(default_factory=dict)
    fix: str = ""  # id of the fix in knowledge/tree.yaml
    env: dict[str, str] = field(default_factory=dict)  # environment variables to set
    code_change: str | None = None  # a change that is code, not config (shown as such)
    checks: list[str] = field(default_factory=list)  # "check your value" instead of a patch


@dataclass(frozen=True)
class Skipped:
    section: str
    why: str
    fix: str = ""


@dataclass(frozen=True)
class ConfigWarning:
    id: str
    section: str
    text: str


@dataclass(frozen=True)
class Decision:
    """What the tree decided: built once by ``assistant.tree.decide``, never changed."""

    questions: list[Question] = field(default_factory=list)
    recommendations: list[Recommendation] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    warnings: list[ConfigWarning] = field(default_factory=list)
    # the config change of the fix chosen for the patch (recommendations[0] as a rule)
    flat_patch: FlatPatch = field(default_factory=dict)
    cli_overrides: list[str] = field(default_factory=list)
    focus: int = 0  # index of the recommendation whose questions are asked (0: fix #1)
    # index of the recommendation whose change flat_patch is (None: no patch); the fix
    # in view, or, with a config and a known phase, the first later one with a change
    patch_from: int | None = None
    # answers given ahead that a step read as given, beside the questions' answers
    answers_read: tuple[str, ...] = ()

    @property
    def patch(self) -> NestedPatch:
        """``flat_patch`` as a nested YAML fragment (the contract's ``patch``)."""
        return nested(self.flat_patch)

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


@dataclass(frozen=True)
class DocRef:
    section: str
    lang: Lang
    title: str
    score: float
    snippet: str = ""


@dataclass(frozen=True)
class Diagnosis:
    """Every stage's result, joined once by ``pipeline.conclude``."""

    report: LogReport
    decision: Decision = field(default_factory=Decision)
    docs: tuple[DocRef, ...] = ()
    lang: Lang = "en"
    patched_config: str | None = None  # text of the patched copy of --config
    config_diff: str | None = None  # unified diff of that copy against the original
    # the failed request explained from the config and the model (assistant/memory)
    allocation: Allocation | None = None
    # answers given ahead (--answer, the TUI) that nothing decided here depended on: the
    # log or the config already settles what they could change (said, not dropped quietly)
    unused_answers: tuple[tuple[str, str], ...] = ()  # (question id, answer as given)


def nested(flat: Mapping[str, PatchValue]) -> NestedPatch:
    """``{"a.b": 1}`` -> ``{"a": {"b": 1}}``: the one conversion between the patch forms."""
    out: NestedPatch = {}
    for key, value in flat.items():
        node = out
        parts = key.split(".")
        for part in parts[:-1]:
            child = node.setdefault(part, {})
            if not isinstance(child, dict):  # "a" and "a.b" both set: the deeper one wins
                child = node[part] = {}
            node = child
        node[parts[-1]] = value
    return out


def to_plain(value: Any) -> Any:
    """Dataclasses to plain dicts/lists for JSON and YAML output (read-only mappings and
    tuples included: ``asdict`` cannot copy a ``MappingProxyType``)."""
    if hasattr(value, "__dataclass_fields__") and not isinstance(value, type):
        return {f.name: to_plain(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, Mapping):
        return {str(k): to_plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_plain(v) for v in value]
    return value
