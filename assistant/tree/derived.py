"""Named derived facts of the tree (``derived.NAME`` in tree.yaml), and the figures
every text may use.

Each derived value is a function of the ``Context``, computed once per walk
(``Context.memo``). The tree loader resolves ``derived.NAME`` to the function here
when it loads tree.yaml; code calls the functions directly.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

from assistant.config.engines import engine_layout
from assistant.config.model_info import model_path, params_from_name
from assistant.config.numbers import usable_number
from assistant.i18n import message
from assistant.tree.context import Context

Derived = Callable[[Context], Any]
_DERIVED: dict[str, Derived] = {}


def derived(name: str) -> Callable[[Derived], Derived]:
    """Name a derived value; the function returned computes it once per walk."""

    def register(func: Derived) -> Derived:
        def once(ctx: Context) -> Any:
            return ctx.memo(name, func)

        once.__doc__ = func.__doc__
        _DERIVED[name] = once
        return once

    return register


GIB_VARS = {
    "tried_gib": "tried_to_allocate_bytes",
    "total_gib": "total_capacity_bytes",
    "free_gib": "free_bytes",
    "reserved_unallocated_gib": "reserved_unallocated_bytes",
    "other_processes_gib": "other_processes_bytes",
}
# every {placeholder} a why-text or note of tree.yaml may use without a value function
TEXT_VARS = (
    *GIB_VARS,
    "running_req",
    "token_usage",
    "queue_req",
    "queue_text",
    "pool_text",
    "others_share",
    "fileroot",
    "weight_buffer_mb",
)


# --- the micro-batch floor (a derived value, and what value functions build on) ---------


def written_number(ctx: Context, key: str) -> float | None:
    """A number the user's file sets (after interpolation), else None."""
    if ctx.config.source(key) != "config":
        return None
    return usable_number(ctx.config.get(key))


# --- micro-batch floor ------------------------------------------------------------------


def offline_training(ctx: Context) -> bool:
    """SFT, reward-model or DPO training: the dataset holds whole samples, nothing is generated."""
    kind = ctx.config.get("train_dataset.type") if ctx.has_config else None
    if isinstance(kind, str) and kind.lower() in ctx.settings.offline_dataset_types:
        return True
    return ctx.has_config and all(
        ctx.config.source(key) != "config" for key in ("gconfig", "rollout")
    )


def _sample_length(ctx: Context) -> tuple[float | None, str]:
    """train_dataset.max_length, else the longest prompt/sample the user gave (asked)."""
    max_length = written_number(ctx, "train_dataset.max_length")
    if max_length is not None:
        return max_length, str(int(max_length))
    if not ctx.has_config:  # nothing to patch: do not ask
        return None, ""
    asked = usable_number(ctx.answer("longest_prompt_tokens"))
    if asked is not None:
        return asked, f"{int(asked)} (longest_prompt_tokens)"
    return None, ""


def micro_batch_floor_value(ctx: Context) -> tuple[int | None, str]:
    """(floor, how it was computed); floor None when neither config nor answers give it.

    The floor must hold the longest sample the run can produce in one micro-batch:
    SFT/RM/DPO: the longest sample (max_length); RL: the prompt plus the generation
    (max_length + max_new_tokens); multi-turn RL: the longest conversation, which
    already counts the prompt and every turn (gconfig.max_tokens or the answer), but
    never less than one single-turn sample.
    """
    length, length_text = _sample_length(ctx)
    if offline_training(ctx):
        if length is None:
            return None, "train_dataset.max_length (SFT/RM/DPO: the longest sample)"
        return int(length), f"{length_text} (SFT/RM/DPO: the longest sample)"
    new_tokens = written_number(ctx, "gconfig.max_new_tokens")
    single = None
    single_text = "train_dataset.max_length + gconfig.max_new_tokens"
    if length is not None and new_tokens is not None:
        single = usable_number(length + new_tokens)
        single_text = f"{length_text} + {int(new_tokens)}"
    if ctx.answer("multi_turn"):
        longest = usable_number(ctx.answer("longest_conversation_tokens"))
        if longest is None:  # a conversation may be far longer than one turn: ask
            return None, "the longest conversation (longest_conversation_tokens)"
        if single is not None and single > longest:
            return int(single), f"max({single_text}, longest conversation {int(longest)})"
        return int(longest), f"longest conversation {int(longest)}"
    if single is None:
        return None, single_text
    return int(single), single_text


@derived("micro_batch_floor")
def micro_batch_floor(ctx: Context) -> int | None:
    return micro_batch_floor_value(ctx)[0]


# --- derived values (names used in tree.yaml as derived.NAME) ---------------------------


@derived("config_given")
def _config_given(ctx: Context) -> bool:
    """A --config was passed (and read): texts that name the config say so only then."""
    return ctx.has_config


@derived("server")
def _server(ctx: Context) -> str | None:
    server = ctx.report.facts.get("server")
    if isinstance(server, str) and server:
        return server.lower()
    if ctx.has_config:
        layout = engine_layout(ctx.config, "rollout")
        if layout is not None and layout.backend.name:
            return layout.backend.name
    return None


@derived("train_backend")
def _train_backend(ctx: Context) -> str | None:
    if ctx.has_config:
        layout = engine_layout(ctx.config, "actor")
        if layout is not None:
            return layout.backend.name or "fsdp"
    engine = ctx.report.facts.get("train_engine")
    return engine.lower() if isinstance(engine, str) and engine else None


@derived("foreign")
def foreign(ctx: Context) -> bool:
    """Figures show memory held elsewhere, or the message itself says so (tag)."""
    return ctx.inference("held-by-other-processes") is not None or "other_processes" in ctx.tags()


@derived("oversized")
def _oversized(ctx: Context) -> bool:
    if ctx.inference("request-exceeds-gpu") is not None:
        return True
    tried = ctx.report.metrics.get("tried_to_allocate_bytes")
    total = ctx.report.metrics.get("total_capacity_bytes")
    return isinstance(tried, int | float) and isinstance(total, int | float) and tried > total > 0


@derived("weight_buffer_request")
def _weight_buffer_request(ctx: Context) -> bool:
    """The failed request is the weight-update buffer the run sets (the log states its
    size, or the config does): "Tried to allocate" matches it within PyTorch's rounding.
    Then the buffer is the tensor that did not fit, and a smaller one is the fix."""
    from assistant.memory.sizes import printed_tolerance

    tried = ctx.report.metrics.get("tried_to_allocate_bytes")
    buffer_mb = _weight_buffer_mb(ctx)
    if not isinstance(tried, int | float) or buffer_mb is None:
        return False
    failure = ctx.report.evidence[0].text if ctx.report.evidence else ""
    size = int(buffer_mb * (1 << 20))
    return abs(int(tried) - size) <= printed_tolerance(failure, int(tried))


def _weight_buffer_mb(ctx: Context) -> float | None:
    """The buffer's MiB: the config's (memory.setup reads it), else the log's statement."""
    from assistant.memory.setup import train_setup

    if ctx.has_config:
        chunk = train_setup(ctx.config).weight_chunk_bytes
        if chunk:
            return chunk / (1 << 20)
    stated = ctx.report.facts.get("weight_buffer_mb")
    if not isinstance(stated, str | int | float):
        return None
    try:
        value = float(stated)
    except ValueError:
        return None
    return value if value > 0 else None


@derived("fragmentation")
def _fragmentation(ctx: Context) -> bool:
    """The log reader stated the fragmentation inference (its rule: knowledge/inferences.yaml)."""
    return _fragmentation_times(ctx) is not None


def _fragmentation_times(ctx: Context) -> float | None:
    from assistant.logs.infer import fragmentation_times

    stated = ctx.inference("fragmentation")
    if isinstance(stated, int | float) and not isinstance(stated, bool):
        return stated
    return fragmentation_times(ctx.report.metrics)  # the same rule on the figures


@derived("fragmentation_lead")
def _fragmentation_lead(ctx: Context) -> bool:
    from assistant.logs.infer import rules

    times = _fragmentation_times(ctx)
    rule = rules()["fragmentation"]
    if not isinstance(times, int | float) or times < rule["lead_times_request"]:
        return False
    # ... and the cache's slack is a real part of what PyTorch holds: 1 GiB spare out of
    # 38 reserved on a full card is normal churn, not the reason a 96 MiB request failed
    share = ctx.inference("reserved-unallocated-share")  # the reader's figure
    return not isinstance(share, int | float) or share >= rule["lead_min_share"]


@derived("others_share")
def others_share(ctx: Context) -> float | None:
    """Share of the GPU the log shows held outside the failing process."""
    held = ctx.inference("held-by-other-processes")
    total = ctx.report.metrics.get("total_capacity_bytes") or ctx.report.metrics.get(
        "snapshot_device_total_bytes"
    )
    if not isinstance(held, int | float) or isinstance(held, bool) or not total:
        return None
    return round(held / total, 3)


@derived("foreign_lead")
def _foreign_lead(ctx: Context) -> bool:
    """Memory held elsewhere is the first fix: a large share of the GPU, or stated by the
    log without figures (held_elsewhere.lead_min_share in inferences.yaml)."""
    from assistant.logs.infer import rules

    if not foreign(ctx):
        return False
    share = others_share(ctx)
    return not isinstance(share, float) or share >= rules()["held_elsewhere"]["lead_min_share"]


@derived("others_most")
def _others_most(ctx: Context) -> bool:
    from assistant.logs.infer import rules

    share = others_share(ctx)
    return isinstance(share, float) and share >= rules()["held_elsewhere"]["most_share"]


@derived("pool_full")
def _pool_full(ctx: Context) -> bool:
    """The server's last status line shows its KV pool (nearly) full."""
    usage = ctx.report.facts.get("token_usage")
    return isinstance(usage, int | float) and usage >= ctx.settings.pool_full_token_usage


@derived("colocated")
def _colocated(ctx: Context) -> bool:
    """Trainer and inference server take turns on the same GPUs (offload, colocation):
    the config says so, or without a config the log does (facts.yaml colocated)."""
    if not ctx.has_config:
        return ctx.report.facts.get("colocated") is True
    if ctx.config.get("enable_offload") is True:
        return True
    for engine in ("rollout", "actor"):
        layout = engine_layout(ctx.config, engine)
        if layout is not None and layout.colocated:
            return True
    return False


@derived("failing_engine")
def failing_engine(ctx: Context) -> str:
    """The engine whose worker ran out of memory: its scheduling_spec gets env vars."""
    if ctx.report.phase == "generation" or ctx.report.stage == "inference_side":
        return "rollout"
    return "actor"


@derived("fileroot_node_local")
def _fileroot_node_local(ctx: Context) -> bool:
    fileroot = ctx.config.get("cluster.fileroot") if ctx.has_config else None
    prefixes = ctx.settings.node_local_prefixes
    return isinstance(fileroot, str) and any(
        fileroot == p or fileroot.startswith(p.rstrip("/") + "/") for p in prefixes
    )


@derived("startup_kv")
def _startup_kv(ctx: Context) -> bool:
    if "startup_kv_pool" in ctx.tags():
        return True
    metrics = ctx.report.metrics
    return (
        ctx.report.kind == "kv_cache" and "kv_cache_tokens" in metrics and "max_seq_len" in metrics
    )


def _alloc_conf_texts(ctx: Context) -> list[str]:
    """The allocator settings the log and the config's worker environments show."""
    where = ctx.settings.alloc_conf
    texts = [str(ctx.report.facts.get("alloc_conf") or "")]
    for engine in where.engines:
        specs = ctx.config.get(f"{engine}.scheduling_spec")
        for spec in specs if isinstance(specs, list) else []:
            env = spec.get("env_vars") if isinstance(spec, dict) else None
            if isinstance(env, dict) and env.get(where.env_var):
                texts.append(str(env[where.env_var]))
    return [t.lower().replace(" ", "") for t in texts]


@derived("expandable_segments")
def _expandable_segments(ctx: Context) -> bool:
    if ctx.report.facts.get("expandable_segments") is True:
        return True
    marker = ctx.settings.alloc_conf.expandable_segments
    return any(marker in text for text in _alloc_conf_texts(ctx))


@derived("custom_allocator")
def _custom_allocator(ctx: Context) -> bool:
    if ctx.report.facts.get("sleep_mode") is True:
        return True
    markers = ctx.settings.alloc_conf.custom_allocator_markers
    if any(m in text for text in _alloc_conf_texts(ctx) for m in markers):
        return True
    return any(ctx.config.get(key) is True for key in ctx.settings.custom_allocator_keys)


@derived("model_params_b")
def model_params_b(ctx: Context) -> float | None:
    """The model size if the log or config already tell it (never asks)."""
    fact = ctx.report.facts.get("model_params_b")
    if isinstance(fact, int | float) and fact > 0:
        return fact
    given: float | None = ctx.book.given_answer("model_params_b")
    if given is not None:
        return given
    return params_from_name(model_path(ctx.config)) if ctx.has_config else None


def text_vars(ctx: Context) -> dict[str, Any]:
    """Figures every text may use (absent ones stay absent); names in TEXT_VARS."""
    names = GIB_VARS
    found: dict[str, Any] = {key: ctx.metric_gib(metric) for key, metric in names.items()}
    facts = ctx.report.facts
    for name in ("running_req", "token_usage", "queue_req"):
        found[name] = facts.get(name)
    queue = facts.get("queue_req")
    found["queue_text"] = (
        message("tree.queue_text", ctx.lang, queue=queue)
        if isinstance(queue, int) and queue > 0
        else ""
    )
    usage = facts.get("token_usage")
    found["pool_text"] = (
        message("tree.pool_text", ctx.lang, usage=usage) if isinstance(usage, int | float) else ""
    )
    share = others_share(ctx)
    found["others_share"] = f"{share:.0%}" if isinstance(share, float) else None
    fileroot = ctx.config.get("cluster.fileroot") if ctx.has_config else None
    found["fileroot"] = fileroot if isinstance(fileroot, str) else None
    buffer_mb = _weight_buffer_mb(ctx)
    found["weight_buffer_mb"] = f"{buffer_mb:g}" if buffer_mb is not None else None
    return {k: v for k, v in found.items() if v is not None}


# every derived value by its tree.yaml name (the loader resolves derived.NAME here)
DERIVED: Mapping[str, Derived] = MappingProxyType(_DERIVED)
