"""Follow-up questions: parse ``--answer`` values, find answers in log and config.

A ``QuestionBook`` is created per ``decide`` call. Looking up an answer has no
side effect: the engine lists the questions afterwards, in an explicit pass over
what the walk needed (``QuestionBook.questions``), so only needed questions show up.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from functools import cache
from typing import TYPE_CHECKING, Any, cast

from assistant.config.model_info import (
    attention_heads,
    looks_like_vlm,
    model_path,
    params_from_name,
)
from assistant.errors import KnowledgeError, UserError
from assistant.knowledge import load_yaml
from assistant.models import Answers, AnswerSource, LogReport, Question

if TYPE_CHECKING:
    from assistant.config import ExperimentConfig


@cache
def question_specs() -> dict[str, dict[str, Any]]:
    specs = dict((load_yaml("questions.yaml") or {}).get("questions") or {})
    for qid, spec in specs.items():
        if spec.get("type") not in ("yesno", "number", "choice"):
            raise KnowledgeError(f"questions.yaml: {qid}: unknown type")
    return specs


@cache
def _words() -> tuple[frozenset[str], frozenset[str]]:
    data = load_yaml("questions.yaml") or {}
    return (
        frozenset(str(w).lower() for w in data.get("yes_words") or []),
        frozenset(str(w).lower() for w in data.get("no_words") or []),
    )


@cache
def skip_words() -> frozenset[str]:
    """Replies that mean "I don't know": the question takes its default."""
    return frozenset(
        str(w).strip().lower() for w in (load_yaml("questions.yaml") or {}).get("skip_words") or []
    )


def is_skip(reply: str) -> bool:
    """An empty reply, Escape, or a word such as "skip", "unknown", 不知道."""
    text = reply.strip().lower()
    return not text or "\x1b" in text or text in skip_words()


def is_yes(reply: str) -> bool:
    """A reply that means yes ("y", "yes", "是", "1" for the first of yes/no)."""
    text = reply.strip().lower()
    return text == "1" or text in _words()[0]


def alternatives(qid: str) -> list[str]:
    """Answers to try when deciding whether a question can change a fix."""
    spec = question_specs()[qid]
    if spec["type"] != "number":
        return choices_of(qid)
    probes = spec.get("probes") or (load_yaml("questions.yaml") or {}).get("number_probes") or []
    return [str(p) for p in probes]


def question_ids() -> list[str]:
    return list(question_specs())


def choices_of(qid: str) -> list[str]:
    spec = question_specs()[qid]
    if spec["type"] == "yesno":
        return ["yes", "no"]
    return [str(c) for c in spec.get("choices") or []]


def parse_answer(qid: str, raw: Any) -> Any:
    """The typed value of an answer (bool, number or choice); UserError when invalid."""
    specs = question_specs()
    if qid not in specs:
        raise UserError(f"unknown question id '{qid}'; valid ids: {', '.join(specs)}")
    spec = specs[qid]
    text = str(raw).strip()
    if spec["type"] == "yesno":
        yes, no = _words()
        if isinstance(raw, bool):
            return raw
        if text.lower() in yes:
            return True
        if text.lower() in no:
            return False
        raise UserError(f"{qid} takes yes or no (also true/false, y/n, 是/否), got '{text}'")
    if spec["type"] == "number":
        number = _number(qid, text)
        if not number > 0 or number != number or number == float("inf"):
            raise UserError(f"{qid} takes a positive number, got '{text}'")
        return int(number) if number.is_integer() else number
    valid = choices_of(qid)
    chosen = _aliases(qid).get(text.lower(), text)
    if chosen not in valid:
        words = ", ".join(valid)
        also = ", ".join(sorted(_aliases(qid)))
        more = f" (also: {also})" if also else ""
        raise UserError(f"{qid} takes one of: {words}{more}; got '{text}'")
    return chosen


def _number(qid: str, text: str) -> float:
    """``4096``, ``4,096``, ``12k`` (questions.yaml ``number_suffixes``, and the
    question's own ``suffixes``); -1 when it is no number."""
    plain = text.replace(",", "").replace("_", "").strip()
    factor = 1.0
    unit = plain[-1:].lower()
    if unit.isalpha():
        factor = float(_suffixes(qid).get(unit, -1))
        plain = plain[:-1].strip()
    try:
        return float(plain) * factor if factor > 0 else -1.0
    except ValueError:
        return -1.0


def _suffixes(qid: str) -> dict[str, float]:
    table = dict((load_yaml("questions.yaml") or {}).get("number_suffixes") or {})
    table.update(question_specs()[qid].get("suffixes") or {})
    return {str(k).lower(): float(v) for k, v in table.items()}


def _aliases(qid: str) -> dict[str, str]:
    aliases = question_specs()[qid].get("aliases") or {}
    return {str(k).lower(): str(v) for k, v in aliases.items()}


def answer_outcome(questions: Iterable[Question]) -> dict[str, tuple[Any, str]]:
    """What the answers the user gave change in the verdict (questions.yaml
    ``outcome``): {"oom": (False, qid)}, {"phase": ("generation", qid)}."""
    changes: dict[str, tuple[Any, str]] = {}
    for question in questions:
        if question.source not in ("flag", "user") or question.answer is None:
            continue
        for rule in question_specs()[question.id].get("outcome") or []:
            if "when" in rule and str(rule["when"]) != str(question.answer):
                continue
            for field, value in rule.items():
                if field != "when":
                    changes.setdefault(
                        field, (question.answer if value == "answer" else value, question.id)
                    )
    return changes


def display(value: Any) -> Any:
    """How an answer appears in the output: yes/no for booleans."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    return value


class QuestionBook:
    """Answers questions from flags/user, log, config or defaults, and records each asked."""

    def __init__(
        self,
        report: LogReport,
        config: ExperimentConfig | None,
        answers: Answers,
        lang: str,
        use_defaults: bool,
    ) -> None:
        self.report = report
        self.config = config
        self.lang = lang
        self.use_defaults = use_defaults
        self.given = {
            qid: (_typed_default(qid), src) if src == "default" else (parse_answer(qid, raw), src)
            for qid, (raw, src) in answers.items()
        }
        self._resolved: dict[str, Question] = {}
        # answers given ahead that a step read as they were given (given_answer), not as
        # questions of the decision: config checks, the memory arithmetic, the model size
        self.read: set[str] = set()

    def given_answer(self, qid: str) -> Any:
        """The answer given ahead for ``qid`` (None when none), recorded as read."""
        self.read.add(qid)
        found = self.given.get(qid)
        return found[0] if found is not None else None

    def question(self, qid: str) -> Question:
        """The question with its answer and where the answer came from (resolved once)."""
        if qid not in self._resolved:
            self._resolved[qid] = self._resolve(qid)
        return self._resolved[qid]

    def value(self, qid: str) -> Any:
        """The answer in force (provisionally the default while a question is open).

        Reading an answer registers nothing: which questions the output lists is
        decided by the caller (``questions``).
        """
        question = self.question(qid)
        if question.source is None:
            return _typed_default(qid)
        return parse_answer(qid, question.answer) if question.answer is not None else None

    def questions(self, needed: Iterable[str]) -> list[Question]:
        """The questions whose answers the decision needed, once each, in that order."""
        return [self.question(qid) for qid in dict.fromkeys(needed)]

    def _resolve(self, qid: str) -> Question:
        spec = question_specs()[qid]
        question = Question(
            id=qid,
            text=spec["text"].get(self.lang) or spec["text"]["en"],
            type=spec["type"],
            choices=choices_of(qid),
            default=display(_typed_default(qid)),
        )
        if qid in self.given:
            value, source = self.given[qid]
            known = ("flag", "user", "default")
            return _answered(question, value, source if source in known else "flag")
        for source_spec in spec.get("sources") or []:
            found = self._from_source(source_spec)
            if found is not None and _parses(qid, found[0]):
                return _answered(question, *found)
        if self.use_defaults:
            return _answered(question, _typed_default(qid), "default")
        return question

    def _from_source(self, spec: Mapping[str, Any]) -> tuple[Any, str] | None:
        if "fact" in spec:
            value = self.report.facts.get(spec["fact"])
            return (value, "log") if _usable(value) else None
        if "metric" in spec:
            value = self.report.metrics.get(spec["metric"])
            return (value, "log") if _usable(value) else None
        if self.config is None:
            return None
        if "config" in spec:
            value = self.config.get(spec["config"])
            written = self.config.source(spec["config"]) == "config"
            return (value, "config") if written and _usable(value) else None
        if "config_equals" in spec:
            key = spec["config_equals"]
            matches = self.config.source(key) == "config" and self.config.get(key) == spec["value"]
            return (spec["answer"], "config") if matches else None
        if "config_present" in spec:
            present = self.config.source(spec["config_present"]) == "config"
            return (spec["answer"], "config") if present else None
        if "model_name" in spec:
            return self._from_model_name(spec["model_name"])
        raise KnowledgeError(f"questions.yaml: unknown answer source {dict(spec)}")

    def _from_model_name(self, what: str) -> tuple[Any, str] | None:
        name = model_path(self.config)
        value: Any = None
        if what == "params":
            value = params_from_name(name)
        elif what == "heads":
            value = attention_heads(name)
        elif what == "vlm":
            value = True if looks_like_vlm(name) else None
        return (value, "config") if value is not None else None


def _usable(value: Any) -> bool:
    return value is not None and value != ""


def _parses(qid: str, value: Any) -> bool:
    try:
        parse_answer(qid, value)
    except UserError:
        return False  # a log or config value of the wrong shape counts as unknown
    return True


def _typed_default(qid: str) -> Any:
    default = question_specs()[qid].get("default")
    return None if default is None else parse_answer(qid, default)


def _answered(question: Question, value: Any, source: str) -> Question:
    typed = None if value is None else parse_answer(question.id, value)
    return replace(
        question,
        answer=display(typed) if typed is not None else None,
        source=cast(AnswerSource, source),  # log | config | flag | user | default
    )
