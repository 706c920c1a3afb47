"""Arithmetic on the figures a log states, and facts derived from names.

Every inference uses only numbers the log printed; none is guessed. The text
is in English and Chinese so renderers can pick the user's language.
"""

from __future__ import annotations

import re
from typing import Any

from assistant.logs.units import format_bytes
from assistant.models import Inference, Metrics

# figures kept for arithmetic but not shown as metrics (not a single number)
INTERNAL_FIGURES = ("process_list_bytes",)
SELF_MATCH_TOLERANCE = 0.15  # a "Process N" entry this close to our own usage is us


def rules() -> dict[str, Any]:
    """The cut-offs of knowledge/inferences.yaml (shared with the decision tree)."""
    from assistant.knowledge import load_yaml

    return load_yaml("inferences.yaml") or {}


def inference_id(name: str) -> str:
    """An inference id of knowledge/inferences.yaml's ``ids``; KnowledgeError if not listed."""
    if name not in rules().get("ids", ()):
        from assistant.errors import KnowledgeError

        raise KnowledgeError(f"knowledge/inferences.yaml: entry ids: '{name}' is not listed")
    return name


_PARAMS = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)\s*([BbMm])(?![a-zA-Z])")


def derive_metrics(figures: dict[str, Any]) -> dict[str, int | float]:
    """Metrics for the report: figures as numbers plus the arithmetic the log implies."""
    metrics = {k: v for k, v in figures.items() if k not in INTERNAL_FIGURES}
    allocated = metrics.get("allocated_by_pytorch_bytes")
    reserved = metrics.get("reserved_by_pytorch_bytes")
    if reserved is not None and allocated is not None:
        metrics.setdefault("reserved_unallocated_bytes", max(0, int(reserved) - int(allocated)))
    others = _other_processes(figures)
    if others is not None and others[1] > 0:
        metrics["other_processes_bytes"] = others[0]
        metrics["other_processes_count"] = others[1]
    return metrics


def _other_processes(figures: dict[str, Any]) -> tuple[int, int] | None:
    """Sum of the ``Process N has X memory in use`` entries that are not this process.

    Inside containers the failing process itself is listed as ``Process N`` (its
    PID differs from the one NVML sees), so without an ``Including non-PyTorch
    memory, this process has`` clause the entry closest to what PyTorch holds
    is taken to be the process itself.
    """
    entries = list(figures.get("process_list_bytes") or [])
    if not entries:
        return None
    if "process_in_use_bytes" not in figures:
        own = int(figures.get("allocated_by_pytorch_bytes", 0)) + int(
            figures.get("reserved_unallocated_bytes", 0)
        )
        if own > 0:
            closest = min(entries, key=lambda size: abs(size - own))
            if closest >= own and closest - own <= max(own * SELF_MATCH_TOLERANCE, 2 << 30):
                entries.remove(closest)
    return int(sum(entries)), len(entries)


def inferences(metrics: Metrics) -> tuple[Inference, ...]:
    """What the figures allow us to say, in both languages."""
    found: list[Inference] = []
    tried = metrics.get("tried_to_allocate_bytes")
    total = metrics.get("total_capacity_bytes")
    free = metrics.get("free_bytes")
    allocated = metrics.get("allocated_by_pytorch_bytes")
    unallocated = metrics.get("reserved_unallocated_bytes")
    if allocated is not None and unallocated is not None and allocated + unallocated > 0:
        share = unallocated / (allocated + unallocated)
        found.append(
            Inference(
                inference_id("reserved-unallocated-share"),
                round(share, 3),
                _texts(
                    inference_id("reserved-unallocated-share"),
                    share=f"{share:.0%}",
                    unallocated=format_bytes(unallocated),
                ),
            )
        )
    times = fragmentation_times(metrics)
    if times is not None and tried is not None and unallocated is not None:
        found.append(
            Inference(
                inference_id("fragmentation"),
                round(times, 1),
                _texts(
                    inference_id("fragmentation"),
                    unallocated=format_bytes(unallocated),
                    tried=format_bytes(tried),
                    times=f"{times:.1f}",
                ),
            )
        )
    held = _held_elsewhere(metrics)
    if held is not None and total is None:
        texts = _texts("held-at-snapshot", held=format_bytes(held))
        found.append(Inference(inference_id("held-by-other-processes"), held, texts))
    elif held is not None:
        found.append(
            Inference(
                inference_id("held-by-other-processes"),
                held,
                _texts(inference_id("held-by-other-processes"), held=format_bytes(held)),
            )
        )
    if tried is not None and total is not None and tried > total:
        found.append(
            Inference(
                inference_id("request-exceeds-gpu"),
                tried,
                _texts(
                    inference_id("request-exceeds-gpu"),
                    tried=format_bytes(tried),
                    total=format_bytes(total),
                ),
            )
        )
    elif tried is not None and free is not None and tried > free:
        found.append(
            Inference(
                inference_id("request-exceeds-free"),
                tried - free,
                _texts(
                    inference_id("request-exceeds-free"),
                    tried=format_bytes(tried),
                    free=format_bytes(free),
                    excess=format_bytes(tried - free),
                ),
            )
        )
    elif tried is not None and free is not None:
        found.append(
            Inference(
                inference_id("request-below-free"),
                free - tried,
                _texts(
                    inference_id("request-below-free"),
                    tried=format_bytes(tried),
                    free=format_bytes(free),
                ),
            )
        )
    return tuple(found)


def _texts(text_key: str, **values: str) -> dict[str, str]:
    """An inference's sentence in both languages (knowledge/i18n/cli.yaml, inference.*)."""
    from assistant.i18n import message

    return {lang: message(f"inference.{text_key}", lang, **values) for lang in ("en", "zh")}


def fragmentation_times(metrics: Metrics) -> float | None:
    """How many times the cached-but-unallocated memory could have held the failed
    request, when that meets the fragmentation rule of knowledge/inferences.yaml."""
    rule = rules().get("fragmentation") or {}
    tried = metrics.get("tried_to_allocate_bytes")
    unallocated = metrics.get("reserved_unallocated_bytes")
    if not tried or tried <= 0 or unallocated is None:
        return None
    times = unallocated / tried
    if times < rule["min_times_request"] or unallocated < rule["min_unallocated_bytes"]:
        return None
    return times


def _held_elsewhere(metrics: Metrics) -> int | None:
    total = metrics.get("total_capacity_bytes")
    if total is None:
        return _held_at_snapshot(metrics)
    rule = rules().get("held_elsewhere") or {}
    others = metrics.get("other_processes_bytes")
    if others is not None and total and others >= rule["min_share"] * total:
        return int(others)
    if others is not None or total is None:
        return None
    free = metrics.get("free_bytes")
    if free is None:
        return None
    own = metrics.get("process_in_use_bytes")
    if own is None:
        allocated = metrics.get("allocated_by_pytorch_bytes")
        unallocated = metrics.get("reserved_unallocated_bytes")
        if allocated is None or unallocated is None:
            return None
        own = allocated + unallocated + metrics.get("cuda_graph_pools_bytes", 0)
        threshold = rule["min_share_without_process_figure"]
    else:
        threshold = rule["min_share"]
    held = int(total - free - own)
    return held if held >= threshold * total else None


def model_params_b(model_name: str) -> float | None:
    """Billions of parameters named in a model id (Qwen2.5-7B -> 7, Qwen3-30B-A3B -> 30)."""
    for number, unit in _PARAMS.findall(model_name):
        value = float(number)
        return value / 1000 if unit in "Mm" else value
    return None


def _held_at_snapshot(metrics: Metrics) -> int | None:
    """Memory outside this process at its last snapshot (device used minus what its
    allocator reserved), when the failure message states no figures itself. The
    CUDA context and NCCL buffers also count, hence the large share required."""
    used = metrics.get("snapshot_device_used_bytes")
    total = metrics.get("snapshot_device_total_bytes")
    reserved = metrics.get("snapshot_reserved_bytes")
    if used is None or not total or reserved is None:
        return None
    held = int(used - reserved)
    share = (rules().get("held_elsewhere") or {})["min_share_at_snapshot"]
    return held if held >= share * total else None
