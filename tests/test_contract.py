"""docs/CONTRACT.md, the command-line parser, the README and knowledge/ agree.

The contract is read as a user would: the commands and options in its tables, the ids
in its id tables. What it names must exist (in ``--help``, the README, knowledge/ and
the models' literals); what the parser offers must be in it.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import get_args

import pytest
import yaml

from assistant.cli import build_parser
from assistant.models import KINDS, PHASES, Kind, Phase

ROOT = Path(__file__).resolve().parent.parent
CONTRACT = (ROOT / "docs" / "CONTRACT.md").read_text(encoding="utf-8")
README = (ROOT / "README.md").read_text(encoding="utf-8")
KNOWLEDGE = ROOT / "knowledge"
HELP_FLAGS = {"-h", "--help"}


def section(title: str) -> str:
    """The text under the heading ``title`` (any level), up to the next heading of its level."""
    match = re.search(rf"^(#+) {re.escape(title)}\s*$", CONTRACT, re.M)
    assert match, f"docs/CONTRACT.md has no heading {title!r}"
    level = len(match.group(1))
    rest = CONTRACT[match.end() :]
    end = re.search(rf"^#{{1,{level}}} ", rest, re.M)
    return rest[: end.start()] if end else rest


def first_cells(text: str) -> list[str]:
    """The first cell of each table row (without backticks), header and rule left out."""
    cells = []
    for line in text.splitlines():
        if not line.startswith("| ") or line.startswith("| ---"):
            continue
        cell = re.split(r"(?<!\\) \| ", line[2:], maxsplit=1)[0].strip()
        if cell.startswith("`"):
            cells.append(cell.strip("`").replace("\\|", "|"))
    return cells


def subparsers() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def documented_options() -> dict[str, dict[str, tuple[str, ...] | None]]:
    """command -> {option: its choices as written (``a|b``), or None}."""
    text = section("Options of every command (*added*)")
    out: dict[str, dict[str, tuple[str, ...] | None]] = {}
    for match in re.finditer(r"^`(\w+)`[^\n]*:\n\n((?:\|[^\n]*\n)+)", text, re.M):
        options: dict[str, tuple[str, ...] | None] = {}
        for cell in first_cells(match.group(2)):
            name, _, argument = cell.partition(" ")
            options[name] = tuple(argument.split("|")) if "|" in argument else None
        out[match.group(1)] = options
    return out


def parser_options(parser: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    return {
        flag: action
        for action in parser._actions
        for flag in action.option_strings
        if flag not in HELP_FLAGS
    }


def yaml_file(name: str) -> dict:
    return yaml.safe_load((KNOWLEDGE / name).read_text(encoding="utf-8"))


# -- commands and options ------------------------------------------------------------


def test_every_command_of_the_contract_is_in_the_parser_and_the_readme_and_back() -> None:
    listed = set(re.findall(r"`areal-doctor (\w+)", section("Commands")))
    assert listed == set(subparsers())
    for command in listed:
        assert f"areal-doctor {command}" in README, command


def test_every_command_has_its_options_documented() -> None:
    assert set(documented_options()) == set(subparsers())


@pytest.mark.parametrize("command", sorted(subparsers()))
def test_options_of_the_contract_are_those_of_the_parser(command: str) -> None:
    documented = documented_options()[command]
    offered = parser_options(subparsers()[command])
    assert set(documented) == set(offered), command
    for name, choices in documented.items():
        if choices is not None:
            assert tuple(offered[name].choices or ()) == choices, (command, name)


@pytest.mark.parametrize("command", sorted(subparsers()))
def test_options_of_the_contract_are_in_help_and_readme(command: str) -> None:
    parser = subparsers()[command]
    shown = parser.format_help()
    for name, action in parser_options(parser).items():
        if action.help != argparse.SUPPRESS:
            assert name in shown, (command, name)
        assert name in README, (command, name)


def test_the_first_diagnose_options_are_still_there() -> None:
    """The original table (what scripts relied on first) keeps every option it had."""
    first = section("Commands").split("`diagnose` options that scripts rely on:")[1]
    first = first.split("Exit codes of `diagnose`")[0]
    names = {cell.split(" ")[0] for cell in first_cells(first) if cell.startswith("--")}
    assert names == {
        "--format",
        "--config",
        "--answer",
        "--non-interactive",
        "--patch-out",
        "--lang",
    }
    assert names <= set(parser_options(subparsers()["diagnose"]))


def test_top_level_options() -> None:
    flags = set(parser_options(build_parser()))
    assert flags == {"--version", "--debug"}
    text = section("Options of every command (*added*)")
    assert "Top level: `--version`, `--debug`" in text
    assert all(flag in README for flag in flags)


# -- ids -----------------------------------------------------------------------------


def test_question_ids_exist_with_their_type() -> None:
    questions = yaml_file("questions.yaml")["questions"]
    type_of = {"yes/no": "yesno", "number": "number", "choice": "choice"}
    rows = re.findall(
        r"^\| `(\w+)` \| ([\w/]+) \|", section("Question ids (`--answer ID=VALUE`)"), re.M
    )
    assert len(rows) >= 10
    for qid, kind in rows:
        assert qid in questions, qid
        assert questions[qid]["type"] == type_of[kind], qid
        assert f"`{qid}`" in README, qid


def test_warning_ids_are_the_constraints() -> None:
    documented = set(first_cells(section("Warning ids (`warnings[].id`)")))
    defined = {item["id"] for item in yaml_file("constraints.yaml")["constraints"]}
    assert documented == defined


def test_notice_ids_are_the_lookalikes_notices() -> None:
    documented = set(first_cells(section("Notice ids (`notices[].id`) (*added*)")))
    defined = {
        entry["notice"]
        for entries in yaml_file("lookalikes.yaml").values()
        if isinstance(entries, list)
        for entry in entries
        if isinstance(entry, dict) and entry.get("notice")
    }
    assert documented == defined


def test_section_ids_are_the_guide_files() -> None:
    text = section("Guide sections (`section`)")
    guide = set(first_cells(text))
    extra = set(re.findall(r"`(x-[\w-]+)`", text))
    for lang in ("zh", "en"):
        files = {path.stem for path in (KNOWLEDGE / "guide" / lang).glob("*.md")}
        assert {f for f in files if not f.startswith("x-")} == guide, lang
        assert {f for f in files if f.startswith("x-")} == extra, lang


def test_phases_and_kinds_are_the_models_literals() -> None:
    phases = first_cells(section("Phases (`phase`)"))
    kinds = first_cells(section("Kinds (`kind`)"))
    assert tuple(phases) == PHASES == get_args(Phase)
    assert tuple(kinds) == KINDS == get_args(Kind)
