"""Value functions that bring the memory arithmetic (assistant/memory) into why-texts.

They only add text variables; the patch values stay with the fixes' own functions.
A missing model or config gives no variables, and the notes that need them stay out.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from assistant.tree.context import Context
from assistant.tree.values import StepResult, micro_batch_floor_value, value_fn


def _model(ctx: Context) -> Any:
    from assistant.memory.facts import model_for

    try:
        return model_for(ctx.report, ctx.config if ctx.has_config else None)
    except Exception:  # noqa: BLE001 - an unreadable model config must not sink a diagnosis
        return None


def _gpu_bytes(ctx: Context) -> int:
    from assistant.memory.estimate import settings

    total = ctx.report.metrics.get("total_capacity_bytes")
    if isinstance(total, int | float) and total > 0:
        return int(total)
    return int(settings()["gpu_memory_gib"] * (1 << 30))


@value_fn(
    "memory_micro_batch",
    vars=(
        "mb_tokens",
        "logits_now_gib",
        "mb_floor",
        "logits_floor_gib",
        "usable_gib",
        "fixed_gib",
        "per_token_mib",
        "fit_tokens",
        "floor_does_not_fit",
        "floor_needs_gib",
        "floor_blocked",
        "fit_ok",
    ),
)
def memory_micro_batch(ctx: Context, step: Mapping[str, Any]) -> StepResult:
    model = _model(ctx)
    if model is None or not ctx.has_config:
        return StepResult()
    from assistant.memory.fit import micro_batch_fit

    floor, _ = micro_batch_floor_value(ctx)
    found = micro_batch_fit(ctx.config, model, dict(ctx.report.metrics), floor)
    if found.get("floor_does_not_fit"):
        found["floor_blocked"] = True
    elif "fit_tokens" in found:
        found["fit_ok"] = True
    return StepResult(vars=found)


@value_fn("memory_rollout_tp", vars=("tp_needed", "weights_per_gpu_gib", "share_gib"))
def memory_rollout_tp(ctx: Context, step: Mapping[str, Any]) -> StepResult:
    model = _model(ctx)
    if model is None or not ctx.has_config:
        return StepResult()
    from assistant.memory.fit import rollout_tp_needed

    return StepResult(vars=rollout_tp_needed(ctx.config, model, _gpu_bytes(ctx)))


@value_fn(
    "memory_kv_concurrency",
    vars=("kv_tokens_est", "kv_sequences", "sequence_tokens", "concurrency_fits"),
)
def memory_kv_concurrency(ctx: Context, step: Mapping[str, Any]) -> StepResult:
    model = _model(ctx)
    if model is None or not ctx.has_config:
        return StepResult()
    from assistant.memory.fit import kv_concurrency

    return StepResult(vars=kv_concurrency(ctx.config, model, _gpu_bytes(ctx)))
