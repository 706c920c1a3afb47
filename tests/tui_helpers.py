"""Helpers for the TUI tests: waiting for the worker, reading the chat, a stub pipeline.

The stub stands in for the classify and decide stages, so the TUI's own flow
(questions one at a time, answers recorded, patch shown) is tested apart from
how well those stages judge a log; ``test_tui_session.py`` drives the real ones.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
from collections.abc import AsyncIterator, Callable, Coroutine
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from rich.syntax import Syntax
from rich.text import Text
from textual import events
from textual.pilot import Pilot
from textual.widgets import Input, Static, TextArea

from assistant.models import (
    Consequence,
    Decision,
    Diagnosis,
    Evidence,
    Finding,
    LogReport,
    Question,
    Recommendation,
)
from assistant.tui.widgets.chat import ChatInput

FIXTURES = Path(__file__).parent / "fixtures" / "tui"
OOM_MARK = "out of memory"


_LOOP: asyncio.AbstractEventLoop | None = None


def test_loop() -> asyncio.AbstractEventLoop:
    """One event loop for every Pilot test, so that an App shared by a module's tests
    (``shared_app``) lives on from one test to the next."""
    global _LOOP
    if _LOOP is None or _LOOP.is_closed():
        _LOOP = asyncio.new_event_loop()
    asyncio.set_event_loop(_LOOP)
    return _LOOP


def pilot_test(test: Callable[..., Coroutine[Any, Any, None]]) -> Callable[..., None]:
    """Run an async Pilot test under plain pytest (fixtures still come by name)."""

    @functools.wraps(test)
    def run(*args: Any, **kwargs: Any) -> None:
        run_in_tests(test(*args, **kwargs))

    return run


_CONTEXT = contextvars.copy_context()


def run_in_tests(coro: Coroutine[Any, Any, Any]) -> Any:
    """Run ``coro`` on the tests' loop, in the one context every Pilot test shares: an
    App keeps its context variables (the active app) from one test to the next."""
    loop = test_loop()
    return loop.run_until_complete(loop.create_task(coro, context=_CONTEXT))


# --- one App per module ---------------------------------------------------------------
#
# Starting an App costs about a second (CSS, the first layout); most tests need one in
# the same state: started in English at SIZE, nothing loaded. ``shared_app`` hands a
# module's tests one such App, brought back to that state before each test (dialogs
# closed, Start over, no config, the language, the clipboard and notices cleared).

_SHARED: dict[tuple[str, tuple[int, int], str], tuple[Any, Pilot, Any]] = {}


@contextlib.asynccontextmanager
async def shared_app(
    module: str, size: tuple[int, int] = (120, 40), lang: str = "en"
) -> AsyncIterator[tuple[Any, Pilot]]:
    """``async with shared_app(__name__) as (app, pilot):`` in place of
    ``app = make_app(lang=...)`` + ``async with app.run_test(size=...) as pilot:``."""
    key = (module, size, lang)
    if key in _SHARED:
        app, pilot, _ = _SHARED[key]
        await fresh(app, pilot, lang)
    else:
        from assistant.tui import make_app

        app = make_app(lang=lang)
        runner = app.run_test(size=size)
        pilot = await runner.__aenter__()
        _SHARED[key] = (app, pilot, runner)
    yield app, pilot


async def fresh(app: Any, pilot: Pilot, lang: str) -> None:
    """The shared App as a new one would be: no dialog, no log, no config, ``lang``."""
    from textual.screen import ModalScreen

    await settle(pilot)
    while isinstance(app.screen, ModalScreen):
        app.pop_screen()
        await pilot.pause()
    app.session.config = None
    app.session.estimate = None
    if app.lang != lang:
        app.lang = lang
        app.session.lang = lang
    app.action_restart()
    app.talk.fix_message = None
    app.clear_notifications()
    app.copy_to_clipboard("")
    await settle(pilot)


def close_shared(module: str) -> None:
    """End the module's shared Apps (a module-scoped fixture calls this)."""
    for key in [k for k in _SHARED if k[0] == module]:
        _, _, runner = _SHARED.pop(key)
        run_in_tests(runner.__aexit__(None, None, None))


async def settle(pilot: Pilot) -> None:
    """Wait until no pipeline job runs and every message it caused was handled."""
    for _ in range(3):
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
    await pilot.pause()


async def paste(pilot: Pilot, text: str) -> None:
    """A bracketed paste into the focused widget, as a terminal delivers it."""
    target = pilot.app.focused or pilot.app.screen
    target.post_message(events.Paste(text))
    await pilot.pause()
    await settle(pilot)


async def type_line(pilot: Pilot, text: str) -> None:
    """Type ``text`` into the chat line and press Enter."""
    chat = pilot.app.query_one("#chat-input", Input)
    chat.focus()
    chat.value = text
    await pilot.press("enter")
    await pilot.pause(ChatInput.BURST_SECONDS * 2)  # a line alone is sent after the window
    await settle(pilot)


def chat_texts(app: Any, role: str | None = None) -> list[str]:
    return [m.plain for m in app.query("ChatMessage") if role is None or m.role == role]


def shown(static: Static) -> str:
    """The text a Static shows (plain, whatever kind of renderable it holds)."""
    content = static.content
    if isinstance(content, Syntax):
        return content.code
    if isinstance(content, Text):
        return content.plain
    return str(content)


def blink_off(app: Any) -> None:
    """Solid cursors, so a snapshot does not depend on when it was taken."""
    for widget in app.screen.query("Input, TextArea"):
        if isinstance(widget, Input | TextArea):
            widget.cursor_blink = False


def generated_log(lines: int) -> str:
    """A long training log: steps, rollout chatter, then an OOM in the train engine at the end."""
    rows = []
    for number in range(lines - 3):
        if number % 3:
            rows.append(
                f"[rollout] [2027-01-05 10:{number // 60 % 60:02d}:{number % 60:02d}] Decode batch."
                f" #running-req: {number % 97}, #token: {number * 13 % 500000}, token usage: 0.5"
            )
        else:
            rows.append(
                "[main]    (AReaL) 20270105-10:00:00.000 StatsLogger INFO:"
                f" Train step {number} done."
            )
    rows += [
        "[actor]   [rank2]: Traceback (most recent call last):",
        '[actor]   [rank2]:   File "/srv/AReaL/areal/engine/fsdp_engine.py", line 755,'
        " in forward_backward_batch",
        "[actor]   [rank2]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 4.00 GiB."
        " GPU 2 has a total capacity of 79.11 GiB of which 1.10 GiB is free.",
    ]
    return "\n".join(rows) + "\n"


@dataclass
class StubPipeline:
    """A classify + decide stand-in with a fixed two-question tree.

    multi_turn (yes/no, default no); when yes, longest_conversation_tokens (a
    number). The fix is there from the start (answer first): max_tokens_per_mb
    follows the answers, 3072 while multi_turn is no, none while the longest
    conversation is unknown. Question texts carry the language, so a test can
    see them switch.
    """

    calls: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def installed(cls, monkeypatch: Any) -> StubPipeline:
        """A stub in place of the pipeline's diagnose and conclude for one test."""
        from assistant import pipeline

        fake = cls()
        monkeypatch.setattr(pipeline, "diagnose_text", fake.diagnose_text)
        monkeypatch.setattr(pipeline, "diagnose_paths", fake.diagnose_paths)
        monkeypatch.setattr(pipeline, "conclude", fake.conclude)
        return fake

    def report(self, text: str, name: str) -> LogReport:
        rows = text.splitlines()
        if len(rows) <= 1 and "Error" not in text:
            phase = "training" if "train" in text.lower() else "unknown"
            return LogReport(
                oom=phase != "unknown",
                phase=phase,
                kind="cuda_oom" if phase != "unknown" else "none",
                confidence=0.5,
                input_kind="description",
                lines_read=1,
            )
        hits = [n for n, row in enumerate(rows) if OOM_MARK in row.lower()]
        if not hits:
            return LogReport(
                oom=False,
                phase="none",
                kind="none",
                confidence=0.0,
                lines_read=len(rows),
                files=[name],
            )
        at = hits[-1]
        failure = Evidence(
            name, at + 1, rows[at].strip(), rank=1, context=tuple(rows[max(0, at - 2) : at])
        )
        finding = Finding(
            "stub", "cuda_oom", "training", [failure], count=1, ranks=[1], files=[name]
        )
        consequences = [
            Consequence(
                "nccl_timeout",
                1,
                [0],
                Evidence(name, n + 1, row.strip(), rank=0, role="consequence"),
            )
            for n, row in enumerate(rows)
            if "Watchdog" in row
        ]
        return LogReport(
            oom=True,
            phase="training",
            kind="cuda_oom",
            confidence=0.9,
            evidence=[failure],
            findings=[finding],
            consequences=consequences,
            lines_read=len(rows),
            files=[name],
        )

    def conclude(
        self,
        report: LogReport,
        *,
        config: Any = None,
        answers: Any = None,
        lang: str = "en",
        use_defaults: bool = True,
        focus: int = 0,
    ) -> Diagnosis:
        answers = dict(answers or {})
        self.calls.append({"answers": answers, "lang": lang, "config": config, "focus": focus})
        decision = Decision()
        if report.oom:
            recommendations, flat = self.fix(answers)
            decision = Decision(
                questions=self.questions(answers, lang),
                recommendations=recommendations,
                flat_patch=flat,
                cli_overrides=[f"{key}={value}" for key, value in flat.items()],
                focus=max(0, min(focus, len(recommendations) - 1)),
            )
        patched = diff = None
        if config is not None and decision.patch:
            from assistant.config import patched_text, unified_diff

            value = decision.flat_patch["actor.mb_spec.max_tokens_per_mb"]
            patched = patched_text(config, {"actor.mb_spec.max_tokens_per_mb": value})
            diff = unified_diff(config, patched)
        return Diagnosis(
            report=report, decision=decision, lang=lang, patched_config=patched, config_diff=diff
        )

    def questions(self, answers: dict[str, tuple[str, str]], lang: str) -> list[Question]:
        multi = Question(
            "multi_turn", f"({lang}) Is the rollout multi-turn?", "yesno", default="no"
        )
        asked = [multi]
        if "multi_turn" in answers:
            given, source = answers["multi_turn"]
            multi = replace(multi, answer=given or multi.default, source=source)  # skipped: default
            asked = [multi]
            if multi.answer == "yes":
                longest = Question(
                    "longest_conversation_tokens",
                    f"({lang}) Longest conversation in tokens?",
                    "number",
                )
                if "longest_conversation_tokens" in answers:
                    given, source = answers["longest_conversation_tokens"]
                    longest = replace(longest, answer=given, source=source)
                asked.append(longest)
        return asked

    @staticmethod
    def fix(answers: dict[str, tuple[str, str]]) -> tuple[list[Recommendation], dict[str, Any]]:
        multi = answers.get("multi_turn", ("no", ""))[0] == "yes"
        longest = answers.get("longest_conversation_tokens", ("", ""))[0]
        value = None
        if not multi:
            value = 1024 + 2048
        elif longest:
            value = int(float(longest)) + 2048
        patch = {} if value is None else {"actor.mb_spec.max_tokens_per_mb": value}
        recommendations = [
            Recommendation(
                "train-micro-batch",
                "Optimize micro-batch size",
                "The failure is in the training step.",
                patch,
                fix="micro-batch",
            ),
            Recommendation(
                "train-grad-checkpointing",
                "Enable gradient checkpointing",
                "Recompute activations.",
                {"actor.gradient_checkpointing": True},
                fix="grad-checkpointing",
            ),
        ]
        return recommendations, dict(patch)

    def diagnose_text(self, text: str, *, name: str = "<pasted>", **options: Any) -> Diagnosis:
        return self.conclude(self.report(text, name), **options)

    def diagnose_paths(
        self, paths: list[str], *, progress: Any = None, **options: Any
    ) -> Diagnosis:
        text = Path(paths[0]).read_text(encoding="utf-8")
        if progress is not None:
            progress(len(text.splitlines()), len(text.splitlines()))
        return self.conclude(self.report(text, Path(paths[0]).name), **options)
