"""The failed allocation explained: the frame names the tensor, the arithmetic the size."""

from __future__ import annotations

import json

import pytest

from assistant.config import load_config
from assistant.memory.allocation import explain
from assistant.memory.facts import table_entry

FIX = "tests/fixtures/memory"


def diagnose(run_cli, log: str, config: str = "grpo-7b.yaml", *extra: str) -> dict:
    result = run_cli(
        "diagnose",
        f"{FIX}/{log}",
        "--config",
        f"{FIX}/{config}",
        "--format",
        "json",
        "--non-interactive",
        *extra,
    )
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def test_full_micro_batch_log_softmax(run_cli) -> None:
    allocation = diagnose(run_cli, "logits-full-mb.log")["allocation"]
    assert allocation["tensor"] == "logits"
    assert allocation["inputs"] == {
        "tokens": 16384,
        "vocab_size": 152064,
        "bytes_per_value": 4,
        "tensor_parallel": 1,
    }
    assert allocation["bytes"] == 16384 * 152064 * 4
    assert "16384 tokens x 152064 vocabulary x 4 bytes" in allocation["formula"]
    assert "full micro-batch" in allocation["note"]


def test_partial_micro_batch_token_count_within_rounding(run_cli) -> None:
    allocation = diagnose(run_cli, "logits-partial-mb.log")["allocation"]
    assert allocation["tensor"] == "logits"
    # 3.40 GiB printed: the request was 6000 tokens give or take PyTorch's rounding
    assert abs(allocation["inputs"]["tokens"] - 6000) <= 0.02 * 6000


def test_optimizer_frame_names_the_lazy_adam_state(run_cli) -> None:
    allocation = diagnose(run_cli, "optimizer-exp-avg.log")["allocation"]
    assert allocation["tensor"] == "optimizer_state"
    assert allocation["inputs"]["parameter"] == "embed_tokens"
    assert allocation["inputs"]["shard"] == 4
    assert allocation["bytes"] == 152064 // 4 * 3584 * 2
    # a bf16 moment under adam is the 2026-05 code's, not the guide's fp32 one: said
    assert "areal_memory=code-2026-05" in allocation["note"]
    told = diagnose(
        run_cli, "optimizer-exp-avg.log", "grpo-7b.yaml", "--answer", "areal_memory=code-2026-05"
    )["allocation"]
    assert told["bytes"] == allocation["bytes"] and "2026-05" not in told.get("note", "")


def test_never_logits_when_the_frame_says_otherwise(run_cli) -> None:
    data = diagnose(run_cli, "optimizer-frame-logits-size.log")
    assert data["allocation"] is None or data["allocation"]["tensor"] != "logits"


def test_unknown_frame_gives_no_guess(run_cli) -> None:
    assert diagnose(run_cli, "unknown-frame.log")["allocation"] is None


def test_no_frame_needs_an_exact_match(run_cli) -> None:
    allocation = diagnose(run_cli, "no-frame-logits-size.log")["allocation"]
    assert allocation["tensor"] == "logits"
    assert allocation["matched_by"] == "arithmetic"


def test_sglang_kv_pool_buffer(run_cli) -> None:
    allocation = diagnose(run_cli, "sglang-kv-pool.log")["allocation"]
    assert allocation["tensor"] == "kv_cache"
    # one layer's K buffer: tokens x 4 KV heads x 128 x 2 bytes; 976.56 MiB ~ 1,000,000 tokens
    assert abs(allocation["inputs"]["tokens"] - 1_000_000) <= 20_000


def test_no_model_no_allocation(run_cli) -> None:
    result = run_cli(
        "diagnose", f"{FIX}/logits-full-mb.log", "--format", "json", "--non-interactive"
    )
    assert json.loads(result.stdout)["allocation"] is None


def test_model_config_flag(run_cli, tmp_path) -> None:
    cfg = tmp_path / "config.json"
    cfg.write_text(
        json.dumps(
            {
                "model_type": "llama",
                "vocab_size": 152064,
                "hidden_size": 1024,
                "num_hidden_layers": 2,
                "num_attention_heads": 8,
            }
        )
    )
    result = run_cli(
        "diagnose",
        f"{FIX}/logits-full-mb.log",
        "--format",
        "json",
        "--non-interactive",
        "--model-config",
        str(cfg),
    )
    assert json.loads(result.stdout)["allocation"]["inputs"]["vocab_size"] == 152064


def test_unreadable_model_config_is_exit_2(run_cli, tmp_path) -> None:
    bad = tmp_path / "config.json"
    bad.write_text("{")
    result = run_cli("diagnose", f"{FIX}/logits-full-mb.log", "--model-config", str(bad))
    assert result.exit_code == 2 and "Traceback" not in result.stderr


def test_text_output_explains_the_request(run_cli) -> None:
    result = run_cli(
        "diagnose",
        f"{FIX}/logits-full-mb.log",
        "--config",
        f"{FIX}/grpo-7b.yaml",
        "--non-interactive",
    )
    assert "logits: 9.28 GiB = 16384 tokens x 152064 vocabulary x 4 bytes" in result.stdout


def test_why_text_uses_the_arithmetic(run_cli) -> None:
    data = diagnose(run_cli, "logits-full-mb.log")
    first = data["recommendations"][0]
    assert first["section"] == "train-micro-batch"
    assert "9.28 GiB" in first["why"] and "2.32 GiB" in first["why"]


@pytest.mark.parametrize("request_gib", [0.0, -1])
def test_explain_ignores_missing_requests(request_gib: float) -> None:
    from assistant.models import LogReport

    report = LogReport(
        oom=True,
        phase="training",
        kind="cuda_oom",
        confidence=1.0,
        metrics={"tried_to_allocate_bytes": request_gib},
    )
    config = load_config(f"{FIX}/grpo-7b.yaml")
    assert explain(report, config, table_entry("Qwen/Qwen2.5-7B-Instruct")) is None


@pytest.mark.parametrize(
    ("log", "formula", "note"),
    [
        (
            "logits-full-mb.log",
            "16384 个 token x 词表 152064 x 4 字节（fp32 log-softmax）",
            "满的微批",
        ),
        (
            "sglang-kv-pool.log",
            "个 KV 头 x 头维度 128 x 2 字节（一层的 K 缓冲区；共 28 层）",
            "整个池",
        ),
        ("optimizer-exp-avg.log", "一个 Adam 动量", "2026-05 的代码"),
    ],
)
def test_the_allocation_follows_the_diagnosis_language(run_cli, log, formula, note) -> None:
    """The same tensor and figures; the formula and note are sentences in --lang."""
    en = diagnose(run_cli, log, "grpo-7b.yaml", "--lang", "en")["allocation"]
    zh = diagnose(run_cli, log, "grpo-7b.yaml", "--lang", "zh")["allocation"]
    assert formula in zh["formula"] and " tokens " not in zh["formula"]
    assert (note is None and "note" not in zh) or note in zh["note"]
    for key in ("tensor", "bytes", "inputs", "requested_bytes", "matched_by", "model"):
        assert zh[key] == en[key]


def test_text_output_in_chinese_explains_the_request(run_cli) -> None:
    result = run_cli(
        "diagnose",
        f"{FIX}/no-frame-logits-size.log",
        "--config",
        f"{FIX}/grpo-7b.yaml",
        "--non-interactive",
        "--lang",
        "zh",
    )
    assert "logits：9.28 GiB = 16384 个 token x 词表 152064 x 4 字节" in result.stdout
    assert "依据：算术" in result.stdout and "arithmetic" not in result.stdout


def test_sglang_prefill_logits_are_a_prefill_chunk_in_fp32(run_cli) -> None:
    """8192 tokens x 152064 x 4 bytes = 4.64 GiB: the server's logits processor, not
    the trainer's micro-batch (16384 tokens in this config)."""
    data = diagnose(run_cli, "sglang-prefill-logits.log")
    assert data["phase"] == "generation"
    allocation = data["allocation"]
    assert allocation["tensor"] == "logits"
    assert allocation["inputs"]["tokens"] == 8192 and allocation["inputs"]["bytes_per_value"] == 4
    assert allocation["inputs"]["where"] == "inference_server"
    assert allocation["bytes"] == 8192 * 152064 * 4
    assert "prefill chunk" in allocation["note"]


def test_gemma2_soft_capped_logits_are_recognised(run_cli) -> None:
    """Gemma-2's 256000-token vocabulary: 8192 x 256000 x 4 = 7.81 GiB, from the
    final_logit_softcapping frame."""
    allocation = diagnose(run_cli, "gemma2-softcap-logits.log", "gemma2-9b.yaml")["allocation"]
    assert allocation["tensor"] == "logits" and allocation["bytes"] == 8192 * 256000 * 4
    assert allocation["model"] == "google/gemma-2-9b-it"
    assert allocation["arithmetic_check"]["explains"] is True


def test_a_log_the_arithmetic_does_not_explain_is_said_so(run_cli) -> None:
    """1.5B at 10240 tokens with checkpointing is about 16 GiB by the estimate; the
    rank held 74.88 GiB: a leak, another tenant or a longer sample, not the config."""
    data = diagnose(run_cli, "leak-10240.log", "grpo-1.5b-10240.yaml")
    check = data["allocation"]["arithmetic_check"]
    assert check["explains"] is False and check["tokens"] == 10240
    assert check["predicted_bytes"] * 1.2 < check["allocated_bytes"]
    assert "does not explain the crash" in data["allocation"]["note"]
    first = data["recommendations"][0]
    assert "The arithmetic does not explain this crash" in first["why"]
    assert all("fits micro-batches" not in r["why"] for r in data["recommendations"])


def test_a_cuda_graph_capture_request_is_the_captured_batch(tmp_path) -> None:
    from assistant.memory.allocation import cuda_graph_candidates

    m = table_entry("Qwen/Qwen2.5-7B-Instruct")
    assert m is not None
    request = 256 * 152064 * 4  # the logits of a 256-sequence graph
    (found, *_) = list(cuda_graph_candidates(request, m, None, 1 << 20))
    assert found.tensor == "cuda_graph_pool" and found.inputs["batch_size"] == 256


def test_the_sampler_warm_up_batch(tmp_path) -> None:
    from assistant.memory.allocation import server_logits_candidates

    m = table_entry("Qwen/Qwen2.5-7B-Instruct")
    assert m is not None
    found = list(server_logits_candidates(256 * 152064 * 4, m, None, None, 1 << 20, False))
    assert found and found[0].inputs["where"] == "sampler_warmup"
    assert found[0].inputs["tokens"] == 256
    large = list(server_logits_candidates(1024 * 152064 * 4, m, None, None, 1 << 20, False))
    assert large and large[0].inputs["tokens"] == 1024


def test_a_solved_token_count_takes_the_round_number_the_printing_allows(run_cli, tmp_path) -> None:
    """7.81 GiB / (256000 x 4) is 8189 tokens give or take the two decimals: 8192."""
    config = tmp_path / "g.yaml"
    config.write_text("actor:\n  path: google/gemma-2-9b-it\n", encoding="utf-8")
    result = run_cli(
        "diagnose",
        f"{FIX}/gemma2-softcap-logits.log",
        "--config",
        str(config),
        "--format",
        "json",
        "--non-interactive",
    )
    allocation = json.loads(result.stdout)["allocation"]
    assert allocation["inputs"]["tokens"] == 8192
    assert allocation["inputs"]["bytes_per_value"] == 4  # soft-capped logits: fp32 first
