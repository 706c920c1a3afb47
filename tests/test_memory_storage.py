"""Bytes per parameter: one table (knowledge/memory.yaml storage) for every caller,
with the version of AReaL's memory behaviour it assumes stated beside the figures."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assistant.config.loader import load_config
from assistant.memory import storage
from assistant.memory.estimate import Notes, training_engine
from assistant.memory.facts import table_entry

P7B = 7_615_616_512


def config(tmp_path: Path, actor: str, name: str = "c.yaml") -> Path:
    path = tmp_path / name
    path.write_text(
        "cluster: {n_nodes: 1, n_gpus_per_node: 4}\n"
        "actor:\n"
        "  path: Qwen/Qwen2.5-7B-Instruct\n"
        "  mb_spec: {max_tokens_per_mb: 4096}\n"
        "  gradient_checkpointing: true\n" + actor,
        encoding="utf-8",
    )
    return path


def actor_of(run_cli, path: Path, *extra: str) -> dict:
    out = run_cli("estimate", "--config", str(path), "--format", "json", *extra)
    return json.loads(out.stdout)["engines"]["actor"]


def test_guide_default_fsdp_adamw_keeps_12_bytes_of_master_and_states(run_cli, tmp_path) -> None:
    path = config(tmp_path, '  backend: "fsdp:d4"\n  dtype: bfloat16\n  optimizer: {type: adam}\n')
    actor = actor_of(run_cli, path)
    per_gpu = actor["per_gpu"]
    master_and_states = per_gpu["weights_bytes"] + per_gpu["optimizer_states_bytes"]
    assert master_and_states >= 12 * P7B // 4
    assert per_gpu["gradients_bytes"] == 4 * P7B // 4  # fp32 gradients of fp32 storage
    assert actor["memory_behaviour"] == "guide"
    assert actor["bytes_per_param"]["optimizer_states"] == 8.0


def test_bf16_storage_with_adam_bf16_lowers_it_to_about_8(run_cli, tmp_path) -> None:
    path = config(
        tmp_path,
        '  backend: "fsdp:d4"\n  dtype: bfloat16\n  optimizer_dtype: bfloat16\n'
        "  optimizer: {type: adam_bf16}\n",
    )
    fp32 = config(tmp_path, '  backend: "fsdp:d4"\n  optimizer: {type: adam}\n', "f.yaml")
    light, heavy = actor_of(run_cli, path), actor_of(run_cli, fp32)
    per_gpu = light["per_gpu"]
    assert per_gpu["weights_bytes"] + per_gpu["optimizer_states_bytes"] == 8 * P7B // 4
    assert light["total_bytes"] < heavy["total_bytes"]  # the guide's fix lowers the estimate


def test_the_older_code_is_chosen_by_an_answer_not_by_a_missing_key(tmp_path) -> None:
    path = config(tmp_path, '  backend: "fsdp:d4"\n  optimizer: {type: adam}\n')
    cfg = load_config(str(path))
    m = table_entry("Qwen/Qwen2.5-7B-Instruct")
    assert m is not None
    guide = training_engine(cfg, m, "actor", 80 << 30, Notes())
    old = training_engine(cfg, m, "actor", 80 << 30, Notes(), memory_answer="code-2026-05")
    assert guide["memory_behaviour"] == "guide"  # no optimizer_dtype is no proof
    assert old["memory_behaviour"] == "code-2026-05"
    assert old["per_gpu"]["weights_bytes"] == 2 * P7B // 4
    assert old["per_gpu"]["optimizer_states_bytes"] == 4 * P7B // 4


def test_a_written_optimizer_dtype_shows_the_newer_behaviour(tmp_path) -> None:
    path = config(tmp_path, '  backend: "fsdp:d4"\n  optimizer_dtype: float32\n')
    chosen = storage.behaviour(load_config(str(path)))
    assert chosen.id == "guide" and chosen.chosen_by == "config"
    bare = storage.behaviour(load_config(str(config(tmp_path, "", "b.yaml"))))
    assert bare.chosen_by == "default"


def test_the_figures_say_which_behaviour_they_assume(run_cli, tmp_path) -> None:
    path = config(tmp_path, '  backend: "fsdp:d4"\n')
    out = run_cli("estimate", "--config", str(path)).stdout
    assert "figures assume guide" in out and "areal_memory=code-2026-05" in out
    zh = run_cli("estimate", "--config", str(path), "--lang", "zh").stdout
    assert "数字按 guide 计算" in zh


@pytest.mark.parametrize(
    ("kind", "optimizer", "dtype", "optimizer_dtype", "expected"),
    [
        ("fsdp", "adam", "bfloat16", None, (4, 4, 0, 8)),
        ("fsdp", "adam_bf16", "bfloat16", "bfloat16", (2, 2, 0, 6)),
        ("fsdp", "adam", "bfloat16", "bfloat16", (2, 2, 0, 4)),
        ("fsdp", "sgd", "bfloat16", None, (4, 4, 0, 0)),
        ("archon", "adam", "bfloat16", None, (4, 4, 0, 8)),
        ("megatron", "adam", "bfloat16", None, (2, 4, 4, 8)),
        ("megatron", "adam_bf16", "bfloat16", None, (2, 4, 4, 4)),
    ],
)
def test_bytes_per_param_by_backend_and_optimizer(
    kind: str, optimizer: str, dtype: str, optimizer_dtype: str | None, expected: tuple
) -> None:
    per = storage.bytes_per_param(kind, optimizer, dtype, optimizer_dtype)
    assert (per.weights, per.gradients, per.master, per.optimizer_states) == expected
    assert all(per.sources[t] for t in ("weights", "gradients", "master", "optimizer_states"))


def test_megatron_distributed_optimizer_shards_master_and_states_over_data_parallel(
    run_cli, tmp_path
) -> None:
    """Megatron-Core's table: bf16 params + fp32 grads = 6 + 12/d bytes per parameter."""
    path = config(tmp_path, '  backend: "megatron:d4"\n  optimizer: {type: adam}\n')
    per_gpu = actor_of(run_cli, path)["per_gpu"]
    assert per_gpu["weights_bytes"] + per_gpu["gradients_bytes"] == 6 * P7B
    assert per_gpu["optimizer_states_bytes"] == 12 * P7B // 4


def test_offload_takes_the_terms_off_the_gpu(run_cli, tmp_path) -> None:
    path = config(tmp_path, '  backend: "fsdp:d4"\n  fsdp: {offload_params: true}\n')
    actor = actor_of(run_cli, path)
    assert actor["per_gpu"]["weights_bytes"] == 0
    assert actor["per_gpu"]["optimizer_states_bytes"] == 0
    per_layer = config(tmp_path, '  backend: "fsdp:d4"\n  fsdp: {per_layer_optim_step: true}\n')
    streamed = actor_of(run_cli, per_layer)["per_gpu"]
    assert 0 < streamed["optimizer_states_bytes"] < 8 * P7B // 4 // 10
    assert streamed["weights_bytes"] == 4 * P7B // 4


def test_32b_on_four_gpus_does_not_fit_by_static_memory_alone(run_cli, tmp_path) -> None:
    """The guide's rule for Qwen2.5-32B on fsdp:d4: about 131 GB per GPU before any
    activation: no micro-batch fits."""
    path = tmp_path / "c32.yaml"
    path.write_text(
        "actor:\n  backend: 'fsdp:d4'\n  path: Qwen/Qwen2.5-32B-Instruct\n"
        "  mb_spec: {max_tokens_per_mb: 1024}\n  gradient_checkpointing: true\n",
        encoding="utf-8",
    )
    actor = actor_of(run_cli, path)
    static = sum(
        actor["per_gpu"][k] for k in ("weights_bytes", "gradients_bytes", "optimizer_states_bytes")
    )
    assert 125e9 < static < 135e9
    assert actor["fits"] is False
