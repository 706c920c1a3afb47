"""Mask what should not be pasted into a public issue: hosts, IPs, users, e-mails, secrets.

The patterns are data (knowledge/redact.yaml); this module only applies them, to
text or to every string inside a JSON-like structure. Patterns cannot know every
name, so the login and host names of the machine running the tool are masked too:
they are the names most likely to be in the user's own logs and paths.
"""

from __future__ import annotations

import contextlib
import getpass
import re
import socket
from functools import cache
from typing import Any

from assistant.knowledge import load_yaml

# Local names not masked: too short, or words the tool's own output uses.
KEEP_NAMES = frozenset({"root", "user", "admin", "localhost", "gpu", "node", "host", "test"})
MIN_NAME_CHARS = 3


@cache
def _rules() -> tuple[tuple[re.Pattern[str], str], ...]:
    rules = []
    for entry in load_yaml("redact.yaml")["rules"]:
        flags = re.IGNORECASE if entry.get("ignore_case") else 0
        rules.append((re.compile(entry["pattern"], flags), entry["replace"]))
    return tuple(rules)


@cache
def _local_names() -> tuple[tuple[re.Pattern[str], str], ...]:
    """This machine's login name and host name (full and short), as whole words."""
    found: list[tuple[str, str]] = []
    with contextlib.suppress(KeyError, OSError):  # no name for this uid (containers)
        found.append((getpass.getuser(), "<user>"))
    host = socket.gethostname()
    found += [(host, "<host>"), (host.split(".")[0], "<host>")]
    patterns = []
    for name, replacement in found:
        if len(name) < MIN_NAME_CHARS or name.lower() in KEEP_NAMES or name.isdigit():
            continue
        whole = rf"(?<![A-Za-z0-9]){re.escape(name)}(?![A-Za-z0-9])"
        patterns.append((re.compile(whole), replacement))
    return tuple(patterns)


def redact_text(text: str) -> str:
    for pattern, replacement in (*_local_names(), *_rules()):
        text = pattern.sub(replacement, text)
    return text


def redact_obj(value: Any) -> Any:
    """Redact every string (keys included) in nested dicts and lists."""
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, dict):
        return {redact_obj(k): redact_obj(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact_obj(v) for v in value]
    return value


def clear_caches() -> None:
    """Forget the compiled patterns (tests change the login and host names)."""
    _rules.cache_clear()
    _local_names.cache_clear()
