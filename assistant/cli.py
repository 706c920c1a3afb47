"""The `areal-doctor` command: thin subcommands over the pipeline.

Expected failures are `UserError`s, printed as one line with exit code 2. Any
other exception is a bug: one line too, and the traceback only with --debug.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Sequence

from assistant import __version__
from assistant.errors import EXIT_USAGE, UserError

PROG = "areal-doctor"

MAIN_EPILOG = """\
examples:
  areal-doctor diagnose crash.log
  areal-doctor diagnose logs/ --config grpo.yaml --patch-out grpo.fixed.yaml
  areal-doctor diagnose rank*.log --format json --non-interactive
  kubectl logs trainer-0 | areal-doctor diagnose -
  areal-doctor search "训练时显存不足怎么办"
  areal-doctor search "weight update OOM" --lang en -k 3 --json
  areal-doctor check --config grpo.yaml
  areal-doctor estimate --config grpo.yaml --gpu-memory 80GiB
  areal-doctor estimate --config grpo.yaml --lang zh
  areal-doctor tui crash.log --config grpo.yaml

exit codes: 0 memory failure diagnosed (check: clean; estimate: all fit), 1 no memory
failure found (check: warnings; estimate: an engine does not fit), 2 usage error or
unreadable input.
"""

DIAGNOSE_EPILOG = """\
examples:
  areal-doctor diagnose crash.log
  areal-doctor diagnose logs/                      # every *.log *.txt *.out *.err (.gz too)
  areal-doctor diagnose rank0.log rank1.log rank2.log
  areal-doctor diagnose - < crash.log
  areal-doctor diagnose crash.log --config grpo.yaml --answer multi_turn=no
  areal-doctor diagnose crash.log --config grpo.yaml --patch-out grpo.fixed.yaml
  areal-doctor diagnose crash.log --format json --non-interactive | jq .recommendations[0]

exit codes: 0 a memory failure was diagnosed, 1 none found, 2 usage error or unreadable input.
"""


class OneLineParser(argparse.ArgumentParser):
    """argparse, but usage errors are one line and exit with the contract's code 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UserError(f"{message} (see '{self.prog} --help')")


def build_parser() -> argparse.ArgumentParser:
    formatter = argparse.RawDescriptionHelpFormatter
    parser = OneLineParser(
        prog=PROG,
        description="Diagnose out-of-memory crashes in AReaL RL training, offline.",
        epilog=MAIN_EPILOG,
        formatter_class=formatter,
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks of internal errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=OneLineParser)

    diag = sub.add_parser(
        "diagnose",
        help="read crash logs and explain the memory failure",
        description="Read crash logs, find the first memory failure, classify it, ask what "
        "the log and config leave open, and propose a validated config patch.",
        epilog=DIAGNOSE_EPILOG,
        formatter_class=formatter,
    )
    diag.add_argument("paths", nargs="+", metavar="PATH", help="log file, folder, or - for stdin")
    add_format(diag, ("text", "json", "yaml"))
    diag.add_argument("--config", metavar="FILE", help="your AReaL experiment YAML (read only)")
    diag.add_argument(
        "--answer",
        action="append",
        default=[],
        metavar="ID=VALUE",
        help="answer a follow-up question ahead (repeatable), e.g. multi_turn=no",
    )
    diag.add_argument(
        "--non-interactive",
        action="store_true",
        help="never prompt; unanswered questions take their default",
    )
    diag.add_argument(
        "--model-config",
        metavar="FILE",
        help="the model's config.json, for the memory arithmetic (default: beside actor.path)",
    )
    diag.add_argument("--patch-out", metavar="FILE", help="write the patched copy of --config")
    diag.add_argument("--force", action="store_true", help="let --patch-out replace a file")
    add_lang(diag, ("zh", "en", "auto"), "auto")
    add_common(diag)

    search = sub.add_parser(
        "search",
        help="search the bilingual OOM guide",
        description="BM25 search over the OOM guide in Chinese and English.",
        epilog='examples:\n  areal-doctor search "训练时显存不足怎么办"\n'
        '  areal-doctor search "what does fsdp:d2c2 mean" -k 3 --json',
        formatter_class=formatter,
    )
    search.add_argument("query", nargs="+", metavar="QUERY", help="words to search for")
    add_lang(search, ("zh", "en", "all"), None)
    search.add_argument("-k", type=positive_int, default=5, metavar="N", help="results (5)")
    search.add_argument("--json", action="store_true", help="print JSON")
    search.add_argument(
        "--extra",
        action="store_true",
        help="also search areal-doctor's own notes beyond the guide (x-... sections)",
    )
    add_common(search)

    check = sub.add_parser(
        "check",
        help="validate an AReaL config before a run",
        description="Check an AReaL experiment YAML against AReaL's memory-related "
        "constraints. Exit 0 clean, 1 warnings found, 2 unreadable.",
        epilog="examples:\n  areal-doctor check --config grpo.yaml\n"
        "  areal-doctor check --config grpo.yaml --format json",
        formatter_class=formatter,
    )
    check.add_argument("--config", metavar="FILE", required=True, help="AReaL experiment YAML")
    add_format(check, ("text", "json"))
    add_lang(check, ("zh", "en", "auto"), "auto")
    add_common(check)

    estimate = sub.add_parser(
        "estimate",
        help="per-GPU memory of each engine, before a run",
        description="Estimate the per-GPU memory of each engine a config runs (weights, "
        "gradients, optimizer states, activations and logits per micro-batch, KV cache). "
        "Exit 0 all fit, 1 an engine does not fit, 2 unreadable.",
        epilog="examples:\n  areal-doctor estimate --config grpo.yaml\n"
        "  areal-doctor estimate --config grpo.yaml --gpu-memory 79.19GiB --format json\n"
        "  areal-doctor estimate --config grpo.yaml --model-config /models/qwen/config.json\n"
        "  areal-doctor estimate --config grpo.yaml --lang zh   # assumptions in Chinese\n\n"
        "GB and MB are read as 1024-based, as PyTorch, SGLang and AReaL logs print them. "
        "--lang sets the language of the sentences (assumptions, notes); auto follows the "
        "locale. JSON keys and figures are the same in every language.",
        formatter_class=formatter,
    )
    estimate.add_argument("--config", metavar="FILE", required=True, help="AReaL experiment YAML")
    estimate.add_argument(
        "--model-config",
        metavar="FILE",
        help="the model's config.json (default: beside actor.path, else the bundled table)",
    )
    estimate.add_argument(
        "--gpu-memory",
        metavar="SIZE",
        help="memory of one GPU, e.g. 80GiB, 79.19 GiB, 141GB, 24576MiB (default 80GiB)",
    )
    add_format(estimate, ("text", "json"))
    add_lang(estimate, ("zh", "en", "auto"), "auto")
    add_common(estimate)

    tui = sub.add_parser(
        "tui",
        help="open the interactive terminal UI",
        description="Open the terminal UI: paste a crash log, answer, leave with the patch.",
        epilog="examples:\n  areal-doctor tui\n  areal-doctor tui crash.log --config grpo.yaml",
        formatter_class=formatter,
    )
    tui.add_argument("path", nargs="?", metavar="PATH", help="log to load as if pasted")
    tui.add_argument("--config", metavar="FILE", help="AReaL experiment YAML (read only)")
    add_lang(tui, ("zh", "en", "auto"), "auto")
    add_common(tui)
    return parser


def add_format(parser: argparse.ArgumentParser, choices: tuple[str, ...]) -> None:
    parser.add_argument("--format", choices=choices, default="text", help="output format (text)")


def add_lang(
    parser: argparse.ArgumentParser, choices: tuple[str, ...], default: str | None
) -> None:
    parser.add_argument("--lang", choices=choices, default=default, help="language")


def add_common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--redact",
        action="store_true",
        help="mask host names, IPs, user names, e-mails and secrets in the output",
    )
    parser.add_argument("--debug", action="store_true", help=argparse.SUPPRESS)


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in args_list
    try:
        return dispatch(args_list)
    except UserError as exc:
        print_error(str(exc))
        return exc.exit_code
    except KeyboardInterrupt:
        print_error("interrupted")
        return 130
    except BrokenPipeError:
        silence_broken_pipe()
        return 0
    except Exception as exc:  # noqa: BLE001 - the one place that turns bugs into one line
        if debug:
            raise
        print_error(f"internal error: {type(exc).__name__}: {exc} (run with --debug for details)")
        return EXIT_USAGE


def dispatch(argv: list[str]) -> int:
    if not argv:
        return open_tui_or_help()
    args = build_parser().parse_args(argv)
    if args.command is None:
        return open_tui_or_help()
    from assistant import commands

    handler = {
        "diagnose": commands.run_diagnose,
        "search": commands.run_search,
        "check": commands.run_check,
        "estimate": commands.run_estimate,
        "tui": commands.run_tui_command,
    }[args.command]
    return handler(args)


def open_tui_or_help() -> int:
    """No arguments opens the TUI, but only where there is a terminal to draw on."""
    from assistant.terminal import is_terminal

    if is_terminal(sys.stdin) and is_terminal(sys.stdout):
        from assistant.tui import run_tui

        return run_tui(None, None, None)
    build_parser().print_help()
    return EXIT_USAGE


def print_error(message: str) -> None:
    first_line = " ".join(message.split())
    with contextlib.suppress(BrokenPipeError, OSError):
        print(f"{PROG}: error: {first_line}", file=sys.stderr)


def silence_broken_pipe() -> None:
    """Output piped into `head` closed early: exit quietly, as Unix tools do."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except OSError:
        pass
