"""Patching the config text: only the patched keys change; writing is atomic and careful."""

from __future__ import annotations

import difflib
import os
from pathlib import Path

import pytest

from assistant.config import config_from_text, load_config, patched_text, unified_diff, write_atomic
from assistant.config.patch import PatchError, format_scalar
from assistant.errors import UserError

CONFIGS = Path(__file__).parent / "fixtures" / "configs"


def changed_lines(before: str, after: str) -> tuple[list[str], list[str]]:
    removed, added = [], []
    for line in difflib.ndiff(before.splitlines(), after.splitlines()):
        if line.startswith("- "):
            removed.append(line[2:])
        elif line.startswith("+ "):
            added.append(line[2:])
    return removed, added


def test_scalar_patch_keeps_comments_quotes_and_interpolations() -> None:
    config = load_config(str(CONFIGS / "grpo_fsdp.yaml"))
    new = patched_text(config, {"rollout.backend": "sglang:d2t2", "actor.backend": "fsdp:d2c2"})
    removed, added = changed_lines(config.text, new)
    assert removed == [
        '  backend: "sglang:d4"      # 4 independent servers',
        "  backend: 'fsdp:d4'",
    ]
    assert added == [
        '  backend: "sglang:d2t2"      # 4 independent servers',
        "  backend: 'fsdp:d2c2'",
    ]
    assert new.count("${") == config.text.count("${")
    assert new.count("#") == config.text.count("#")


def test_flow_mapping_value_is_replaced_in_place() -> None:
    config = load_config(str(CONFIGS / "grpo_fsdp.yaml"))
    new = patched_text(config, {"actor.mb_spec.max_tokens_per_mb": 4096})
    assert "  mb_spec: {max_tokens_per_mb: 4096, packing_algorithm: ffd}\n" in new
    assert len(changed_lines(config.text, new)[1]) == 1


def test_new_key_into_flow_mapping() -> None:
    config = load_config(str(CONFIGS / "grpo_fsdp.yaml"))
    new = patched_text(config, {"actor.mb_spec.n_mbs": 2})
    assert "mb_spec: {max_tokens_per_mb: 16384, packing_algorithm: ffd, n_mbs: 2}" in new


def test_new_nested_key_goes_next_to_its_siblings_with_their_indentation() -> None:
    config = load_config(str(CONFIGS / "grpo_fsdp.yaml"))
    new = patched_text(config, {"actor.fsdp.memory_efficient_load": True})
    removed, added = changed_lines(config.text, new)
    assert removed == [] and added == ["  fsdp:", "    memory_efficient_load: true"]
    lines = new.splitlines()
    at = lines.index("  fsdp:")
    # after the last scalar of actor:, before the scheduling_spec list
    assert lines[at - 1].startswith("  max_new_tokens:") and lines[at + 2] == "  scheduling_spec:"


def test_new_top_level_section_is_appended() -> None:
    config = load_config(str(CONFIGS / "minimal.yaml"))
    new = patched_text(config, {"sglang.mem_fraction_static": 0.8})
    assert new.startswith(config.text)
    assert new.endswith("\nsglang:\n  mem_fraction_static: 0.8\n")


def test_empty_or_null_parent_becomes_a_mapping() -> None:
    config = load_config(str(CONFIGS / "legacy_alloc.yaml"))  # has a bare "fsdp:"
    new = patched_text(config, {"actor.fsdp.memory_efficient_load": True})
    assert "  fsdp:\n    memory_efficient_load: true\n" in new
    nulled = config_from_text("ref:\n  optimizer: null  # none\n  path: x\n")
    text = patched_text(nulled, {"ref.optimizer.type": "sgd"})
    assert config_from_text(text).get("ref.optimizer.type") == "sgd"
    assert "# none" in text


def test_interpolated_value_is_replaced_and_remembered() -> None:
    config = config_from_text("a: 3\nrollout:\n  max_concurrent_rollouts: ${a}\n")
    new = patched_text(config, {"rollout.max_concurrent_rollouts": 2})
    assert "max_concurrent_rollouts: 2  # was ${a}" in new


def test_alias_value_is_replaced_without_touching_the_anchor() -> None:
    config = config_from_text("base: &bs 8\nactor:\n  n: *bs\n")
    new = patched_text(config, {"actor.n": 4})
    assert new == "base: &bs 8\nactor:\n  n: 4\n"


def test_key_below_an_alias_mapping_is_refused() -> None:
    config = config_from_text("common: &c {lr: 1}\nactor:\n  optimizer: *c\n")
    with pytest.raises(PatchError):
        patched_text(config, {"actor.optimizer.lr": 2})


def test_key_below_a_list_is_refused() -> None:
    config = config_from_text("actor:\n  - a\n")
    with pytest.raises(PatchError):
        patched_text(config, {"actor.dtype": "x"})


def test_indentation_of_four_is_kept() -> None:
    config = config_from_text("actor:\n    path: m\n    optimizer:\n        type: adam\n")
    new = patched_text(config, {"actor.fsdp.per_layer_optim_step": True})
    assert "    fsdp:\n        per_layer_optim_step: true\n" in new


def test_file_without_trailing_newline() -> None:
    config = config_from_text("actor:\n  path: m")
    new = patched_text(config, {"actor.dtype": "bfloat16"})
    assert config_from_text(new).data == {"actor": {"path": "m", "dtype": "bfloat16"}}


@pytest.mark.parametrize(
    ("value", "style", "text"),
    [
        (True, None, "true"),
        (None, None, "null"),
        (0.8, None, "0.8"),
        (1e-05, None, "1.0e-05"),
        ("sglang:d2t2", '"', '"sglang:d2t2"'),
        ("fsdp:d2", "'", "'fsdp:d2'"),
        ("yes", None, '"yes"'),  # would read back as a boolean
        ("a # b", None, '"a # b"'),
        ("expandable_segments:True", None, "expandable_segments:True"),
    ],
)
def test_scalar_formatting_round_trips(value: object, style: str | None, text: str) -> None:
    assert format_scalar(value, style) == text
    assert config_from_text(f"k: {text}\n").get("k") == value


def test_unified_diff_names_both_sides() -> None:
    config = load_config(str(CONFIGS / "grpo_fsdp.yaml"))
    diff = unified_diff(config, patched_text(config, {"actor.gradient_checkpointing": True}))
    assert diff.startswith(f"--- {config.path}\n+++ {config.path} (patched)\n")
    assert "-  gradient_checkpointing: false\n+  gradient_checkpointing: true\n" in diff


def test_write_atomic_writes_and_leaves_no_temp_files(tmp_path: Path) -> None:
    target = tmp_path / "out.yaml"
    write_atomic(str(target), "a: 1\n", config_path=str(tmp_path / "in.yaml"))
    assert target.read_text() == "a: 1\n"
    assert os.listdir(tmp_path) == ["out.yaml"]


def test_write_atomic_refusals(tmp_path: Path) -> None:
    config = tmp_path / "in.yaml"
    config.write_text("a: 1\n")
    with pytest.raises(UserError, match="overwrite the config"):
        write_atomic(str(config), "b: 2\n", config_path=str(config), force=True)
    link = tmp_path / "same.yaml"
    link.symlink_to(config)
    with pytest.raises(UserError, match="overwrite the config"):
        write_atomic(str(link), "b: 2\n", config_path=str(config), force=True)
    with pytest.raises(UserError, match="folder does not exist"):
        write_atomic(str(tmp_path / "no" / "out.yaml"), "b: 2\n", config_path=str(config))
    existing = tmp_path / "old.yaml"
    existing.write_text("old\n")
    with pytest.raises(UserError, match="already exists"):
        write_atomic(str(existing), "b: 2\n", config_path=str(config))
    write_atomic(str(existing), "b: 2\n", config_path=str(config), force=True)
    assert existing.read_text() == "b: 2\n" and config.read_text() == "a: 1\n"
