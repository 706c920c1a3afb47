"""Named value functions that compute a fix's patch from the user's own numbers.

``knowledge/tree.yaml`` names them (``fn: cut_quarter``). Each returns a
``StepResult``; when the fix cannot apply to this config it raises
``NotApplicable`` with the id of a text in tree.yaml's ``reasons``. A value that
cannot be computed (no config, key unknown) gives an empty patch: the fix is still
recommended, without numbers.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from assistant.config.backend import Backend, BackendError
from assistant.config.engines import engine_layout, rewrite_backend
from assistant.config.numbers import usable_number
from assistant.tree.context import Context
from assistant.tree.derived import (
    failing_engine,
    micro_batch_floor_value,
    model_params_b,
    written_number,
)
from assistant.tree.steps import NotApplicable, Step, StepResult, value_fn


@value_fn(
    "micro_batch_floor",
    vars=("floor", "floor_terms", "current"),
    reasons=("mb-at-floor", "mb-below-floor"),
)
def micro_batch_floor(ctx: Context, step: Step, so_far: Mapping[str, Any]) -> StepResult:
    key = step.key
    floor, terms = micro_batch_floor_value(ctx)
    result = StepResult(vars={"floor": floor, "floor_terms": terms})
    if floor is None:
        return result
    current = written_number(ctx, key)
    if current is not None and current == floor:
        raise NotApplicable("mb-at-floor", floor=floor, floor_terms=terms, current=current)
    if current is not None and current < floor:
        raise NotApplicable("mb-below-floor", floor=floor, floor_terms=terms, current=current)
    result.patch[key] = floor
    return result


# --- concurrency and memory fractions ---------------------------------------------------


@value_fn("cut_quarter", vars=("key", "current", "new"), reasons=("concurrency-at-minimum",))
def cut_quarter(ctx: Context, step: Step, so_far: Mapping[str, Any]) -> StepResult:
    key = step.key
    current = written_number(ctx, key)
    if current is None:
        return StepResult(vars={"key": key})
    if current <= 1:
        raise NotApplicable("concurrency-at-minimum", key=key, current=current)
    new = max(1, int(current * (1 - ctx.settings.concurrency_cut)))
    return StepResult({key: new}, vars={"key": key, "current": current, "new": new})


def _fraction(ctx: Context, key: str) -> float | None:
    return usable_number(ctx.config.get(key))  # AReaL's default counts: the user runs with it


@value_fn("fraction_lower", vars=("key", "current", "new"), reasons=("fraction-at-floor",))
def fraction_lower(ctx: Context, step: Step, so_far: Mapping[str, Any]) -> StepResult:
    key = step.key
    current = _fraction(ctx, key)
    if current is None:
        return StepResult(vars={"key": key})
    settings = ctx.settings
    delta = settings.fraction_step if current > 0.5 else settings.fraction_small_step
    new = round(current - delta, 2)
    if new < settings.fraction_floor:
        raise NotApplicable("fraction-at-floor", key=key, current=current)
    return StepResult({key: new}, vars={"key": key, "current": current, "new": new})


@value_fn("fraction_raise", vars=("key", "current", "new"), reasons=("fraction-at-ceiling",))
def fraction_raise(ctx: Context, step: Step, so_far: Mapping[str, Any]) -> StepResult:
    key = step.key
    current = _fraction(ctx, key)
    if current is None:
        return StepResult(vars={"key": key})
    ceiling = ctx.settings.fraction_ceiling
    if current >= ceiling:
        raise NotApplicable("fraction-at-ceiling", key=key, current=current)
    new = round(min(current + ctx.settings.fraction_small_step, ceiling), 2)
    return StepResult({key: new}, vars={"key": key, "current": current, "new": new})


@value_fn(
    "context_that_fits",
    vars=("kv_tokens", "max_seq_len", "new", "floor"),
    reasons=("context-below-floor",),
)
def context_that_fits(ctx: Context, step: Step, so_far: Mapping[str, Any]) -> StepResult:
    key = step.key
    kv_tokens = usable_number(ctx.report.metrics.get("kv_cache_tokens"))
    max_seq = usable_number(ctx.report.metrics.get("max_seq_len"))
    text_vars = {"kv_tokens": kv_tokens, "max_seq_len": max_seq}
    if kv_tokens is None or max_seq is None or kv_tokens >= max_seq:
        return StepResult(vars=text_vars)
    step_size = ctx.settings.context_round_to
    new = int(kv_tokens // step_size * step_size) or int(kv_tokens)
    floor, _ = micro_batch_floor_value(ctx)
    if floor is not None and new < floor:
        raise NotApplicable("context-below-floor", kv_tokens=int(kv_tokens), floor=floor)
    return StepResult({key: new}, vars=text_vars | {"new": new})


# --- parallel layouts -------------------------------------------------------------------


def _smallest_factor(n: int) -> int | None:
    return next((f for f in range(2, n + 1) if n % f == 0), None)


def _factors(n: int) -> list[int]:
    return [f for f in range(2, n + 1) if n % f == 0]


def _grow(ctx: Context, engine: str, backend: Backend, dim: str, factor: int) -> dict[str, str]:
    d = backend.size("d")
    if d % factor == 0:
        new = backend.with_sizes(d=d // factor, **{dim: backend.size(dim) * factor})
    else:  # more GPUs: only when the user said they can add some
        new = backend.with_sizes(**{dim: backend.size(dim) * factor})
    return rewrite_backend(ctx.config, engine, new)


@value_fn(
    "rollout_more_tensor_parallel", vars=("engine", "backend", "new"), reasons=("single-replica",)
)
def rollout_more_tensor_parallel(ctx: Context, step: Step, so_far: Mapping[str, Any]) -> StepResult:
    layout = engine_layout(ctx.config, "rollout") if ctx.has_config else None
    if layout is None:
        return StepResult()
    backend = layout.backend
    text_vars = {"engine": "rollout", "backend": backend.text()}
    factor = _smallest_factor(backend.size("d"))
    if factor is None:
        if not ctx.answer("can_add_gpus"):
            raise NotApplicable("single-replica", **text_vars)
        factor = 2
    patch = _grow(ctx, "rollout", backend, "t", factor)
    return StepResult(patch, vars=text_vars | {"new": next(iter(patch.values()))})


@value_fn(
    "actor_more_parallel",
    vars=("engine", "backend", "gpus", "new", "heads"),
    reasons=("hybrid-layout", "single-replica", "heads-unknown", "cp-not-dividing"),
)
def actor_more_parallel(ctx: Context, step: Step, so_far: Mapping[str, Any]) -> StepResult:
    layout = engine_layout(ctx.config, "actor") if ctx.has_config else None
    if layout is None:
        return StepResult()
    backend = layout.backend
    text_vars = {"engine": "actor", "backend": backend.text(), "gpus": backend.gpus}
    if backend.hybrid:
        raise NotApplicable("hybrid-layout", **text_vars)
    factors = _factors(backend.size("d"))
    if not factors:
        if not ctx.answer("can_add_gpus"):
            raise NotApplicable("single-replica", **text_vars)
        factors = [2]
    if backend.name in ("megatron", "archon"):
        patch = _grow(ctx, "actor", backend, "p", factors[0])
        return StepResult(patch, vars=text_vars | {"new": next(iter(patch.values()))})
    heads = usable_number(ctx.answer("attention_heads"))
    if heads is None:
        raise NotApplicable("heads-unknown", **text_vars)
    cp = backend.size("c")
    usable = [f for f in factors if heads % (cp * f) == 0]
    if not usable:
        raise NotApplicable("cp-not-dividing", heads=int(heads), **text_vars)
    try:
        patch = _grow(ctx, "actor", backend, "c", usable[0])
    except BackendError:
        return StepResult(vars=text_vars)
    return StepResult(patch, vars=text_vars | {"new": next(iter(patch.values())), "heads": heads})


# --- environment and explanations -------------------------------------------------------


@value_fn("expandable_segments_env")
def expandable_segments_env(ctx: Context, step: Step, so_far: Mapping[str, Any]) -> StepResult:
    """Add expandable_segments:True to whatever PYTORCH_CUDA_ALLOC_CONF already holds
    (in the failing engine's env_vars, else as the log shows it)."""
    name = step.env
    written = [
        str(env.get(name)) for _, env in env_var_blocks(ctx) if env.get(name) not in (None, "")
    ]
    current = (written[0] if written else str(ctx.report.facts.get("alloc_conf") or "")).strip()
    current = current.strip(",")
    value = f"{current},expandable_segments:True" if current else "expandable_segments:True"
    return StepResult(env={name: value})


def env_var_blocks(ctx: Context) -> list[tuple[str, dict[str, Any]]]:
    """(dotted key, mapping) of each env_vars block of the failing engine's scheduling_spec.

    A scheduling_spec written as ``${other.scheduling_spec}`` is patched where it
    points to, so the copy the engine really reads changes.
    """
    if not ctx.has_config:
        return []
    engine = failing_engine(ctx)
    key = f"{engine}.scheduling_spec"
    for _ in range(4):  # follow ${...} references, a few levels at most
        raw = ctx.config.raw(key)
        if isinstance(raw, str) and raw.startswith("${") and raw.endswith("}"):
            key = raw[2:-1].strip()
            continue
        break
    specs = ctx.config.get(key)
    out: list[tuple[str, dict[str, Any]]] = []
    for index, spec in enumerate(specs if isinstance(specs, list) else []):
        env = spec.get("env_vars") if isinstance(spec, dict) else None
        if isinstance(env, dict) and isinstance(ctx.config.raw(f"{key}.{index}.env_vars"), dict):
            out.append((f"{key}.{index}.env_vars", env))
    return out


def env_patch(ctx: Context, env: Mapping[str, str]) -> dict[str, str]:
    """Patch keys that put ``env`` into every env_vars block of the failing engine."""
    return {
        f"{where}.{name}": value for where, _ in env_var_blocks(ctx) for name, value in env.items()
    }


@value_fn(
    "optimizer_memory",
    vars=("params_b", "adam_gb", "bf16_gb", "train_gpus", "adam_per_gpu_gb", "bf16_per_gpu_gb"),
)
def optimizer_memory(ctx: Context, step: Step, so_far: Mapping[str, Any]) -> StepResult:
    """Stored weights + master copy + optimizer states per parameter, with AdamW as
    configured and with bf16 storage + adam_bf16, from knowledge/memory.yaml ``storage``
    (the guide: 12 and 8 bytes under FSDP)."""
    from assistant.memory.setup import train_setup

    params = usable_number(model_params_b(ctx))
    if params is None and step.ask:
        params = usable_number(ctx.answer("model_params_b"))
    if params is None:
        return StepResult()
    layout = engine_layout(ctx.config, "actor") if ctx.has_config else None
    gpus = layout.backend.gpus if layout is not None else None
    setup = train_setup(ctx.config if ctx.has_config else None, "actor")
    fp32 = replace(setup, optimizer="adam", optimizer_dtype="float32").per_param()
    light = replace(
        setup, optimizer="adam_bf16", dtype="bfloat16", optimizer_dtype="bfloat16"
    ).per_param()
    # the master copy: FSDP's stored weights, Megatron's fp32 main parameters
    adam = ((fp32.master or fp32.weights) + fp32.optimizer_states) * params
    bf16 = ((light.master or light.weights) + light.optimizer_states) * params
    text_vars: dict[str, Any] = {
        "params_b": params,
        "adam_gb": _round(adam),
        "bf16_gb": _round(bf16),
    }
    if gpus:
        text_vars |= {
            "train_gpus": gpus,
            "adam_per_gpu_gb": _round(adam / gpus),
            "bf16_per_gpu_gb": _round(bf16 / gpus),
        }
    return StepResult(vars=text_vars)


def _round(value: float) -> float | int:
    rounded = round(value, 1)
    return int(rounded) if float(rounded).is_integer() else rounded
