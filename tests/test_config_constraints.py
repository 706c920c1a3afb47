"""Each rule of knowledge/constraints.yaml fires on a config that breaks it, and only then."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assistant.config import check_config, config_from_text, load_config

CONFIGS = Path(__file__).parent / "fixtures" / "configs"


def ids(text: str, **known: int) -> list[str]:
    return [w.id for w in check_config(config_from_text(text), known=known)]


def test_clean_fixtures_have_no_warnings() -> None:
    """No config rule is broken; three of them do not fit by the estimate (the guide's
    fp32 storage, micro-batches without checkpointing), which is its own warning."""
    does_not_fit = {"grpo_fsdp.yaml", "agent_megatron.yaml", "moe_hybrid.yaml"}
    for name in ("grpo_fsdp.yaml", "agent_megatron.yaml", "moe_hybrid.yaml", "minimal.yaml"):
        found = [w.id for w in check_config(load_config(str(CONFIGS / name)))]
        assert found == (["engine-does-not-fit"] if name in does_not_fit else []), name


def test_broken_fixture_breaks_each_rule() -> None:
    found = {w.id for w in check_config(load_config(str(CONFIGS / "broken.yaml")))}
    assert found == {
        "micro-batch-below-floor",
        "efficient-load-with-init-from-scratch",
        "bad-backend-string",
        "per-layer-optim-needs-adam",
        "disk-update-needs-fileroot",
        "mem-fraction-out-of-range",
    }


FLOOR = "gconfig: {max_new_tokens: 1024}\ntrain_dataset: {max_length: 1024}\n"


@pytest.mark.parametrize(("tokens", "fires"), [(2047, True), (2048, False), (8192, False)])
def test_micro_batch_floor(tokens: int, fires: bool) -> None:
    text = FLOOR + f"actor:\n  mb_spec:\n    max_tokens_per_mb: {tokens}\n"
    assert ("micro-batch-below-floor" in ids(text)) is fires


def test_micro_batch_floor_needs_the_lengths_in_the_file() -> None:
    # gconfig.max_new_tokens only from AReaL's default: no warning on an assumption
    text = "train_dataset: {max_length: 1024}\nactor: {mb_spec: {max_tokens_per_mb: 10}}\n"
    assert ids(text) == []


def test_micro_batch_floor_text_gives_the_numbers() -> None:
    text = FLOOR + "actor: {mb_spec: {max_tokens_per_mb: 1000}}\n"
    (warning,) = check_config(config_from_text(text))
    assert "1000" in warning.text and "2048" in warning.text
    assert warning.section == "train-micro-batch"
    zh = check_config(config_from_text(text), lang="zh")[0].text
    assert "低于" in zh


@pytest.mark.parametrize(("backend", "fires"), [("fsdp:d2c2", False), ("fsdp:d1c3", True)])
def test_cp_must_divide_heads_when_known(backend: str, fires: bool) -> None:
    text = f"actor:\n  backend: {backend}\n"
    assert ("cp-not-dividing-heads" in ids(text, attention_heads=40)) is fires
    assert ids(text) == []  # heads unknown: nothing to judge


def test_cp_heads_read_from_local_model_folder(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text(json.dumps({"num_attention_heads": 14}))
    text = f"actor:\n  path: {tmp_path}\n  backend: fsdp:d1c4\n"
    (warning,) = check_config(config_from_text(text))
    assert warning.id == "cp-not-dividing-heads" and "1, 2, 7, 14" in warning.text


def test_adam_with_bf16_optimizer_dtype() -> None:
    base = "actor:\n  optimizer_dtype: bfloat16\n  optimizer: {type: %s}\n"
    assert ids(base % "adam") == ["adam-with-bf16-optimizer-dtype"]
    assert ids(base % "adam_bf16") == []
    # adam is AReaL's default optimizer: leaving the type out is the same trap
    assert ids("actor:\n  optimizer_dtype: bfloat16\n") == ["adam-with-bf16-optimizer-dtype"]


def test_efficient_load_with_init_from_scratch() -> None:
    text = "actor:\n  init_from_scratch: %s\n  fsdp: {memory_efficient_load: true}\n"
    assert ids(text % "true") == ["efficient-load-with-init-from-scratch"]
    assert ids(text % "false") == []


def test_per_layer_optim_needs_adam() -> None:
    text = "actor:\n  optimizer: {type: %s}\n  fsdp: {per_layer_optim_step: true}\n"
    assert ids(text % "sgd") == ["per-layer-optim-needs-adam"]
    assert ids(text % "adam") == []


def test_bad_backend_string_reported_once_at_its_source() -> None:
    text = "actor:\n  backend: fsdp:d2p2\nref:\n  backend: ${actor.backend}\n"
    warnings = check_config(config_from_text(text))
    assert [w.id for w in warnings] == ["bad-backend-string"]
    assert warnings[0].text.startswith("actor.backend")
    assert ids("allocation_mode: sglang:d2+tpu:d2\n") == ["bad-backend-string"]


CLUSTER = "cluster: {n_nodes: 1, n_gpus_per_node: 8}\n"


@pytest.mark.parametrize(
    ("body", "fires"),
    [
        ("rollout: {backend: sglang:d4}\nactor: {backend: fsdp:d4}\n", False),
        ("rollout: {backend: sglang:d4t2}\nactor: {backend: fsdp:d4}\n", True),
        ("allocation_mode: sglang:d4+d8\n", True),
        ("allocation_mode: sglang:d4+d4\n", False),
        # ref on the actor's GPUs (AReaL's default) does not count twice
        (
            "rollout: {backend: sglang:d4}\nactor: {backend: fsdp:d4}\nref: {backend: fsdp:d4}\n",
            False,
        ),
        # an explicitly separate critic does count
        (
            "rollout: {backend: sglang:d4}\nactor: {backend: fsdp:d4}\n"
            "critic: {backend: fsdp:d2, scheduling_strategy: {type: separation}}\n",
            True,
        ),
        # offloading: rollout and trainer take turns on the same GPUs
        ("enable_offload: true\nrollout: {backend: sglang:d8}\nactor: {backend: fsdp:d8}\n", False),
        # a server told to take a small share of each GPU shares it with the trainer
        (
            "rollout: {backend: sglang:d8}\nactor: {backend: fsdp:d8}\n"
            "sglang: {mem_fraction_static: 0.4}\n",
            False,
        ),
    ],
)
def test_gpu_count(body: str, fires: bool) -> None:
    assert ("gpu-count-mismatch" in ids(CLUSTER + body)) is fires


def test_gpu_count_skips_cpu_templates() -> None:
    text = "cluster: {n_nodes: 1, n_gpus_per_node: 0}\nrollout: {backend: vllm:d1}\n"
    assert ids(text + "actor: {backend: fsdp:d1}\n") == []


@pytest.mark.parametrize(
    ("cluster", "fires"),
    [
        ("n_nodes: 1", True),  # no fileroot at all
        ("n_nodes: 2, fileroot: /tmp/areal", True),  # node-local on several nodes
        ("n_nodes: 1, fileroot: /tmp/areal", False),  # one node shares with itself
        ("n_nodes: 2, fileroot: /mnt/nfs/areal", False),
    ],
)
def test_disk_update_needs_fileroot(cluster: str, fires: bool) -> None:
    text = f"cluster: {{{cluster}}}\nactor: {{weight_update_mode: disk}}\n"
    assert ("disk-update-needs-fileroot" in ids(text)) is fires


@pytest.mark.parametrize(
    ("text", "fires"),
    [
        ("sglang: {mem_fraction_static: 0.85}\n", False),
        ("sglang: {mem_fraction_static: 1.0}\n", True),
        ("sglang: {mem_fraction_static: 0}\n", True),
        ("sglang: {mem_fraction_static: high}\n", True),
        ("vllm: {gpu_memory_utilization: 1.0}\n", False),
        ("vllm: {gpu_memory_utilization: 1.5}\n", True),
    ],
)
def test_memory_fraction_range(text: str, fires: bool) -> None:
    assert ("mem-fraction-out-of-range" in ids(text)) is fires


def test_cp_heads_come_from_the_bundled_table_without_a_local_config() -> None:
    """Qwen2.5-7B has 28 heads (its config.json in knowledge/models.yaml): c=8 does not
    divide them, c=4 does."""
    text = "actor:\n  path: Qwen/Qwen2.5-7B-Instruct\n  backend: fsdp:d1c8\n"
    found = check_config(config_from_text(text))
    warning = next(w for w in found if w.id == "cp-not-dividing-heads")
    assert "28" in warning.text and "1, 2, 4, 7, 14, 28" in warning.text
    fine = "actor:\n  path: Qwen/Qwen2.5-7B-Instruct\n  backend: fsdp:d2c4\n"
    assert "cp-not-dividing-heads" not in ids(fine)


ENGINE = (
    "actor:\n  path: Qwen/Qwen2.5-{size}-Instruct\n  backend: 'fsdp:d4'\n"
    "  gradient_checkpointing: true\n  mb_spec: {{max_tokens_per_mb: 4096}}\n"
)


def test_an_engine_the_estimate_says_does_not_fit_is_a_warning() -> None:
    (warning,) = check_config(config_from_text(ENGINE.format(size="32B")))
    assert warning.id == "engine-does-not-fit" and warning.section == "core-parameters"
    assert "actor (fsdp:d4)" in warning.text and "GiB per GPU" in warning.text
    assert "the largest term is" in warning.text and "'guide'" in warning.text
    zh = check_config(config_from_text(ENGINE.format(size="32B")), lang="zh")[0].text
    assert "最大的一项" in zh


def test_an_engine_that_fits_is_no_warning_and_the_log_gpu_counts() -> None:
    small = config_from_text(ENGINE.format(size="0.5B"))
    assert check_config(small) == []
    # the same config on a 4 GiB GPU (as a log would state it) does not fit
    (warning,) = check_config(small, known={"gpu_bytes": 4 << 30})
    assert warning.id == "engine-does-not-fit" and "size from the log" in warning.text


def test_an_unknown_model_is_not_estimated() -> None:
    text = ENGINE.format(size="32B").replace("Qwen/Qwen2.5-32B-Instruct", "acme/secret-32b")
    assert ids(text) == []


def test_check_exits_1_for_the_non_fitting_bundled_example(run_cli) -> None:
    result = run_cli("check", "--config", "examples/gsm8k-grpo.yaml")
    assert result.exit_code == 1 and "engine-does-not-fit" in result.stdout


def test_engines_sharing_gpus_that_fit_alone_but_not_together_are_a_warning() -> None:
    """tests/fixtures/memory/ppo-colocated-1.5b.yaml: each engine fits a 40 GiB GPU
    alone, actor + critic + ref on the same GPUs do not."""
    path = Path(__file__).parent / "fixtures" / "memory" / "ppo-colocated-1.5b.yaml"
    found = check_config(load_config(str(path)), known={"gpu_bytes": 40 << 30})
    (warning,) = [w for w in found if w.id == "engine-does-not-fit"]
    assert "actor + critic + ref (colocated)" in warning.text
