"""The guide as data: every contract section in both languages, front matter, facts."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from process_helpers import cold_then_warm

from assistant.errors import KnowledgeError
from assistant.knowledge import knowledge_path
from assistant.search import get_section, list_sections, section_title
from assistant.search.plaintext import plain_sentences
from assistant.search.sections import PHASES, parse_section_file

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).parent / "fixtures" / "search"

# The section ids of docs/CONTRACT.md ("Guide sections").
CONTRACT_IDS = [
    "core-parameters",
    "engine-parameters",
    "gen-reduce-concurrency",
    "gen-parallelism",
    "gen-sglang-memory",
    "train-micro-batch",
    "train-grad-checkpointing",
    "train-parallelism",
    "train-per-layer-optim",
    "train-light-optimizer",
    "train-efficient-load",
    "wu-disk",
    "wu-chunk-buffer",
    "optimizer-state-dtype",
]
EXTRA_IDS = [
    "x-fragmentation",
    "x-foreign-process",
    "x-oversized-request",
    "x-host-memory",
    "x-vllm-memory",
    "x-cuda-graph",
    "x-optimizer-memory",
    "x-nccl-memory",
]


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize("section_id", CONTRACT_IDS + EXTRA_IDS)
def test_every_section_exists_in_both_languages_with_text(section_id, lang):
    section = get_section(section_id, lang)
    assert section.lang == lang
    assert section.title.strip()
    assert len(plain_sentences(section.body)) >= 1
    assert section.heading_path[-1] == section.title
    assert section.phase in PHASES


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_no_section_outside_the_contract_unless_it_is_an_extra(lang):
    ids = [section.id for section in list_sections(lang)]
    assert ids == CONTRACT_IDS_SORTED + sorted(EXTRA_IDS)


CONTRACT_IDS_SORTED = sorted(CONTRACT_IDS)


def test_both_languages_agree_on_phase_and_keys():
    for section in list_sections("en"):
        other = get_section(section.id, "zh")
        assert (other.phase, other.keys) == (section.phase, section.keys), section.id


def test_config_keys_named_in_front_matter_appear_in_the_text():
    for lang in ("zh", "en"):
        for section in list_sections(lang):
            for key in section.keys:
                leaf = key.rsplit(".", 1)[-1]
                assert leaf in section.body, (lang, section.id, key)


def test_unknown_section_is_a_knowledge_error():
    with pytest.raises(KnowledgeError):
        get_section("train-nonexistent", "en")
    with pytest.raises(KnowledgeError):
        list_sections("fr")


def test_section_title_matches_the_guide_heading():
    assert section_title("train-micro-batch", "zh") == "1. 优化微批大小"
    assert section_title("train-micro-batch", "en") == "1. Optimize Micro-batch Size"


def test_english_optimizer_state_section_carries_every_fact_and_the_flag():
    body = get_section("optimizer-state-dtype", "en").body
    for fact in ("12N GB", "8N GB", "4N GB", "5-10%", "~16 GB", "~32 GB", "DCP", "#1292", "3x"):
        assert fact in body, fact
    assert "Kahan" in body and "optimizer_dtype: bfloat16" in body


def test_chinese_optimizer_state_section_flags_the_arithmetic():
    body = get_section("optimizer-state-dtype", "zh").body
    assert "约 8N GB" in body  # the guide's own words are kept
    assert "4N GB" in body  # and the note with the tables' arithmetic


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_optimizer_table_notes_the_megatron_behaviour(lang):
    body = get_section("train-light-optimizer", lang).body
    assert "OptimizerConfig" in body
    assert "precision-aware" in body
    assert "dtype: bfloat16" in body


def test_notice_credits_the_source():
    notice = knowledge_path("guide", "NOTICE.md").read_text(encoding="utf-8")
    assert "inclusionAI/AReaL" in notice
    assert "Apache License" in notice


# --- parsing rules, on fixtures -------------------------------------------------------


def test_fixture_section_parses_with_plain_sentences():
    section = parse_section_file(FIXTURES / "good-section.md", "en")
    assert section.keys == ["actor.mb_spec.max_tokens_per_mb"]
    sentences = plain_sentences(section.body)
    assert "Set max_tokens_per_mb as low as the longest sequence allows:" in sentences
    assert "actor:  mb_spec:  max_tokens_per_mb: 8192" in sentences
    assert "max_tokens_per_mb tokens per micro-batch" in sentences
    assert not any("|" in sentence or "`" in sentence for sentence in sentences)


@pytest.mark.parametrize("name", ["no-front-matter.md", "wrong-id.md", "bad-phase.md"])
def test_malformed_section_files_are_knowledge_errors(name):
    with pytest.raises(KnowledgeError):
        parse_section_file(FIXTURES / name, "en")


def test_wrapped_chinese_lines_join_without_spaces():
    sentences = plain_sentences("第一行文字，\n第二行文字。\n\n- English item\n  continues here")
    assert sentences == ["第一行文字，第二行文字。", "English item continues here"]


# --- the small jieba dictionary -----------------------------------------------------


def test_small_jieba_dictionary_covers_the_guide_vocabulary():
    """knowledge/jieba/dict.txt must be rebuilt when the Chinese guide or glossary change."""
    jieba = pytest.importorskip("jieba")
    spec = importlib.util.spec_from_file_location(
        "build_jieba_dict", ROOT / "benchmarks" / "build_jieba_dict.py"
    )
    builder = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(builder)
    default = builder.load_default_dictionary(Path(jieba.__file__).with_name("dict.txt"))
    shipped = knowledge_path("jieba", "dict.txt").read_text(encoding="utf-8")
    shipped_words = {line.split(" ", 1)[0] for line in shipped.splitlines()}
    missing = builder.guide_vocabulary(set(default)) - shipped_words
    assert not missing, f"run benchmarks/build_jieba_dict.py (missing: {sorted(missing)[:10]})"
    compounds = knowledge_path("jieba", "compounds.txt").read_text(encoding="utf-8")
    listed = [line for line in compounds.splitlines() if line and not line.startswith("#")]
    assert listed == builder.domain_words(), "run benchmarks/build_jieba_dict.py (compounds)"


def test_parsed_sections_are_kept_in_the_one_cache_and_read_back_without_yaml(
    tmp_path, monkeypatch
):
    """A diagnosis names sections by title: a warm process reads them from the cache
    (no PyYAML, no front matter parsed) and gets the same sections."""
    from assistant import cache
    from assistant.search import sections

    monkeypatch.setenv("AREAL_DOCTOR_CACHE_DIR", str(tmp_path))
    cache.clear()
    sections.clear_section_cache()
    try:
        parsed = {lang: list_sections(lang) for lang in ("zh", "en")}

        def must_not_parse(path: Path, lang: str) -> None:
            raise AssertionError(f"parsed {path} again although the cache holds it")

        monkeypatch.setattr(sections, "parse_section_file", must_not_parse)
        sections.clear_section_cache()
        assert {lang: list_sections(lang) for lang in ("zh", "en")} == parsed
        code = (
            "import sys\n"
            "from assistant.search import section_title\n"
            "print(section_title('wu-disk', 'en'), 'yaml' in sys.modules)\n"
        )
        cold, warm = cold_then_warm(code, tmp_path / "processes")
        title = get_section("wu-disk", "en").title
        assert (cold, warm) == (f"{title} True", f"{title} False")
    finally:
        monkeypatch.undo()
        cache.clear()
        sections.clear_section_cache()


def test_a_damaged_sections_cache_is_parsed_again(tmp_path, monkeypatch):
    from assistant import cache
    from assistant.search import sections

    monkeypatch.setenv("AREAL_DOCTOR_CACHE_DIR", str(tmp_path))
    cache.clear()
    sections.clear_section_cache()
    try:
        expected = list_sections("en")
        folder = cache.cache_dir()
        assert folder is not None
        (folder / "guide-sections-en.marshal").write_bytes(b"\x00not marshal")
        sections.clear_section_cache()
        assert list_sections("en") == expected
    finally:
        monkeypatch.undo()
        cache.clear()
        sections.clear_section_cache()
