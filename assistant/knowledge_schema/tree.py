"""knowledge/tree.yaml: checked by the one loader of that file, ``assistant/tree/rules.py``.

The loader validates every shape and name while it builds the typed tree; this module
only runs it for ``validate_knowledge`` (uncached, so an edited file is read anew).
"""

from __future__ import annotations

from typing import Any

import assistant.tree.rules as tree_rules


def check_tree(data: Any = None) -> None:
    tree_rules.parse_tree(tree_rules.load_yaml(tree_rules.FILE) if data is None else data)
