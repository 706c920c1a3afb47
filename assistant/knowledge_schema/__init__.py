"""One validator for every file in knowledge/: shapes, unknown keys and references.

``validate_knowledge()`` checks each file (unknown keys, wrong types) and every
reference between them (facts, metrics, inferences, derived names, questions,
reasons, sections, placeholders, i18n keys). A mistake raises KnowledgeError that
names the file, the entry and the field, so an edit fails at load, not as a wrong
diagnosis. ``ensure_valid()`` runs it once per change of the knowledge files and
remembers the verdict in the one cache, so start-up stays fast.
"""

from __future__ import annotations

from functools import cache


def validate_knowledge() -> None:
    """Check every knowledge file and reference; KnowledgeError on the first problem."""
    from assistant.knowledge_schema.files import check_files
    from assistant.knowledge_schema.tree import check_tree
    from assistant.knowledge_schema.vocabulary import check_vocabulary_examples
    from assistant.logs.rules import load_rules

    load_rules()  # signatures, phases, look-alikes, facts, describe: checked as they load
    check_files()
    check_tree()
    check_vocabulary_examples()


@cache
def ensure_valid() -> None:
    """Validate once per change of knowledge/ (the verdict is kept in the one cache,
    ``assistant/cache.py``, whose key covers every knowledge file and module)."""
    from assistant.cache import KNOWLEDGE_VALID, has_stamp, set_stamp

    if has_stamp(KNOWLEDGE_VALID):
        return
    validate_knowledge()
    set_stamp(KNOWLEDGE_VALID)
