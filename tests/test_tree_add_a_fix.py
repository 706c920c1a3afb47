"""ARCHITECTURE.md's "a new fix" walk-through, followed once: one entry appended to a
copy of knowledge/tree.yaml, written as a newcomer would (a guide section that exists,
a priority in its phase, a patch, bilingual why-texts, a match: example), and nothing
else edited. The copy loads, and the new fix is chosen where its priority puts it, in
every plan derived from its phase, and by its own example."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml
from tree_examples import decide_example

import assistant.tree.rules as tree_rules
from assistant.knowledge import knowledge_dir
from assistant.models import LogReport
from assistant.tree import decide

NEW_FIX = """
  # walk-through: the new fix, step 1-5 of ARCHITECTURE.md "A new fix"
  offload-params:
    section: train-parallelism
    priority: {training: 15}
    match:
      - {phase: training}
    patch:
      - {key: actor.fsdp.offload_params, value: true}
    why:
      en: "Keep the parameters on the CPU between uses: less GPU memory, slower steps."
      zh: "在两次使用之间把参数放在 CPU 上：显存更少，步骤更慢。"
"""


@pytest.fixture
def new_fix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    copy = tmp_path / "knowledge"
    shutil.copytree(knowledge_dir(), copy)
    tree_file = copy / "tree.yaml"
    tree_file.write_text(tree_file.read_text(encoding="utf-8") + NEW_FIX, encoding="utf-8")
    edited = yaml.safe_load(tree_file.read_text(encoding="utf-8"))
    real = tree_rules.load_yaml
    monkeypatch.setattr(
        tree_rules, "load_yaml", lambda name: edited if name == "tree.yaml" else real(name)
    )
    tree_rules.load_tree.cache_clear()
    yield tree_rules.load_tree()
    tree_rules.load_tree.cache_clear()


def test_one_entry_adds_a_fix_to_its_phase_plans(new_fix: tree_rules.Tree) -> None:
    fix = new_fix.fixes["offload-params"]
    derived = [plan.id for plan in new_fix.plans if "offload-params" in plan.fixes]
    assert derived == ["training", "unknown-stage-training"]  # every plan of its phase
    # its own example selects it, second: priority 15 lies between micro-batch (10)
    # and grad-checkpointing (20)
    chosen = [rec.fix for rec in decide_example(fix.match[0]).recommendations]
    assert chosen[:3] == ["micro-batch", "offload-params", "grad-checkpointing"]
    # the same place when the user's answer picks the phase
    report = LogReport(True, "unknown", "cuda_oom", 0.5)
    answered = decide(report, None, {"failing_stage": ("training", "flag")}, "en", True)
    recs = answered.recommendations
    assert [rec.fix for rec in recs][:2] == ["micro-batch", "offload-params"]
    assert recs[1].patch == {"actor.fsdp.offload_params": True}
