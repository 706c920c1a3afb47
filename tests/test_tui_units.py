"""The TUI's plain parts: UI strings, literal text, typed answers, the session state."""

from __future__ import annotations

import re
import string
from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from assistant.models import (
    KINDS,
    PHASES,
    Decision,
    Diagnosis,
    LogReport,
    Question,
)
from assistant.tui.answers import default_answer, match_answer
from assistant.tui.app import KEYS, TABS
from assistant.tui.i18n import LANGS, strings, t, toggled, words
from assistant.tui.literal import is_multiline, literal, normalize_paste, restore, visible
from assistant.tui.present import SHOWN_FIGURES
from assistant.tui.session import DocItem, Outcome, Session, is_config_path

TUI_SOURCE = Path(__file__).resolve().parent.parent / "assistant" / "tui"
FILE_NAMES = {"app.tcss"}  # literals shaped like keys that are not
KEY_LITERAL = re.compile(r'"([a-z]+\.[a-z_]+)"')


def keys_used_in_code() -> set[str]:
    """Every string literal in assistant/tui shaped like a key of a known group."""
    groups = {key.split(".")[0] for key in strings()}
    keys: set[str] = set()
    for path in TUI_SOURCE.rglob("*.py"):
        found = KEY_LITERAL.findall(path.read_text(encoding="utf-8"))
        keys.update(key for key in found if key.split(".")[0] in groups and key not in FILE_NAMES)
    keys.update(f"key.{action}" for _, action in KEYS)
    keys.update(f"tab.{name}" for name in TABS)
    keys.update(f"metric.{name}" for name in SHOWN_FIGURES)
    keys.update(f"phase.{phase}" for phase in PHASES if phase != "none")
    keys.update(f"kind.{kind}" for kind in KINDS if kind != "none")
    keys.update(f"source.{source}" for source in ("log", "config", "flag", "user", "default"))
    return keys


def fields(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


def test_the_scan_finds_keys_so_the_coverage_check_means_something():
    found = keys_used_in_code()
    assert {"chat.welcome", "patch.fragment", "dialog.save_fragment_title"} <= found


@pytest.mark.parametrize("key", sorted(keys_used_in_code()))
def test_every_string_the_code_uses_exists_in_both_languages(key):
    entry = strings().get(key)
    assert entry is not None, f"{key} missing from knowledge/i18n/tui.yaml"
    for lang in LANGS:
        assert entry.get(lang), f"{key} has no {lang} text"


@pytest.mark.parametrize("key", sorted(strings()))
def test_both_languages_fill_the_same_fields(key):
    entry = strings()[key]
    if isinstance(entry["en"], list):
        assert entry["zh"], key
        return
    assert fields(entry["zh"]) == fields(entry["en"]), key


def test_t_formats_and_falls_back_to_the_key_when_missing():
    assert t("chat.saved", "en", path="/tmp/x.yaml") == "Saved the patched config to /tmp/x.yaml."
    assert "/tmp/x.yaml" in t("chat.saved", "zh", path="/tmp/x.yaml")
    assert t("no.such.key", "zh") == "no.such.key"
    assert toggled("zh") == "en" and toggled("en") == "zh"


def test_literal_keeps_markup_as_text_and_shows_escapes():
    raw = "[bold]x[/] [link=https://e.example]y[/link] \x1b[31mred\x07"
    shown = literal(raw)
    assert shown.plain == visible(raw)
    assert "[bold]x[/] [link=https://e.example]y[/link]" in shown.plain
    assert "\x1b" not in shown.plain and "\u241b[31m" in shown.plain
    assert not shown.spans  # nothing was parsed into styles
    assert restore(visible(raw)) == raw


def test_paste_line_ends_from_a_terminal_are_normalised():
    assert is_multiline("a\rb") and is_multiline("a\nb") and not is_multiline("one line\n")
    assert normalize_paste("a\r\nb\rc\n") == "a\nb\nc\n"


YESNO = Question("multi_turn", "Multi-turn?", "yesno", default="no")
NUMBER = Question("longest_conversation_tokens", "Longest?", "number")
CHOICE = Question("server", "Which server?", "choice", choices=["sglang", "vllm"], default="sglang")


@pytest.mark.parametrize(
    ("question", "typed", "expected"),
    [
        (YESNO, "yes", ("yes", "yes")),
        (YESNO, "N", ("no", "no")),
        (YESNO, "是", ("yes", "yes")),
        (YESNO, "2", ("no", "no")),
        (YESNO, "what does fsdp:d2c2 mean", None),
        (NUMBER, "16384", ("16384", "16384")),
        (NUMBER, "1.5e4", ("1.5e4", "1.5e4")),
        (NUMBER, "many", None),
        (CHOICE, "VLLM", ("vllm", "vllm")),
        (CHOICE, "1", ("sglang", "sglang")),
        (CHOICE, "3", None),
    ],
)
def test_a_typed_line_answers_the_open_question_only_when_it_fits(question, typed, expected):
    assert match_answer(question, typed, "en") == expected


def test_yes_no_labels_follow_the_language_and_bool_defaults_map_to_words():
    assert match_answer(YESNO, "yes", "zh") == ("yes", "是")
    listed = Question("multi_turn", "?", "yesno", choices=["yes", "no"], default="no")
    assert match_answer(listed, "否", "zh") == ("no", "否")
    assert default_answer(listed, "zh") == ("no", "否")
    flag = Question("is_vlm", "VLM?", "yesno", default=False)
    assert default_answer(flag, "en") == ("no", "no")
    assert default_answer(flag, "zh") == ("no", "否")
    assert "y" in words("answer.yes_words", "en")


def report(**overrides) -> LogReport:
    values = {"oom": True, "phase": "training", "kind": "cuda_oom", "confidence": 0.9}
    return LogReport(**{**values, **overrides})


def diagnosis_with_patch() -> Diagnosis:
    decision = Decision(
        flat_patch={"actor.mb_spec.max_tokens_per_mb": 3072},
        cli_overrides=["actor.mb_spec.max_tokens_per_mb=3072"],
    )
    return Diagnosis(report=report(), decision=decision)


def test_save_and_copy_texts_come_from_the_decision():
    session = Session(lang="en", diagnosis=diagnosis_with_patch())
    assert yaml.safe_load(session.patch_text()) == {
        "actor": {"mb_spec": {"max_tokens_per_mb": 3072}}
    }
    copied = session.clipboard_text()
    assert yaml.safe_load(copied) == {"actor": {"mb_spec": {"max_tokens_per_mb": 3072}}}
    assert "actor.mb_spec.max_tokens_per_mb=3072" in copied
    assert Session(lang="en").clipboard_text() is None


def test_the_patched_config_is_saved_when_there_is_one():
    kept = "actor:\n  mb_spec:\n    max_tokens_per_mb: 3072  # kept\n"
    diagnosis = replace(diagnosis_with_patch(), patched_config=kept)
    assert Session(lang="en", diagnosis=diagnosis).patch_text() == diagnosis.patched_config


class FakeConfig:
    def __init__(self, path: Path) -> None:
        self.path = str(path)


def test_the_suggested_file_is_new_in_the_current_folder_not_beside_the_config(
    tmp_path, monkeypatch
):
    shared = tmp_path / "shared"
    shared.mkdir()
    config = shared / "run.yaml"
    config.write_text("a: 1\n")
    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)
    session = Session(lang="en", config=FakeConfig(config))
    first = Path(session.suggested_save_path())
    assert first == Path("run.patched.yaml") and not first.exists()
    first.write_text("taken\n")
    second = Path(session.suggested_save_path())
    assert second == Path("run.patched-2.yaml")
    assert not (shared / "run.patched.yaml").exists()
    assert Path(Session(lang="en").suggested_save_path()) == Path("areal-doctor-patch.yaml")


def test_a_description_starts_the_tree_only_when_no_log_is_open():
    described = Diagnosis(report=report(input_kind="description"))
    asked = Outcome("ask", diagnosis=described, docs=[DocItem("train-micro-batch", 3.0)])
    fresh = Session(lang="en")
    assert fresh.accept(asked) and fresh.diagnosis is described

    with_log = Session(lang="en", diagnosis=Diagnosis(report=report()))
    assert not with_log.accept(asked)
    assert with_log.report.input_kind == "log"
    assert [doc.section for doc in with_log.docs] == ["train-micro-batch"]

    vague = Diagnosis(report=report(input_kind="description", phase="unknown"))
    assert not Session(lang="en").accept(Outcome("ask", diagnosis=vague))


def test_the_open_question_is_the_first_unanswered_one():
    answered = Question("multi_turn", "?", "yesno", answer="no", source="log")
    decision = Decision(questions=[answered, NUMBER])
    session = Session(lang="en", diagnosis=Diagnosis(report=report(), decision=decision))
    assert session.question is NUMBER
    job = session.answer(NUMBER.id, "8192")
    assert job.answers == {NUMBER.id: ("8192", "user")} and job.report is session.report


def test_start_over_keeps_config_and_language():
    config = FakeConfig(Path("/nowhere/run.yaml"))
    session = Session(lang="zh", config=config, diagnosis=diagnosis_with_patch())
    session.reset()
    assert session.diagnosis is None and session.config is config and session.lang == "zh"


def test_ctrl_o_tells_a_config_from_a_log():
    assert is_config_path("/a/run.YAML") and is_config_path("x.yml")
    assert not is_config_path("rank0.log") and not is_config_path("crash.txt")


def test_run_tui_refuses_a_missing_log_or_config_before_drawing(tmp_path):
    from assistant.errors import UserError
    from assistant.tui import run_tui

    with pytest.raises(UserError, match="log not found"):
        run_tui(str(tmp_path / "absent.log"), None, None)
    with pytest.raises(UserError, match="config not found"):
        run_tui(None, str(tmp_path / "absent.yaml"), "en")


def test_make_app_takes_the_language_or_follows_the_locale(monkeypatch):
    from assistant.tui import make_app

    assert make_app(lang="zh").lang == "zh"
    monkeypatch.setenv("LC_ALL", "zh_CN.UTF-8")
    assert make_app().lang == "zh"
    monkeypatch.setenv("LC_ALL", "en_US.UTF-8")
    assert make_app(lang="auto").lang == "en"


def test_textual_loads_only_when_the_app_is_built():
    import subprocess
    import sys

    probe = (
        "import sys; import assistant.cli, assistant.pipeline, assistant.tui; "
        "print('textual' in sys.modules)"
    )
    root = TUI_SOURCE.parent.parent
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=root
    )
    assert out.stdout.strip() == "False"
