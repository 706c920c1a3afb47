"""What the arithmetic needs to know about a model, and its parameter count.

Sizes come from the model's own ``config.json`` (beside ``actor.path`` when that is a
local folder, or ``--model-config``), else from knowledge/models.yaml, a table of
public config.json values of well-known open models. The parameter count is computed
from those sizes the way the Hugging Face modelling code lays the weights out
(transformers/models/{qwen2,qwen3,qwen3_moe,llama,mistral,mixtral,gemma2,gemma3,glm,
deepseek_v3}/modeling_*.py): embeddings, per-layer attention and MLP / experts, norms.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path
from typing import Any

from assistant.errors import UserError
from assistant.knowledge import load_yaml

MAX_CONFIG_JSON = 4 * 1024 * 1024
NESTED = ("text_config", "llm_config", "language_config")
# model types whose q/k/v projections carry a bias even without an attention_bias key
QKV_BIAS_TYPES = frozenset({"qwen2", "qwen2_moe", "qwen2_vl", "qwen2_5_vl"})
QK_NORM_TYPES = frozenset({"qwen3", "qwen3_moe", "gemma3", "gemma3_text"})
FOUR_NORM_TYPES = frozenset({"gemma2", "gemma3", "gemma3_text", "glm4"})
DTYPE_BYTES = {
    "float32": 4,
    "fp32": 4,
    "float": 4,
    "bfloat16": 2,
    "bf16": 2,
    "float16": 2,
    "fp16": 2,
    "half": 2,
    "float8_e4m3fn": 1,
    "fp8": 1,
    "fp8_e4m3": 1,
    "fp8_e5m2": 1,
}


@dataclass(frozen=True)
class ModelFacts:
    name: str
    source: str  # "config.json" path, or the table entry's source URL
    from_table: bool
    model_type: str
    vocab_size: int
    hidden_size: int
    layers: int
    heads: int
    kv_heads: int
    head_dim: int
    intermediate_size: int
    tie_embeddings: bool
    qkv_bias: bool = False
    qk_norm: bool = False
    norms_per_layer: int = 2
    experts: int = 0
    experts_per_token: int = 0
    moe_intermediate_size: int = 0
    shared_experts: int = 0
    shared_expert_intermediate_size: int = 0
    dense_layers: int = 0  # leading layers with a dense MLP in an MoE model
    kv_lora_rank: int = 0  # > 0: multi-head latent attention (DeepSeek V2/V3)
    q_lora_rank: int = 0
    qk_nope_head_dim: int = 0
    qk_rope_head_dim: int = 0
    v_head_dim: int = 0
    dtype: str | None = None
    stand_in_for: str | None = None  # the model asked for, when these are a relative's sizes
    extra: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def mla(self) -> bool:
        return self.kv_lora_rank > 0

    @property
    def moe(self) -> bool:
        return self.experts > 0

    # --- parameter counts ----------------------------------------------------------

    @property
    def embedding_params(self) -> int:
        return self.vocab_size * self.hidden_size

    @property
    def lm_head_params(self) -> int:
        return 0 if self.tie_embeddings else self.vocab_size * self.hidden_size

    @property
    def attention_params(self) -> int:
        """One layer's attention projections (and their biases / q-k norms)."""
        h = self.hidden_size
        if self.mla:
            qk_head = self.qk_nope_head_dim + self.qk_rope_head_dim
            if self.q_lora_rank:
                q = (
                    h * self.q_lora_rank
                    + self.q_lora_rank
                    + self.q_lora_rank * self.heads * qk_head
                )
            else:
                q = h * self.heads * qk_head
            kv_a = h * (self.kv_lora_rank + self.qk_rope_head_dim) + self.kv_lora_rank
            kv_b = self.kv_lora_rank * self.heads * (self.qk_nope_head_dim + self.v_head_dim)
            o = self.heads * self.v_head_dim * h
            return q + kv_a + kv_b + o
        q_dim, kv_dim = self.heads * self.head_dim, self.kv_heads * self.head_dim
        params = h * q_dim + 2 * h * kv_dim + q_dim * h
        if self.qkv_bias:
            params += q_dim + 2 * kv_dim
        if self.qk_norm:
            params += 2 * self.head_dim
        return params

    @property
    def dense_mlp_params(self) -> int:
        return 3 * self.hidden_size * self.intermediate_size  # gate, up, down

    @property
    def moe_mlp_params(self) -> int:
        """One MoE layer: routed experts, router, shared experts."""
        h = self.hidden_size
        routed = self.experts * 3 * h * self.moe_intermediate_size
        shared_size = self.shared_expert_intermediate_size or (
            self.shared_experts * self.moe_intermediate_size
        )
        return routed + h * self.experts + 3 * h * shared_size

    @property
    def moe_layers(self) -> int:
        return self.layers - self.dense_layers if self.moe else 0

    @property
    def layer_params(self) -> int:
        """The largest decoder layer (what FSDP all-gathers at once)."""
        mlp = self.moe_mlp_params if self.moe else self.dense_mlp_params
        return self.attention_params + mlp + self.norms_per_layer * self.hidden_size

    @property
    def params(self) -> int:
        h = self.hidden_size
        norms = self.norms_per_layer * h
        dense = (self.layers - self.moe_layers) * (
            self.attention_params + self.dense_mlp_params + norms
        )
        sparse = self.moe_layers * (self.attention_params + self.moe_mlp_params + norms)
        return self.embedding_params + self.lm_head_params + dense + sparse + h

    @property
    def active_params(self) -> int:
        """Parameters one token passes through (MoE: only its experts)."""
        if not self.moe:
            return self.params
        idle = self.experts - self.experts_per_token
        return self.params - self.moe_layers * idle * 3 * self.hidden_size * (
            self.moe_intermediate_size
        )

    def summary(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "params": self.params,
            "vocab_size": self.vocab_size,
            "hidden_size": self.hidden_size,
            "layers": self.layers,
            "heads": self.heads,
            "kv_heads": self.kv_heads,
            "head_dim": self.head_dim,
            "experts": self.experts,
            "tie_embeddings": self.tie_embeddings,
            "source": "table" if self.from_table else "config.json",
            "source_detail": self.source,
        }


# --- reading config.json / the table ------------------------------------------------


def _int(block: dict[str, Any], *keys: str, default: int = 0) -> int:
    for key in keys:
        value = block.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return default


def facts_from_dict(data: dict[str, Any], *, name: str, source: str, table: bool) -> ModelFacts:
    """ModelFacts from config.json keys; raises ValueError when a needed size is missing."""
    block = data
    for key in NESTED:  # a VLM keeps its language model's sizes in a nested block
        nested = data.get(key)
        if isinstance(nested, dict) and "hidden_size" in nested:
            block = {**nested, "model_type": nested.get("model_type") or data.get("model_type")}
            break
    hidden = _int(block, "hidden_size", "n_embd", "d_model")
    layers = _int(block, "num_hidden_layers", "n_layer", "num_layers")
    heads = _int(block, "num_attention_heads", "n_head")
    vocab = _int(block, "vocab_size", "padded_vocab_size")
    if not (hidden and layers and heads and vocab):
        missing = [
            k
            for k, v in (
                ("hidden_size", hidden),
                ("num_hidden_layers", layers),
                ("num_attention_heads", heads),
                ("vocab_size", vocab),
            )
            if not v
        ]
        raise ValueError(f"{source}: missing {', '.join(missing)}")
    model_type = str(block.get("model_type") or "")
    kv_heads = _int(block, "num_key_value_heads", "multi_query_group_num", default=heads)
    head_dim = _int(block, "head_dim", default=hidden // heads)
    experts = _int(block, "num_experts", "n_routed_experts", "num_local_experts")
    inter = _int(block, "intermediate_size", "ffn_hidden_size", default=4 * hidden)
    moe_inter = _int(block, "moe_intermediate_size", default=inter if experts else 0)
    dense_layers = _int(block, "first_k_dense_replace") if experts else 0
    bias = block.get("attention_bias")
    dtype = block.get("torch_dtype") or block.get("dtype") or data.get("torch_dtype")
    tie = block.get("tie_word_embeddings", data.get("tie_word_embeddings", False))
    return ModelFacts(
        name=name,
        source=source,
        from_table=table,
        model_type=model_type,
        vocab_size=vocab,
        hidden_size=hidden,
        layers=layers,
        heads=heads,
        kv_heads=kv_heads or heads,
        head_dim=head_dim,
        intermediate_size=inter,
        tie_embeddings=bool(tie),
        qkv_bias=bool(bias) if isinstance(bias, bool) else model_type in QKV_BIAS_TYPES,
        qk_norm=model_type in QK_NORM_TYPES or bool(block.get("use_qk_norm")),
        norms_per_layer=4 if model_type in FOUR_NORM_TYPES else 2,
        experts=experts,
        experts_per_token=_int(block, "num_experts_per_tok", "moe_topk"),
        moe_intermediate_size=moe_inter,
        shared_experts=_int(block, "n_shared_experts"),
        shared_expert_intermediate_size=_int(block, "shared_expert_intermediate_size"),
        dense_layers=dense_layers,
        kv_lora_rank=_int(block, "kv_lora_rank"),
        q_lora_rank=_int(block, "q_lora_rank"),
        qk_nope_head_dim=_int(block, "qk_nope_head_dim"),
        qk_rope_head_dim=_int(block, "qk_rope_head_dim"),
        v_head_dim=_int(block, "v_head_dim"),
        dtype=str(dtype) if isinstance(dtype, str) else None,
    )


def read_config_json(path: str | Path) -> ModelFacts:
    """A config.json file (or a model folder holding one); UserError when unreadable."""
    candidate = Path(path).expanduser()
    if candidate.is_dir():
        candidate = candidate / "config.json"
    try:
        if candidate.stat().st_size > MAX_CONFIG_JSON:
            raise UserError(f"{candidate}: too large for a model config.json")
        data = json.loads(candidate.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UserError(f"{candidate}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"{candidate}: cannot read ({exc.__class__.__name__})") from None
    except ValueError as exc:
        raise UserError(f"{candidate}: not valid JSON ({exc})") from None
    if not isinstance(data, dict):
        raise UserError(f"{candidate}: a config.json holds a JSON object")
    try:
        return facts_from_dict(data, name=_name_of(candidate), source=str(candidate), table=False)
    except ValueError as exc:
        raise UserError(f"{exc}") from None


def _name_of(config_json: Path) -> str:
    data_name = config_json.parent.name
    return data_name or str(config_json)


def normalise(name: str) -> str:
    return name.rstrip("/").rsplit("/", 1)[-1].strip().lower()


@cache
def _table_index() -> dict[str, dict[str, Any]]:
    index: dict[str, dict[str, Any]] = {}
    for entry in (load_yaml("models.yaml") or {}).get("models") or []:
        for key in [entry["id"], *entry.get("aliases", [])]:
            index.setdefault(normalise(key), entry)
    return index


def table_entry(name: str | None) -> ModelFacts | None:
    """The bundled table's facts for a model id or path, matched on its last part."""
    if not name:
        return None
    entry = _table_index().get(normalise(name))
    if entry is None:
        return None
    data = {k: v for k, v in entry.items() if k not in ("id", "aliases", "source")}
    return facts_from_dict(data, name=entry["id"], source=entry["source"], table=True)


def table_ids() -> list[str]:
    return sorted({entry["id"] for entry in _table_index().values()})


def local_config(name: str | None) -> ModelFacts | None:
    """``config.json`` in a local model folder; None for hub ids and unreadable files."""
    if not name:
        return None
    try:
        folder = Path(name).expanduser()
        if not (folder / "config.json").is_file():
            return None
        return read_config_json(folder)
    except (OSError, ValueError, RuntimeError, UserError):
        return None


def resolve_model(
    model_name: str | None, model_config: str | None = None, *, relatives: bool = False
) -> ModelFacts | None:
    """--model-config first, then config.json beside the model path, then the table;
    with ``relatives`` (estimate only), then the table's closest relative (``stand_in``)."""
    if model_config:
        return read_config_json(model_config)
    found = local_config(model_name) or table_entry(model_name)
    if found is None and relatives:
        found = stand_in(model_name)
    return found


# A model name: what comes before the size ("qwen2.5-vl-" in "qwen2.5-vl-3b-instruct"),
# the size in billions, and an MoE's active size ("-a3b").
SIZED_NAME = re.compile(r"^(?P<prefix>.*?)(?P<size>\d+(?:\.\d+)?)b(?![a-z0-9])(?P<rest>.*)$")
ACTIVE_SIZE = re.compile(r"-a\d+(?:\.\d+)?b(?![a-z0-9])")
MINOR_VERSION = re.compile(r"(\d+)\.\d+")
STAND_IN_TOLERANCE = 0.2  # stated sizes within 20% (Qwen3-VL-2B and Qwen3-1.7B)


def _family(name: str) -> tuple[str, float, bool] | None:
    """(family, stated billions, MoE) of a model name; None without a size in it.

    The family is the name before the size with minor versions dropped and a "-vl"
    part removed: Qwen2-, Qwen2.5- and Qwen2.5-VL- models share one ("qwen2-"); the
    text models of one family and size have kept their geometry across minor versions
    (the table's aliases list such cases), and a VL checkpoint's language model is the
    text model of its generation.
    """
    match = SIZED_NAME.match(normalise(name))
    if match is None:
        return None
    prefix = MINOR_VERSION.sub(r"\1", match["prefix"]).replace("-vl-", "-")
    return prefix, float(match["size"]), ACTIVE_SIZE.search(match["rest"]) is not None


def stand_in(name: str | None) -> ModelFacts | None:
    """The table model closest to ``name``: same family, same dense/MoE kind, stated size
    within 20%. A guess, so the caller must say so (``stand_in_for`` is set)."""
    wanted = _family(name) if name else None
    if wanted is None or not wanted[0]:
        return None
    prefix, size, moe = wanted
    best: tuple[float, str] | None = None
    for key in table_ids():
        known = _family(key)
        if known is None or known[0] != prefix or known[2] != moe:
            continue
        gap = abs(known[1] - size) / size
        if gap <= STAND_IN_TOLERANCE and (best is None or gap < best[0]):
            best = (gap, key)
    if best is None:
        return None
    found = table_entry(best[1])
    return replace(found, stand_in_for=name) if found is not None else None


def dtype_bytes(dtype: Any, default: int = 2) -> int:
    if isinstance(dtype, str):
        return DTYPE_BYTES.get(dtype.lower().removeprefix("torch."), default)
    return default


def model_for(report: Any, config: Any, model_config: str | None = None) -> ModelFacts | None:
    """The model of a diagnosis: --model-config, actor.path's config.json or table entry,
    else the model name the log states (facts.model_name)."""
    if model_config:
        return read_config_json(model_config)
    name = config.model_path() if config is not None else None
    found = resolve_model(name) if name else None
    if found is None and report is not None:
        logged = report.facts.get("model_name")
        found = resolve_model(logged) if isinstance(logged, str) else None
    return found
