"""BM25 variant, glossary expansion, cache, ranking, output shapes and bad queries."""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path

import pytest
from process_helpers import cold_then_warm

from assistant.errors import KnowledgeError, UserError
from assistant.search import SearchHit, format_hits_text, hits_to_json, search
from assistant.search import index as search_index
from assistant.search.bm25 import WeightedBM25
from assistant.search.glossary import GlossaryEntry, expansion_terms, parse_glossary
from assistant.search.snippets import best_snippet, mark_terms
from assistant.search.tokenize import tokenize


@pytest.fixture(autouse=True, scope="module")
def private_cache(tmp_path_factory):
    """Keep the compiled index out of the user's cache folder."""
    folder = tmp_path_factory.mktemp("areal-doctor-cache")
    old = os.environ.get("AREAL_DOCTOR_CACHE_DIR")
    os.environ["AREAL_DOCTOR_CACHE_DIR"] = str(folder)
    search_index.clear_caches()
    yield folder
    if old is None:
        del os.environ["AREAL_DOCTOR_CACHE_DIR"]
    else:
        os.environ["AREAL_DOCTOR_CACHE_DIR"] = old
    search_index.clear_caches()


# --- the BM25 variant (rank-bm25's BM25Plus, delta 0, weighted per term) -----------


def test_a_term_in_half_the_sections_still_has_positive_weight_and_ranks_them():
    corpus = [
        ["memory", "micro", "batch"],
        ["memory", "tensor", "parallel"],
        ["disk", "weight", "update"],
        ["sglang", "fraction"],
    ]
    model = WeightedBM25(corpus)
    assert model.idf["memory"] > 0
    scores = model.weighted_scores({"memory": 1.0})
    assert scores[0] > 0 and scores[1] > 0
    assert scores[2] == 0 and scores[3] == 0


def test_a_term_in_most_sections_keeps_a_small_positive_weight():
    corpus = [["memory", f"w{i}"] for i in range(13)] + [["disk"]]
    model = WeightedBM25(corpus)
    assert 0 < model.idf["memory"] < model.idf["disk"]
    assert all(score > 0 for score in model.weighted_scores({"memory": 1.0})[:13])


def test_a_section_without_any_query_term_scores_zero():
    """BM25Plus's delta would add idf to every section for every query term."""
    model = WeightedBM25([["sgd", "adam"], ["adam"], ["disk"]])
    assert model.weighted_scores({"sgd": 1.0, "unknown": 1.0})[1:] == [0.0, 0.0]


def test_query_weights_scale_each_terms_contribution():
    model = WeightedBM25([["sgd", "adam"], ["adam"], ["disk"]])
    once = model.weighted_scores({"sgd": 1.0})
    half = model.weighted_scores({"sgd": 0.5})
    assert half[0] == pytest.approx(once[0] / 2)


def test_unit_weights_give_rank_bm25s_own_scores():
    from rank_bm25 import BM25Plus

    corpus = [["sgd", "adam", "adam"], ["adam", "disk"], ["disk", "nccl", "buffer", "chunk"]]
    query = ["adam", "disk"]
    expected = BM25Plus(corpus, k1=1.5, b=0.75, delta=0.0).get_scores(query)
    scores = WeightedBM25(corpus, k1=1.5, b=0.75).weighted_scores(dict.fromkeys(query, 1.0))
    assert scores == pytest.approx(list(expected))


# --- glossary expansion ------------------------------------------------------------


def test_glossary_ring_is_added_when_any_term_occurs():
    entries = parse_glossary(
        [{"en": ["gradient checkpointing", "recomputation"], "zh": ["重计算"]}]
    )
    added = set(expansion_terms("Enable gradient checkpointing", entries))
    assert {*tokenize("recomputation"), *tokenize("重计算")} <= added
    assert expansion_terms("Enable tensor parallelism", entries) == []


def test_english_glossary_terms_match_whole_words_only():
    entries = [GlossaryEntry(("tp", "tensor parallel"))]
    assert expansion_terms("see https://example.org", entries) == []
    assert expansion_terms("use tp=2", entries) != []


def test_chinese_term_crossing_an_earlier_term_does_not_match():
    micro_batch = GlossaryEntry(("micro-batch", "微批"))
    batch_size = GlossaryEntry(("batch size", "批大小"))
    matched = set(expansion_terms("优化微批大小", [micro_batch, batch_size]))
    assert "micro" in matched
    assert "batch" in matched  # from micro-batch itself
    assert "size" not in matched


def test_nested_chinese_terms_both_match():
    gpu_memory = GlossaryEntry(("vram", "显存"))
    oom = GlossaryEntry(("oom", "显存不足"))
    assert {"vram", "oom"} <= set(expansion_terms("训练时显存不足", [gpu_memory, oom]))


def test_common_words_split_off_chinese_ring_terms_are_not_index_terms():
    # 能 (can) from 能整除 would make every section about divisibility match "能…吗" questions.
    entry = GlossaryEntry(("divisible", "整除", "能整除", "不能整除"))
    assert {"整除", "能整除", "不能整除", *tokenize("divisible")} <= set(entry.index_terms)
    assert "能" not in entry.index_terms
    assert "爆" in GlossaryEntry(("oom", "爆了")).index_terms


def test_an_entry_named_in_the_title_also_counts_in_the_title_field():
    from assistant.search.index import compile_section
    from assistant.search.sections import Section

    entries = parse_glossary(
        [
            {"en": ["gradient checkpointing", "recompute"], "zh": ["重计算"]},
            {"en": ["yaml", "config"]},
        ]
    )
    section = Section(
        id="s",
        lang="en",
        title="Enable Gradient Checkpointing",
        body="Set it in the YAML.",
        phase="training",
    )
    fields = compile_section(section, entries)["fields"]
    assert set(tokenize("recompute")) <= set(fields["title_glossary"])
    assert set(tokenize("config")) <= set(fields["glossary"])
    assert not set(tokenize("config")) & set(fields["title_glossary"])


@pytest.mark.parametrize(
    "data",
    [{"en": ["a", "b"]}, [{"en": ["only-one"]}], [{"fr": ["a", "b"]}], [{"en": ["a", ""]}]],
)
def test_malformed_glossary_is_a_knowledge_error(data):
    with pytest.raises(KnowledgeError):
        parse_glossary(data)


# --- ranking on our own questions ----------------------------------------------------


@pytest.mark.parametrize(
    ("query", "section"),
    [
        ("梯度检查点怎么打开", "train-grad-checkpointing"),
        ("同时跑的生成请求太多把显存撑爆了", "gen-reduce-concurrency"),
        ("CPU卸载之后优化器更新太慢了", "train-per-layer-optim"),
        ("weight_chunked_mem_mb default value", "wu-chunk-buffer"),
        ("use a shared filesystem for weight sync instead of nccl", "wu-disk"),
        ("OOM while loading the model before the first step", "train-efficient-load"),
        ("never use adam with a bf16 optimizer dtype", "optimizer-state-dtype"),
        ("fsdp:d2c2 是什么意思", "train-parallelism"),
        ("actor.optimizer.type 改成 sgd 省显存吗", "train-light-optimizer"),
        ("throw away intermediate activations and recompute them", "train-grad-checkpointing"),
        ("store moments in half precision", "optimizer-state-dtype"),
        ("turn on grad ckpt for the actor", "train-grad-checkpointing"),
        ("Not enough memory. Please try to increase --mem-fraction-static", "gen-sglang-memory"),
        ("send new weights through shared storage instead of the network", "wu-disk"),
    ],
)
def test_own_questions_find_their_section_first(query, section):
    assert search(query, k=1)[0].section == section


def test_generic_training_question_stays_on_training_sections():
    hits = search("训练时显存不足怎么办", k=3)
    assert {hit.section for hit in hits} <= {
        "train-micro-batch",
        "train-grad-checkpointing",
        "train-parallelism",
        "train-per-layer-optim",
        "train-light-optimizer",
        "optimizer-state-dtype",
        "core-parameters",
    }


@pytest.mark.parametrize(
    ("typed", "meant"),
    [
        ("gradeint checkpointing", "gradient checkpointing"),
        ("sgd vs adamw memroy", "sgd vs adamw memory"),
        ("which optimzer saves memory", "which optimizer saves memory"),
    ],
)
def test_a_typo_ranks_like_the_word_meant(typed, meant):
    assert [hit.section for hit in search(typed)] == [hit.section for hit in search(meant)]


def test_language_follows_the_query_unless_given():
    assert {hit.lang for hit in search("梯度检查点怎么打开")} == {"zh"}
    assert {hit.lang for hit in search("gradient checkpointing")} == {"en"}
    assert search("梯度检查点", lang="en", k=1)[0].section == "train-grad-checkpointing"
    assert search("梯度检查点", lang="en", k=1)[0].lang == "en"


def test_all_languages_are_merged_by_score():
    hits = search("gradient checkpointing 梯度检查点", lang="all", k=4)
    assert {hit.lang for hit in hits} == {"zh", "en"}
    assert [hit.score for hit in hits] == sorted((hit.score for hit in hits), reverse=True)


def test_extra_sections_are_left_out_when_their_lead_is_zero():
    from assistant.search.index import IndexConfig

    query = "PYTORCH_CUDA_ALLOC_CONF expandable_segments fragmentation"
    guide_only = IndexConfig(note_lead=0.0)
    assert all(not hit.section.startswith("x-") for hit in search(query, k=10, config=guide_only))
    assert "x-fragmentation" in [hit.section for hit in search(query, k=3)]
    assert search(query, k=1, include_extra=True)[0].section == "x-fragmentation"


def test_hits_carry_a_snippet_with_the_matched_terms():
    hit = search("max_tokens_per_mb 多轮对话", lang="zh", k=1)[0]
    assert hit.section == "train-micro-batch"
    assert hit.terms
    assert all(term in hit.snippet for term in hit.terms)
    assert len(hit.snippet) <= 170


# --- bad queries -------------------------------------------------------------------------


@pytest.mark.parametrize("query", ["", "   ", "\n\t"])
def test_empty_query_is_a_user_error(query):
    with pytest.raises(UserError):
        search(query)


@pytest.mark.parametrize("lang", ["fr", "ZH", ""])
def test_unknown_language_is_a_user_error(lang):
    with pytest.raises(UserError):
        search("oom", lang=lang)


@pytest.mark.parametrize(
    "query",
    ["привет мир", "🙂🙂🙂", "\x00\x01\x02", "，。、"],
)
def test_query_in_neither_language_returns_no_hits(query):
    assert search(query) == []


def test_huge_query_with_control_characters_returns_hits():
    query = ("显存不足 OOM \x00\x1b[31m max_tokens_per_mb " * 5000)[:100_000]
    hits = search(query)
    assert hits
    assert all(isinstance(hit, SearchHit) for hit in hits)


def test_zero_results_requested():
    assert search("oom", k=0) == []


# --- the compiled-index cache ------------------------------------------------------------


def _stored_index() -> Path:
    """Where the compiled index is kept: the one cache's folder for this key."""
    from assistant.cache import cache_dir

    folder = cache_dir()
    assert folder is not None
    return folder / search_index.CACHE_NAME


def test_compiled_index_is_written_and_then_reused(private_cache, monkeypatch):
    search_index.clear_caches()
    search("oom")
    assert (_stored_index()).is_file()

    search_index.clear_caches()

    def must_not_compile(lang):
        raise AssertionError(f"compiled {lang} again although the cache is current")

    monkeypatch.setattr(search_index, "compile_language", must_not_compile)
    assert search("oom")


def _stored_scores() -> list[Path]:
    from assistant.cache import cache_dir

    folder = cache_dir()
    assert folder is not None
    return sorted(folder.glob("bm25-*.marshal"))


def test_cached_term_scores_are_rank_bm25s_own_for_every_term(private_cache):
    """The memo is rank-bm25's get_scores([term]) for every term of every index a search
    builds, float for float, and a process that reads it back gets the same table."""
    from rank_bm25 import BM25Plus

    from assistant.search.index import document_terms

    search_index.clear_caches()
    search("训练时显存不足怎么办")
    search("gradient checkpointing", lang="en")
    assert len(_stored_scores()) >= 2  # one per index built
    search_index.clear_caches()
    search("训练时显存不足怎么办")
    search("gradient checkpointing", lang="en")
    for lang in ("zh", "en"):
        index = search_index.section_index(lang)
        corpus = [document_terms(doc, search_index.DEFAULT_CONFIG.weights) for doc in index.docs]
        model = BM25Plus(corpus, k1=1.5, b=0.75, delta=0.0)
        memo = index.model.memo
        assert set(memo.scores) == {term for document in corpus for term in document}
        for term in memo.scores:
            assert memo.term_vector(term) == [float(s) for s in model.get_scores([term])], term
            assert memo.idf[term] == float(model.idf[term])


def test_a_warm_search_imports_neither_rank_bm25_nor_numpy(private_cache):
    """With the memo in the cache a search needs no BM25 model; with an empty cache the
    scorer is rank-bm25 itself."""
    code = (
        "import sys\n"
        "from assistant.search import search\n"
        "hits = search('训练时显存不足怎么办') + search('gradient checkpointing', lang='en')\n"
        "print(bool(hits), sorted(m for m in ('rank_bm25', 'numpy', 'yaml') if m in sys.modules))\n"
    )
    cold, warm = cold_then_warm(code, private_cache / "fresh")
    assert cold.startswith("True") and "'rank_bm25'" in cold and "'numpy'" in cold
    assert warm == "True []"


def test_the_scores_file_follows_the_index_settings_and_the_installed_rank_bm25(monkeypatch):
    """The one cache's key covers knowledge/ and this package, not the scorer library:
    a rank-bm25 upgrade (another file) must not reuse scores it did not compute."""
    name = search_index.scores_name("en", search_index.DEFAULT_CONFIG)
    assert name == search_index.scores_name("en", search_index.IndexConfig())
    other = replace(search_index.DEFAULT_CONFIG, k1=1.2)
    assert search_index.scores_name("en", other) != name
    assert search_index.scores_name("zh", search_index.DEFAULT_CONFIG) != name
    assert "rank_bm25" in search_index._scorer_stamp()
    monkeypatch.setattr(search_index, "_scorer_stamp", lambda: "/elsewhere/rank_bm25.py:1:2")
    assert search_index.scores_name("en", search_index.DEFAULT_CONFIG) != name


def test_a_term_missing_from_the_memo_is_scored_by_rank_bm25():
    from assistant.search.bm25 import TermScores

    corpus = [["sgd", "adam", "adam"], ["adam", "disk"], ["disk", "nccl"]]
    full = WeightedBM25(corpus)
    partial = TermScores(
        full.memo.size,
        full.memo.doc_counts,
        full.memo.idf,
        {term: pair for term, pair in full.memo.scores.items() if term != "adam"},
    )
    built: list[bool] = []

    def corpus_on_demand() -> list[list[str]]:
        built.append(True)
        return corpus

    lazy = WeightedBM25(corpus_on_demand, memo=partial)
    assert lazy.weighted_scores({"disk": 1.0}) == full.weighted_scores({"disk": 1.0})
    assert not built  # a cached term needs no model
    assert lazy.weighted_scores({"adam": 2.0}) == full.weighted_scores({"adam": 2.0})
    assert built


def test_damaged_term_scores_are_computed_again(private_cache):
    search_index.clear_caches()
    expected = search("gradient checkpointing", k=3)
    for path in _stored_scores():
        path.write_bytes(b"\x00garbage")
    search_index.clear_caches()
    assert search("gradient checkpointing", k=3) == expected
    search_index.clear_caches()
    assert search("gradient checkpointing", k=3) == expected


def test_unwritable_cache_folder_falls_back_to_memory(tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("AREAL_DOCTOR_CACHE_DIR", str(blocker / "cache"))
    search_index.clear_caches()
    try:
        assert search("gradient checkpointing", k=1)[0].section == "train-grad-checkpointing"
    finally:
        monkeypatch.undo()
        search_index.clear_caches()


# --- snippets and output shapes ---------------------------------------------------------


def test_best_snippet_prefers_the_sentence_with_the_rarest_matches():
    sentences = ["Memory is used everywhere.", "Set max_tokens_per_mb as low as possible."]
    idf = {"memory": 0.1, "max_tokens_per_mb": 2.0}.get
    snippet, terms = best_snippet(sentences, ["memory", "max_tokens_per_mb"], lambda t: idf(t, 0))
    assert snippet.startswith("Set")
    assert terms == ["max_tokens_per_mb"]


def test_long_sentence_is_cut_around_the_first_match():
    sentence = "word " * 60 + "fragmentation " + "word " * 60
    snippet, terms = best_snippet([sentence], tokenize("fragmentation"), lambda _t: 1.0)
    assert terms == ["fragmentation"]
    assert snippet.startswith("…") and snippet.endswith("…")


def test_mark_terms_marks_whole_words_only():
    marked = mark_terms("mb and max_tokens_per_mb", ["mb"], "«", "»")
    assert marked == "«mb» and max_tokens_per_mb"


def test_json_has_the_contract_shape():
    hits = search("gradient checkpointing", k=2)
    document = hits_to_json("gradient checkpointing", hits)
    assert document["query"] == "gradient checkpointing"
    assert len(document["results"]) == 2
    for result in document["results"]:
        assert {"section", "lang", "title", "score", "snippet"} <= set(result)
        assert isinstance(result["score"], float)
    json.dumps(document, ensure_ascii=False)


def test_text_output_numbers_results_and_marks_terms():
    hits = search("gradient checkpointing", k=2)
    plain = format_hits_text("gradient checkpointing", hits, color=False)
    assert plain.startswith("1. ")
    assert "[train-grad-checkpointing]" in plain
    assert "«" in plain and "\x1b[" not in plain
    colored = format_hits_text("gradient checkpointing", hits, color=True)
    assert "\x1b[1m" in colored


def test_text_output_without_hits_says_so():
    assert "No guide section matches" in format_hits_text("xyz", [], color=False)


def test_damaged_cache_file_is_rebuilt(private_cache):
    search_index.clear_caches()
    search("oom")
    path = _stored_index()
    path.write_text(json.dumps({"langs": "garbage", "phases": {}}), "utf-8")
    search_index.clear_caches()
    assert search("gradient checkpointing", k=1)[0].section == "train-grad-checkpointing"
    path.write_text("{not json", encoding="utf-8")
    search_index.clear_caches()
    assert search("gradient checkpointing", k=1)


def test_the_projects_own_notes_are_found_by_default() -> None:
    from assistant.search import search

    assert search("expandable_segments fragmentation", k=3)[0].section == "x-fragmentation"
    assert "x-fragmentation" in [h.section for h in search("what is expandable_segments", k=3)]
    assert search("nvidia-smi other process holds memory", k=3)[0].section == "x-foreign-process"


def test_notes_do_not_push_the_guide_down_for_a_guide_question() -> None:
    from assistant.search import search

    assert search("max_tokens_per_mb micro-batch", k=1)[0].section == "train-micro-batch"
    assert search("增加 mem_fraction_static", k=1)[0].section == "gen-sglang-memory"


def test_weak_matches_say_so() -> None:
    from assistant.search import format_hits_text, hits_to_json
    from assistant.search.engine import WEAK_SCORE, SearchHit

    hits = [SearchHit("core-parameters", "en", "Core", WEAK_SCORE / 20)]
    assert "weak match" in format_hits_text("q", hits, color=False)
    assert hits_to_json("q", hits)["results"][0]["weak"] is True


def test_concept_words_are_content_words_only() -> None:
    terms = search_index.concept_terms("split the model over two cards; 先建空模型 8")
    assert "split" in terms and "card" in terms
    assert not {"the", "over", "two", "8", "先"} & set(terms)


def test_concept_words_add_only_rings_the_section_does_not_name() -> None:
    entries = parse_glossary([{"en": ["disk", "filesystem"]}, {"en": ["chunk", "bucket"]}])
    section_rings = set(expansion_terms("data goes to disk", entries))
    added = search_index.new_expansion("write to disk in chunks", section_rings, entries)
    assert "bucket" in added
    assert "filesystem" not in added  # the section's own text already names that ring


def test_a_section_is_found_by_its_concept_words() -> None:
    """'queue depth' is in no guide text; section_terms.yaml gives it to the concurrency fix."""
    hits = search("queue depth on the server", lang="en", k=3)
    assert hits[0].section == "gen-reduce-concurrency"
    concepts = search_index.load_section_terms()
    assert "queue depth" in concepts["gen-reduce-concurrency"]


@pytest.mark.parametrize(
    ("query", "aside"),
    [
        ("besides mem_fraction_static, what else can I tune", ["mem_fraction_static"]),
        ("I don't want to switch to disk, how else", ["disk"]),
        ("NCCL 更新权重 OOM，但不想切 disk 模式", ["disk 模式"]),
        ("除了 mem_fraction_static 还能调什么", ["mem_fraction_static"]),
        ("mem_fraction_static 之外还能调什么", ["mem_fraction_static"]),
        ("不想放弃 NCCL，权重更新还能怎么省显存", []),  # a double negative keeps NCCL
        ("能不能先落盘再让推理端读", []),  # 能不能 is "can it", not a refusal
        ("one process reads the checkpoint rather than every worker", []),
        ("long ctx training still ooms at the smallest micro batch", ["micro batch"]),
        ("even with gradient checkpointing it still OOMs", ["gradient checkpointing"]),
        ("开了梯度检查点还是OOM，序列太长还能怎么办", ["梯度检查点"]),
        ("长上下文训练，微批已经压到最低了还是爆", ["微批"]),
        ("mem_fraction_static 调到 0.7 还是 OOM", []),  # a value that can go lower: not used up
        ("per_layer_optim_step 开了之后显存还会涨吗", []),
    ],
)
def test_what_a_question_sets_aside(query: str, aside: list[str]) -> None:
    from assistant.search.cues import set_aside

    assert set_aside(query) == aside


def test_a_fix_set_aside_is_not_the_answer() -> None:
    plain = search("sglang server OOM, what can I tune", lang="en", k=5)
    assert plain[0].section in ("gen-sglang-memory", "engine-parameters")
    hits = search("sglang server OOM, besides mem_fraction_static what can I tune", lang="en")
    ranked = [hit.section for hit in hits]
    assert ranked[0] not in ("gen-sglang-memory", "engine-parameters")
    assert ranked.index("gen-reduce-concurrency") < ranked.index("gen-sglang-memory")
    chunk = search("NCCL 更新权重 OOM，但不想切 disk 模式", lang="zh", k=3)
    assert chunk[0].section == "wu-chunk-buffer"


def test_a_fix_already_used_up_is_not_the_answer() -> None:
    hits = search("开了梯度检查点还是OOM，序列太长还能怎么办", lang="zh", k=5)
    ranked = [hit.section for hit in hits]
    assert ranked[0] == "train-parallelism"  # the next lever for a long sequence
    assert "train-grad-checkpointing" not in ranked[:3]


@pytest.mark.parametrize(
    ("query", "note"),
    [
        ("another process is using the GPU", "x-foreign-process"),
        ("显卡被别的进程占了", "x-foreign-process"),
        ("进程直接被杀了 退出码137", "x-host-memory"),  # issue 21: three guide sections before
        ("sglang disable_cuda_graph 要不要开", "x-cuda-graph"),
        ("NCCL WARN Failed to CUDA calloc", "x-nccl-memory"),
    ],
)
def test_a_note_leads_when_it_scores_clearly_higher(query: str, note: str) -> None:
    """No guide section is about these; the note that is comes first, the guide after."""
    hits = search(query, k=3)
    assert hits[0].section == note
    assert [hit.score for hit in hits] == sorted((hit.score for hit in hits), reverse=True)


@pytest.mark.parametrize(
    ("query", "section"),
    [
        ("怎么开重计算", "train-grad-checkpointing"),
        ("sglang mem_fraction_static 调多少", "gen-sglang-memory"),
        ("weight_update_mode: disk 需要共享存储吗", "wu-disk"),
        ("which optimizers use less memory than adamw", "train-light-optimizer"),
    ],
)
def test_a_guide_question_keeps_the_guide_section_first(query: str, section: str) -> None:
    assert search(query, k=1)[0].section == section


def test_a_note_is_compared_with_the_guide_on_its_own_words() -> None:
    """The glossary's server ring puts "vllm" into every section that names a server;
    the comparison leaves rings and phase words out, so the vLLM note's own words count."""
    from assistant.search.engine import _joint_config
    from assistant.search.index import DEFAULT_CONFIG

    weights = _joint_config(DEFAULT_CONFIG).weights
    assert (weights.glossary, weights.title_glossary, weights.concept_glossary) == (0, 0, 0)
    assert weights.phase == 0 and weights.concepts > 0
    assert search("vllm 做 rollout 的显存怎么调", k=1)[0].section == "x-vllm-memory"


def test_a_note_is_offered_beside_the_guide_results() -> None:
    """A note nearly as good as the guide (not clearly better) is offered on its own
    line, and the guide's ranking is what search() gave."""
    from assistant.search import see_also

    query = "rollout OOM"
    hits = search(query, k=3)
    assert not any(hit.section.startswith("x-") for hit in hits)
    note = see_also(query, hits)
    assert note is not None and note.section == "x-vllm-memory"


def test_no_weak_note_beside_weak_results() -> None:
    from assistant.search import see_also

    query = "CUDA out of memory"  # nothing but the words every OOM prints
    hits = search(query, k=3)
    assert all(hit.weak for hit in hits)
    assert see_also(query, hits) is None


def test_no_note_beside_a_guide_question_or_a_listed_note() -> None:
    from assistant.search import see_also
    from assistant.search.index import IndexConfig

    guide_question = "sglang mem_fraction_static 调多少"
    assert see_also(guide_question, search(guide_question, k=5)) is None
    listed = search("expandable_segments fragmentation", k=3)
    assert listed[0].section == "x-fragmentation"
    assert see_also("expandable_segments fragmentation", listed) is None
    query = "another process is using the GPU"
    together = IndexConfig(include_extra=True)
    assert see_also(query, search(query, k=3), config=together) is None


def test_the_offered_note_is_printed_and_in_the_json() -> None:
    from assistant.search import see_also

    query = "rollout OOM"
    hits = search(query, k=2)
    note = see_also(query, hits)
    text = format_hits_text(query, hits, color=False, note=note)
    assert text.splitlines()[0].startswith("1. ")
    assert "See also, areal-doctor's note: Tuning vLLM Memory" in text
    assert [item["section"] for item in hits_to_json(query, hits, note)["see_also"]] == [
        "x-vllm-memory"
    ]
    assert hits_to_json(query, hits)["see_also"] == []


# --- pasted error output -------------------------------------------------------------


@pytest.mark.parametrize(
    "query",
    [
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB",
        "CUDA out of memory",
        "训练时报 CUDA out of memory 怎么办",
        "ncclUnhandledCudaError: Call to CUDA function failed",
        "Out of memory: Killed process 4242 (python)",
    ],
)
def test_pasted_error_output_points_to_diagnose(query: str) -> None:
    hits = search(query, k=3)
    document = hits_to_json(query, hits)
    assert document["diagnose_hint"]["command"] == "areal-doctor diagnose"
    assert document["diagnose_hint"]["matched"].lower() in query.lower()
    last = format_hits_text(query, hits, color=False).splitlines()[-1]
    assert "areal-doctor diagnose" in last and last == document["diagnose_hint"]["text"]


@pytest.mark.parametrize(
    "query",
    ["训练时显存爆了", "process killed with exit code 137", "how to enable gradient checkpointing"],
)
def test_a_question_in_words_gets_no_diagnose_hint(query: str) -> None:
    hits = search(query, k=3)
    assert "diagnose_hint" not in hits_to_json(query, hits)
    assert "areal-doctor diagnose" not in format_hits_text(query, hits, color=False)


def test_the_diagnose_hint_follows_the_language_and_shows_without_results() -> None:
    zh = "CUDA out of memory 训练时出现"
    assert "日志" in hits_to_json(zh, search(zh, k=1))["diagnose_hint"]["text"]
    text = format_hits_text("Traceback (most recent call last):", [], color=False)
    assert text.splitlines()[0].startswith("No guide section matches")
    assert "areal-doctor diagnose" in text.splitlines()[-1]


def test_the_words_every_oom_prints_are_not_searched_for() -> None:
    from assistant.search.cues import without_generic_error

    rest = without_generic_error(
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB in loss.backward()"
    )
    assert "loss.backward()" in rest
    assert not {"cuda", "allocate", "gib", "outofmemoryerror"} & set(rest.lower().split())
    assert without_generic_error("CUDA out of memory.") == "CUDA out of memory."  # all there is
    hits = search("CUDA out of memory. Tried to allocate 1.5 GiB 在 loss.backward() 里", k=1)
    assert hits[0].section.startswith("train-")  # not the note quoting PyTorch's message


# --- snippets that say something -----------------------------------------------------


def test_a_lead_in_is_shown_with_what_it_introduces() -> None:
    sentences = [
        "Adjust SGLang memory allocation:",
        "sglang:  mem_fraction_static: 0.8 # Reduce from 0.9 to leave more memory headroom",
        "See the SGLang docs for additional tuning options.",
    ]
    snippet, terms = best_snippet(sentences, ["sglang", "allocation"], lambda term: 1.0)
    assert snippet.startswith("Adjust SGLang memory allocation: sglang:")
    assert "mem_fraction_static: 0.8" in snippet and "SGLang" in terms
    hit = search("sglang 显存比例怎么调", k=1)[0]
    assert hit.section == "gen-sglang-memory" and "mem_fraction_static: 0.8" in hit.snippet


def test_an_aside_in_parentheses_is_not_the_fallback_snippet() -> None:
    sentences = [
        "(Translated by areal-doctor from the Chinese guide.)",
        "By default FSDP keeps fp32.",
    ]
    snippet, _terms = best_snippet(sentences, ["nothing"], lambda term: 1.0)
    assert snippet == "By default FSDP keeps fp32."


@pytest.mark.parametrize(
    ("query", "note"),
    [
        ("nccl calloc fails while the weight update group is created", "x-nccl-memory"),
    ],
)
def test_a_note_the_query_names_leads_over_a_match_on_shared_words(query: str, note: str) -> None:
    """The guide's best section matched on words every section has ("training", "memory");
    the note matched on its title and concept words, and leads though it does not score
    note_lead times higher. Without the rule (named_product 0) the guide came first."""
    from assistant.search.index import DEFAULT_CONFIG

    assert search(query, k=1)[0].section == note
    assert search(query, k=1, config=replace(DEFAULT_CONFIG, named_product=0.0))[0].section != note


def test_a_guide_section_the_query_names_too_keeps_its_lead() -> None:
    """Host RAM while loading: the loading section's own words match as well as the
    host-memory note's, so the note does not jump ahead on the lower bar."""
    assert search("host RAM fills up on rank 0 while the model loads", k=1)[0].section == (
        "train-efficient-load"
    )


def test_a_note_about_as_good_as_the_guide_comes_second() -> None:
    """The Adam-arithmetic note scores below the optimizer-dtype section but near it;
    without note_second two more optimizer sections came before it (out of the top 3).
    No model size: with one the note leads (the memory-arithmetic expansion)."""
    from assistant.search.index import DEFAULT_CONFIG

    query = "how much memory do adam states of a big model take"
    hits = search(query, k=4)
    assert [hit.section for hit in hits[:2]] == ["optimizer-state-dtype", "x-optimizer-memory"]
    assert [hit.score for hit in hits] == sorted((hit.score for hit in hits), reverse=True)
    plain = search(query, k=4, config=replace(DEFAULT_CONFIG, note_second=0.0))
    assert "x-optimizer-memory" not in [hit.section for hit in plain[:3]]


def test_a_request_no_gpu_can_hold_keeps_its_size_as_the_oversized_note_words() -> None:
    from assistant.search import cues

    def large(query: str) -> bool:
        return "oversized-request" in cues.expansions(query)

    assert large("Tried to allocate 96.00 GiB") and large("申请 200 多 G")
    assert not large("Tried to allocate 2.00 GiB")
    assert not large("an 8B model with Adam needs 96 GB")  # a total, not a request
    pasted = "torch.OutOfMemoryError: Tried to allocate 96.00 GiB，这是哪里算错了"
    assert search(pasted, k=1)[0].section == "x-oversized-request"
    small = pasted.replace("96.00", "1.00")
    assert search(small, k=1)[0].section != "x-oversized-request"


def test_how_much_memory_a_model_size_takes_is_the_arithmetic_note() -> None:
    from assistant.search import cues

    def arithmetic(query: str) -> bool:
        return "memory-arithmetic" in cues.expansions(query)

    assert arithmetic("七十亿参数的模型用亚当优化器大概要多少显存")
    assert not arithmetic("加载 70B checkpoint 时 host 内存不够")  # no how much
    assert not arithmetic("7B 模型 micro batch 设多少")  # not about memory
    assert not arithmetic("how much memory do Adam states take")  # no model size
    for query in (
        "how many bytes per parameter for AdamW states on a 7B model",
        "Adam 的 optimizer state 对 13B 模型要占多少 GB",
    ):
        assert search(query, k=1)[0].section == "x-optimizer-memory"


def test_plain_neicun_names_host_memory_and_xiancun_does_not() -> None:
    from assistant.search.glossary import query_phases
    from assistant.search.index import phase_patterns

    patterns = phase_patterns()
    assert "host_memory" in query_phases("内存占用一直涨，被系统杀掉", patterns)
    assert "host_memory" in query_phases("the node swaps, dmesg shows killed process", patterns)
    assert "host_memory" not in query_phases("显存占用一直涨", patterns)
    assert search("内存占用一直涨，被系统杀掉", k=1)[0].section == "x-host-memory"
