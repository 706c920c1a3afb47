"""`areal-doctor estimate`: exit codes, the contract's JSON shape, bad input."""

from __future__ import annotations

import json

import pytest
from lang_helpers import CJK, english_words

FIX = "tests/fixtures/memory"


def estimate(run_cli, config: str, *extra: str):
    return run_cli("estimate", "--config", f"{FIX}/{config}", *extra)


def test_json_shape(run_cli) -> None:
    result = estimate(run_cli, "grpo-7b.yaml", "--format", "json", "--gpu-memory", "80GiB")
    data = json.loads(result.stdout)
    assert data["schema"] == "areal-doctor/estimate/v1"
    assert data["gpu_memory_bytes"] == 80 * (1 << 30)
    assert data["model"]["params"] == 7_615_616_512
    assert data["model"]["vocab_size"] == 152064 and data["model"]["layers"] == 28
    assert set(data["engines"]) == {"actor", "rollout"}
    actor = data["engines"]["actor"]
    for key in ("weights_bytes", "gradients_bytes", "optimizer_states_bytes"):
        assert key in actor["per_gpu"]
    # the guide: parameters stored in optimizer_dtype (fp32 by default), sharded over 4 GPUs
    assert actor["per_gpu"]["weights_bytes"] == 7_615_616_512 * 4 // 4
    assert actor["per_gpu"]["logits_bytes"] == 16384 * 152064 * (2 + 4)
    assert (
        actor["activations_with_checkpointing_bytes"]
        < actor["activations_without_checkpointing_bytes"]
    )
    rollout = data["engines"]["rollout"]
    assert rollout["kv_cache_tokens"] > 0
    assert rollout["per_gpu"]["weights_bytes"] == 7_615_616_512 * 2
    assert isinstance(data["assumptions"], list) and data["assumptions"]
    assert result.exit_code == (0 if data["fits"] else 1)


def test_clearly_fits_exits_0(run_cli) -> None:
    result = estimate(run_cli, "small-fits.yaml")
    assert result.exit_code == 0, result.stdout
    assert "Every engine fits" in result.stdout


def test_clearly_does_not_fit_exits_1(run_cli) -> None:
    result = estimate(run_cli, "huge-72b-one-gpu.yaml", "--format", "json")
    data = json.loads(result.stdout)
    assert result.exit_code == 1
    assert data["engines"]["actor"]["fits"] is False
    assert data["engines"]["rollout"]["fits"] is False


def test_default_gpu_size_is_an_assumption(run_cli) -> None:
    data = json.loads(estimate(run_cli, "small-fits.yaml", "--format", "json").stdout)
    assert any("80 GiB assumed" in item for item in data["assumptions"])
    assert any("bundled table" in item for item in data["assumptions"])


def test_text_table(run_cli) -> None:
    out = estimate(run_cli, "grpo-7b.yaml", "--gpu-memory", "141GB").stdout
    assert "engine" in out and "actor" in out and "rollout" in out
    assert "141.00 GiB" in out
    assert "Assumptions" in out


def test_model_config_for_an_unknown_model(run_cli, tmp_path) -> None:
    cfg = tmp_path / "config.json"
    cfg.write_text(
        json.dumps(
            {
                "model_type": "llama",
                "vocab_size": 32000,
                "hidden_size": 2048,
                "num_hidden_layers": 16,
                "num_attention_heads": 16,
                "intermediate_size": 5632,
            }
        )
    )
    no_model = estimate(run_cli, "tiny-model.yaml")
    assert no_model.exit_code == 2 and "--model-config" in no_model.stderr
    result = estimate(run_cli, "tiny-model.yaml", "--model-config", str(cfg), "--format", "json")
    data = json.loads(result.stdout)
    assert data["model"]["source"] == "config.json"
    assert set(data["engines"]) == {"actor", "rollout"}


@pytest.mark.parametrize(
    "args",
    [
        ("--gpu-memory", "80"),
        ("--gpu-memory", "lots"),
        ("--model-config", "/nonexistent/config.json"),
    ],
)
def test_bad_input_is_exit_2_with_one_line(run_cli, args) -> None:
    result = estimate(run_cli, "grpo-7b.yaml", *args)
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr


def test_unreadable_config_is_exit_2(run_cli, tmp_path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("actor: [unclosed\n")
    result = run_cli("estimate", "--config", str(bad))
    assert result.exit_code == 2


def test_estimate_help_has_examples(capsys) -> None:
    from assistant.cli import main

    with pytest.raises(SystemExit):
        main(["estimate", "--help"])
    assert "examples:" in capsys.readouterr().out


def test_no_torch_import() -> None:
    import subprocess
    import sys

    code = (
        "import sys; from assistant.cli import main; "
        "main(['estimate', '--config', 'tests/fixtures/memory/grpo-7b.yaml', '--format', 'json']); "
        "assert 'torch' not in sys.modules"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_a_model_missing_from_the_table_takes_its_closest_relative_and_says_so(run_cli) -> None:
    result = estimate(run_cli, "vl-relative.yaml", "--format", "json")
    assert result.exit_code in (0, 1), result.stderr
    data = json.loads(result.stdout)
    assert data["model"]["name"] == "Qwen/Qwen2.5-3B-Instruct"
    assert data["model"]["stand_in_for"] == "Qwen/Qwen2.5-VL-3B-Instruct"
    said = [item for item in data["assumptions"] if "Qwen/Qwen2.5-VL-3B-Instruct" in item]
    assert len(said) == 1 and "vision tower" in said[0] and "--model-config" in said[0]


def test_relatives_need_the_same_family_and_a_close_size() -> None:
    from assistant.memory.facts import stand_in

    assert stand_in("Qwen/Qwen2-1.5B-Instruct").name == "Qwen/Qwen2.5-1.5B-Instruct"
    assert stand_in("Qwen/Qwen3-VL-2B-Instruct").name == "Qwen/Qwen3-1.7B"
    assert stand_in("Qwen/Qwen3-VL-30B-A3B-Instruct").name == "Qwen/Qwen3-30B-A3B"
    for unrelated in (
        "deepseek-ai/DeepSeek-R1-Distill-Llama-8B",  # another base model
        "Qwen/Qwen1.5-7B",  # another generation
        "google/gemma-2b",  # gemma-2-2b is another generation
        "Qwen/Qwen3-22B",  # no Qwen3 within 20%
        "/models/my-7b",
        "./unknown-model",
    ):
        assert stand_in(unrelated) is None, unrelated


def test_a_rollout_only_config_names_its_model_on_the_server(run_cli) -> None:
    result = estimate(run_cli, "rollout-only.yaml", "--format", "json")
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["model"]["name"] == "Qwen/Qwen3-1.7B"
    assert set(data["engines"]) == {"rollout"}


def test_activations_with_and_without_checkpointing_are_stated_assumptions(run_cli) -> None:
    data = json.loads(estimate(run_cli, "vl-relative.yaml", "--format", "json").stdout)
    actor, ref = data["engines"]["actor"], data["engines"]["ref"]
    assert actor["per_gpu"]["activations_bytes"] == actor["activations_without_checkpointing_bytes"]
    notes = " ".join(data["assumptions"])
    assert "without gradient checkpointing" in notes and "one checkpoint per decoder" in notes
    assert "not measured" in notes
    assert "ref: forward only" in notes and "activations_with_checkpointing_bytes" not in ref


def test_each_table_row_adds_up_to_its_total(run_cli) -> None:
    from assistant.render.estimate import estimate_table

    data = json.loads(estimate(run_cli, "vl-relative.yaml", "--format", "json").stdout)
    header, *rows = estimate_table(data)
    assert header[-3:] == ["other", "total", "fits"] and len(rows) == 3
    for row in rows:
        parts = [float(cell) for cell in row[2:-2] if cell != "-"]
        assert abs(sum(parts) - float(row[-2])) < 0.05, row
    zh_header, *zh_rows = estimate_table(data, "zh")
    assert zh_header[0] == "引擎" and {row[-1] for row in zh_rows} <= {"是", "否"}


def test_zh_text_table_lines_up(run_cli) -> None:
    from assistant.render.estimate import width

    out = estimate(run_cli, "small-fits.yaml", "--lang", "zh").stdout
    table = [line for line in out.splitlines() if line.startswith(("引擎", "actor", "rollout"))]
    assert len(table) == 3
    assert len({width(line) for line in table}) == 1, table


def test_lora_trains_only_the_adapters(run_cli) -> None:
    """Qwen2.5-0.5B, rank 16 on every linear layer: PEFT's own count is 8,798,208
    (24 layers x 16 x (q 896+896, k 896+128, v 896+128, o 896+896, gate/up 896+4864 x2,
    down 4864+896))."""
    data = json.loads(estimate(run_cli, "lora.yaml", "--format", "json").stdout)
    actor = data["engines"]["actor"]
    adapters = actor["lora_trainable_params"]
    assert adapters == 24 * 16 * (2 * 1792 + 2 * 1024 + 3 * 5760)
    assert adapters == 8_798_208
    params = data["model"]["params"]
    per_gpu = actor["per_gpu"]
    # frozen bf16 base; the trained adapters stored in optimizer_dtype (the guide: fp32)
    assert per_gpu["weights_bytes"] == params * 2 + adapters * 4
    assert per_gpu["gradients_bytes"] == adapters * 4
    assert per_gpu["optimizer_states_bytes"] == adapters * 8
    assert any("target_modules not set" in item for item in data["assumptions"])
    assert any("8,798,208 trainable" in item for item in data["assumptions"])
    plain = json.loads(estimate(run_cli, "small-fits.yaml", "--format", "json").stdout)
    assert not any("LoRA" in item for item in plain["assumptions"])
    assert "lora_trainable_params" not in plain["engines"]["actor"]


def test_lora_on_named_megatron_modules_counts_every_expert(run_cli, tmp_path) -> None:
    """linear_fc1/linear_fc2 of an MoE layer: one adapter per routed expert."""
    from assistant.memory import formulas
    from assistant.memory.facts import ModelFacts

    moe = ModelFacts(
        name="toy-moe", source="test", from_table=False, model_type="qwen3_moe",
        vocab_size=1000, hidden_size=64, layers=2, heads=4, kv_heads=2, head_dim=16,
        intermediate_size=256, tie_embeddings=False, experts=8, experts_per_token=2,
        moe_intermediate_size=32,
    )  # fmt: skip
    shapes = {
        "linear_fc1": ["hidden", "2mlp", "mlp"],
        "linear_qkv": ["hidden", "q+2kv", "attention"],
    }
    fc1 = formulas.lora_params(moe, 4, ["linear_fc1"], shapes)
    assert fc1 == 2 * 8 * 4 * (64 + 2 * 32)
    qkv = formulas.lora_params(moe, 4, ["linear_qkv"], shapes)
    assert qkv == 2 * 4 * (64 + 64 + 2 * 32)
    assert formulas.lora_params(moe, 4, ["lm_head"], shapes) == 0  # unknown: not counted


# --- the language of the sentences (--lang) ------------------------------------------

# a vLLM rollout with neither max_num_batched_tokens nor max_model_len set, and no
# micro-batch cap: the sentences the other fixtures do not reach
VLLM_DEFAULTS = """\
experiment_name: mem-test
trial_name: vllm
rollout: {backend: "vllm:d1"}
actor: {backend: "fsdp:d1", path: Qwen/Qwen2.5-7B-Instruct}
"""


def both_languages(run_cli, config: str, *extra: str) -> tuple[dict, dict]:
    en, zh = (
        json.loads(
            run_cli(
                "estimate", "--config", config, "--format", "json", "--lang", lang, *extra
            ).stdout
        )
        for lang in ("en", "zh")
    )
    return en, zh


@pytest.mark.parametrize(
    ("config", "extra"),
    [
        ("grpo-7b.yaml", ("--gpu-memory", "141GB")),
        ("small-fits.yaml", ()),
        ("lora.yaml", ()),
        ("vl-relative.yaml", ()),
        ("rollout-only.yaml", ()),
        ("huge-72b-one-gpu.yaml", ()),
        (None, ()),  # VLLM_DEFAULTS
    ],
)
def test_lang_zh_gives_chinese_assumptions_and_the_same_figures(
    run_cli, tmp_path, config, extra
) -> None:
    path = tmp_path / "vllm-defaults.yaml"
    path.write_text(VLLM_DEFAULTS)
    en, zh = both_languages(run_cli, f"{FIX}/{config}" if config else str(path), *extra)
    assert len(zh["assumptions"]) == len(en["assumptions"]) >= 3
    # the check below would catch an English sentence: every English one has such words
    assert all(english_words(sentence) for sentence in en["assumptions"])
    for sentence in zh["assumptions"]:
        assert CJK.search(sentence) and not english_words(sentence), sentence
    # JSON keys and every figure stay; only the sentences follow --lang
    assert {k: v for k, v in zh.items() if k != "assumptions"} == {
        k: v for k, v in en.items() if k != "assumptions"
    }


def test_lang_zh_text_lists_the_assumptions_in_chinese(run_cli) -> None:
    out = estimate(run_cli, "lora.yaml", "--lang", "zh").stdout
    listed = out.split("假设（")[1].split("\n\n")[0].splitlines()[1:]
    assert len(listed) >= 5 and all(line.startswith("  - ") for line in listed)
    for line in listed:
        assert CJK.search(line) and not english_words(line), line
    assert "秩为 16 的 LoRA 增加 8,798,208 个可训练参数" in out and "显存：假定 80 GiB" in out


def test_lang_auto_follows_the_locale(run_cli, monkeypatch) -> None:
    monkeypatch.setenv("LANG", "zh_CN.UTF-8")
    data = json.loads(estimate(run_cli, "small-fits.yaml", "--format", "json").stdout)
    assert any("显存：假定 80 GiB" in item for item in data["assumptions"])


def test_unknown_model_error_in_chinese(run_cli) -> None:
    result = estimate(run_cli, "tiny-model.yaml", "--lang", "zh")
    assert result.exit_code == 2 and result.stderr.count("\n") == 1
    assert "无法从 actor.path './unknown-model' 得知模型尺寸" in result.stderr
    assert "--model-config" in result.stderr


def test_colocated_engines_add_their_resident_memory_and_the_largest_working_set(
    run_cli,
) -> None:
    data = json.loads(estimate(run_cli, "ppo-colocated-1.5b.yaml", "--format", "json").stdout)
    engines = data["engines"]
    (group,) = data["colocated"]
    assert group["engines"] == ["actor", "critic", "ref"]

    def part(name: str, keys: tuple[str, ...]) -> int:
        return sum(engines[name]["per_gpu"].get(key, 0) for key in keys)

    resident = ("weights_bytes", "gradients_bytes", "optimizer_states_bytes", "overhead_bytes")
    working = ("activations_bytes", "logits_bytes", "gathered_layers_bytes")
    assert group["resident_bytes"] == sum(part(n, resident) for n in group["engines"])
    assert group["working_bytes"] == max(part(n, working) for n in group["engines"])
    # the critic trains without checkpointing: its activations are the largest working set
    assert group["working_bytes"] == part("critic", working)
    assert group["total_bytes"] == group["resident_bytes"] + group["working_bytes"]
    assert group["total_bytes"] > max(
        e["total_bytes"] for e in engines.values() if e["role"] == "training"
    )


def test_a_colocated_group_that_does_not_fit_is_said_and_exits_1(run_cli) -> None:
    """Each engine fits a 40 GiB GPU alone; together they do not."""
    result = estimate(run_cli, "ppo-colocated-1.5b.yaml", "--gpu-memory", "40GiB")
    data = json.loads(
        estimate(
            run_cli, "ppo-colocated-1.5b.yaml", "--gpu-memory", "40GiB", "--format", "json"
        ).stdout
    )
    assert all(e["fits"] for name, e in data["engines"].items() if name != "rollout")
    assert data["colocated"][0]["fits"] is False
    assert result.exit_code == 1
    assert "actor + critic + ref share their GPUs" in result.stdout
    assert "(fits: NO)" in result.stdout
