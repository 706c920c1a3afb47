"""Loading an experiment YAML: safety, interpolation, defaults, aliases, model facts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assistant.config import config_from_text, load_config
from assistant.config.model_info import attention_heads, looks_like_vlm, params_from_name
from assistant.errors import UserError

CONFIGS = Path(__file__).parent / "fixtures" / "configs"


def test_python_tags_are_refused_not_run(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    text = f"actor: !!python/object/apply:os.system ['touch {marker}']\n"
    with pytest.raises(UserError, match="Python-object tag"):
        config_from_text(text, "evil.yaml")
    assert not marker.exists()


@pytest.mark.parametrize("text", ["- a\n- b\n", "just a string\n", "42\n"])
def test_top_level_must_be_a_mapping(text: str) -> None:
    with pytest.raises(UserError, match="top level must be a mapping"):
        config_from_text(text, "list.yaml")


def test_duplicate_keys_are_an_error_naming_both_lines() -> None:
    text = "actor:\n  path: a\n  dtype: bf16\n  path: b\n"
    with pytest.raises(UserError, match=r"'path' appears twice \(lines 2 and 4\)"):
        config_from_text(text, "dup.yaml")


def test_duplicate_keys_in_a_flow_mapping_are_caught() -> None:
    with pytest.raises(UserError, match="appears twice"):
        config_from_text("mb_spec: {max_tokens_per_mb: 1, max_tokens_per_mb: 2}\n")


def test_invalid_yaml_is_one_line_user_error() -> None:
    with pytest.raises(UserError) as info:
        config_from_text("actor: [unclosed\n", "bad.yaml")
    assert "\n" not in str(info.value) and "bad.yaml" in str(info.value)


def test_missing_file_is_user_error(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="not found"):
        load_config(str(tmp_path / "nope.yaml"))


def test_empty_file_is_an_empty_config(tmp_path: Path) -> None:
    path = tmp_path / "empty.yaml"
    path.write_text("# nothing yet\n", encoding="utf-8")
    assert load_config(str(path)).data == {}


def test_chained_interpolations_resolve() -> None:
    config = load_config(str(CONFIGS / "grpo_fsdp.yaml"))
    # rollout.tokenizer_path -> tokenizer_path -> actor.path
    assert config.get("rollout.tokenizer_path") == "Qwen/Qwen2.5-7B-Instruct"
    assert config.get("ref.backend") == "fsdp:d4"
    assert config.get("rollout.consumer_batch_size") == 64
    assert config.raw("ref.backend") == "${actor.backend}"


def test_interpolation_inside_a_string_and_nested() -> None:
    text = (
        "name: run\nsub: a\na_key: found\n"
        "paths:\n  out: /data/${name}/ckpt\n  pick: ${${sub}_key}\n"
    )
    config = config_from_text(text)
    assert config.get("paths.out") == "/data/run/ckpt"
    assert config.get("paths.pick") == "found"


@pytest.mark.parametrize(
    "text",
    [
        "a: ${a}\n",  # self reference
        "a: ${b}\nb: ${a}\n",  # cycle
        "a: ${missing.key}\n",  # unresolvable
        "a: ${oc.env:HOME}\n",  # resolver call
        "a: x${a}y\n",  # self reference inside a string
    ],
)
def test_unresolvable_interpolations_are_unknown(text: str) -> None:
    config = config_from_text(text)
    assert config.get("a") is None
    assert config.source("a") == "config"


def test_interpolation_through_a_copied_mapping() -> None:
    config = config_from_text("actor:\n  spec: {gpu: 1}\nrollout:\n  spec: ${actor.spec}\n")
    assert config.get("rollout.spec.gpu") == 1


def test_defaults_fill_absent_keys_and_say_so() -> None:
    config = load_config(str(CONFIGS / "minimal.yaml"))
    assert config.get("sglang.mem_fraction_static") == 0.9
    assert config.source("sglang.mem_fraction_static") == "default"
    assert config.get("actor.weight_update_mode") == "xccl"
    assert config.get("actor.optimizer.type") == "adam"
    assert config.get("actor.gradient_checkpointing") is False
    assert config.get("actor.fsdp.memory_efficient_load") is False
    assert config.get("no.such.key") is None and config.source("no.such.key") is None
    assert config.source("actor.path") == "config"


def test_default_concurrency_follows_the_consumer_batch_size() -> None:
    config = config_from_text("rollout:\n  consumer_batch_size: 48\n")
    assert config.get("rollout.max_concurrent_rollouts") == 48
    assert config.source("rollout.max_concurrent_rollouts") == "default"


def test_explicit_null_falls_back_to_the_default() -> None:
    config = config_from_text("sglang:\n  mem_fraction_static: null\n")
    assert config.get("sglang.mem_fraction_static") == 0.9


def test_top_level_concurrency_alias_is_read_and_patched_in_place() -> None:
    config = load_config(str(CONFIGS / "legacy_alloc.yaml"))
    assert config.get("rollout.max_concurrent_rollouts") == 96
    assert config.write_key("rollout.max_concurrent_rollouts") == "max_concurrent_rollouts"
    modern = load_config(str(CONFIGS / "grpo_fsdp.yaml"))
    assert modern.write_key("max_concurrent_rollouts") == "rollout.max_concurrent_rollouts"


def test_with_patch_changes_data_only() -> None:
    config = load_config(str(CONFIGS / "grpo_fsdp.yaml"))
    patched = config.with_patch(
        {"actor.fsdp.memory_efficient_load": True, "ref.optimizer.type": "x"}
    )
    assert patched.get("actor.fsdp.memory_efficient_load") is True
    assert patched.get("ref.optimizer.type") == "x"
    assert config.get("actor.fsdp.memory_efficient_load") is False
    assert patched.text == config.text


@pytest.mark.parametrize(
    ("name", "size"),
    [
        ("Qwen/Qwen2.5-7B-Instruct", 7),
        ("Qwen/Qwen2.5-1.5B", 1.5),
        ("Qwen/Qwen3-30B-A3B", 30),
        ("google/gemma-3-12b-it", 12),
        ("/models/llama-3-8b", 8),
        ("my-org/policy-final", None),
        ("Qwen/Qwen2.5-VL-3B-Instruct", 3),
    ],
)
def test_model_size_from_its_name(name: str, size: float | None) -> None:
    assert params_from_name(name) == size


def test_vlm_names() -> None:
    assert looks_like_vlm("Qwen/Qwen2.5-VL-7B-Instruct")
    assert looks_like_vlm("llava-hf/llava-1.5-7b-hf")
    assert not looks_like_vlm("Qwen/Qwen2.5-7B-Instruct")


def test_attention_heads_from_a_local_model_folder(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text(json.dumps({"num_attention_heads": 40}))
    assert attention_heads(str(tmp_path)) == 40
    vlm = tmp_path / "vlm"
    vlm.mkdir()
    (vlm / "config.json").write_text(json.dumps({"text_config": {"num_attention_heads": 28}}))
    assert attention_heads(str(vlm)) == 28
    # a hub id: the bundled table of well-known models knows its 28 heads
    assert attention_heads("Qwen/Qwen2.5-7B") == 28
    assert attention_heads("Qwen/Qwen2.5-7B", tables=False) is None
    assert attention_heads("acme/house-model-7b") is None
