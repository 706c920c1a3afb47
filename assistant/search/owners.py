"""The terms that name one of areal-doctor's notes alone (engine._owning_notes).

Computed when the sections are compiled and kept with them in the one cache, so a warm
search does not walk every section's fields again.
"""

from __future__ import annotations

from typing import Any

from assistant.search.sections import EXTRA_PREFIX

NAMING_FIELDS = ("title", "keys", "concepts")  # what names a section (engine._naming_config)


def own_terms(langs: dict[str, list[dict[str, Any]]]) -> dict[str, dict[str, str]]:
    """Per language, term -> the one note that names it and that alone holds it.

    ``langs`` holds the compiled sections of every language (index.compile_language).
    """
    holders: dict[str, set[str]] = {}
    for docs in langs.values():
        for doc in docs:
            for term in held_terms(doc):
                holders.setdefault(term, set()).add(doc["id"])
    return {language: _owners(docs, holders) for language, docs in langs.items()}


def _owners(docs: list[dict[str, Any]], holders: dict[str, set[str]]) -> dict[str, str]:
    owners: dict[str, str] = {}
    for doc in docs:
        if not doc["id"].startswith(EXTRA_PREFIX):
            continue
        fields = doc["fields"]
        vocabulary = set(fields["keys"]) | set(fields["glossary"]) | set(fields["concept_glossary"])
        for name in NAMING_FIELDS:
            for term in fields[name]:
                domain = term in vocabulary or is_identifier(term)
                if domain and holders.get(term) == {doc["id"]}:
                    owners[term] = doc["id"]
    return owners


def is_identifier(term: str) -> bool:
    """A setting's or a variable's name (max_split_size_mb, vllm.max_model_len)."""
    return "_" in term or "." in term.strip(".")


def held_terms(doc: dict[str, Any]) -> set[str]:
    """The terms a section holds for own_terms: every field but the phase's words and
    the glossary rings only they bring (every generation section has the CUDA graph
    ring through "capture cuda graph", none of them explains graphs); a note's glossary
    rings not either (the vLLM note names enforce_eager, so the graph ring: it does not
    answer 录制图, and between notes their scores decide)."""
    generic = set(doc["phase_glossary"])
    held: set[str] = set()
    for name, terms in doc["fields"].items():
        if name == "phase" or (name == "glossary" and doc["id"].startswith(EXTRA_PREFIX)):
            continue
        held.update(term for term in terms if name != "glossary" or term not in generic)
    return held
