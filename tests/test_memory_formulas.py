"""Memory formulas and model facts against hand-computed values."""

from __future__ import annotations

import json

import pytest

from assistant.errors import UserError
from assistant.memory import formulas
from assistant.memory.facts import facts_from_dict, read_config_json, resolve_model, table_entry
from assistant.memory.sizes import parse_gpu_size, printed_tolerance

GIB = 1 << 30

QWEN25_7B = {
    "model_type": "qwen2",
    "vocab_size": 152064,
    "hidden_size": 3584,
    "num_hidden_layers": 28,
    "num_attention_heads": 28,
    "num_key_value_heads": 4,
    "intermediate_size": 18944,
    "tie_word_embeddings": False,
}


def qwen7b():
    return facts_from_dict(QWEN25_7B, name="q", source="test", table=False)


def test_parameter_count_of_a_dense_model_by_hand() -> None:
    # embed + lm_head: 2 x 152064 x 3584 = 1,089,994,752
    # per layer: q 3584*3584+3584, k/v 2*(3584*512+512), o 3584*3584,
    #            mlp 3*3584*18944, norms 2*3584 = 233,057,792; x 28 = 6,525,618,176
    # final norm 3584
    assert qwen7b().params == 1_089_994_752 + 6_525_618_176 + 3584 == 7_615_616_512


def test_tied_embeddings_count_once() -> None:
    tied = facts_from_dict(
        {**QWEN25_7B, "tie_word_embeddings": True}, name="q", source="t", table=False
    )
    assert qwen7b().params - tied.params == 152064 * 3584


def test_moe_counts_every_expert_but_activates_top_k() -> None:
    moe = facts_from_dict(
        {
            "model_type": "mixtral",
            "vocab_size": 32000,
            "hidden_size": 4096,
            "num_hidden_layers": 32,
            "num_attention_heads": 32,
            "num_key_value_heads": 8,
            "intermediate_size": 14336,
            "num_local_experts": 8,
            "num_experts_per_tok": 2,
        },
        name="m",
        source="t",
        table=False,
    )
    # per layer: attention 2*4096^2 + 2*4096*1024 = 41,943,040; experts 8*3*4096*14336 =
    # 1,409,286,144; router 4096*8; norms 8192 -> 1,451,270,144 x 32 + embeddings + final norm
    assert moe.params == 1_451_270_144 * 32 + 2 * 32000 * 4096 + 4096
    assert moe.active_params == moe.params - 32 * 6 * 3 * 4096 * 14336


def test_table_matches_a_path_by_its_last_part() -> None:
    found = table_entry("/storage/models/Qwen2.5-7B-Instruct/")
    assert found is not None and found.vocab_size == 152064 and found.from_table
    assert table_entry("Qwen/Qwen2.5-7B") is not None  # an alias
    assert table_entry("acme/NotAModel-3B") is None


def test_config_json_beside_the_model_path_wins_over_the_table(tmp_path) -> None:
    folder = tmp_path / "Qwen2.5-7B-Instruct"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({**QWEN25_7B, "vocab_size": 1000}))
    found = resolve_model(str(folder))
    assert found is not None and found.vocab_size == 1000 and not found.from_table


def test_vlm_config_json_reads_the_text_block(tmp_path) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"model_type": "qwen2_5_vl", "text_config": QWEN25_7B}))
    assert read_config_json(path).params == 7_615_616_512


@pytest.mark.parametrize("content", ["{not json", "[1, 2]", '{"hidden_size": 8}'])
def test_bad_config_json_is_a_one_line_user_error(tmp_path, content: str) -> None:
    path = tmp_path / "config.json"
    path.write_text(content)
    with pytest.raises(UserError):
        read_config_json(path)


def test_logits_of_the_sample_micro_batch() -> None:
    # the example: 16384 x 152064 x 4 bytes = 9.28 GiB
    assert formulas.logits_bytes(16384, 152064, 4) == 9_965_666_304
    assert round(formulas.logits_bytes(4096, 152064, 4) / GIB, 2) == 2.32
    assert formulas.logits_bytes(8192, 152064, 4, tp=2) == 8192 * 76032 * 4


def test_kv_bytes_per_token() -> None:
    llama8b = table_entry("meta-llama/Llama-3.1-8B-Instruct")
    assert formulas.kv_bytes_per_token(llama8b) == 32 * 8 * 128 * 2 * 2 == 131072
    assert formulas.kv_bytes_per_token(llama8b, tp=2) == 65536
    assert formulas.kv_bytes_per_token(llama8b, tp=16) == 32 * 1 * 128 * 2 * 2  # replicated
    v3 = table_entry("deepseek-ai/DeepSeek-V3")
    assert formulas.kv_bytes_per_token(v3) == (512 + 64) * 61 * 2  # MLA latent cache


def test_sglang_pool_by_hand() -> None:
    # (80 GiB - 0.5 GiB) * 0.85 - 14 GiB = 53.575 GiB; / 57344 bytes per token
    pool, tokens = formulas.sglang_kv_pool(80 * GIB, 14 * GIB, 0.85, 57344, GIB // 2)
    assert pool == int(79.5 * GIB * 0.85) - 14 * GIB
    assert tokens == pool // 57344
    assert formulas.sglang_kv_pool(20 * GIB, 30 * GIB, 0.9, 57344) == (0, 0)


def test_vllm_pool_rounds_down_to_blocks() -> None:
    available, tokens = formulas.vllm_kv_pool(
        24 * GIB, 15 * GIB, 0.9, 131072, peak_activation_bytes=3 * GIB, block_size=16
    )
    assert available == int(24 * GIB * 0.9) - 18 * GIB
    assert tokens % 16 == 0 and tokens == available // (131072 * 16) * 16


def test_checkpointing_shrinks_activations() -> None:
    m = qwen7b()
    full = formulas.activation_bytes(m, 4096, checkpointing=False)
    ckpt = formulas.activation_bytes(m, 4096, checkpointing=True)
    # bf16 values, the RMSNorms' fp32 input copies (2 x hidden x 4) and the attention's
    # fp32 log-sum-exp (heads x 4), per token
    per_layer = (formulas.layer_activation_values(m) * 2 + 2 * 3584 * 4 + 28 * 4) * 4096
    assert formulas.layer_activation_bytes(m, 4096) == per_layer
    assert full == 28 * per_layer
    assert ckpt == 28 * 3584 * 4096 * 2 + per_layer


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("80GiB", 80 * GIB),
        ("79.19 GiB", int(79.19 * GIB)),
        ("141GB", 141 * GIB),
        ("24576MiB", 24 * GIB),
        ("1TB", 1 << 40),
    ],
)
def test_gpu_sizes(text: str, expected: int) -> None:
    assert parse_gpu_size(text) == expected


@pytest.mark.parametrize("text", ["80", "eighty GiB", "80 XB", "0.5MiB", "-4GiB", ""])
def test_bad_gpu_sizes(text: str) -> None:
    with pytest.raises(UserError):
        parse_gpu_size(text)


def test_printed_tolerance_is_half_the_last_decimal() -> None:
    line = "Tried to allocate 9.28 GiB. GPU 0 has a total capacity of 79.11 GiB"
    assert printed_tolerance(line, int(9.28 * GIB)) == int(GIB * 0.005) + 1
    assert printed_tolerance("no figure here", 10_000) == 100
