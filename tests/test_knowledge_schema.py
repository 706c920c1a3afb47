"""Every knowledge file is checked at load: an editing mistake fails with its file and entry.

Each case edits a copy of one loaded file (as tests/test_logs_rules.py does) and runs
the one validator of knowledge/; the error must name the file, the entry and the field.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from assistant.errors import KnowledgeError
from assistant.knowledge_schema import files, names, validate_knowledge
from assistant.logs import rules
from assistant.tree import rules as tree_rules

LOADERS = (files, names, tree_rules, rules)


@pytest.fixture
def edit(monkeypatch: pytest.MonkeyPatch):
    """Replace one knowledge file by an edited copy for every loader."""

    def apply(name: str, change) -> None:
        data = copy.deepcopy(rules.load_yaml(name))
        change(data)
        real = rules.load_yaml

        def fake(requested: str) -> Any:
            return data if requested == name else real(requested)

        for module in LOADERS:
            monkeypatch.setattr(module, "load_yaml", fake)
        rules.load_rules.cache_clear()

    yield apply
    rules.load_rules.cache_clear()


def _plan(data: dict, plan_id: str) -> dict:
    return next(p for p in data["plans"] if p["id"] == plan_id)


def _rename_key(mapping: dict, old: str, new: str) -> None:
    items = list(mapping.items())
    mapping.clear()
    mapping.update({new if k == old else k: v for k, v in items})


def _sleep_mod(data: dict) -> None:
    plan = _plan(data, "generation-outside-kv-pool")
    _rename_key(plan["when"][2], "facts.sleep_mode", "facts.sleep_mod")


def _typo_both(data: dict) -> None:
    note = data["fixes"]["micro-batch"]["notes"][0]
    note["en"] = note["en"].replace("{floor_terms}", "{floor_term}")
    note["zh"] = note["zh"].replace("{floor_terms}", "{floor_term}")


def _typo_en(data: dict) -> None:
    fix = data["fixes"]["cut-quarter-typo"] = copy.deepcopy(data["fixes"]["colocated-sglang"])
    fix["why"]["en"] += " {curent}"


def test_the_shipped_knowledge_is_valid() -> None:
    validate_knowledge()


# the edit experiments of issue 10: each fails with the file and the entry
EXPERIMENTS = [
    pytest.param(
        "tree.yaml",
        _sleep_mod,
        "tree.yaml: entry plan 'generation-outside-kv-pool': 'when' uses unknown fact",
        id="fact-renamed-in-a-plan",
    ),
    pytest.param(
        "tree.yaml",
        lambda d: d["reasons"].pop("mb-at-floor"),
        "tree.yaml: entry reasons: 'mb-at-floor' is missing (used by micro_batch_floor)",
        id="reason-removed",
    ),
    pytest.param(
        "tree.yaml",
        _typo_both,
        "tree.yaml: entry fix 'micro-batch' notes #1: 'text': unknown placeholder '{floor_term}'",
        id="placeholder-typo-in-a-note",
    ),
    pytest.param(
        "tree.yaml",
        _typo_en,
        "tree.yaml: entry fix 'cut-quarter-typo': 'why': en and zh use different placeholders",
        id="placeholder-typo-in-one-language",
    ),
    pytest.param(
        "tree.yaml",
        lambda d: _rename_key(
            _plan(d, "unknown-stage-training")["when"], "answer.failing_stage", "answer.failing"
        ),
        "tree.yaml: entry plan 'unknown-stage-training': 'when' uses unknown question "
        "'answer.failing'",
        id="question-questions-yaml-lacks",
    ),
    pytest.param(
        "tree.yaml",
        lambda d: d["fixes"]["micro-batch"].update(section="train-micro-batches"),
        "tree.yaml: entry fix 'micro-batch': 'section' names unknown guide section",
        id="section-the-guide-lacks",
    ),
]


@pytest.mark.parametrize(("name", "change", "message"), EXPERIMENTS)
def test_edit_experiments_fail_with_file_and_entry(edit, name, change, message) -> None:
    edit(name, change)
    with pytest.raises(KnowledgeError) as caught:
        validate_knowledge()
    assert message in str(caught.value)


@pytest.mark.parametrize(
    ("name", "change", "message"),
    [
        # tree.yaml: shapes and every kind of reference
        ("tree.yaml", lambda d: d["fixes"]["micro-batch"].update(whn={}), "unknown key 'whn'"),
        ("tree.yaml", lambda d: d.update(fallbak="x"), "unknown key 'fallbak'"),
        ("tree.yaml", lambda d: d.update(fallback="nope"), "'fallback' names unknown fix"),
        ("tree.yaml", lambda d: d["plans"][2]["fixes"].append("nope"), "names unknown fix"),
        # a plan's fixes derived from a phase: phase, left-out fixes and priorities checked
        ("tree.yaml", lambda d: _plan(d, "training").update(fixes_of="trainin"), "phase"),
        (
            "tree.yaml",
            lambda d: _plan(d, "training").update(without=["wu-disk"]),
            "'without' names unknown fix of phase training 'wu-disk'",
        ),
        (
            "tree.yaml",
            lambda d: _plan(d, "training").update(fixes=["micro-batch"]),
            "either 'fixes' (a list) or 'fixes_of'",
        ),
        (
            "tree.yaml",
            lambda d: d["fixes"]["grad-checkpointing"].update(priority={"training": 10}),
            "'priority': training 10 is also micro-batch's",
        ),
        (
            "tree.yaml",
            lambda d: d["fixes"]["micro-batch"].update(priority={"trainng": 10}),
            "'priority' names unknown phase 'trainng'",
        ),
        ("tree.yaml", lambda d: d["leads"][0].update(fix="nope"), "entry leads #1"),
        (
            "tree.yaml",
            lambda d: d["fixes"]["micro-batch"]["patch"][0].update(fn="micro_batch_flor"),
            "fix 'micro-batch' patch #1: 'fn' names unknown value function",
        ),
        (
            "tree.yaml",
            lambda d: d["fixes"]["micro-batch"]["patch"][0].update(env="X"),
            "fix 'micro-batch' patch #1: a step is one of",
        ),
        (
            "tree.yaml",
            lambda d: d["leads"][0]["when"].update({"derived.foriegn": True}),
            "unknown derived value 'derived.foriegn'",
        ),
        (
            "tree.yaml",
            lambda d: d["fixes"]["micro-batch"].update(when={"inference.fragmentaton": True}),
            "unknown inference 'inference.fragmentaton'",
        ),
        (
            "tree.yaml",
            lambda d: d["fixes"]["vllm-shorter-context"]["when"].update(
                {"metrics.kv_tokens": {"present": True}}
            ),
            "unknown metric (no figure produces it) 'metrics.kv_tokens'",
        ),
        (
            "tree.yaml",
            lambda d: d["plans"][0]["when"].update({"phase": {"greater": 1}}),
            "unknown operator 'greater'",
        ),
        ("tree.yaml", lambda d: d["plans"][1].update(when={"phase": "trainin"}), "phase 'trainin'"),
        (
            "tree.yaml",
            lambda d: _plan(d, "generation-wake-up")["when"].update(stage="wakeup"),
            "stage 'wakeup'",
        ),
        ("tree.yaml", lambda d: d["plans"][0].update(when={"facts": 1}), "unknown condition path"),
        (
            "tree.yaml",
            lambda d: d["fixes"]["micro-batch"]["notes"][2].update(when_vars=["mb_tokns"]),
            "'when_vars' names unknown text variable 'mb_tokns'",
        ),
        (
            "tree.yaml",
            lambda d: d["reasons"]["single-replica"].update(en="{engine} {backend} {gpu}"),
            "entry reasons 'single-replica'",
        ),
        ("tree.yaml", lambda d: d["reasons"].update(unused={"en": "a", "zh": "b"}), "'unused'"),
        (
            "tree.yaml",
            lambda d: d["fixes"]["wu-disk"]["unless"][0]["why"].pop("zh"),
            "fix 'wu-disk' unless #1: 'why' needs non-empty 'en' and 'zh'",
        ),
        (
            "tree.yaml",
            lambda d: d["settings"].update(fraction_stp=0.1),
            "unknown key 'fraction_stp'",
        ),
        # questions.yaml
        (
            "questions.yaml",
            lambda d: d["questions"]["multi_turn"].update(defualt="no"),
            "questions.yaml: entry 'multi_turn': unknown key 'defualt'",
        ),
        (
            "questions.yaml",
            lambda d: d["questions"]["model_params_b"]["sources"].append({"fact": "params"}),
            "questions.yaml: entry 'model_params_b' sources #3: 'fact' names unknown fact",
        ),
        (
            "questions.yaml",
            lambda d: d["questions"]["multi_turn"].update(default="maybe"),
            "'default' does not parse",
        ),
        # constraints.yaml
        (
            "constraints.yaml",
            lambda d: d["constraints"][0].update(section="train-micro"),
            "constraints.yaml: entry 'micro-batch-below-floor': 'section' names unknown",
        ),
        (
            "constraints.yaml",
            lambda d: d["constraints"][0].update(check="at_least"),
            "'check' names unknown checker 'at_least'",
        ),
        (
            "constraints.yaml",
            lambda d: d["constraints"][0]["text"].update(en="{value} {limt}"),
            "en and zh use different placeholders",
        ),
        # the other files
        ("config_defaults.yaml", lambda d: d.update(alias={}), "unknown key 'alias'"),
        ("stages.yaml", lambda d: d["stages"][0].update(phase="train"), "'phase' has a bad value"),
        ("inferences.yaml", lambda d: d["fragmentation"].pop("min_times_request"), "missing"),
        ("memory.yaml", lambda d: d["frames"][0].update(patterns=["("]), "does not compile"),
        ("memory.yaml", lambda d: d["frames"][7].update(also=["logit"]), "tensor family 'logit'"),
        ("memory.yaml", lambda d: d["lora"]["targets"].update(qp=["hidden", "x", "mlp"]), "'qp'"),
        ("memory.yaml", lambda d: d["lora"]["all_linear"].append("qproj"), "LoRA target 'qproj'"),
        ("models.yaml", lambda d: d["models"][0].update(vocab=1), "unknown key 'vocab'"),
        ("docs_query.yaml", lambda d: d["en"].update(trainig="x"), "'en.trainig'"),
        ("redact.yaml", lambda d: d["rules"][0].update(replce="x"), "unknown key 'replce'"),
        ("glossary.yaml", lambda d: d[0].update(fr=["x"]), "glossary.yaml: entry ring #1"),
        ("phase_terms.yaml", lambda d: d.update(traning={}), "unknown key 'traning'"),
        ("section_terms.yaml", lambda d: d.update({"train-micro": {}}), "'train-micro'"),
        ("section_terms.yaml", lambda d: d["wu-disk"].update(en="disk"), "'en'"),
        ("query_cues.yaml", lambda d: d["en"]["cues"].append("besides (.+)"), "'aside'"),
        ("query_cues.yaml", lambda d: d["zh"].update(end="(["), "does not compile"),
        ("query_cues.yaml", lambda d: d.update(factor=2.0), "'factor'"),
        (
            "query_cues.yaml",
            lambda d: d["expansions"][0]["size"].update(pattern=r"allocate (\d+)"),
            "2 groups",
        ),
        ("query_cues.yaml", lambda d: d["expansions"][1].update(all_of=["(["]), "compile"),
        ("query_cues.yaml", lambda d: d["expansions"][1].pop("all_of"), "'all_of'"),
        (
            "i18n/cli.yaml",
            lambda d: d["headline_oom"].update(en=d["headline_oom"]["en"] + " {phse}"),
            "i18n/cli.yaml: entry 'headline_oom': 'text': en and zh use different placeholders",
        ),
        ("i18n/tui.yaml", lambda d: d["app.subtitle"].update(fr="x"), "unknown key 'fr'"),
        # the log rules reject unknown keys too
        (
            "signatures.yaml",
            lambda d: d["signatures"][0].update(unles=["x"]),
            "signatures.yaml: entry 'torch-oom-current': unknown key 'unles'",
        ),
        ("signatures.yaml", lambda d: d["figures"]["tried"].update(units="x"), "'units'"),
        ("signatures.yaml", lambda d: d["reading"].update(recovery_befor=3), "'recovery_befor'"),
        ("signatures.yaml", lambda d: d.update(corroboration_denied="(no"), "does not compile"),
        ("lookalikes.yaml", lambda d: d["lookalikes"][0].update(notise="x"), "'notise'"),
        ("lookalikes.yaml", lambda d: d["consequences"][0].update(wat="x"), "'wat'"),
        (
            "vocabulary/frameworks/vllm.yaml",
            lambda d: d["entries"][0].update(wher=["line"]),
            "'wher'",
        ),
        ("vocabulary/core.yaml", lambda d: d["words"][0].update(wrds=["train"]), "'wrds'"),
        ("facts.yaml", lambda d: d["facts"][0].update(vale=True), "'vale'"),
        ("describe.yaml", lambda d: d.update(max_char=3), "'max_char'"),
    ],
)
def test_each_file_and_reference_is_checked(edit, name, change, message) -> None:
    edit(name, change)
    with pytest.raises(KnowledgeError) as caught:
        validate_knowledge()
    text = str(caught.value)
    assert message in text
    assert f"knowledge/{name}" in text


def test_guide_front_matter_rejects_unknown_keys(tmp_path) -> None:
    from assistant.search.sections import parse_section_file

    path = tmp_path / "train-micro-batch.md"
    path.write_text("---\nid: train-micro-batch\nlang: en\ntitle: T\nphse: training\n---\nBody\n")
    with pytest.raises(KnowledgeError, match="unknown front matter key 'phse'"):
        parse_section_file(path, "en")
