"""Search: rules of issue 21's fifth search round."""

from __future__ import annotations

from dataclasses import replace

import pytest

from assistant.search.cues import expansions, pasted_error
from assistant.search.engine import search
from assistant.search.index import DEFAULT_CONFIG, compiled_knowledge
from assistant.search.owners import held_terms
from assistant.search.tokenize import query_terms


def _own_terms(lang: str) -> dict[str, str]:
    owners: dict[str, str] = compiled_knowledge()["own_terms"][lang]
    return owners


def _sections(query: str, k: int = 3, **switches: object) -> list[str]:
    config = replace(DEFAULT_CONFIG, **switches)  # type: ignore[arg-type]
    return [hit.section for hit in search(query, k=k, config=config)]


# --- a term only one note holds names it ----------------------------------------------


@pytest.mark.parametrize(
    ("query", "note"),
    [
        ("the OOM message says a lot is allocated in private pools, what is that", "x-cuda-graph"),
        ("can I set max_split_size_mb together with expandable segments", "x-fragmentation"),
    ],
)
def test_a_term_only_one_note_holds_names_it(query: str, note: str) -> None:
    assert _sections(query, k=1, own_terms=False) != [note]
    assert _sections(query, k=1) == [note]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_an_own_term_is_held_by_its_note_alone(lang: str) -> None:
    """No other section of either language holds it, and its note names it."""
    owners = _own_terms(lang)
    assert owners
    docs = [doc for docs in compiled_knowledge()["langs"].values() for doc in docs]
    for term, note in owners.items():
        assert {doc["id"] for doc in docs if term in held_terms(doc)} == {note}, term


def test_the_rings_of_a_phases_words_hold_nothing() -> None:
    """Every generation section has the CUDA graph ring through its phase words
    ("capture cuda graph"); none of them explains graphs, so 录制图 is the note's."""
    sections = {doc["id"]: doc for doc in compiled_knowledge()["langs"]["zh"]}
    assert "录制图" in sections["gen-sglang-memory"]["fields"]["glossary"]
    assert "录制图" not in held_terms(sections["gen-sglang-memory"])
    assert _own_terms("zh")["录制图"] == "x-cuda-graph"
    query = "推理服务一起来就在录制图那一步爆显存"
    assert _sections(query, k=1, own_terms=False) != ["x-cuda-graph"]
    assert _sections(query, k=1) == ["x-cuda-graph"]


def test_plain_words_own_nothing() -> None:
    """Only the domain's vocabulary names a note: "shape" and "bug" (the oversized-request
    note's "wrong shape or padding bug") are words any question may use."""
    for lang in ("en", "zh"):
        assert not {"shap", "bug", "need", "job"} & set(_own_terms(lang))
        assert _own_terms(lang)["logit"] == "x-oversized-request"
    query = "besides the usual knobs, which trainer settings also shape the footprint?"
    assert "shap" in query_terms(query)
    assert "x-oversized-request" not in _sections(query, k=1)


# --- SGLang's unbalanced-memory message is pasted output --------------------------------


def test_sglangs_unbalanced_memory_message_names_the_other_process_note() -> None:
    """Only the other-process note quotes "The memory capacity is unbalanced"; the
    engine-parameters section matched its generic memory words."""
    query = "启动时报 memory capacity is unbalanced，怎么回事"
    assert pasted_error(query) is not None
    assert _sections(query, k=1, quoted_notes=False) != ["x-foreign-process"]
    assert _sections(query, k=1) == ["x-foreign-process"]


# --- PyTorch's "reserved but unallocated" in Chinese ------------------------------------


@pytest.mark.parametrize("query", ["预留未分配的显存有十几个 G", "显存里预留了但没分配的部分很大"])
def test_reserved_but_unallocated_in_chinese_is_one_fragmentation_term(query: str) -> None:
    """预留 alone is the static pool's word (gen-sglang-memory); the phrase of PyTorch's
    message is one term of the fragmentation ring."""
    assert {"预留未分配", "预留了但没分配"} & set(query_terms(query))
    assert _sections(query, k=1) == ["x-fragmentation"]


# --- a request compared with the whole card, in more wordings ---------------------------


@pytest.mark.parametrize(
    "query",
    [
        "这个张量比显卡总显存还大",
        "比单卡容量还大的一次申请",
        "a tensor wanting more memory than the entire card",
    ],
)
def test_a_request_bigger_than_the_card_fires_the_comparison(query: str) -> None:
    assert "oversized-comparison" in expansions(query)


def test_more_memory_than_something_else_is_no_comparison() -> None:
    assert "oversized-comparison" not in expansions("uses more memory than the trainer")


# --- vocab is the vocabulary ---------------------------------------------------------


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_vocab_names_the_oversized_request_note(lang: str) -> None:
    """People write "150k vocab"; the note said "vocabulary" only, and "seq len" (the
    vLLM note's max_model_len) decided between the two notes."""
    assert _own_terms(lang).get("vocab") == "x-oversized-request"
    assert "x-oversized-request" in _sections(
        "logits for a large vocab size run out of memory", k=1
    )


# --- 最先 asks for the most effective fix ----------------------------------------------


@pytest.mark.parametrize(
    "query", ["rollout 时显存不够，最先要改哪一个", "推理时爆显存，最先改什么"]
)
def test_the_first_fix_of_a_generation_oom(query: str) -> None:
    """最先 (first of all) is the ring of 最有效 / 首先: the generation section whose title
    says it is the most effective fix."""
    assert "最先" in query_terms(query)
    assert _sections(query, k=1) == ["gen-reduce-concurrency"]


def test_zhua_tu_is_graph_capture() -> None:
    """抓图 is how Chinese users say capturing CUDA graphs: one term of the graph ring
    (抓 alone is a common verb and 图 too common a character to search)."""
    query = "vllm 起服务时抓图阶段爆了显存"
    assert "抓图" in query_terms(query)
    assert _sections(query, k=1) == ["x-cuda-graph"]


# --- a note named by a message it alone quotes takes the phase's boost -----------------


@pytest.mark.parametrize(
    "query",
    [
        "rollout 阶段 SGLang 报 The memory capacity is unbalanced",
        "rollout 起不来，sglang 报 memory capacity is unbalanced",
    ],
)
def test_a_quoted_note_of_any_phase_takes_the_named_phases_boost(query: str) -> None:
    """The other-process note (phase any) quotes SGLang's message; rollout names
    generation, whose sections the boost took ahead of it."""
    assert _sections(query, k=1, any_phase_quoted=False) != ["x-foreign-process"]
    assert _sections(query, k=1) == ["x-foreign-process"]


# --- colocation is the other-process note's case by design ------------------------------


def test_a_trainer_and_server_sharing_cards_is_the_other_process_note() -> None:
    """The note's case by design, trainer and inference server on the same cards, in its
    concept words (the vLLM note, which names 共卡 too, came first)."""
    query = "训练和推理共卡部署，两边显存打架"
    assert _sections(query, k=1) == ["x-foreign-process"]


@pytest.mark.parametrize(
    "query",
    [
        "the old sglang server is still up after I restarted the job",
        "orphaned sglang servers of a crashed run",
    ],
)
def test_a_server_left_by_a_crashed_run_is_the_other_process_note(query: str) -> None:
    """The note's "orphaned inference servers from a crashed run" in its concept words:
    the SGLang section took "sglang server" questions on its server words."""
    assert _sections(query, k=1) == ["x-foreign-process"]
