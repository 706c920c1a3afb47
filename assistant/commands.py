"""What each subcommand does, between argument parsing and rendering."""

from __future__ import annotations

import argparse
import contextlib
import io
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from assistant.errors import EXIT_FOUND, EXIT_NOT_FOUND, EXIT_USAGE, UserError
from assistant.terminal import (
    ProgressBar,
    is_terminal,
    read_terminal,
    stderr_is_terminal,
    use_color,
    write_out,
)

if TYPE_CHECKING:
    from assistant.memory.estimate import GpuSource
    from assistant.models import Answer


def run_diagnose(args: argparse.Namespace) -> int:
    from assistant import pipeline
    from assistant.render import render_diagnosis

    if args.patch_out is not None and not args.config:
        raise UserError("--patch-out needs --config (the file to patch)")
    # the file --patch-out asks for cannot be written from a config that cannot be read
    config, config_warning = load_config_or_warn(args.config, strict=args.patch_out is not None)
    if args.patch_out is not None and config is not None:  # refuse a bad target early
        from assistant.config import check_target

        check_target(args.patch_out, config_path=config.path, force=args.force)
    answers = parse_answers(args.answer)
    model_config = check_model_config(args.model_config)
    interactive = not args.non_interactive and is_terminal(sys.stdin) and stderr_is_terminal()
    if "-" in args.paths:
        interactive = False  # stdin carries the log, so it cannot carry answers too
    with ProgressBar.for_paths(args.paths) as progress, typed_stdin(args.paths):
        diagnosis = pipeline.diagnose_paths(
            args.paths,
            config=config,
            answers=answers,
            lang=args.lang,
            use_defaults=not interactive,
            progress=progress,
            model_config=model_config,
        )
    if interactive:
        diagnosis = ask_open_questions(diagnosis, config, answers, model_config)
    if args.patch_out is not None:  # a config was read: --patch-out needs one (above)
        write_patch(args, config, diagnosis)
    write_out(render_diagnosis(diagnosis, args.format, color=use_color(), redact=args.redact))
    if config_warning:  # said before the diagnosis too, where a long output scrolls it away
        print(config_warning, file=sys.stderr)
    return EXIT_FOUND if diagnosis.report.oom else EXIT_NOT_FOUND


@contextlib.contextmanager
def typed_stdin(paths: list[str]) -> Iterator[None]:
    """``diagnose -`` on a terminal: say what is awaited, and end on one Ctrl-D; the
    text read stands in for stdin while the log is read."""
    if "-" not in paths or not is_terminal(sys.stdin):
        yield
        return
    from assistant.i18n import message
    from assistant.pipeline import resolve_lang

    raw = read_terminal(sys.stdin, message("stdin_prompt", resolve_lang("auto")) + "\n")
    saved = sys.stdin
    sys.stdin = io.TextIOWrapper(io.BytesIO(raw), encoding="utf-8")
    try:
        yield
    finally:
        sys.stdin = saved


def check_model_config(path: str | None) -> str | None:
    """Refuse an unreadable --model-config before reading any log (one-line error)."""
    if path is None:
        return None
    from assistant.memory.facts import read_config_json

    read_config_json(path)
    return path


def ask_open_questions(
    diagnosis: Any,
    config: Any,
    answers: dict[str, Answer],
    model_config: str | None = None,
) -> Any:
    """Answer first, then ask: the fix to try first is shown before any question.

    Only questions whose answer can change that fix are asked, one at a time; the
    tree is walked again after every answer (the log is not read again) and the
    fix is shown again when it changed. A skipped question takes its default.
    When fix #1 is settled and a later fix has questions of its own, the user is
    offered to move on to it (default: no); questions never reached take their
    default at the end.
    """
    from assistant import pipeline
    from assistant.i18n import message
    from assistant.prompting import offer
    from assistant.render.text import render_first_fix, render_fix

    color = use_color(sys.stderr)
    answers = dict(answers)

    def again(use_defaults: bool, focus: int = 0) -> Any:  # the tree again, same report
        return pipeline.conclude(
            diagnosis.report,
            config=config,
            answers=answers,
            lang=diagnosis.lang,
            use_defaults=use_defaults,
            model_config=model_config,
            focus=focus,
        )

    shown = bool(diagnosis.decision.asking)
    if shown:
        sys.stderr.write(render_first_fix(diagnosis, color=color, headline=True))
    focus = 0
    while True:
        diagnosis = _ask_for_fix(diagnosis, answers, focus, color, again)
        later = again(use_defaults=False, focus=focus + 1)
        if later.decision.focus <= focus or not later.decision.asking:
            break
        if not shown:  # the answer comes before any offer, too
            sys.stderr.write(render_first_fix(diagnosis, color=color, headline=True))
            shown = True
        fix = later.decision.recommendations[later.decision.focus]
        count = len(later.decision.asking)
        text = message(
            "offer_next_fix", later.lang, done=focus + 1, n=focus + 2, title=fix.title, count=count
        )
        if not offer(text, later.lang):
            break
        focus, diagnosis = focus + 1, later
        sys.stderr.write(render_fix(diagnosis, focus, color=color))
    return again(use_defaults=True)


def _ask_for_fix(
    diagnosis: Any,
    answers: dict[str, Answer],
    focus: int,
    color: bool,
    again: Any,
) -> Any:
    """Ask the open questions that can change fixes #1..#focus+1, one at a time."""
    from assistant.prompting import ask
    from assistant.render.text import render_fix

    while diagnosis.decision.asking:
        before = render_fix(diagnosis, focus, color=False)
        question = diagnosis.decision.asking[0]
        reply = ask(question, diagnosis.lang)
        answers[question.id] = (reply, "user") if reply is not None else ("", "default")
        diagnosis = again(use_defaults=False, focus=focus)
        if render_fix(diagnosis, focus, color=False) != before:
            sys.stderr.write(render_fix(diagnosis, focus, color=color, updated=True))
    return diagnosis


def write_patch(args: argparse.Namespace, config: Any, diagnosis: Any) -> None:
    from assistant.config import write_atomic

    if diagnosis.patched_config is None:
        print(
            "areal-doctor: no config change to write; --patch-out left untouched", file=sys.stderr
        )
        return
    write_atomic(
        args.patch_out, diagnosis.patched_config, config_path=config.path, force=args.force
    )
    print(f"areal-doctor: wrote {args.patch_out}", file=sys.stderr)  # every file written


def load_config_or_warn(path: str | None, *, strict: bool = False) -> tuple[Any, str]:
    """(config, warning): the config, or None with a one-line warning (printed now, and
    returned to be repeated at the end): a bad config never stops a diagnosis, unless
    ``strict`` (a file to write from it was asked for), where it is a UserError."""
    if path is None:
        return None, ""
    from assistant.config import load_config

    try:
        return load_config(path), ""
    except UserError as exc:
        if strict:
            raise UserError(f"{exc}; --patch-out needs a readable --config") from None
        warning = f"areal-doctor: warning: {exc}; diagnosing without it (AReaL defaults assumed)"
        print(warning, file=sys.stderr)
        return None, warning


def parse_answers(raw: list[str]) -> dict[str, Answer]:
    answers: dict[str, Answer] = {}
    for item in raw:
        key, sep, value = item.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise UserError(f"--answer takes ID=VALUE, got {item!r}")
        answers[key.strip()] = (value.strip(), "flag")
    return answers


def run_search(args: argparse.Namespace) -> int:
    from assistant.redact import redact_text
    from assistant.search import format_hits_text, hits_to_json, search, see_also

    query = " ".join(args.query)
    if not query.strip():
        raise UserError("empty search query")
    hits = search(query, lang=args.lang, k=args.k, include_extra=args.extra)
    note = None if args.extra or args.k == 0 else see_also(query, hits, lang=args.lang)
    if args.json:
        import json

        out = json.dumps(hits_to_json(query, hits, note), ensure_ascii=False, indent=2) + "\n"
    else:
        out = format_hits_text(query, hits, color=use_color(), note=note)
    write_out(redact_text(out) if args.redact else out)
    return 0


def run_check(args: argparse.Namespace) -> int:
    from assistant.config import check_config, load_config
    from assistant.pipeline import resolve_lang
    from assistant.render import render_check
    from assistant.tree.engine import config_known

    config = load_config(args.config)
    lang = resolve_lang(args.lang)
    warnings = check_config(config, lang=lang, known=config_known(config, lang))
    write_out(
        render_check(
            config,
            warnings,
            args.format,
            color=use_color(),
            lang=resolve_lang(args.lang),
            redact=args.redact,
        )
    )
    return EXIT_NOT_FOUND if warnings else EXIT_FOUND


def run_estimate(args: argparse.Namespace) -> int:
    from assistant.config import load_config
    from assistant.memory.sizes import parse_gpu_size
    from assistant.pipeline import resolve_lang
    from assistant.render.data import dump_json

    gpu = parse_gpu_size(args.gpu_memory) if args.gpu_memory is not None else None
    config = load_config(args.config)
    lang = resolve_lang(args.lang)
    result = estimate_for(config, args.model_config, gpu, "flag" if gpu else None, lang)
    if args.format == "json":
        out = dump_json(result)
    else:
        from assistant.render.estimate import render_estimate_text

        out = render_estimate_text(result, color=use_color(), lang=lang)
    if args.redact:
        from assistant.redact import redact_text

        out = redact_text(out)
    write_out(out)
    return EXIT_FOUND if result["fits"] else EXIT_NOT_FOUND


def estimate_for(
    config: Any,
    model_config: str | None,
    gpu: int | None,
    gpu_source: GpuSource | None,
    lang: str = "en",
) -> dict[str, Any]:
    """The estimate of a loaded config, its sentences in ``lang``; UserError when the
    model's sizes are unknown."""
    from assistant.memory.estimate import estimate_config

    return estimate_config(config, model_config, gpu_bytes=gpu, gpu_source=gpu_source, lang=lang)


def run_tui_command(args: argparse.Namespace) -> int:
    if not (is_terminal(sys.stdin) and is_terminal(sys.stdout)):
        raise UserError("the TUI needs a terminal; use 'areal-doctor diagnose' in scripts")
    from assistant.tui import run_tui

    lang = None if args.lang == "auto" else args.lang
    return run_tui(args.path, args.config, lang, redact=args.redact)


__all__ = [
    "run_diagnose",
    "run_search",
    "run_check",
    "run_estimate",
    "run_tui_command",
    "EXIT_USAGE",
]
