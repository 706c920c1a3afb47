"""The words of a log line, and what kind of line it is, for the frame vocabulary.

A paste shows its phase through the words inside names (``MegatronPolicyWorker.train``,
``get_logprobs``, ``train_reward_model.py``), the commands around the error and the
user's own sentences. ``parts`` splits a line into those words the same way for every
framework (snake_case, camelCase, dots, slashes, dashes, digits), so one generic entry
("train", "logprobs", "serve") holds across frameworks instead of one marker per log.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

# a module's __init__.py says nothing (torch/autograd/__init__.py is the backward pass);
# a function named __init__ is a constructor, and "in __init__" keeps that word
_PACKAGE_FILE = re.compile(r"__init__\.py")
_TOKEN = re.compile(r"[A-Za-z0-9]+")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")

_FRAME = re.compile(
    r'^\s*(?:File\s+"|at\s+[\w.$<>]+\(|#\d+\s+0x[0-9a-f]+\s+in\s|frame\s+#\d+:|\d+\s*#\s*\w)'
)
# a command the user ran: an optional prompt and environment assignments, then a
# program and its flags (python train.py --x, lmdeploy serve api_server ... --tp 4)
_COMMAND = re.compile(
    r"^\s*(?:[^:：]{0,24}[:：]\s*)?(?:nohup\s+)?"
    r"(?:[$>#]\s*|\(\w[\w.-]*\)\s*\$?\s*)?(?:[A-Z_][A-Z0-9_]*=\S*\s+)*"
    r"[\w./~-]+(?:\s+[^\s-][^\s]*)*\s+(?:--?[A-Za-z][\w-]*|-m\s)"
)
_RECORD = re.compile(
    r"\b(?:INFO|WARNING|WARN|ERROR|DEBUG|CRITICAL|FATAL)\b|^\s*\[?\d{4}-\d\d-\d\d|^\s*[IWEF]\d{4}\s"
)
_CJK = re.compile(r"[\u3400-\u9fff]")


@lru_cache(maxsize=4096)
def parts(text: str) -> tuple[str, ...]:
    """The lower-cased words of ``text``: every identifier split at case changes, digits
    and punctuation. ``DTensorPolicyWorkerV2.get_logprobs`` gives d, tensor, policy,
    worker, v, 2, get, logprobs; an all-capital or mixed token is also kept whole
    (``SGLang`` gives sglang besides its pieces)."""
    out: list[str] = []
    for token in _TOKEN.findall(_PACKAGE_FILE.sub(" ", text)):
        pieces = [p.lower() for p in _CAMEL.findall(token)]
        whole = token.lower()
        if len(pieces) > 1 and not token.islower() and whole not in pieces:
            out.append(whole)
        out.extend(pieces)
    return tuple(out)


_FRAME_PATH = re.compile(r'File\s+"([^"]+)"')
PATH_PARTS_KEPT = 3  # a frame's folder names far from its file are the user's (/home/train/)


# NCCL's and glog's "host:pid:tid [dev]" prefix: a host name ("trainer-host",
# "job-train-w-0") is a name someone chose, not what ran
_HOST_PREFIX = re.compile(r"^\s*[\w.-]+:\d+:\d+\s+\[\d+\]")


@lru_cache(maxsize=4096)
def line_words(text: str) -> tuple[str, ...]:
    """``parts`` of a line, where a frame's file path keeps only its last folders: the
    package and module say what runs, a home or project folder above them does not."""
    text = _HOST_PREFIX.sub(" ", text)
    found = _FRAME_PATH.search(text)
    if found is not None:
        path = found.group(1).replace("\\", "/").split("/")
        kept = "/".join(path[-PATH_PARTS_KEPT:])
        text = text[: found.start(1)] + kept + text[found.end(1) :]
    return parts(text)


def has_words(line_parts: Sequence[str], words: Sequence[tuple[str, ...]]) -> bool:
    """True when one of ``words`` (each a run of parts) occurs in ``line_parts``."""
    present = set(line_parts)
    for word in words:
        if word[0] not in present:
            continue
        if len(word) == 1:
            return True
        size = len(word)
        for start in range(len(line_parts) - size + 1):
            if tuple(line_parts[start : start + size]) == word:
                return True
    return False


def has_name_inside(text: str, words: Sequence[tuple[str, ...]]) -> bool:
    """True when one of ``words`` (joined) occurs inside an identifier of ``text``."""
    names = ["".join(word) for word in words]
    return any(name in token.lower() for token in _TOKEN.findall(text) for name in names)


def has_phrase(text: str, phrases: Sequence[str]) -> bool:
    lowered = text.lower()
    return any(phrase in lowered for phrase in phrases)


def line_role(text: str, scope: str, timestamped: bool) -> str:
    """What kind of line ``text`` is: message, frame, code, command, record or prose."""
    if scope == "line":
        return "message"
    if _FRAME.match(text):
        return "frame"
    if scope == "traceback":
        return "code"
    if timestamped or _RECORD.search(text):
        return "record"
    command = _COMMAND.match(text)
    if command and not _CJK.search(text[command.end() :]):
        return "command"
    return "prose"


def decay(distance: int, lines: float) -> float:
    """The share of its weight a line ``distance`` lines from the failure keeps."""
    if lines <= 0:
        return 1.0
    return 1.0 / (1.0 + distance / lines)
