"""Messages between the TUI's widgets, its worker and the App (one line each)."""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message

from assistant.tui.session import Job, Outcome


@dataclass
class LogSubmitted(Message):
    """A log was pasted or submitted for diagnosis."""

    text: str
    name: str = "<pasted>"
    shown: bool = False  # already in the paste area


@dataclass
class ChatSubmitted(Message):
    """The user sent a line of free text in the chat."""

    text: str


@dataclass
class AnswerChosen(Message):
    """The user answered the open follow-up question."""

    question_id: str
    value: str
    label: str
    source: str = "user"


@dataclass
class ReadProgress(Message):
    """Lines read so far by a long-running job; floods merge into the latest."""

    done: int
    total: int

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, ReadProgress)


@dataclass
class JobFinished(Message):
    """A pipeline job returned; its outcome is applied on the UI thread."""

    job: Job
    outcome: Outcome


@dataclass
class JobFailed(Message):
    """A pipeline job raised; ``error`` is the one-line message for the chat."""

    job: Job
    error: str
