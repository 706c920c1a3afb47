"""Tokenisation for the guide search: English, Chinese, mixed text, keys, backends."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from assistant.search import detect_lang
from assistant.search.tokenize import (
    ENGLISH_STOP_WORDS,
    plain_words,
    query_terms,
    query_weights,
    stem,
    tokenize,
    word_terms,
)

ROOT = Path(__file__).resolve().parents[1]


def test_english_is_lower_cased_and_lightly_stemmed():
    assert tokenize("Gradient Checkpointing reduces ACTIVATIONS") == [
        "gradient",
        "checkpoint",
        "reduc",
        "activ",
    ]


@pytest.mark.parametrize(
    ("variants", "same"),
    [
        (["token", "tokens"], "token"),
        (["reduce", "reduced", "reduces"], "reduc"),
        (["size", "sizes"], "siz"),
        (["checkpoint", "checkpointing", "checkpoints"], "checkpoint"),
        (["load", "loading", "loaded", "loads"], "load"),
        (["gpu", "gpus"], "gpu"),
        (["pad", "padding"], "pad"),
    ],
)
def test_stemming_folds_forms_of_one_word(variants, same):
    assert {stem(word) for word in variants} == {same}


@pytest.mark.parametrize(
    "variants",
    [
        ["store", "storage", "stored", "storing"],
        ["serve", "server", "servers", "serving"],
        ["generate", "generation", "generator", "generating"],
        ["optimize", "optimizer", "optimizers", "optimization"],
        ["parallel", "parallelism"],
        ["concurrent", "concurrency"],
        ["allocate", "allocation", "allocator", "allocated"],
        ["sample", "sampler", "sampling"],
        ["converge", "convergence"],
    ],
)
def test_stemming_folds_derived_words_of_one_stem(variants):
    assert len({stem(word) for word in variants}) == 1


@pytest.mark.parametrize(
    "word", ["status", "corpus", "nccl", "fp32", "bf16", "speed", "is", "layer", "user", "lower"]
)
def test_stemming_leaves_other_words_alone(word):
    assert stem(word) == word


def test_config_key_is_kept_whole_and_split():
    assert word_terms("max_tokens_per_mb") == ["max_tokens_per_mb", "max", "token", "per", "mb"]


def test_dotted_key_gives_whole_key_each_part_and_each_word():
    terms = tokenize("actor.mb_spec.max_tokens_per_mb")
    assert terms[0] == "actor.mb_spec.max_tokens_per_mb"
    assert {"actor", "mb_spec", "spec", "max_tokens_per_mb", "max", "token", "per", "mb"} <= set(
        terms
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("fsdp:d2c2", ["fsdp:d2c2", "fsdp", "d2c2"]),
        ('backend: "sglang:d2t2"', ["backend", "sglang:d2t2", "sglang", "d2t2"]),
        ("archon:d2p2e2", ["archon:d2p2e2", "archon", "d2p2e2"]),
    ],
)
def test_backend_strings_are_kept_whole_and_split(text, expected):
    assert tokenize(text) == expected


def test_a_hyphenated_flag_gives_the_same_whole_term_as_the_config_key():
    assert tokenize("--mem-fraction-static") == tokenize("mem_fraction_static")
    assert tokenize("sglang.mem-fraction-static")[0] == "sglang.mem_fraction_static"


def test_numbers_with_dots_stay_one_term():
    assert tokenize("mem_fraction_static: 0.8") == [
        "mem_fraction_static",
        "mem",
        "fraction",
        "static",
        "0.8",
    ]


def test_full_width_text_is_normalised():
    assert tokenize("ＯＯＭ　ｍａｘ＿ｔｏｋｅｎｓ") == tokenize("OOM max_tokens")


def test_chinese_is_segmented_into_dictionary_words():
    terms = tokenize("训练时显存不足")
    assert "训练" in terms
    assert "显存" in terms
    assert all(len(term) <= 4 for term in terms)


def test_a_run_of_words_spelling_a_guide_term_adds_the_whole_term():
    # 梯度检查点 is segmented 梯度 + 检查点; the guide's term comes whole as well.
    terms = tokenize("怎么开梯度检查点")
    assert {"梯度", "检查点", "梯度检查点"} <= set(terms)
    # jieba reads 主权重 as 主权 ("sovereignty") + 重; the term master weights is added.
    assert "主权重" in tokenize("fp32 主权重")


def test_a_guide_term_crossing_an_earlier_one_is_not_added():
    terms = tokenize("优化微批大小")
    assert "微批" in terms
    assert "批大小" not in terms
    assert "批大小" in tokenize("把批大小调小")


def test_mixed_text_splits_scripts_and_keeps_keys():
    terms = tokenize("把 max_tokens_per_mb 调到 4096，GPU内存还是不够")
    assert "max_tokens_per_mb" in terms
    assert "4096" in terms
    assert "gpu" in terms
    assert "内存" in terms


def test_punctuation_and_control_characters_produce_no_terms():
    assert tokenize("，。！？ \x00\x1b[0m ...") == ["0m"]
    assert tokenize("\t\n\r") == []


def test_query_terms_drop_english_function_words_only():
    assert query_terms("how do I turn on the gradient checkpointing") == [
        "turn",
        "gradient",
        "checkpoint",
    ]
    assert {"how", "the", "of"} <= ENGLISH_STOP_WORDS


def test_function_words_are_dropped_by_their_surface_not_their_stem():
    # "during" stems to "dur", "does" to "doe": neither may survive as a query term
    assert query_terms("OOM during rollout, what does it do") == ["oom", "rollout"]
    assert query_terms("before the first step") == tokenize("before first step")


def test_plain_words_map_terms_to_the_words_typed():
    words = plain_words("optimzer OOM during max_tokens_per_mb 4096 显存")
    assert words == {"optimz": "optimzer", "oom": "oom"}


def test_query_weights_drop_the_commonest_chinese_words_and_count_repeats():
    weights = query_weights(tokenize("显存的显存"))
    assert "的" not in weights
    assert weights["显存"] == 2.0


@pytest.mark.parametrize(
    ("text", "lang"),
    [
        ("训练时显存不足怎么办", "zh"),
        ("OOM during training", "en"),
        ("VLM 开 memory_efficient_load 有用吗", "zh"),
        ("gradient checkpointing 的 default", "en"),
        ("", "en"),
        ("12345", "en"),
    ],
)
def test_detect_lang_follows_the_share_of_chinese(text, lang):
    assert detect_lang(text) == lang


def test_english_only_text_never_imports_jieba():
    code = (
        "import sys\n"
        "from assistant.search.tokenize import tokenize\n"
        "tokenize('gradient checkpointing fsdp:d2c2')\n"
        "print('jieba' in sys.modules)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "False"


def test_chinese_text_loads_jieba_without_pkg_resources() -> None:
    """jieba imports pkg_resources (0.4 s) only to read its own files; we read none."""
    import importlib.util

    if importlib.util.find_spec("pkg_resources") is None:
        pytest.skip("setuptools is not installed: nothing to avoid")
    code = (
        "import sys\n"
        "from assistant.search.tokenize import tokenize\n"
        "terms = tokenize('训练时显存不足')\n"
        "print('jieba' in sys.modules, 'pkg_resources' in sys.modules, '显存' in terms)\n"
        "import pkg_resources\n"  # still importable by anything else afterwards
        "print(pkg_resources.__name__)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert result.stdout.split() == ["True", "False", "True", "pkg_resources"]


def test_importing_the_search_package_loads_no_heavy_module():
    code = (
        "import sys\n"
        "import assistant.search\n"
        "print(sorted(m for m in ('jieba', 'rank_bm25', 'numpy', 'yaml') if m in sys.modules))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"


def test_single_function_characters_are_not_searched_for() -> None:
    """先 ("first") is an adverb in jieba's dictionary but below the frequency damping line;
    但 ("but") a conjunction. 盘 (a noun) is a topic word and stays."""
    from assistant.search.tokenize import query_weights

    weights = query_weights(["先", "但", "显存", "盘"])
    assert "先" not in weights and "但" not in weights
    assert weights["显存"] == 1.0
    assert weights["盘"] > 0.5


def test_a_single_character_counts_less_than_a_word_of_its_frequency() -> None:
    """能 (93,000 in jieba) is mostly part of 能不能, 可能, 性能: dropped as a lone query term.
    调 and 训练 are about as frequent (7,700 and 7,800): the character is damped, the word
    is not. Ring pieces in the index are judged as words (调 from 调小 stays)."""
    from assistant.search.tokenize import _jieba, is_function_piece, query_weights

    frequency = _jieba().FREQ
    assert abs(frequency["调"] - frequency["训练"]) < 0.05 * frequency["训练"]
    weights = query_weights(["能", "训练", "调"])
    assert "能" not in weights
    assert weights["训练"] == 1.0
    assert 0.0 < weights["调"] < 1.0
    assert not is_function_piece("调")


def test_chinese_pronouns_count_half_in_a_query() -> None:
    """哪个 ("which") names no topic; one section using it took a question there."""
    from assistant.search.tokenize import PRONOUN_WEIGHT, query_weights

    weights = query_weights(["哪个", "显存"])
    assert weights["哪个"] == PRONOUN_WEIGHT < 1.0 and weights["显存"] == 1.0


def test_words_of_the_concept_phrases_are_in_the_small_dictionary() -> None:
    """section_terms.yaml's Chinese words feed the dictionary like the guide's: before,
    吃光 split into two common characters that were both dropped, 录制 lost its 制."""
    from assistant.search.tokenize import query_terms

    assert "吃光" in query_terms("数据加载把内存吃光了")
    assert "录制" in query_terms("录制解码图时爆显存")
