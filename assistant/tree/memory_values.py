"""Value functions that bring the memory arithmetic (assistant/memory) into why-texts.

They only add text variables; the patch values stay with the fixes' own functions.
A missing model or config gives no variables, and the notes that need them stay out.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from assistant.tree.context import Context
from assistant.tree.derived import micro_batch_floor_value
from assistant.tree.steps import Step, StepResult, value_fn

GIB = 1 << 30


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
        "arith_not_explained",
        "log_allocated_gib",
        "predicted_gib",
        "uncertainty_pct",
    ),
)
def memory_micro_batch(ctx: Context, step: Step, so_far: Mapping[str, Any]) -> StepResult:
    model = _model(ctx)
    if model is None or not ctx.has_config:
        return StepResult()
    from assistant.memory.fit import micro_batch_fit

    floor, _ = micro_batch_floor_value(ctx)
    answer = ctx.book.given_answer("areal_memory")
    found = micro_batch_fit(ctx.config, model, dict(ctx.report.metrics), floor, answer)
    if found.get("floor_does_not_fit"):
        found["floor_blocked"] = True
    elif "fit_tokens" in found:
        found["fit_ok"] = True
    return StepResult(vars=found)


@value_fn("memory_rollout_tp", vars=("tp_needed", "weights_per_gpu_gib", "share_gib"))
def memory_rollout_tp(ctx: Context, step: Step, so_far: Mapping[str, Any]) -> StepResult:
    model = _model(ctx)
    if model is None or not ctx.has_config:
        return StepResult()
    from assistant.memory.fit import rollout_tp_needed

    return StepResult(vars=rollout_tp_needed(ctx.config, model, _gpu_bytes(ctx)))


@value_fn(
    "memory_kv_concurrency",
    vars=("kv_tokens_est", "kv_sequences", "sequence_tokens", "concurrency_fits"),
)
def memory_kv_concurrency(ctx: Context, step: Step, so_far: Mapping[str, Any]) -> StepResult:
    model = _model(ctx)
    if model is None or not ctx.has_config:
        return StepResult()
    from assistant.memory.fit import kv_concurrency

    return StepResult(vars=kv_concurrency(ctx.config, model, _gpu_bytes(ctx)))


# --- advice checked against the arithmetic ----------------------------------------------

FIT_VARS = (
    "fit_gpu_gib",
    "fit_total_gib",
    "fit_term",
    "fit_ok_after",
    "fit_added",
    "fit_after_gib",
    "no_fit_within",
    "fit_tried",
    "fit_best_gib",
    "gpus_now",
    "gpus_needed",
    "backend_needed",
    "arith_not_explained",
    "log_allocated_gib",
    "predicted_gib",
    "uncertainty_pct",
    "mb_tokens",
)


def _fit_gpu(ctx: Context) -> int:
    from assistant.memory.fit import usable_gpu_bytes

    return usable_gpu_bytes(dict(ctx.report.metrics)) or _gpu_bytes(ctx)


def _actor_estimate(ctx: Context, model: Any, patch: Mapping[str, Any], gpu: int) -> Any:
    from assistant.memory.estimate import Notes, training_engine

    answer = ctx.book.given_answer("areal_memory")
    patched = ctx.config.with_patch(dict(patch)) if patch else ctx.config
    return training_engine(patched, model, "actor", gpu, Notes(ctx.lang), answer)


def _gib(value: float) -> float:
    return round(value / GIB, 2)


@value_fn("memory_fit_check", vars=FIT_VARS)
def memory_fit_check(ctx: Context, step: Step, so_far: Mapping[str, Any]) -> StepResult:
    """The config as this fix patches it, held to the estimate on the failing GPU.

    Still too big: the next fixes of ``settings.fit_escalation`` join the patch, one by
    one, until the estimate fits; when none of them is enough, the patch stays as it was
    and the texts say that no change within these GPUs fits, and how many would.
    """
    model = _model(ctx)
    patch = dict(so_far)
    if model is None or not ctx.has_config or not patch:
        return StepResult()
    from assistant.config.engines import engine_layout, rewrite_backend
    from assistant.memory.fit import arithmetic_versus_log

    gpu = _fit_gpu(ctx)
    alone = _actor_estimate(ctx, model, patch, gpu)
    found: dict[str, Any] = {
        "fit_gpu_gib": _gib(gpu),
        "fit_total_gib": _gib(alone["total_bytes"]),
        "fit_term": str(alone["largest_term"]).removesuffix("_bytes"),
    }
    answer = ctx.book.given_answer("areal_memory")
    held = arithmetic_versus_log(ctx.config, model, dict(ctx.report.metrics), answer)
    if held is not None and not held["explains"] and ctx.report.phase == "training":
        found |= {
            "arith_not_explained": True,
            "log_allocated_gib": held["allocated_gib"],
            "predicted_gib": held["predicted_gib"],
            "uncertainty_pct": round(held["uncertainty"] * 100),
            "mb_tokens": held["tokens"],
        }
    if alone["total_bytes"] <= gpu:
        return StepResult(vars=found | {"fit_ok_after": True})
    added: dict[str, Any] = {}
    names: list[str] = []
    best = alone
    for fix_id in ctx.settings.fit_escalation:
        extra = {k: v for k, v in ctx.other_fix.patch(ctx, fix_id).items() if k not in patch}
        if not extra or all(added.get(k) == v for k, v in extra.items()):
            continue
        added |= extra
        names.append(ctx.other_fix.section(fix_id))
        best = _actor_estimate(ctx, model, patch | added, gpu)
        if best["total_bytes"] <= gpu:
            return StepResult(
                patch=added,
                vars=found
                | {
                    "fit_added": " + ".join(f"[{n}]" for n in names),
                    "fit_after_gib": _gib(best["total_bytes"]),
                },
            )
    found |= {
        "no_fit_within": True,
        "fit_tried": " + ".join(f"[{n}]" for n in names) or "-",
        "fit_best_gib": _gib(best["total_bytes"]),
    }
    layout = engine_layout(ctx.config, "actor")
    if layout is None or layout.backend.hybrid:
        return StepResult(vars=found)
    backend = layout.backend
    found["gpus_now"] = backend.gpus
    for factor in (2, 4, 8, 16):
        wider = backend.with_sizes(d=backend.size("d") * factor)
        trial = patch | added | rewrite_backend(ctx.config, "actor", wider)
        if _actor_estimate(ctx, model, trial, gpu)["total_bytes"] <= gpu:
            found |= {"gpus_needed": wider.gpus, "backend_needed": wider.text()}
            break
    return StepResult(vars=found)
