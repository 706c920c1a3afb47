"""`areal-doctor estimate`: per-GPU memory of each engine a config runs, before launching.

Training engines: weights, gradients and optimizer states (bytes per parameter by
engine, optimizer and dtype, sharded as the backend string says), activations of one
micro-batch with and without gradient checkpointing, and the logits of one micro-batch.
Rollout servers: weights per tensor-parallel shard and the KV cache the memory fraction
leaves, in tokens, against max_concurrent_rollouts x the sequence length.
Every figure that is not read from the config or the model goes into ``assumptions``.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any, Literal

from assistant.errors import UserError
from assistant.i18n import message
from assistant.knowledge import load_yaml
from assistant.memory import formulas, storage
from assistant.memory.facts import ModelFacts
from assistant.memory.setup import ServerSetup, TrainSetup, number, server_setup, train_setup
from assistant.memory.sizes import gib

if TYPE_CHECKING:
    from assistant.config.loader import ExperimentConfig

SCHEMA = "areal-doctor/estimate/v1"
GIB = 1 << 30
TRAINING_ENGINES = ("actor", "critic", "ref", "teacher")
# Where a config names its model: the trainer's path, else a rollout-only config's server.
MODEL_KEYS = ("actor.path", "sglang.model_path", "vllm.model")


@cache
def settings() -> dict[str, Any]:
    return dict((load_yaml("memory.yaml") or {}).get("assumptions") or {})


# Where a stated GPU size came from: the --gpu-memory flag or the log's OOM message.
GpuSource = Literal["flag", "log"]


class Notes:
    """Assumptions, each said once, in the order they were made, in ``lang``
    (the sentences live in knowledge/i18n/cli.yaml under ``memory.``)."""

    def __init__(self, lang: str = "en") -> None:
        self.lang = lang
        self.items: list[str] = []

    def add(self, text: str) -> None:
        if text not in self.items:
            self.items.append(text)


def micro_batch_tokens(config: ExperimentConfig | None, setup: TrainSetup, notes: Notes) -> int:
    if setup.tokens_per_mb:
        return setup.tokens_per_mb
    max_length = number(config, "train_dataset.max_length")
    new_tokens = number(config, "gconfig.max_new_tokens")
    if max_length and new_tokens:
        tokens = int(max_length + new_tokens)
        notes.add(message("memory.mb_from_lengths", notes.lang, engine=setup.engine, tokens=tokens))
        return tokens
    tokens = int(settings()["default_sequence_tokens"])
    notes.add(message("memory.mb_unknown", notes.lang, engine=setup.engine, tokens=tokens))
    return tokens


def training_engine(
    config: ExperimentConfig | None,
    m: ModelFacts,
    engine: str,
    gpu: int,
    notes: Notes,
    memory_answer: Any = None,
) -> dict[str, Any]:
    setup = train_setup(config, engine, memory_answer)
    if setup.backend is None:
        notes.add(message("memory.no_backend", notes.lang, engine=engine))
    if config is None or config.source(f"{engine}.dtype") != "config":
        dtype = settings()["dtype"]
        notes.add(message("memory.default_assumed", notes.lang, key=f"{engine}.dtype", value=dtype))
    tokens = micro_batch_tokens(config, setup, notes)
    per_param = setup.per_param()
    training = setup.optimizer is not None
    if training:
        note_behaviour(setup, notes)
    params = m.params
    trainable = params
    adapters = lora_adapters(config, m, engine, notes) if training else None
    weights = int(params * per_param.weights) // setup.shard
    if adapters is not None:  # frozen base weights in the compute dtype, adapters trained
        trainable = adapters
        weights = (params * setup.dtype_bytes + int(adapters * per_param.weights)) // setup.shard
    grads = states = 0
    if training:
        grads = int(trainable * per_param.gradients) // setup.shard
        state_bpp = per_param.master + per_param.optimizer_states
        states = int(trainable * state_bpp) // setup.optimizer_shard
    moved = storage.offloaded(config, engine, setup.kind) if training else {}
    for term, key in moved.items():
        notes.add(message("memory.offloaded", notes.lang, term=term, key=key))
    if "weights" in moved:
        weights = 0
    if "gradients" in moved:
        grads = 0
    if "optimizer_states" in moved:
        states = 0
        if config is not None and config.get(f"{engine}.fsdp.per_layer_optim_step") is True:
            # the per-layer step streams one layer's states in (and the prefetched ones)
            prefetch = number(config, f"{engine}.fsdp.optim_step_prefetch_layers") or 1
            layer_share = trainable * m.layer_params // max(params, 1)
            state_bpp = per_param.master + per_param.optimizer_states
            states = int(layer_share * state_bpp * (1 + prefetch)) // setup.optimizer_shard
    tp = setup.dim("t")
    cp = setup.dim("c")
    act = {
        flag: formulas.activation_bytes(
            m, tokens, checkpointing=flag, dtype_bytes=setup.dtype_bytes, tp=tp, cp=cp
        )
        for flag in (False, True)
    }
    activations = (
        act[setup.checkpointing]
        if training
        else formulas.activation_bytes(
            m, tokens, checkpointing=True, dtype_bytes=setup.dtype_bytes, tp=tp, cp=cp
        )
        - m.layers * m.hidden_size * -(-tokens // cp) * setup.dtype_bytes
    )
    vocab_tp = tp if setup.kind in ("megatron", "archon") else 1
    logits = formulas.logits_peak_bytes(-(-tokens // cp), m.vocab_size, vocab_tp, setup.dtype_bytes)
    gathered = 0
    if setup.kind in ("fsdp", "archon") and setup.shard > 1:
        gathered = 2 * formulas.gathered_layer_bytes(m, setup.dtype_bytes, tp)  # this + prefetch
    overhead = int(settings()["train_overhead_gib"] * GIB)
    notes.add(message("memory.train_overhead", notes.lang, gib=settings()["train_overhead_gib"]))
    if training:
        notes.add(message("memory.activations_checkpointing", notes.lang))
    else:
        notes.add(message("memory.forward_only", notes.lang, engine=engine))
    notes.add(message("memory.logits", notes.lang))
    if m.moe and setup.kind == "megatron" and setup.dim("e") > 1:
        notes.add(message("memory.expert_parallel", notes.lang))
    per_gpu = {
        "weights_bytes": weights,
        "gradients_bytes": grads,
        "optimizer_states_bytes": states,
        "activations_bytes": activations,
        "logits_bytes": logits,
        "gathered_layers_bytes": gathered,
        "overhead_bytes": overhead,
    }
    total = sum(per_gpu.values())
    out: dict[str, Any] = {
        "backend": setup.backend.text() if setup.backend is not None else None,
        "role": "training",
        "per_gpu": per_gpu,
        "total_bytes": total,
        "fits": total <= gpu,
        "tokens_per_micro_batch": tokens,
        "gradient_checkpointing": setup.checkpointing,
        "optimizer": setup.optimizer,
        "dtype_bytes": setup.dtype_bytes,
        "memory_behaviour": per_param.behaviour,
        "bytes_per_param": per_param.as_dict(),
        "largest_term": max(per_gpu, key=lambda k: per_gpu[k]),
    }
    if moved:
        out["offloaded"] = moved
    if adapters is not None:
        out["lora_trainable_params"] = adapters
    if training:
        out["activations_without_checkpointing_bytes"] = act[False]
        out["activations_with_checkpointing_bytes"] = act[True]
    return out


def note_behaviour(setup: TrainSetup, notes: Notes) -> None:
    """Say which version of AReaL's memory behaviour the figures assume, the bytes per
    parameter that gives, and what the other version would say."""
    per = setup.per_param()
    assumed, other = storage.behaviour_text(per.behaviour, notes.lang)
    chosen = setup.behaviour.chosen_by if setup.behaviour is not None else "default"
    notes.add(
        message(
            "memory.behaviour",
            notes.lang,
            engine=setup.engine,
            backend=setup.kind,
            behaviour=per.behaviour,
            assumed=assumed,
            chosen=_chosen_by(chosen, notes.lang),
            weights=_bpp(per.weights),
            gradients=_bpp(per.gradients),
            master=_bpp(per.master),
            states=_bpp(per.optimizer_states),
            optimizer=setup.optimizer or "adam",
            other=other,
        )
    )


def _chosen_by(chosen: str, lang: str) -> str:
    if chosen == "answer":
        return message("memory.behaviour_by_answer", lang)
    if chosen == "config":
        return message("memory.behaviour_by_config", lang)
    return message("memory.behaviour_by_default", lang)


def _bpp(value: float) -> str:
    return f"{value:g}"


def lora_adapters(
    config: ExperimentConfig | None, m: ModelFacts, engine: str, notes: Notes
) -> int | None:
    """Trainable parameters of the engine's LoRA adapters, or None without LoRA."""
    if config is None or config.get(f"{engine}.use_lora") is not True:
        return None
    spec = dict((load_yaml("memory.yaml") or {}).get("lora") or {})
    rank = config.get(f"{engine}.lora_rank")
    if not isinstance(rank, int) or isinstance(rank, bool) or rank <= 0:
        rank = int(spec["default_rank"])
        notes.add(
            message("memory.default_assumed", notes.lang, key=f"{engine}.lora_rank", value=rank)
        )
    targets = config.get(f"{engine}.target_modules")
    names = [str(t) for t in targets] if isinstance(targets, list) else []
    if not names or any(str(t).replace("-", "_") == "all_linear" for t in names):
        if not names:
            notes.add(message("memory.lora_all_linear", notes.lang, engine=engine))
        names = list(spec["all_linear"])
    shapes = dict(spec["targets"])
    unknown = [name for name in names if name not in shapes]
    if unknown:
        notes.add(message("memory.lora_unknown_targets", notes.lang, names=", ".join(unknown)))
    adapters = formulas.lora_params(m, rank, names, shapes)
    notes.add(message("memory.lora", notes.lang, engine=engine, rank=rank, params=f"{adapters:,}"))
    return adapters


def rollout_engine(
    config: ExperimentConfig | None, m: ModelFacts, server: ServerSetup, gpu: int, notes: Notes
) -> dict[str, Any]:
    tp, pp = server.dim("t"), server.dim("p")
    weights = formulas.server_weight_bytes(m, server.dtype_bytes, tp, pp)
    per_token = formulas.kv_bytes_per_token(m, tp, server.kv_dtype_bytes, pp)
    context = int(settings()["cuda_context_gib"] * GIB)
    notes.add(message("memory.cuda_context", notes.lang, gib=settings()["cuda_context_gib"]))
    if config is None or config.source(server.fraction_key) != "config":
        notes.add(
            message(
                "memory.default_assumed", notes.lang, key=server.fraction_key, value=server.fraction
            )
        )
    if server.server == "sglang":
        kv_bytes, kv_tokens = formulas.sglang_kv_pool(
            gpu, weights, server.fraction, per_token, context
        )
        share = int((gpu - context) * server.fraction)
    else:
        batched = server.batched_tokens or int(settings()["vllm_max_num_batched_tokens"])
        if not server.batched_tokens:
            notes.add(message("memory.vllm_batched_tokens", notes.lang, tokens=batched))
        peak = formulas.vllm_profile_peak_bytes(m, batched, tp, server.dtype_bytes)
        kv_bytes, kv_tokens = formulas.vllm_kv_pool(
            gpu,
            weights,
            server.fraction,
            per_token,
            peak_activation_bytes=peak,
            non_torch_bytes=context,
        )
        share = int(gpu * server.fraction)
    default_len = int(settings()["default_sequence_tokens"])
    sequence = server.sequence_tokens or default_len
    if not server.sequence_tokens:
        notes.add(message("memory.sequence_unknown", notes.lang, tokens=sequence))
    max_len = server.max_len or default_len
    replicas = max(server.replicas, 1)
    concurrency = server.concurrency
    per_server = None
    if concurrency:
        per_server = -(-concurrency * server.samples_per_rollout // replicas)
        notes.add(message("memory.concurrency_per_server", notes.lang, replicas=replicas))
    else:
        notes.add(message("memory.concurrency_unset", notes.lang))
    needed = per_server * sequence if per_server else None
    fits = weights <= share and kv_tokens > 0
    if server.server == "vllm":
        if not server.max_len:
            notes.add(
                message("memory.default_assumed", notes.lang, key=server.max_len_key, value=max_len)
            )
        fits = fits and kv_tokens >= max_len  # vLLM refuses a max_model_len it cannot hold
    out: dict[str, Any] = {
        "backend": server.backend.text() if server.backend is not None else None,
        "role": "inference",
        "per_gpu": {"weights_bytes": weights, "kv_cache_bytes": kv_bytes},
        "kv_cache_tokens": kv_tokens,
        "kv_bytes_per_token": per_token,
        "total_bytes": weights + kv_bytes + context,
        "fits": fits,
        "memory_share_bytes": share,
        "sequence_tokens": sequence,
        "sequence_tokens_from": server.sequence_key if server.sequence_tokens else "assumption",
        "sequences_in_kv_cache": formulas.sequences_that_fit(kv_tokens, sequence),
    }
    if needed is not None:
        out["concurrent_rollouts_per_server"] = per_server
        out["tokens_for_full_concurrency"] = needed
        out["concurrency_fits"] = kv_tokens >= needed
    return out


def model_name(config: ExperimentConfig) -> tuple[str | None, str | None]:
    """(the model's name or path, the key it came from) for the estimate."""
    for key in MODEL_KEYS:
        value = config.get(key)
        if isinstance(value, str) and value.strip():
            return value, key
    return None, None


def estimate_config(
    config: ExperimentConfig,
    model_config: str | None = None,
    *,
    gpu_bytes: int | None = None,
    gpu_source: GpuSource | None = None,
    lang: str = "en",
) -> dict[str, Any]:
    """The estimate of a loaded config (the CLI and the TUI), its sentences in ``lang``.

    The model: ``model_config``, the config.json beside the model path, the bundled
    table, else the table's closest relative (said in the assumptions). UserError when
    none of them gives the sizes.
    """
    from assistant.memory.facts import resolve_model

    name, key = model_name(config)
    model = resolve_model(name, model_config, relatives=True)
    if model is None:
        raise UserError(
            message("memory.unknown_model", lang, key=key, name=repr(name))
            if name
            else message("memory.unknown_model_no_path", lang)
        )
    return estimate(config, model, gpu_bytes=gpu_bytes, gpu_source=gpu_source, lang=lang)


def estimate(
    config: ExperimentConfig,
    model: ModelFacts,
    *,
    gpu_bytes: int | None = None,
    gpu_source: GpuSource | None = None,
    lang: str = "en",
    memory_answer: Any = None,
) -> dict[str, Any]:
    from assistant.config.engines import all_layouts

    notes = Notes(lang)
    if gpu_bytes is None:
        gpu_bytes = int(settings()["gpu_memory_gib"] * GIB)
        notes.add(message("memory.gpu_assumed", lang, gib=settings()["gpu_memory_gib"]))
    elif gpu_source == "flag":
        notes.add(message("memory.gpu_from_flag", lang, gib=gib(gpu_bytes)))
    elif gpu_source == "log":
        notes.add(message("memory.gpu_from_log", lang, gib=gib(gpu_bytes)))
    if model.stand_in_for:
        notes.add(
            message(
                "memory.stand_in",
                lang,
                model=model.stand_in_for,
                relative=model.name,
                source=model.source,
            )
        )
    elif model.from_table:
        notes.add(message("memory.from_table", lang, name=model.name, source=model.source))
    engines: dict[str, Any] = {}
    layouts = {layout.engine: layout for layout in all_layouts(config)}
    for engine in TRAINING_ENGINES:
        if engine in layouts and (engine == "actor" or isinstance(config.get(engine), dict)):
            engines[engine] = training_engine(
                config, model, engine, gpu_bytes, notes, memory_answer
            )
    server = server_setup(config)
    if server is not None:
        engines["rollout"] = rollout_engine(config, model, server, gpu_bytes, notes)
    groups = colocated_groups(config, engines, gpu_bytes)
    if groups:
        notes.add(message("memory.colocated", lang))
    return {
        "schema": SCHEMA,
        "gpu_memory_bytes": gpu_bytes,
        "model": {
            "name": model.name,
            "params": model.params,
            "vocab_size": model.vocab_size,
            "layers": model.layers,
            "hidden_size": model.hidden_size,
            "kv_heads": model.kv_heads,
            "head_dim": model.head_dim,
            "experts": model.experts,
            "source": "table" if model.from_table else "config.json",
            "source_detail": model.source,
            **({"stand_in_for": model.stand_in_for} if model.stand_in_for else {}),
        },
        "engines": engines,
        "colocated": groups,
        "fits": all(e["fits"] for e in engines.values()) and all(g["fits"] for g in groups),
        "assumptions": notes.items,
    }


# what a training engine keeps on its GPUs between its own steps, and what it needs only
# while it computes (one engine of a colocated group computes at a time)
RESIDENT = ("weights_bytes", "gradients_bytes", "optimizer_states_bytes", "overhead_bytes")
WORKING = ("activations_bytes", "logits_bytes", "gathered_layers_bytes")


def colocated_groups(
    config: ExperimentConfig, engines: dict[str, Any], gpu: int
) -> list[dict[str, Any]]:
    """Engines scheduled onto another engine's GPUs (scheduling_strategy colocation,
    target), with what they need there together: every member's resident memory plus
    the largest working set (activations and logits of the one that computes). An
    inference server counts whole, unless enable_offload has the trainer step aside."""
    members: dict[str, list[str]] = {}
    for name in engines:
        strategy = config.get(f"{name}.scheduling_strategy.type")
        target = config.get(f"{name}.scheduling_strategy.target")
        colocation = isinstance(strategy, str) and strategy.lower() == "colocation"
        if colocation and isinstance(target, str) and target in engines and target != name:
            members.setdefault(target, [target]).append(name)
    offload = config.get("enable_offload") is True
    groups = []
    for names in members.values():
        counted = [n for n in names if not (offload and engines[n].get("role") == "inference")]
        if len(counted) < 2:
            continue
        resident = sum(_resident(engines[n]) for n in counted)
        working = max(_working(engines[n]) for n in counted)
        groups.append(
            {
                "engines": counted,
                "resident_bytes": resident,
                "working_bytes": working,
                "total_bytes": resident + working,
                "fits": resident + working <= gpu,
            }
        )
    return groups


def _resident(engine: dict[str, Any]) -> int:
    if engine.get("role") != "training":
        return int(engine["total_bytes"])
    return sum(int(engine["per_gpu"].get(key, 0)) for key in RESIDENT)


def _working(engine: dict[str, Any]) -> int:
    if engine.get("role") != "training":
        return 0
    return sum(int(engine["per_gpu"].get(key, 0)) for key in WORKING)
