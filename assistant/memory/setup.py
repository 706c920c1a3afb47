"""The numbers of a config the arithmetic uses, read once, with where each came from."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from assistant.config.numbers import usable_number
from assistant.memory.facts import dtype_bytes
from assistant.memory.storage import Behaviour, PerParam, behaviour, bytes_per_param

if TYPE_CHECKING:
    from assistant.config.backend import Backend
    from assistant.config.loader import ExperimentConfig


@dataclass
class TrainSetup:
    engine: str  # actor, critic, ref
    backend: Backend | None
    tokens_per_mb: int | None
    dtype_bytes: int
    optimizer: str | None  # None: no optimizer (ref)
    checkpointing: bool
    weight_chunk_bytes: int | None = None
    notes: list[str] = field(default_factory=list)
    dtype: str | None = None  # <engine>.dtype as the config gives it
    optimizer_dtype: str | None = None  # <engine>.optimizer_dtype as the config gives it
    behaviour: Behaviour | None = None  # the version of AReaL's memory behaviour assumed
    lora: bool = False

    def per_param(self) -> PerParam:
        """Bytes per parameter of each term (knowledge/memory.yaml ``storage``)."""
        ident = self.behaviour.id if self.behaviour is not None else None
        return bytes_per_param(self.kind, self.optimizer, self.dtype, self.optimizer_dtype, ident)

    @property
    def kind(self) -> str:
        name = self.backend.name if self.backend is not None else None
        return name or "fsdp"

    def dim(self, d: str) -> int:
        return self.backend.size(d) if self.backend is not None else 1

    @property
    def shard(self) -> int:
        """GPUs a parameter is split over for weights and gradients."""
        if self.backend is None:
            return 1
        if self.kind == "megatron":
            return self.dim("t") * self.dim("p")
        return self.backend.gpus  # FSDP2 shards over dp x cp (x tp for the linear layers)

    @property
    def optimizer_shard(self) -> int:
        if self.backend is None:
            return 1
        if self.kind == "megatron":  # distributed optimizer: also over data parallel ranks
            if self.lora:  # AReaL turns the distributed optimizer off with LoRA
                return self.dim("t") * self.dim("p")
            return self.dim("t") * self.dim("p") * self.dim("d")
        return self.backend.gpus


def number(config: ExperimentConfig | None, key: str) -> float | None:
    if config is None:
        return None
    return usable_number(config.get(key))


def train_setup(
    config: ExperimentConfig | None, engine: str = "actor", memory_answer: Any = None
) -> TrainSetup:
    """The numbers of one training engine; ``memory_answer`` is the user's answer to
    areal_memory (which version of AReaL's memory behaviour), if any."""
    from assistant.config.engines import engine_layout

    layout = engine_layout(config, engine) if config is not None else None
    get: Any = config.get if config is not None else (lambda _key: None)
    tokens = number(config, f"{engine}.mb_spec.max_tokens_per_mb")
    dtype = get(f"{engine}.dtype") or get("actor.dtype")
    optimizer_dtype = get(f"{engine}.optimizer_dtype")
    optimizer = get(f"{engine}.optimizer.type")
    if engine == "actor" and not optimizer:
        optimizer = "adam"
    has_optimizer = engine != "ref" and (engine == "actor" or get(f"{engine}.optimizer"))
    chunk = number(config, f"{engine}.weight_chunked_mem_mb") or number(
        config, "actor.weight_chunked_mem_mb"
    )
    return TrainSetup(
        engine=engine,
        backend=layout.backend if layout is not None else None,
        tokens_per_mb=int(tokens) if tokens else None,
        dtype_bytes=dtype_bytes(dtype),
        optimizer=str(optimizer or "adam") if has_optimizer else None,
        checkpointing=get(f"{engine}.gradient_checkpointing") is True,
        weight_chunk_bytes=int(chunk * (1 << 20)) if chunk else None,
        dtype=str(dtype) if isinstance(dtype, str) else None,
        optimizer_dtype=str(optimizer_dtype) if isinstance(optimizer_dtype, str) else None,
        behaviour=behaviour(config, engine, memory_answer),
        lora=get(f"{engine}.use_lora") is True,
    )


@dataclass
class ServerSetup:
    server: str  # sglang | vllm
    backend: Backend | None
    fraction: float
    fraction_key: str
    sequence_tokens: int | None  # one rollout: prompt + generated tokens
    sequence_key: str  # where sequence_tokens came from
    max_len: int | None  # the server's own limit (context_length / max_model_len)
    max_len_key: str
    samples_per_rollout: int
    concurrency: int | None
    kv_dtype_bytes: int
    dtype_bytes: int
    batched_tokens: int | None

    def dim(self, d: str) -> int:
        return self.backend.size(d) if self.backend is not None else 1

    @property
    def replicas(self) -> int:
        return self.dim("d")


def server_setup(config: ExperimentConfig | None) -> ServerSetup | None:
    from assistant.config.engines import engine_layout

    layout = engine_layout(config, "rollout") if config is not None else None
    if layout is None or layout.backend.name not in ("sglang", "vllm"):
        return None
    server = layout.backend.name
    get = config.get  # type: ignore[union-attr]
    if server == "sglang":
        fraction_key, sequence_key = "sglang.mem_fraction_static", "sglang.context_length"
        kv_dtype = get("sglang.kv_cache_dtype")
    else:
        fraction_key, sequence_key = "vllm.gpu_memory_utilization", "vllm.max_model_len"
        kv_dtype = get("vllm.kv_cache_dtype")
    dtype = get(f"{server}.dtype") or get("actor.dtype")
    model_bytes = dtype_bytes(dtype)
    kv_bytes = model_bytes if kv_dtype in (None, "auto") else dtype_bytes(kv_dtype, model_bytes)
    fraction = number(config, fraction_key)
    max_len = number(config, sequence_key)
    max_length = number(config, "train_dataset.max_length")
    new_tokens = number(config, "gconfig.max_new_tokens")
    sequence: float | None
    if max_length and new_tokens:
        sequence, where = (
            max_length + new_tokens,
            "train_dataset.max_length + gconfig.max_new_tokens",
        )
    else:
        sequence, where = max_len, sequence_key
    samples = number(config, "gconfig.n_samples")
    concurrency = number(config, "rollout.max_concurrent_rollouts") or number(
        config, "max_concurrent_rollouts"
    )
    batched = number(config, "vllm.max_num_batched_tokens")
    return ServerSetup(
        server=server,
        backend=layout.backend,
        fraction=float(fraction) if fraction else 0.9,
        fraction_key=fraction_key,
        sequence_tokens=int(sequence) if sequence else None,
        sequence_key=where,
        max_len=int(max_len) if max_len else None,
        max_len_key=sequence_key,
        samples_per_rollout=int(samples) if samples and samples >= 1 else 1,
        concurrency=int(concurrency) if concurrency else None,
        kv_dtype_bytes=kv_bytes,
        dtype_bytes=model_bytes,
        batched_tokens=int(batched) if batched else None,
    )
