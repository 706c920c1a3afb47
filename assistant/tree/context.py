"""What a condition or a value function can look at while the tree is walked."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Protocol

from assistant.config.loader import ExperimentConfig
from assistant.models import LogReport
from assistant.tree.questions import QuestionBook
from assistant.tree.settings import Settings

GIB = 1024**3
EMPTY_CONFIG_PATH = "<no config: AReaL defaults>"


class OtherFixes(Protocol):
    """Another fix of tree.yaml, seen from a value function (memory_fit_check adds the
    changes of later fixes): the engine, which holds the tree, answers."""

    def patch(self, ctx: Context, fix_id: str) -> dict[str, Any]: ...

    def section(self, fix_id: str) -> str: ...


class _NoOtherFixes:
    def patch(self, ctx: Context, fix_id: str) -> dict[str, Any]:
        return {}

    def section(self, fix_id: str) -> str:
        return fix_id


class Context:
    """The log report, the config (AReaL defaults when none was given) and the answers."""

    def __init__(
        self,
        report: LogReport,
        config: ExperimentConfig | None,
        book: QuestionBook,
        lang: str,
        settings: Settings,
        other_fixes: OtherFixes | None = None,
    ) -> None:
        self.report = report
        self.has_config = config is not None
        self.config = config if config is not None else ExperimentConfig(EMPTY_CONFIG_PATH, "", {})
        self.book = book
        self.lang = lang
        self.settings = settings
        self.other_fix: OtherFixes = other_fixes or _NoOtherFixes()
        self._memo: dict[str, Any] = {}
        # every answer consulted, in order: conditions (answer.ID, given.ID), value
        # functions and derived values. The engine slices it per lead, plan and fix and
        # lists the questions from those slices; reading an answer asks nothing.
        self.reads: list[str] = []

    @contextmanager
    def peek(self) -> Iterator[None]:
        """Consult answers without the decision depending on them (no question)."""
        mark = len(self.reads)
        try:
            yield
        finally:
            del self.reads[mark:]

    def memo(self, name: str, compute: Callable[[Context], Any]) -> Any:
        """A derived value, computed once per walk (its answers are read the first time)."""
        if name not in self._memo:
            self._memo[name] = compute(self)
        return self._memo[name]

    def given(self, qid: str) -> Any:
        """An answer the user gave (flag or TUI), not one found or defaulted; else None."""
        return self.answer(qid) if qid in self.book.given else None

    def answer(self, qid: str) -> Any:
        """The answer in force, recorded as one the decision needed."""
        self.reads.append(qid)
        return self.book.value(qid)

    def inference(self, name: str) -> Any:
        """The value of an inference the log reader stated (an id of inferences.yaml)."""
        from assistant.logs.infer import inference_id

        wanted = inference_id(name)
        for item in self.report.inferences:
            if item.id == wanted:
                return True if item.value is None else item.value
        return None

    def tags(self) -> list[str]:
        tags = self.report.facts.get("signature_tags") or []
        return [str(t) for t in tags] if isinstance(tags, list | tuple | set) else []

    def metric_gib(self, name: str) -> float | None:
        value = self.report.metrics.get(name)
        return round(value / GIB, 2) if isinstance(value, int | float) else None
