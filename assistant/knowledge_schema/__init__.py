"""One validator for every file in knowledge/: shapes, unknown keys and references.

``validate_knowledge()`` checks each file (unknown keys, wrong types) and every
reference between them (facts, metrics, inferences, derived names, questions,
reasons, sections, placeholders, i18n keys). A mistake raises KnowledgeError that
names the file, the entry and the field, so an edit fails at load, not as a wrong
diagnosis. ``ensure_valid()`` runs it once per change of the knowledge files and
remembers the verdict in the user cache dir, so start-up stays fast.
"""

from __future__ import annotations

import hashlib
from functools import cache
from pathlib import Path

from assistant.knowledge import knowledge_dir


def validate_knowledge() -> None:
    """Check every knowledge file and reference; KnowledgeError on the first problem."""
    from assistant.knowledge_schema.files import check_files
    from assistant.knowledge_schema.tree import check_tree
    from assistant.logs.rules import load_rules

    load_rules()  # signatures, phases, look-alikes, facts, describe: checked as they load
    check_files()
    check_tree()


def fingerprint() -> str:
    """Size and modification time of every knowledge file, and this package's version."""
    from assistant import __version__

    digest = hashlib.sha256(__version__.encode())
    root = knowledge_dir()
    schema = Path(__file__).parent
    for base in (root, schema):
        for path in sorted(base.rglob("*")):
            if path.suffix in (".yaml", ".md", ".py"):
                stat = path.stat()
                digest.update(f"{path}:{stat.st_size}:{stat.st_mtime_ns}".encode())
    return digest.hexdigest()[:24]


@cache
def ensure_valid() -> None:
    """Validate once per change of knowledge/ (the verdict is kept in the user cache)."""
    from assistant.search.cache import has_stamp, set_stamp

    stamp = f"knowledge-valid-{fingerprint()}"
    if has_stamp(stamp):
        return
    validate_knowledge()
    set_stamp(stamp)
