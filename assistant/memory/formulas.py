"""Bytes of each tensor family, each derived from the code that allocates it.

Every function is plain integer arithmetic on ModelFacts and config numbers, so the
unit tests can check them against hand-computed values. The source file each formula
follows is cited beside it (read at the snapshots fetched for this project).
"""

from __future__ import annotations

from typing import Any

from assistant.memory.facts import ModelFacts

GIB = 1 << 30
MIB = 1 << 20

# --- training: logits and log-probabilities -----------------------------------------


def logits_bytes(tokens: int, vocab: int, bytes_per_value: int = 4, tp: int = 1) -> int:
    """One [tokens, vocab/tp] tensor.

    areal/utils/functional/vocab_parallel.py: gather_logprobs(_entropy) computes
    ``log_softmax(logits.float() / temperature)`` - a float32 copy of the logits, so
    tokens x vocabulary x 4 bytes; under tensor parallelism (Megatron, Archon) each
    rank holds a vocabulary shard (``_VocabParallelLogProbs``: [*, vocab/tp]). The
    lm_head output itself is in the compute dtype (2 bytes for bf16).
    """
    return tokens * (vocab // max(tp, 1)) * bytes_per_value


def logits_peak_bytes(tokens: int, vocab: int, tp: int = 1, dtype_bytes: int = 2) -> int:
    """What one micro-batch's logits hold at the log-softmax: the lm_head output in the
    compute dtype plus its float32 log-softmax (kept for the backward pass)."""
    return logits_bytes(tokens, vocab, dtype_bytes, tp) + logits_bytes(tokens, vocab, 4, tp)


# --- training: activations ------------------------------------------------------------


def layer_activation_values(m: ModelFacts, tp: int = 1) -> int:
    """Values one decoder layer keeps per token for its backward pass (no checkpointing).

    The count of Korthikanti et al. 2022, "Reducing Activation Recomputation in Large
    Transformer Models" (arXiv:2205.05198, sec. 4.1: 34·s·b·h + 5·a·s²·b bytes per
    layer for a GPT layer in 16-bit), taken to today's decoder layers: flash attention
    keeps no a·s² scores, dropout is off in RL (no masks), attention with grouped KV
    heads and a gated MLP. Counted from the Hugging Face decoder layer
    (modeling_qwen2.py / modeling_llama.py): the two RMSNorm inputs and outputs
    (4 x hidden), q, k, v after rotary embedding and the attention output (flash
    attention keeps no [seq, seq] scores), and the gated MLP's gate, up, act(gate)
    and product (4 x intermediate; MoE: the routed experts' share, experts_per_token x
    moe_intermediate). Dropout is off in RL.
    """
    if m.mla:
        attn = m.heads * (m.qk_nope_head_dim + m.qk_rope_head_dim) * 2 + m.heads * m.v_head_dim
        attn += m.kv_lora_rank + m.qk_rope_head_dim
    else:
        attn = (m.heads + 2 * m.kv_heads) * m.head_dim + m.heads * m.head_dim
    if m.moe:
        shared = m.shared_expert_intermediate_size or m.shared_experts * m.moe_intermediate_size
        inter = m.experts_per_token * m.moe_intermediate_size + shared
    else:
        inter = m.intermediate_size
    return 4 * m.hidden_size + (attn + 4 * inter) // max(tp, 1)


def layer_activation_bytes(m: ModelFacts, tokens: int, dtype_bytes: int = 2, tp: int = 1) -> int:
    """Bytes one decoder layer keeps for ``tokens`` tokens: ``layer_activation_values`` in
    the compute dtype, plus what is kept in float32 whatever the compute dtype:

    - Hugging Face's RMSNorm (LlamaRMSNorm, Qwen2RMSNorm, Gemma's) casts its input to
      float32 and autograd keeps that copy for pow/mul's backward: 4 x hidden bytes per
      norm and token when the model computes in 16 bits;
    - flash attention's log-sum-exp (softmax_lse), heads x 4 bytes per token.
    benchmarks/validate_memory_torch.py holds this count to what autograd saves.
    """
    per_token = layer_activation_values(m, tp) * dtype_bytes
    if dtype_bytes < 4:
        per_token += m.norms_per_layer * m.hidden_size * 4
    per_token += m.heads // max(tp, 1) * 4
    return per_token * tokens


def activation_bytes(
    m: ModelFacts,
    tokens: int,
    *,
    checkpointing: bool,
    dtype_bytes: int = 2,
    tp: int = 1,
    cp: int = 1,
) -> int:
    """Activations of one micro-batch on one GPU.

    Without checkpointing every layer keeps ``layer_activation_bytes``.
    With it (transformers' gradient_checkpointing_enable, one checkpoint per decoder
    layer) each layer keeps only its input (hidden values per token) and one layer's
    full set exists at a time while it is recomputed. Context parallelism (Ulysses,
    ``c``) splits the tokens over its ranks.
    """
    local = -(-tokens // max(cp, 1))
    per_layer = layer_activation_bytes(m, local, dtype_bytes, tp)
    if not checkpointing:
        return m.layers * per_layer
    return m.layers * m.hidden_size * local * dtype_bytes + per_layer


# --- training: weights, gradients, optimizer states -------------------------------------

# Bytes per parameter of weights, gradients, master copies and optimizer states are
# data (knowledge/memory.yaml ``storage``, each figure with its source), read by
# assistant/memory/storage.py.


def lora_params(m: ModelFacts, rank: int, targets: list[str], shapes: dict[str, Any]) -> int:
    """Trainable parameters of rank-``rank`` LoRA adapters on ``targets`` in every layer.

    ``shapes`` maps a module name to [input, output, part] (knowledge/memory.yaml
    ``lora.targets``); in an MoE layer an MLP adapter sits on every routed expert (and
    the shared experts' MLP), each of the expert's intermediate size.
    """
    q, kv = m.heads * m.head_dim, m.kv_heads * m.head_dim
    total = 0
    for name in targets:
        if name not in shapes:
            continue
        source, target, part = shapes[name]
        if part == "attention":
            size = {"hidden": m.hidden_size, "q": q, "kv": kv, "q+2kv": q + 2 * kv}
            total += m.layers * rank * (size[source] + size[target])
            continue
        for inter, count, layers in _mlp_blocks(m):
            size = {"hidden": m.hidden_size, "mlp": inter, "2mlp": 2 * inter}
            total += layers * count * rank * (size[source] + size[target])
    return total


def _mlp_blocks(m: ModelFacts) -> list[tuple[int, int, int]]:
    """(intermediate size, MLPs per layer, layers) of each kind of MLP in the model."""
    if not m.moe:
        return [(m.intermediate_size, 1, m.layers)]
    blocks = [(m.moe_intermediate_size, m.experts, m.moe_layers)]
    shared = m.shared_expert_intermediate_size or m.shared_experts * m.moe_intermediate_size
    if shared:
        blocks.append((shared, 1, m.moe_layers))
    if m.dense_layers:
        blocks.append((m.intermediate_size, 1, m.dense_layers))
    return blocks


def gathered_layer_bytes(m: ModelFacts, dtype_bytes: int = 2, tp: int = 1) -> int:
    """One decoder layer all-gathered by FSDP for its forward/backward (unsharded)."""
    return m.layer_params * dtype_bytes // max(tp, 1)


# --- rollout servers: weights and KV cache -------------------------------------------


def server_weight_bytes(m: ModelFacts, dtype_bytes: int = 2, tp: int = 1, pp: int = 1) -> int:
    """Weights on one server GPU: every linear layer and the vocabulary embedding are
    split over the tensor-parallel ranks (SGLang/vLLM Column/RowParallelLinear,
    VocabParallelEmbedding), the layers over pipeline stages."""
    return m.params * dtype_bytes // max(tp, 1) // max(pp, 1)


def kv_heads_per_rank(m: ModelFacts, tp: int) -> int:
    """sglang model_config.get_num_kv_heads / vllm get_num_kv_heads: max(1, kv / tp);
    KV heads are replicated when tp exceeds them."""
    return max(1, m.kv_heads // max(tp, 1))


def kv_bytes_per_token(m: ModelFacts, tp: int = 1, kv_dtype_bytes: int = 2, pp: int = 1) -> int:
    """KV-cache bytes one token takes on one GPU, K and V over all its layers.

    SGLang python/sglang/srt/model_executor/model_runner.py (profile_max_num_token):
      cell_size = num_kv_heads(tp) * head_dim * num_layers * 2 * element_size(kv dtype)
      MLA models: (kv_lora_rank + qk_rope_head_dim) * num_layers * element_size
    vLLM vllm/v1/kv_cache_interface.py (AttentionSpec.page_size_bytes):
      2 * block_size * num_kv_heads * head_size * dtype_size per layer per block.
    """
    layers = -(-m.layers // max(pp, 1))
    if m.mla:
        return (m.kv_lora_rank + m.qk_rope_head_dim) * layers * kv_dtype_bytes
    return kv_heads_per_rank(m, tp) * m.head_dim * layers * 2 * kv_dtype_bytes


def sglang_kv_pool(
    gpu_bytes: int,
    weight_bytes: int,
    mem_fraction_static: float,
    per_token: int,
    context_bytes: int = 0,
) -> tuple[int, int]:
    """(pool bytes, tokens) of SGLang's KV pool.

    model_runner.py profile_max_num_token: total = free memory before loading,
    available = free memory after loading the weights,
      rest_memory   = available - total * (1 - mem_fraction_static)
      max_num_token = int(rest_memory * (1 << 30) // cell_size)
    With total = GPU - context and available = total - weights this is
      (GPU - context) * mem_fraction_static - weights.
    """
    total = gpu_bytes - context_bytes
    rest = int(total * mem_fraction_static) - weight_bytes
    if rest <= 0 or per_token <= 0:
        return max(rest, 0), 0
    return rest, rest // per_token


def vllm_kv_pool(
    gpu_bytes: int,
    weight_bytes: int,
    gpu_memory_utilization: float,
    per_token: int,
    *,
    peak_activation_bytes: int = 0,
    non_torch_bytes: int = 0,
    block_size: int = 16,
) -> tuple[int, int]:
    """(pool bytes, tokens) of vLLM's KV cache.

    vllm/v1/worker/gpu_worker.py determine_available_memory (V0: worker.py
    determine_num_available_blocks): requested = total * gpu_memory_utilization;
    available_kv = requested - (weights + peak activation of the profiling run +
    non-torch memory). vllm/v1/core/kv_cache_utils.py: num_blocks =
    available // (page_size_bytes * num_layers); tokens = num_blocks * block_size.
    """
    available = int(gpu_bytes * gpu_memory_utilization) - (
        weight_bytes + peak_activation_bytes + non_torch_bytes
    )
    if available <= 0 or per_token <= 0:
        return max(available, 0), 0
    blocks = available // (per_token * block_size)
    return available, blocks * block_size


def vllm_profile_peak_bytes(
    m: ModelFacts, batched_tokens: int, tp: int = 1, dtype_bytes: int = 2
) -> int:
    """Peak activation of vLLM's profiling forward pass over max_num_batched_tokens:
    the merged gate_up output (2 x intermediate), SiluAndMul's output (1 x
    intermediate) and three hidden-size buffers (residual, hidden, norm output) per
    token (vllm/model_executor/models/llama.py LlamaMLP / LlamaDecoderLayer)."""
    inter = m.intermediate_size
    if m.moe:
        inter = m.experts_per_token * m.moe_intermediate_size
    return batched_tokens * (3 * inter // max(tp, 1) + 3 * m.hidden_size) * dtype_bytes


def sequences_that_fit(kv_tokens: int, sequence_tokens: int) -> int:
    return kv_tokens // sequence_tokens if sequence_tokens > 0 else 0
