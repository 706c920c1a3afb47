"""Which tensor the failed request was: the frame says what, the arithmetic how much.

The failing frame (the lines just above the failure line, then the other traceback
frames the log reader kept) names a tensor family through the patterns in
knowledge/memory.yaml. The family's formula, fed with the config's numbers and the
model's sizes, must then agree with the request PyTorch printed (two decimals, so
within half a unit of the last one). A family the frame contradicts is never named;
with no frame at all, only an exact match with the config's own numbers counts.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Any

from assistant.i18n import message
from assistant.knowledge import load_yaml
from assistant.memory import formulas
from assistant.memory.facts import ModelFacts
from assistant.memory.setup import (
    ServerSetup,
    TrainSetup,
    number,
    server_setup,
    train_setup,
)
from assistant.memory.sizes import printed_tolerance

if TYPE_CHECKING:
    from assistant.config.loader import ExperimentConfig
    from assistant.models import Allocation, LogReport

FRAME_LINE = re.compile(r'File "|^\s*at |\bin [\w<>]+\s*$|^\s*\w[\w.]*\(')
FP32_HINT = re.compile(
    r"float\(\)|log_softmax|logprob|entropy|cross_entropy|vocab_parallel|softcap"
)


@dataclass
class Candidate:
    tensor: str
    bytes: int
    formula: str
    inputs: dict[str, Any]
    exact: bool = False  # the config's own numbers give it (not solved from the request)
    note: str = ""


@dataclass
class FrameHint:
    family: str | None
    also: tuple[str, ...] = ()
    line: str = ""
    has_frames: bool = False


@dataclass
class Rule:
    family: str
    patterns: list[re.Pattern[str]]
    also: tuple[str, ...] = field(default_factory=tuple)


@cache
def frame_rules() -> tuple[Rule, ...]:
    data = load_yaml("memory.yaml") or {}
    return tuple(
        Rule(
            str(item["family"]),
            [re.compile(p) for p in item.get("patterns") or []],
            tuple(item.get("also") or ()),
        )
        for item in data.get("frames") or []
    )


def frame_lines(report: LogReport) -> list[str]:
    """Traceback lines nearest the failure first (innermost frame first)."""
    lines: list[str] = []
    if report.findings and report.findings[0].evidence:
        lines.extend(reversed(report.findings[0].evidence[0].context))
    frames = [e.text for e in report.evidence if e.role == "frame"]
    lines.extend(reversed(frames))
    return lines


def frame_hint(report: LogReport) -> FrameHint:
    lines = frame_lines(report)
    has_frames = any(FRAME_LINE.search(line) for line in lines)
    for line in lines:
        for rule in frame_rules():
            if any(p.search(line) for p in rule.patterns):
                family = None if rule.also else rule.family
                return FrameHint(family, rule.also, line.strip(), True)
    return FrameHint(None, (), "", has_frames)


# --- candidates per family -----------------------------------------------------------


def _close(a: int, b: int, tolerance: int) -> bool:
    return abs(a - b) <= tolerance


def _logits_formula(tokens: int, m: ModelFacts, tp: int, width: int, lang: str) -> str:
    if width == 4:
        what = message("memory.alloc.fp32_log_softmax", lang)
    else:
        what = message("memory.alloc.bf16_logits", lang)
    shard = message("memory.alloc.tp_shard", lang, tp=tp) if tp > 1 else ""
    return message(
        "memory.alloc.logits",
        lang,
        tokens=tokens,
        vocab=m.vocab_size,
        shard=shard,
        width=width,
        what=what,
    )


def _round_count(request: int, unit: int, tolerance: int) -> int:
    """The count of ``unit``-byte rows a printed request stands for: of the counts its
    rounding admits, the one with the largest power of two in it (token budgets and
    chunk sizes are set in round numbers: 8192, not the 8189 that 7.81 GiB solves to)."""
    low = max(1, -(-(request - tolerance) // unit))
    high = (request + tolerance) // unit
    if high < low or high - low > 4096:
        return round(request / unit)
    return max(range(low, high + 1), key=lambda n: ((n & -n), -abs(n * unit - request)))


def logits_candidates(
    request: int,
    m: ModelFacts,
    train: TrainSetup,
    tolerance: int,
    line: str,
    solve: bool,
    lang: str = "en",
) -> Iterator[Candidate]:
    tps = sorted({train.dim("t") if train.kind in ("megatron", "archon") else 1, 1}, reverse=True)
    widths = (4, 2) if FP32_HINT.search(line) or not line else (2, 4)
    for tp in tps:
        for width in widths:
            if train.tokens_per_mb:
                full = formulas.logits_bytes(train.tokens_per_mb, m.vocab_size, width, tp)
                if _close(full, request, tolerance):
                    yield Candidate(
                        "logits",
                        full,
                        _logits_formula(train.tokens_per_mb, m, tp, width, lang),
                        {
                            "tokens": train.tokens_per_mb,
                            "vocab_size": m.vocab_size,
                            "bytes_per_value": width,
                            "tensor_parallel": tp,
                        },
                        exact=True,
                        note=message("memory.alloc.full_micro_batch", lang),
                    )
    if not solve:
        return
    tp, width = tps[0], widths[0]
    vocab = m.vocab_size // tp
    tokens = _round_count(request, vocab * width, tolerance)
    if tokens < 1:
        return
    note = ""
    if train.tokens_per_mb:
        if tokens > train.tokens_per_mb * 1.02:
            note = message("memory.alloc.above_cap", lang, cap=train.tokens_per_mb)
        elif tokens < train.tokens_per_mb * 0.98:
            note = message("memory.alloc.below_cap", lang, cap=train.tokens_per_mb)
        else:
            note = message("memory.alloc.full_micro_batch", lang)
    yield Candidate(
        "logits",
        tokens * vocab * width,
        _logits_formula(tokens, m, tp, width, lang),
        {
            "tokens": tokens,
            "vocab_size": m.vocab_size,
            "bytes_per_value": width,
            "tensor_parallel": tp,
        },
        note=note,
    )


def _server_prefill_tokens(
    config: ExperimentConfig | None, server: ServerSetup | None
) -> list[int]:
    """Token counts one prefill forward of the server may carry: what the config sets
    (SGLang chunked_prefill_size / max_prefill_tokens, vLLM max_num_batched_tokens),
    then the servers' own default chunk (memory.yaml server_prefill_tokens)."""
    keys = (
        ("sglang.chunked_prefill_size", "sglang.max_prefill_tokens")
        if server is None or server.server == "sglang"
        else ("vllm.max_num_batched_tokens",)
    )
    found = [int(v) for v in (number(config, k) for k in keys) if v and v > 0]
    found.append(int(_settings()["server_prefill_tokens"]))
    return list(dict.fromkeys(found))


def _settings() -> dict[str, Any]:
    from assistant.memory.estimate import settings

    return settings()


def server_logits_candidates(
    request: int,
    m: ModelFacts,
    config: ExperimentConfig | None,
    server: ServerSetup | None,
    tolerance: int,
    solve: bool,
    lang: str = "en",
) -> Iterator[Candidate]:
    """Logits in the inference server: SGLang's logits processor returns them as float
    (srt/layers/logits_processor.py), vLLM's sampler casts them to float32
    (v1/sample/sampler.py): tokens of one prefill chunk, or the sequences of the
    sampler's warm-up batch, x the vocabulary x 4 bytes; the vocabulary is split over
    the server's tensor-parallel ranks only before the all-gather, so it counts whole."""
    what = message("memory.alloc.server_logits", lang)
    for tokens in _server_prefill_tokens(config, server):
        for width in (4, 2):
            size = formulas.logits_bytes(tokens, m.vocab_size, width)
            if _close(size, request, tolerance):
                note = message("memory.alloc.prefill_chunk", lang, tokens=tokens)
                yield _server_logits(tokens, width, m, what, lang, note, exact=True)
    configured = number(config, "vllm.max_num_seqs") or number(config, "sglang.cuda_graph_max_bs")
    warmups = [int(configured)] if configured else []
    warmups += [int(_settings()[k]) for k in ("sampler_warmup_seqs", "sampler_warmup_seqs_large")]
    for seqs in dict.fromkeys(warmups):
        size = formulas.logits_bytes(seqs, m.vocab_size, 4)
        if not _close(size, request, tolerance):
            continue
        yield Candidate(
            "logits",
            size,
            message("memory.alloc.sampler_warmup", lang, seqs=seqs, vocab=m.vocab_size),
            {
                "tokens": seqs,
                "vocab_size": m.vocab_size,
                "bytes_per_value": 4,
                "where": "sampler_warmup",
            },
            exact=True,
        )
    if not solve:
        return
    tokens = _round_count(request, m.vocab_size * 4, tolerance)
    if tokens < 1:
        return
    note = message("memory.alloc.server_tokens", lang)
    yield _server_logits(tokens, 4, m, what, lang, note, exact=False)


def _server_logits(
    tokens: int, width: int, m: ModelFacts, what: str, lang: str, note: str, *, exact: bool
) -> Candidate:
    """The logits of ``tokens`` prefill tokens in the inference server."""
    return Candidate(
        "logits",
        formulas.logits_bytes(tokens, m.vocab_size, width),
        message(
            "memory.alloc.logits",
            lang,
            tokens=tokens,
            vocab=m.vocab_size,
            shard="",
            width=width,
            what=what,
        ),
        {
            "tokens": tokens,
            "vocab_size": m.vocab_size,
            "bytes_per_value": width,
            "where": "inference_server",
        },
        exact=exact,
        note=note,
    )


def cuda_graph_candidates(
    request: int,
    m: ModelFacts,
    config: ExperimentConfig | None,
    tolerance: int,
    lang: str = "en",
) -> Iterator[Candidate]:
    """A CUDA-graph capture keeps the outputs of the captured batch in the graph's own
    memory pool: the logits of the largest batch size, bs x vocabulary x 4 bytes
    (SGLang cuda_graph_runner.py captures up to cuda_graph_max_bs; vLLM up to
    max_num_seqs), or its hidden states, bs x hidden x 2 bytes."""
    top = int(
        number(config, "sglang.cuda_graph_max_bs")
        or number(config, "vllm.max_num_seqs")
        or _settings()["sampler_warmup_seqs"]
    )
    for bs in sorted({top, *(2**k for k in range(0, 11))}, reverse=True):
        for width, per_value, what in (
            (m.vocab_size, 4, message("memory.alloc.graph_logits", lang)),
            (m.hidden_size, 2, message("memory.alloc.graph_hidden", lang)),
        ):
            size = bs * width * per_value
            if _close(size, request, tolerance):
                yield Candidate(
                    "cuda_graph_pool",
                    size,
                    message(
                        "memory.alloc.graph", lang, bs=bs, width=width, bytes=per_value, what=what
                    ),
                    {"batch_size": bs, "width": width, "bytes_per_value": per_value},
                    exact=True,
                )


def kv_candidates(
    request: int,
    m: ModelFacts,
    server: ServerSetup | None,
    tolerance: int,
    line: str,
    solve: bool,
    lang: str = "en",
) -> Iterator[Candidate]:
    tp = server.dim("t") if server is not None else 1
    width = server.kv_dtype_bytes if server is not None else 2
    per_token_all = formulas.kv_bytes_per_token(m, tp, width)
    per_layer_k = per_token_all // (m.layers * (1 if m.mla else 2))
    vllm = "vllm" in line.lower() or (server is not None and server.server == "vllm")
    unit, what = (
        (per_layer_k * (1 if m.mla else 2), message("memory.alloc.kv_blocks", lang))
        if vllm
        else (
            per_layer_k,
            message("memory.alloc.k_buffer", lang)
            if not m.mla
            else message("memory.alloc.latent_buffer", lang),
        )
    )
    if not solve:
        return
    tokens = round(request / unit)
    if tokens < 1:
        return
    heads = formulas.kv_heads_per_rank(m, tp)
    if m.mla:
        shape = message(
            "memory.alloc.latent_shape", lang, rank=m.kv_lora_rank, rope=m.qk_rope_head_dim
        )
    else:
        shape = message("memory.alloc.kv_shape", lang, heads=heads, head_dim=m.head_dim)
    yield Candidate(
        "kv_cache",
        tokens * unit,
        message(
            "memory.alloc.kv",
            lang,
            tokens=tokens,
            shape=shape,
            width=width,
            what=what,
            layers=m.layers,
        ),
        {
            "tokens": tokens,
            "kv_heads_per_gpu": heads,
            "head_dim": m.head_dim,
            "layers": m.layers,
            "bytes_per_value": width,
            "tensor_parallel": tp,
            "pool_bytes_per_token": per_token_all,
        },
        note=message("memory.alloc.kv_pool", lang, tokens=tokens, per_token=per_token_all),
    )


def parameter_tensors(m: ModelFacts) -> list[tuple[str, int, int]]:
    """(name, rows, columns) of the model's large parameter tensors, largest first."""
    h = m.hidden_size
    tensors = [("embed_tokens", m.vocab_size, h)]
    if not m.tie_embeddings:
        tensors.append(("lm_head", m.vocab_size, h))
    if not m.mla:
        tensors += [
            ("q_proj", m.heads * m.head_dim, h),
            ("k_proj", m.kv_heads * m.head_dim, h),
            ("o_proj", h, m.heads * m.head_dim),
        ]
    if m.moe:
        tensors += [
            ("experts gate_up (fused)", m.experts * 2 * m.moe_intermediate_size, h),
            ("experts down (fused)", m.experts * h, m.moe_intermediate_size),
            ("expert gate/up/down", m.moe_intermediate_size, h),
        ]
    if not m.moe or m.dense_layers:
        tensors += [("gate/up/down_proj", m.intermediate_size, h)]
    return sorted(tensors, key=lambda t: -t[1] * t[2])


def parameter_candidates(
    request: int,
    m: ModelFacts,
    train: TrainSetup,
    tolerance: int,
    family: str,
    lang: str = "en",
) -> Iterator[Candidate]:
    p = train.dtype_bytes
    widths: tuple[int, ...]
    shards: tuple[int, ...]
    expected: float | None = None  # an Adam moment's bytes by the behaviour assumed
    if family == "optimizer_state":
        states = train.per_param().states
        expected = states.get("exp_avg")
        widths = (4,) if train.kind == "megatron" else (p, 4)
        if expected is not None and expected in widths:  # the assumed width first
            widths = (int(expected), *(w for w in widths if w != expected))
        shards = (train.optimizer_shard,)
        label = message("memory.alloc.adam_moment", lang)
    elif family == "gradients":
        widths, shards, label = (4, p), (1, train.shard), message("memory.alloc.gradient", lang)
    elif family == "weight_update_buffer":
        widths, shards = (p,), (1,)
        label = message("memory.alloc.update_parameter", lang)
        if train.weight_chunk_bytes and _close(train.weight_chunk_bytes, request, tolerance):
            yield Candidate(
                "weight_update_buffer",
                train.weight_chunk_bytes,
                f"weight_chunked_mem_mb = {train.weight_chunk_bytes >> 20} MiB",
                {"weight_chunked_mem_mb": train.weight_chunk_bytes >> 20},
                exact=True,
            )
    else:
        widths, shards, label = (p,), (1, train.shard), message("memory.alloc.weight", lang)
    for name, rows, cols in parameter_tensors(m):
        for shard in shards:
            for width in widths:
                local_rows = -(-rows // shard)
                size = local_rows * cols * width
                if _close(size, request, tolerance):
                    split = ""
                    if shard > 1:
                        split = message("memory.alloc.rank_shard", lang, shard=shard)
                    yield Candidate(
                        family,
                        size,
                        message(
                            "memory.alloc.parameter",
                            lang,
                            label=label,
                            name=name,
                            rows=rows,
                            split=split,
                            cols=cols,
                            width=width,
                        ),
                        {
                            "parameter": name,
                            "rows": rows,
                            "columns": cols,
                            "shard": shard,
                            "bytes_per_value": width,
                        },
                        exact=True,
                        note=_moment_note(train, expected, width, lang),
                    )
    if family in ("weights", "gradients"):
        for width in widths:
            size = formulas.gathered_layer_bytes(m, width)
            if _close(size, request, tolerance):
                yield Candidate(
                    family,
                    size,
                    message(
                        "memory.alloc.gathered_layer", lang, params=m.layer_params, width=width
                    ),
                    {"parameters": m.layer_params, "bytes_per_value": width},
                    exact=True,
                )


def _moment_note(train: TrainSetup, expected: float | None, width: int, lang: str) -> str:
    """An Adam moment of another width than the behaviour assumed says which AReaL ran:
    bf16 moments under a bf16 actor.dtype and adam are the 2026-05 code's."""
    if expected is None or width == expected:
        return ""
    ident = train.behaviour.id if train.behaviour is not None else ""
    return message(
        "memory.alloc.other_behaviour", lang, width=width, expected=expected, behaviour=ident
    )


def activation_candidates(
    request: int, m: ModelFacts, train: TrainSetup, tolerance: int, lang: str = "en"
) -> Iterator[Candidate]:
    if not train.tokens_per_mb:
        return
    tokens = -(-train.tokens_per_mb // max(train.dim("c"), 1))
    tp = train.dim("t")
    inter = m.moe_intermediate_size if m.moe else m.intermediate_size
    widths = [
        (message("memory.alloc.mlp_intermediate", lang), inter // tp),
        (message("memory.alloc.gate_up", lang), 2 * inter // tp),
        (message("memory.alloc.hidden_states", lang), m.hidden_size),
        (message("memory.alloc.query", lang), m.heads * m.head_dim // tp),
        (message("memory.alloc.qkv", lang), (m.heads + 2 * m.kv_heads) * m.head_dim // tp),
    ]
    for width_bytes in (train.dtype_bytes, 4):
        for what, width in widths:
            size = tokens * width * width_bytes
            if _close(size, request, tolerance):
                yield Candidate(
                    "activations",
                    size,
                    message(
                        "memory.alloc.activation",
                        lang,
                        tokens=tokens,
                        width=width,
                        what=what,
                        bytes=width_bytes,
                    ),
                    {"tokens": tokens, "width": width, "bytes_per_value": width_bytes},
                    exact=True,
                )


# --- the explainer -------------------------------------------------------------------


def explain(
    report: LogReport,
    config: ExperimentConfig | None,
    model: ModelFacts | None,
    lang: str = "en",
    memory_behaviour: str | None = None,
) -> Allocation | None:
    """The contract's ``allocation`` object, or None when nothing fits the request; its
    formula and note are sentences in ``lang``."""
    request = report.metrics.get("tried_to_allocate_bytes")
    if not isinstance(request, int | float) or request <= 0 or model is None:
        return None
    request = int(request)
    failure = report.evidence[0].text if report.evidence else ""
    tolerance = printed_tolerance(failure, request)
    hint = frame_hint(report)
    engine = "actor"
    train = train_setup(config, engine, memory_behaviour)
    server = server_setup(config)
    if hint.family is not None:
        families, solve = [hint.family], True
    elif hint.also:
        families, solve = list(hint.also), False
    elif hint.has_frames:
        return None  # a frame the rules do not know: naming a tensor would be a guess
    else:
        families, solve = ["logits", "activations"], False
    for family in families:
        found = _candidates(
            family,
            request,
            model,
            train,
            server,
            tolerance,
            hint,
            solve,
            lang,
            config,
            report.phase,
        )
        for candidate in found:
            out = _as_dict(candidate, request, tolerance, hint, model)
            # held to the estimate of a forward/backward (the micro-batch's peak)
            forward = candidate.tensor in ("logits", "activations")
            held = (
                held_against_log(report, config, model, lang, memory_behaviour) if forward else None
            )
            if held is not None:
                out["arithmetic_check"] = held
                if not held["explains"]:  # said where the allocation is read
                    out["note"] = "; ".join(t for t in (out.get("note"), held["note"]) if t)
            return out
    return None


def _candidates(
    family: str,
    request: int,
    m: ModelFacts,
    train: TrainSetup,
    server: ServerSetup | None,
    tolerance: int,
    hint: FrameHint,
    solve: bool,
    lang: str,
    config: ExperimentConfig | None = None,
    phase: str = "",
) -> Iterator[Candidate]:
    if family == "server_logits" or (family == "logits" and phase == "generation"):
        return server_logits_candidates(request, m, config, server, tolerance, solve, lang)
    if family == "cuda_graph_pool":
        return cuda_graph_candidates(request, m, config, tolerance, lang)
    if family == "logits":
        return logits_candidates(request, m, train, tolerance, hint.line, solve, lang)
    if family == "kv_cache":
        return kv_candidates(request, m, server, tolerance, hint.line, solve, lang)
    if family == "activations":
        return activation_candidates(request, m, train, tolerance, lang)
    if family in ("optimizer_state", "gradients", "weights", "weight_update_buffer"):
        return parameter_candidates(request, m, train, tolerance, family, lang)
    return iter(())


def held_against_log(
    report: LogReport,
    config: ExperimentConfig | None,
    model: ModelFacts,
    lang: str = "en",
    memory_behaviour: str | None = None,
) -> dict[str, Any] | None:
    """What PyTorch had allocated when a training rank failed, against the estimate of
    that rank at its configured micro-batch (resident memory, one micro-batch's
    activations and logits). More than the estimate plus its stated uncertainty
    (memory.yaml arithmetic_uncertainty): the arithmetic does not explain the crash."""
    from assistant.memory.fit import arithmetic_versus_log

    if report.phase != "training" or config is None:
        return None
    found = arithmetic_versus_log(config, model, dict(report.metrics), memory_behaviour)
    if found is None:
        return None
    figures = {
        "allocated": found["allocated_gib"],
        "predicted": found["predicted_gib"],
        "share": round(found["uncertainty"] * 100),
        "tokens": found["tokens"],
    }
    if found["explains"]:
        found["note"] = message("memory.alloc.explained", lang, **figures)
    else:
        found["note"] = message("memory.alloc.not_explained", lang, **figures)
    return found


def _as_dict(
    c: Candidate, request: int, tolerance: int, hint: FrameHint, m: ModelFacts
) -> Allocation:
    out: Allocation = {
        "tensor": c.tensor,
        "bytes": c.bytes,
        "formula": c.formula,
        "inputs": c.inputs,
        "requested_bytes": request,
        "matches_request": _close(c.bytes, request, tolerance),
        "matched_by": "frame and arithmetic" if hint.family else "arithmetic",
        "model": m.name,
        "model_source": "table" if m.from_table else "config.json",
    }
    if hint.line:
        out["frame"] = hint.line
    if c.note:
        out["note"] = c.note
    return out
