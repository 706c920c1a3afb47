"""Search: rules of issue 21's second search round (alternatives, note wording)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from assistant.search import cues
from assistant.search.engine import search


def _without_alternatives(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cues, "alternatives", lambda: (1.0, []))


@pytest.mark.parametrize(
    ("query", "lang"),
    [
        ("vllm kv cache blocks out of memory at startup", "en"),
        ("vllm 起服务就报 KV cache 放不下", "zh"),
    ],
)
def test_a_section_about_the_other_server_does_not_lead(
    query: str, lang: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A question that names vLLM only is not answered by "Tune SGLang Parameters" (its
    title and keys name SGLang only); without the rule that section came first."""
    first = search(query, lang=lang, k=1)[0].section
    assert first != "gen-sglang-memory"
    assert first.startswith("x-")
    _without_alternatives(monkeypatch)
    assert search(query, lang=lang, k=1)[0].section in ("gen-sglang-memory", "gen-parallelism")


def test_naming_both_servers_or_neither_changes_nothing() -> None:
    """The rule needs one member of a set named and another not: a question about SGLang
    keeps the SGLang section first, one naming neither server is not touched."""
    assert search("sglang mem_fraction_static 调小一点", lang="zh", k=1)[0].section == (
        "gen-sglang-memory"
    )
    from assistant.search.engine import _other_alternatives

    assert _other_alternatives(["sglang", "vllm", "oom"]) == ({"sglang", "vllm"}, set())
    assert _other_alternatives(["oom", "显存"]) == (set(), set())
    assert _other_alternatives(["vllm", "oom"]) == ({"vllm"}, {"sglang"})


@pytest.mark.parametrize(
    ("query", "lang"),
    [("vllm 的 KV cache 放不下怎么办", "zh"), ("the KV cache does not fit when vllm starts", "en")],
)
def test_the_cuda_graph_note_does_not_carry_the_kv_cache_symptom(query: str, lang: str) -> None:
    """The CUDA graph note names the opposite case (SGLang's "Not enough memory" at start-up)
    without the KV cache's words: before, it said "the KV cache did not fit" there and came
    second to the vLLM note on KV cache questions, ahead of the SGLang section."""
    ranked = [hit.section for hit in search(query, lang=lang, k=3)]
    assert ranked[0] == "x-vllm-memory"
    assert ranked[1] != "x-cuda-graph"


def test_the_weight_update_sections_are_not_named_by_nccl() -> None:
    """The disk and chunk-buffer sections' concept words (section_terms.yaml) say what they
    do without the word NCCL ("avoid the collective", "继续广播但少占显存"): with it, both
    were named by every NCCL question as much as the NCCL note and came first. Now the
    note leads at note_lead alone, without the rule for named notes."""
    from dataclasses import replace

    from assistant.search.index import DEFAULT_CONFIG, section_index

    config = replace(DEFAULT_CONFIG, named_product=0.0)
    query = "nccl runs out of memory while creating the communicator"
    assert search(query, k=1, config=config)[0].section == "x-nccl-memory"
    for lang in ("en", "zh"):
        for doc in section_index(lang, DEFAULT_CONFIG).docs:
            if doc["id"].startswith("wu-"):
                assert "nccl" not in doc["fields"]["concepts"]


@pytest.mark.parametrize(
    "query",
    [
        "bytes per parameter for training, will a 32B model fit",
        "每个参数按几个字节算，32B 模型放得下吗",
    ],
)
def test_bytes_per_parameter_is_the_arithmetic_note(query: str) -> None:
    """The optimizer-dtype section's concept words name its fix (half the bytes for the
    moments), not the arithmetic of bytes per parameter, which is the optimizer-memory
    note's: with "bytes per parameter of the optimizer" there it came first."""
    assert search(query, k=1)[0].section == "x-optimizer-memory"


def test_a_mixed_term_whose_chinese_half_is_dropped_searches_its_english_head(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """ "CUDA 图": 图 alone is too common a character to search for, so "cuda" alone was
    left and matched every section that names CUDA; the glossary ring's head "cuda graph"
    is searched instead. Without the rule the CUDA graph note was not first."""
    from assistant.search import engine
    from assistant.search.glossary import load_glossary, mixed_term_heads

    entries = load_glossary()
    assert mixed_term_heads("解码的 CUDA 图要多少显存", {"cuda", "显存"}, entries) == [
        "cuda",
        "graph",
    ]
    # a Chinese half that is searched anyway adds nothing ("CPU 内存": 内存 is kept)
    assert mixed_term_heads("CPU 内存耗尽", {"cpu", "内存", "耗尽"}, entries) == []
    query = "解码的 CUDA 图要多少显存"
    assert search(query, k=1)[0].section == "x-cuda-graph"
    monkeypatch.setattr(engine, "_mixed_heads", lambda query, kept: [])
    assert search(query, k=1)[0].section != "x-cuda-graph"


def test_a_note_of_every_phase_is_boosted_by_a_named_phase() -> None:
    """The other-process note (phase any) gets the boost of the training phase that "训练"
    names, like the training sections. (Without it a training section came first for
    "训练的时候显存被别的进程占着" until 占着 became one term; now the note leads either
    way, by the phase's boost more with it.)"""
    from assistant.search.index import DEFAULT_CONFIG

    query = "训练的时候显存被别的任务用着"
    on = search(query, k=1)[0]
    off = search(query, k=1, config=replace(DEFAULT_CONFIG, any_phase_notes=False))[0]
    assert on.section == off.section == "x-foreign-process"
    assert on.score == pytest.approx(off.score * (1.0 + DEFAULT_CONFIG.phase_boost), rel=1e-3)
