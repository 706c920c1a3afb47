"""Values that fit, for the decision tree's numbers and why-texts.

- the micro-batch size whose activations and logits fit the memory the log says the
  GPU has, beside the weights, gradients and optimizer states of this config;
- the tensor-parallel size a rollout server needs to hold its weights;
- the concurrency a server's KV cache can hold.
Each returns plain numbers (GiB rounded to two decimals) or None when an input is unknown.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from assistant.memory import formulas
from assistant.memory.estimate import Notes, settings, training_engine
from assistant.memory.facts import ModelFacts
from assistant.memory.setup import server_setup, train_setup
from assistant.memory.sizes import gib

if TYPE_CHECKING:
    from assistant.config.loader import ExperimentConfig

GIB = 1 << 30


def usable_gpu_bytes(metrics: dict[str, Any]) -> int | None:
    """What PyTorch could use on the failing GPU: its capacity less the memory the log
    shows outside PyTorch (this process's non-PyTorch memory and other processes)."""
    total = metrics.get("total_capacity_bytes")
    if not isinstance(total, int | float) or total <= 0:
        return None
    in_use = metrics.get("process_in_use_bytes")
    allocated = metrics.get("allocated_by_pytorch_bytes")
    reserved = metrics.get("reserved_unallocated_bytes") or 0
    outside = 0
    if isinstance(in_use, int | float) and isinstance(allocated, int | float):
        outside = max(int(in_use - allocated - reserved), 0)
    free = metrics.get("free_bytes")
    if isinstance(free, int | float) and isinstance(in_use, int | float):
        outside += max(int(total - free - in_use), 0)  # other processes on the GPU
    return int(total) - outside


PYTORCH_TERMS = (
    "weights_bytes",
    "gradients_bytes",
    "optimizer_states_bytes",
    "activations_bytes",
    "logits_bytes",
    "gathered_layers_bytes",
)


def arithmetic_versus_log(
    config: ExperimentConfig | None,
    model: ModelFacts,
    metrics: dict[str, Any],
    memory_answer: Any = None,
) -> dict[str, Any] | None:
    """The log's "allocated by PyTorch" plus the failed request, against what the
    estimate puts in PyTorch's allocator on one training rank at the configured
    micro-batch. ``explains`` is False when the log shows more than the estimate and
    its uncertainty allow: a leak, another tenant of the process, or a sample longer
    than the config says. None when the log or the config lacks a figure."""
    allocated = metrics.get("allocated_by_pytorch_bytes")
    request = metrics.get("tried_to_allocate_bytes") or 0
    setup = train_setup(config, "actor")
    if not isinstance(allocated, int | float) or allocated <= 0 or not setup.tokens_per_mb:
        return None
    gpu = usable_gpu_bytes(metrics) or 0
    engine = training_engine(config, model, "actor", gpu, Notes(), memory_answer)
    predicted = sum(int(engine["per_gpu"].get(k, 0)) for k in PYTORCH_TERMS)
    uncertainty = float(settings()["arithmetic_uncertainty"])
    observed = int(allocated) + int(request if isinstance(request, int | float) else 0)
    return {
        "allocated_bytes": int(allocated),
        "requested_bytes": int(request) if isinstance(request, int | float) else 0,
        "predicted_bytes": predicted,
        "allocated_gib": gib(observed),
        "predicted_gib": gib(predicted),
        "uncertainty": uncertainty,
        "tokens": setup.tokens_per_mb,
        "explains": observed <= predicted * (1 + uncertainty),
    }


def micro_batch_fit(
    config: ExperimentConfig | None,
    model: ModelFacts,
    metrics: dict[str, Any],
    floor: int | None,
    memory_answer: Any = None,
) -> dict[str, Any]:
    setup = train_setup(config, "actor")
    current = setup.tokens_per_mb
    usable = usable_gpu_bytes(metrics)
    out: dict[str, Any] = {}
    tp = setup.dim("t") if setup.kind in ("megatron", "archon") else 1
    if current:
        out["mb_tokens"] = current
        out["logits_now_gib"] = gib(formulas.logits_bytes(current, model.vocab_size, 4, tp))
    if floor:
        out["mb_floor"] = floor
        out["logits_floor_gib"] = gib(formulas.logits_bytes(floor, model.vocab_size, 4, tp))
    if usable is None or not current:
        return out
    engine = training_engine(config, model, "actor", usable, Notes(), memory_answer)
    per_gpu = engine["per_gpu"]
    fixed = sum(per_gpu[k] for k in per_gpu if k not in ("activations_bytes", "logits_bytes"))
    per_token = (per_gpu["activations_bytes"] + per_gpu["logits_bytes"]) / current
    step = int(settings()["round_tokens_to"])
    room = usable - fixed
    fit = int(room / per_token) // step * step if room > 0 else 0
    out |= {
        "usable_gib": gib(usable),
        "fixed_gib": gib(fixed),
        "per_token_mib": round(per_token / (1 << 20), 2),
        "fit_tokens": fit,
    }
    if floor and fit < floor:
        out["floor_does_not_fit"] = True
        out["floor_needs_gib"] = gib(fixed + per_token * floor)
    held = arithmetic_versus_log(config, model, metrics, memory_answer)
    if held is not None and not held["explains"]:
        # the log shows more than the arithmetic allows: a micro-batch "that fits" by it
        # would be advice the crash contradicts
        out.pop("fit_tokens", None)
        out.pop("floor_does_not_fit", None)
        out |= {
            "arith_not_explained": True,
            "log_allocated_gib": held["allocated_gib"],
            "predicted_gib": held["predicted_gib"],
            "uncertainty_pct": round(held["uncertainty"] * 100),
        }
    return out


def rollout_tp_needed(
    config: ExperimentConfig | None, model: ModelFacts, gpu_bytes: int
) -> dict[str, Any]:
    server = server_setup(config)
    if server is None:
        return {}
    share = int((gpu_bytes - settings()["cuda_context_gib"] * GIB) * server.fraction)
    for tp in (1, 2, 4, 8, 16, 32):
        weights = formulas.server_weight_bytes(model, server.dtype_bytes, tp)
        if weights < share * 0.8:  # leave a fifth of the share for the KV cache
            return {"tp_needed": tp, "weights_per_gpu_gib": gib(weights), "share_gib": gib(share)}
    return {"share_gib": gib(share)}


def kv_concurrency(
    config: ExperimentConfig | None, model: ModelFacts, gpu_bytes: int
) -> dict[str, Any]:
    from assistant.memory.estimate import rollout_engine

    server = server_setup(config)
    if server is None:
        return {}
    engine = rollout_engine(config, model, server, gpu_bytes, Notes())
    out = {
        "kv_tokens_est": engine["kv_cache_tokens"],
        "kv_sequences": engine["sequences_in_kv_cache"],
        "sequence_tokens": engine["sequence_tokens"],
    }
    if server.replicas and engine["sequences_in_kv_cache"]:
        rollouts = engine["sequences_in_kv_cache"] * server.replicas // server.samples_per_rollout
        out["concurrency_fits"] = max(rollouts, 1)
    return out
