"""Arithmetic on the figures a log states, and facts derived from names.

Every inference uses only numbers the log printed; none is guessed. The text
is in English and Chinese so renderers can pick the user's language.
"""

from __future__ import annotations

import re
from typing import Any

from assistant.logs.units import format_bytes
from assistant.models import Inference

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


def inferences(metrics: dict[str, int | float]) -> list[Inference]:
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
                {
                    "en": f"{share:.0%} of the memory PyTorch holds ({format_bytes(unallocated)}) "
                    "is reserved but unallocated",
                    "zh": f"PyTorch 持有的显存中有 {share:.0%}（{format_bytes(unallocated)}）"
                    "已保留但未分配",
                },
            )
        )
    times = fragmentation_times(metrics)
    if times is not None and tried is not None and unallocated is not None:
        found.append(
            Inference(
                inference_id("fragmentation"),
                round(times, 1),
                {
                    "en": f"the {format_bytes(unallocated)} PyTorch had cached but not handed out "
                    f"could have held the failed request ({format_bytes(tried)}) {times:.1f} "
                    "times over: fragmentation is likely",
                    "zh": f"PyTorch 已缓存但未分配的 {format_bytes(unallocated)} 足以容纳失败的请求"
                    f"（{format_bytes(tried)}）{times:.1f} 倍：很可能存在碎片",
                },
            )
        )
    held = _held_elsewhere(metrics)
    if held is not None and total is None:
        texts = {
            "en": f"at this process's last memory snapshot, {format_bytes(held)} of the GPU "
            "was used outside its allocator (another process, e.g. a colocated inference server)",
            "zh": f"在该进程最近一次显存快照时，GPU 上有 {format_bytes(held)} 不在其分配器中"
            "（被其他进程占用，例如同卡的推理服务）",
        }
        found.append(Inference(inference_id("held-by-other-processes"), held, texts))
    elif held is not None:
        found.append(
            Inference(
                inference_id("held-by-other-processes"),
                held,
                {
                    "en": f"{format_bytes(held)} of the GPU is held by other processes "
                    "(or by memory outside PyTorch's allocator)",
                    "zh": f"该 GPU 上有 {format_bytes(held)} 被其他进程"
                    "（或 PyTorch 分配器之外的内存）占用",
                },
            )
        )
    if tried is not None and total is not None and tried > total:
        found.append(
            Inference(
                inference_id("request-exceeds-gpu"),
                tried,
                {
                    "en": f"the request ({format_bytes(tried)}) is larger than the whole GPU "
                    f"({format_bytes(total)}): no setting of the allocator can satisfy it",
                    "zh": f"申请的大小（{format_bytes(tried)}）超过整张 GPU 的容量"
                    f"（{format_bytes(total)}）：必须减小这一步的数据量",
                },
            )
        )
    elif tried is not None and free is not None and tried > free:
        found.append(
            Inference(
                inference_id("request-exceeds-free"),
                tried - free,
                {
                    "en": f"the request ({format_bytes(tried)}) exceeded the free memory "
                    f"({format_bytes(free)}) by {format_bytes(tried - free)}",
                    "zh": f"申请的大小（{format_bytes(tried)}）比剩余显存（{format_bytes(free)}）"
                    f"多 {format_bytes(tried - free)}",
                },
            )
        )
    elif tried is not None and free is not None:
        found.append(
            Inference(
                inference_id("request-below-free"),
                free - tried,
                {
                    "en": f"the request ({format_bytes(tried)}) was smaller than the free memory "
                    f"({format_bytes(free)}): the free memory is fragmented or reserved elsewhere",
                    "zh": f"申请的大小（{format_bytes(tried)}）小于剩余显存（{format_bytes(free)}）"
                    "：剩余显存是碎片化的或被其他池占用",
                },
            )
        )
    return found


def fragmentation_times(metrics: dict[str, int | float]) -> float | None:
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


def _held_elsewhere(metrics: dict[str, int | float]) -> int | None:
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


def _held_at_snapshot(metrics: dict[str, int | float]) -> int | None:
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
