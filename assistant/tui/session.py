"""The conversation's state, kept apart from the widgets that show it.

Pipeline calls run off the UI thread as *jobs*: small frozen dataclasses that
capture their inputs and return an ``Outcome``. The App runs a job in a worker
and hands the outcome back to ``Session.accept`` on the UI thread, so the state
changes in one place only. Nothing here imports textual, and nothing here
decides anything about a failure: the pipeline does.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assistant.models import Answers, Diagnosis, LogReport, Progress, Question

SEARCH_RESULTS = 5
CONFIG_SUFFIXES = (".yaml", ".yml")


@dataclass(frozen=True)
class DocItem:
    """One guide section listed in the Docs tab (its title is looked up per language)."""

    section: str
    score: float
    snippet: str = ""
    lang: str = ""  # language of ``snippet``
    terms: tuple[str, ...] = ()  # query terms the snippet matched
    see_also: bool = False  # a note offered beside the results (search.see_also)

    @property
    def weak(self) -> bool:
        from assistant.search.engine import WEAK_SCORE

        return self.score < WEAK_SCORE


@dataclass(frozen=True)
class EstimateView:
    """The Estimate tab's content: ``areal-doctor estimate``'s result for the loaded
    config, or why there is none (``error``, one line)."""

    result: dict[str, Any] | None = None
    error: str | None = None
    gpu_from_log: bool = False  # the GPU size is the capacity the log states
    lang: str = "en"  # the language of the result's sentences (assumptions, error)


CAPACITY_METRICS = ("total_capacity_bytes", "snapshot_device_total_bytes")


def gpu_capacity(report: LogReport | None) -> int | None:
    """The GPU's total memory as the log states it: the root cause's figures first, then
    the other failures' (a truncated ERROR line can lead while the full PyTorch message
    that gives the capacity is grouped as a second finding)."""
    if report is None or not report.oom:
        return None
    for metrics in (report.metrics, *(finding.metrics for finding in report.findings)):
        for key in CAPACITY_METRICS:
            value = metrics.get(key)
            if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
                return int(value)
    return None


def estimate_of(config: Any, report: LogReport | None, lang: str = "en") -> EstimateView | None:
    """The estimate of ``config`` (None without one), its sentences in ``lang``; the GPU
    size is the capacity the log states when a diagnosed log gives it, else the CLI's
    default (80 GiB, said)."""
    if config is None:
        return None
    from assistant.errors import UserError
    from assistant.memory.estimate import estimate_config

    gpu = gpu_capacity(report)
    try:
        result = estimate_config(
            config, gpu_bytes=gpu, gpu_source="log" if gpu else None, lang=lang
        )
    except UserError as exc:
        return EstimateView(error=str(exc), lang=lang)
    except Exception as exc:  # noqa: BLE001 - the estimate must not sink a diagnosis
        return EstimateView(error=f"{exc.__class__.__name__}: {exc}", lang=lang)
    return EstimateView(result, gpu_from_log=gpu is not None, lang=lang)


@dataclass
class Outcome:
    """What a job produced; parts it did not touch stay ``None``."""

    reason: str  # log | answer | lang | config | ask
    diagnosis: Diagnosis | None = None
    answers: Answers | None = None
    config: Any = None
    docs: list[DocItem] | None = None
    query: str | None = None
    estimate: EstimateView | None = None  # for the config and log the session will hold
    log_text: str | None = None  # a log read from a file, for the Log tab
    # why a log opened from a path is not in the Log tab: (i18n key, values), e.g. too big
    log_not_shown: tuple[str, dict[str, str]] | None = None


@dataclass(frozen=True)
class DiagnoseText:
    """Diagnose pasted text as a log; the answers start afresh."""

    text: str
    name: str
    config: Any
    lang: str

    def run(self, progress: Progress) -> Outcome:
        from assistant import pipeline

        diagnosis = pipeline.diagnose_text(
            self.text, name=self.name, config=self.config, lang=self.lang, use_defaults=False
        )
        return log_outcome(diagnosis, self.config, self.lang)


@dataclass(frozen=True)
class DiagnosePath:
    """Load the config (when given) and diagnose a log file or folder."""

    path: str
    config_path: str | None
    config: Any
    lang: str

    def run(self, progress: Progress) -> Outcome:
        from assistant import pipeline

        config = load_config(self.config_path) if self.config_path else self.config
        diagnosis = pipeline.diagnose_paths(
            [self.path], config=config, lang=self.lang, use_defaults=False, progress=progress
        )
        return Outcome(
            "log",
            diagnosis=diagnosis,
            answers={},
            config=config,
            docs=docs_of(diagnosis),
            estimate=estimate_of(config, diagnosis.report, self.lang),
            log_text=log_tab_text(self.path),
            log_not_shown=log_tab_absence(self.path),
        )


LOG_TAB_LIMIT = 16 * 1024 * 1024  # the Log tab shows a file up to this size (bytes)


def log_tab_absence(path: str) -> tuple[str, dict[str, str]] | None:
    """Why the Log tab cannot show ``path`` (a folder, a file over LOG_TAB_LIMIT), as an
    i18n key and its values; None when it can (or the path is gone)."""
    target = Path(path).expanduser()
    try:
        if target.is_dir():
            return "paste.not_shown_folder", {"name": target.name}
        size = target.stat().st_size
    except OSError:
        return None
    if size <= LOG_TAB_LIMIT:
        return None
    return "paste.not_shown_big", {"name": target.name, "size": f"{size / 2**20:.0f} MiB"}


def log_tab_text(path: str) -> str | None:
    """A log file's text for the Log tab, as a paste would show it; None for a folder,
    a file too large to lay out, or one that cannot be read."""
    import gzip

    target = Path(path).expanduser()
    try:
        if not target.is_file() or target.stat().st_size > LOG_TAB_LIMIT:
            return None
        raw = target.read_bytes()
        if raw.startswith(b"\x1f\x8b"):
            raw = gzip.decompress(raw)[: LOG_TAB_LIMIT * 4]
    except (OSError, EOFError, ValueError):
        return None
    return raw.decode("utf-8", errors="replace").replace("\r\n", "\n")


@dataclass(frozen=True)
class Conclude:
    """Walk the tree again for the same report (a new answer, language or config)."""

    reason: str  # answer | lang | config | next
    report: LogReport | None
    config: Any
    answers: Answers
    lang: str
    config_path: str | None = None  # load this config first
    focus: int = 0  # the fix whose questions are asked (0: fix #1)
    estimate: bool = False  # compute the estimate again (the language changed)

    def run(self, progress: Progress) -> Outcome:
        from assistant import pipeline

        config = load_config(self.config_path) if self.config_path else self.config
        again = self.config_path or self.estimate
        estimate = estimate_of(config, self.report, self.lang) if again else None
        if self.report is None:
            return Outcome(
                self.reason, config=config, answers=dict(self.answers), estimate=estimate
            )
        diagnosis = pipeline.conclude(
            self.report,
            config=config,
            answers=self.answers,
            lang=self.lang,
            use_defaults=False,
            focus=self.focus,
        )
        return Outcome(
            self.reason,
            diagnosis=diagnosis,
            answers=dict(self.answers),
            config=config,
            docs=docs_of(diagnosis),
            estimate=estimate,
        )


@dataclass(frozen=True)
class Ask:
    """Free text from the chat: a log line, or a question answered from the guide."""

    text: str
    config: Any
    lang: str

    def run(self, progress: Progress) -> Outcome:
        from assistant import pipeline
        from assistant.search import detect_lang, search, see_also

        diagnosis = pipeline.diagnose_text(
            self.text, config=self.config, lang=self.lang, use_defaults=False
        )
        if diagnosis.report.input_kind != "description":
            return log_outcome(diagnosis, self.config, self.lang)
        lang = detect_lang(self.text)
        hits = search(self.text, lang=lang, k=SEARCH_RESULTS)
        docs = [
            DocItem(hit.section, hit.score, hit.snippet, hit.lang, tuple(hit.terms)) for hit in hits
        ]
        note = see_also(self.text, hits, lang=lang)
        if note is not None:
            docs.append(
                DocItem(note.section, note.score, note.snippet, note.lang, tuple(note.terms), True)
            )
        return Outcome("ask", diagnosis=diagnosis, answers={}, docs=docs, query=self.text)


Job = DiagnoseText | DiagnosePath | Conclude | Ask


def load_config(path: str) -> Any:
    from assistant.config import load_config as load

    return load(path)


def log_outcome(diagnosis: Diagnosis, config: Any, lang: str) -> Outcome:
    """What a diagnosed log shows: the diagnosis, its guide sections and the estimate."""
    return Outcome(
        "log",
        diagnosis=diagnosis,
        answers={},
        docs=docs_of(diagnosis),
        estimate=estimate_of(config, diagnosis.report, lang),
    )


def docs_of(diagnosis: Diagnosis) -> list[DocItem]:
    return [DocItem(doc.section, doc.score, doc.snippet, doc.lang) for doc in diagnosis.docs]


def is_config_path(path: str) -> bool:
    """ctrl+o takes a log or a config; an AReaL config is a YAML file."""
    return Path(path).suffix.lower() in CONFIG_SUFFIXES


@dataclass
class Session:
    """Everything the conversation knows; the App renders it."""

    lang: str
    config: Any = None
    diagnosis: Diagnosis | None = None
    answers: Answers = field(default_factory=dict)
    docs: list[DocItem] = field(default_factory=list)
    query: str | None = None
    redact: bool = False  # --redact: what is copied or saved is fit for a public issue
    estimate: EstimateView | None = None  # the loaded config's memory estimate

    @property
    def report(self) -> LogReport | None:
        return self.diagnosis.report if self.diagnosis else None

    @property
    def has_log(self) -> bool:
        """A diagnosis from a real log (not from a short description) is in progress."""
        report = self.report
        return report is not None and report.input_kind != "description"

    @property
    def question(self) -> Question | None:
        """The next open question whose answer can change the fix shown, one at a time."""
        if self.diagnosis is None:
            return None
        asking = self.diagnosis.decision.asking
        return asking[0] if asking else None

    @property
    def focus(self) -> int:
        return self.diagnosis.decision.focus if self.diagnosis else 0

    def next_fix(self) -> Conclude | None:
        """Move on to the next fix: its questions are asked then. None when at the last one."""
        if self.diagnosis is None or self.focus + 1 >= len(self.diagnosis.decision.recommendations):
            return None
        return Conclude(
            "next", self.report, self.config, self.answers, self.lang, focus=self.focus + 1
        )

    @property
    def patch_ready(self) -> bool:
        return self.diagnosis is not None and bool(self.diagnosis.decision.patch)

    def diagnose_text(self, text: str, name: str) -> DiagnoseText:
        return DiagnoseText(text, name, self.config, self.lang)

    def diagnose_path(self, path: str, config_path: str | None = None) -> DiagnosePath:
        return DiagnosePath(path, config_path, self.config, self.lang)

    def ask(self, text: str) -> Ask:
        return Ask(text, self.config, self.lang)

    def answer(self, question_id: str, value: str, source: str = "user") -> Conclude:
        """``source`` "default" records a skipped question: it takes its default."""
        answers = {**self.answers, question_id: (value, source)}
        return Conclude("answer", self.report, self.config, answers, self.lang, focus=self.focus)

    def switch_lang(self, lang: str) -> Conclude | None:
        """Set the language; the tree's texts and the estimate's sentences must then be
        fetched again (None when there is neither a log nor a config)."""
        self.lang = lang
        again = self.config is not None
        if self.report is None and not again:
            return None
        return Conclude(
            "lang", self.report, self.config, self.answers, lang, focus=self.focus, estimate=again
        )

    def load_config(self, path: str) -> Conclude:
        return Conclude(
            "config", self.report, self.config, self.answers, self.lang, path, focus=self.focus
        )

    def accept(self, outcome: Outcome) -> bool:
        """Take a job's outcome (on the UI thread); True when its diagnosis was adopted."""
        if outcome.config is not None:
            self.config = outcome.config
        if outcome.docs is not None:
            self.docs = outcome.docs
            self.query = outcome.query
        if outcome.estimate is not None:
            self.estimate = outcome.estimate
        diagnosis = outcome.diagnosis
        if diagnosis is None or (outcome.reason == "ask" and not self.adopts(diagnosis)):
            return False
        self.diagnosis = diagnosis
        if outcome.answers is not None:
            self.answers = outcome.answers
        return True

    def adopts(self, diagnosis: Diagnosis) -> bool:
        """A description starts the tree only when it names a phase and no log is open."""
        report = diagnosis.report
        return report.oom and report.phase not in ("unknown", "none") and not self.has_log

    def reset(self) -> None:
        """Start over; the loaded config and the language stay."""
        self.diagnosis = None
        self.answers = {}
        self.docs = []
        self.query = None
        if self.estimate is not None and self.estimate.gpu_from_log:
            self.estimate = estimate_of(self.config, None, self.lang)  # no log: default GPU size

    def patch_text(self) -> str | None:
        """What ctrl+s saves: the patched config, or the bare fragment without one."""
        if not self.patch_ready or self.diagnosis is None:
            return None
        if self.diagnosis.patched_config is not None:
            return self._shareable(self.diagnosis.patched_config)
        from assistant.render.data import dump_yaml

        return self._shareable(dump_yaml(self.diagnosis.decision.patch))

    def clipboard_text(self) -> str | None:
        """What ctrl+y copies: the YAML fragment, then the CLI overrides as comments."""
        if not self.patch_ready or self.diagnosis is None:
            return None
        from assistant.render.data import dump_yaml

        decision = self.diagnosis.decision
        lines = [dump_yaml(decision.patch).rstrip()]
        if decision.cli_overrides:
            lines.append("# " + " ".join(decision.cli_overrides))
        return self._shareable("\n".join(lines) + "\n")

    def _shareable(self, text: str) -> str:
        if not self.redact:
            return text
        from assistant.redact import redact_text

        return redact_text(text)

    def save_patch(self, target: str) -> None:
        """Write ``patch_text`` to a new file (``write_atomic`` refuses the config itself)."""
        from assistant.config import write_atomic

        text = self.patch_text()
        if text is None:
            return
        config_path = getattr(self.config, "path", None)
        write_atomic(target, text, config_path=config_path, force=False)

    def suggested_save_path(self, folder: Path | None = None) -> str:
        """A new file in the current folder (the config's folder is often shared)."""
        folder = Path() if folder is None else folder  # relative: "x.patched.yaml"
        config_path = getattr(self.config, "path", None)
        stem = Path(config_path).stem + ".patched" if config_path else "areal-doctor-patch"
        candidate = folder / f"{stem}.yaml"
        number = 2
        while candidate.exists():
            candidate = folder / f"{stem}-{number}.yaml"
            number += 1
        return str(candidate)
