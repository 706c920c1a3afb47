"""What each subcommand does, between argument parsing and rendering."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from assistant.errors import EXIT_FOUND, EXIT_NOT_FOUND, EXIT_USAGE, UserError
from assistant.terminal import (
    ProgressBar,
    is_terminal,
    stderr_is_terminal,
    use_color,
    write_out,
)


def run_diagnose(args: argparse.Namespace) -> int:
    from assistant import pipeline
    from assistant.render import render_diagnosis

    if args.patch_out is not None and not args.config:
        raise UserError("--patch-out needs --config (the file to patch)")
    config = load_config_or_warn(args.config)
    if args.patch_out is not None and config is not None:  # refuse a bad target early
        from assistant.config import check_target

        check_target(args.patch_out, config_path=config.path, force=args.force)
    answers = parse_answers(args.answer)
    interactive = not args.non_interactive and is_terminal(sys.stdin) and stderr_is_terminal()
    if "-" in args.paths:
        interactive = False  # stdin carries the log, so it cannot carry answers too
    with ProgressBar.for_paths(args.paths) as progress:
        diagnosis = pipeline.diagnose_paths(
            args.paths,
            config=config,
            answers=answers,
            lang=args.lang,
            use_defaults=not interactive,
            progress=progress,
        )
    if interactive:
        diagnosis = ask_open_questions(diagnosis, config, answers)
    if args.patch_out is not None:
        if config is None:
            print("areal-doctor: no config to patch; --patch-out left untouched", file=sys.stderr)
        else:
            write_patch(args, config, diagnosis)
    write_out(render_diagnosis(diagnosis, args.format, color=use_color(), redact=args.redact))
    return EXIT_FOUND if diagnosis.report.oom else EXIT_NOT_FOUND


def ask_open_questions(diagnosis: Any, config: Any, answers: dict[str, tuple[str, str]]) -> Any:
    """Answer first, then ask: the fix to try first is shown before any question.

    Only questions whose answer can change that fix are asked, one at a time; the
    tree is walked again after every answer (the log is not read again) and the
    fix is shown again when it changed. A skipped question takes its default.
    Questions that cannot change the fix take their default at the end.
    """
    from assistant import pipeline
    from assistant.prompting import ask
    from assistant.render.text import render_first_fix

    color = use_color(sys.stderr)
    answers = dict(answers)
    if diagnosis.decision.asking:
        sys.stderr.write(render_first_fix(diagnosis, color=color, headline=True))
    while diagnosis.decision.asking:
        before = render_first_fix(diagnosis, color=False)
        question = diagnosis.decision.asking[0]
        reply = ask(question, diagnosis.lang)
        answers[question.id] = (reply, "user") if reply is not None else ("", "default")
        diagnosis = pipeline.conclude(
            diagnosis.report,
            config=config,
            answers=answers,
            lang=diagnosis.lang,
            use_defaults=False,
        )
        if render_first_fix(diagnosis, color=False) != before:
            sys.stderr.write(render_first_fix(diagnosis, color=color, updated=True))
    return pipeline.conclude(
        diagnosis.report, config=config, answers=answers, lang=diagnosis.lang, use_defaults=True
    )


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


def load_config_or_warn(path: str | None) -> Any:
    """The config, or None with a one-line warning: a bad config never stops a diagnosis."""
    if path is None:
        return None
    from assistant.config import load_config

    try:
        return load_config(path)
    except UserError as exc:
        print(
            f"areal-doctor: warning: {exc}; diagnosing without it (AReaL defaults assumed)",
            file=sys.stderr,
        )
        return None


def parse_answers(raw: list[str]) -> dict[str, tuple[str, str]]:
    answers: dict[str, tuple[str, str]] = {}
    for item in raw:
        key, sep, value = item.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise UserError(f"--answer takes ID=VALUE, got {item!r}")
        answers[key.strip()] = (value.strip(), "flag")
    return answers


def run_search(args: argparse.Namespace) -> int:
    from assistant.redact import redact_text
    from assistant.search import format_hits_text, hits_to_json, search

    query = " ".join(args.query)
    if not query.strip():
        raise UserError("empty search query")
    hits = search(query, lang=args.lang, k=args.k, include_extra=args.extra)
    if args.json:
        import json

        out = json.dumps(hits_to_json(query, hits), ensure_ascii=False, indent=2) + "\n"
    else:
        out = format_hits_text(query, hits, color=use_color())
    write_out(redact_text(out) if args.redact else out)
    return 0


def run_check(args: argparse.Namespace) -> int:
    from assistant.config import check_config, load_config
    from assistant.pipeline import resolve_lang
    from assistant.render import render_check

    config = load_config(args.config)
    warnings = check_config(config, lang=resolve_lang(args.lang))
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


def run_tui_command(args: argparse.Namespace) -> int:
    if not (is_terminal(sys.stdin) and is_terminal(sys.stdout)):
        raise UserError("the TUI needs a terminal; use 'areal-doctor diagnose' in scripts")
    from assistant.tui import run_tui

    lang = None if args.lang == "auto" else args.lang
    return run_tui(args.path, args.config, lang, redact=args.redact)


__all__ = ["run_diagnose", "run_search", "run_check", "run_tui_command", "EXIT_USAGE"]
