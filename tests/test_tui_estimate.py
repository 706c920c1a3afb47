"""The Estimate tab: a loaded config's per-GPU memory, on the log's GPU when one is diagnosed.

Pilot sessions over the real pipeline (the GPU capacity comes from the log reader) and
units of the Session's estimate job, which needs no Textual.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from lang_helpers import CJK, english_words
from textual.widgets import Input, Static, TabbedContent
from tui_helpers import FIXTURES, chat_texts, paste, pilot_test, settle, shown

from assistant.models import LogReport
from assistant.tui import make_app
from assistant.tui.session import EstimateView, Session, estimate_of, load_config
from assistant.tui.widgets.estimate import EstimatePanel

SIZE = (120, 40)
GIB = 1 << 30
CONFIG = FIXTURES / "experiment.yaml"


def tab_text(app) -> str:
    """Everything the Estimate tab shows, as plain text (the table rendered)."""
    panel = app.query_one(EstimatePanel)
    parts = []
    for static in panel.query(Static):
        if static.id == "estimate-table":
            grid = static.content
            parts.append(" ".join(str(c) for col in grid.columns for c in [col.header, *col.cells]))
        else:
            parts.append(shown(static))
    return "\n".join(parts)


def table_rows(app) -> dict[str, list[str]]:
    """{engine: [engine, backend, weights, ..., total, fits]}: one column per engine."""
    grid = app.query_one("#estimate-table", Static).content
    return {
        str(col.header): [str(col.header), *(str(cell) for cell in col.cells)]
        for col in grid.columns[1:]
    }


async def open_config(pilot, path) -> None:
    await pilot.press("ctrl+o")
    pilot.app.screen.query_one(Input).value = str(path)
    await pilot.press("enter")
    await settle(pilot)


@pilot_test
async def test_empty_until_a_config_is_loaded_then_table_and_assumptions():
    app = make_app(lang="en")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+5")
        assert app.query_one(TabbedContent).active == "tab-estimate"
        assert "Open your AReaL config" in tab_text(app)
        await open_config(pilot, CONFIG)
        rows = table_rows(app)
        assert set(rows) == {"actor", "rollout"}
        # 3.09 B params stored in fp32 (the guide's default) over fsdp:d2; the actor keeps
        # 32768-token micro-batches without checkpointing on an 80 GiB default: it does
        # not fit, the rollout does
        assert rows["actor"][2] == "5.75" and rows["actor"][-1] == "NO"
        assert rows["rollout"][-1] == "yes"
        text = tab_text(app)
        assert "80.00 GiB per GPU, assumed" in text
        assert "without gradient checkpointing" in text and "8.47 GiB with it" in text
        assert "GPU memory: 80 GiB assumed" in text  # the assumptions, listed
        assert "Some engine does not fit" in text
        assert "Estimate tab (F6): not fitting: actor." in chat_texts(app)[-1]


@pilot_test
async def test_a_diagnosed_log_gives_the_gpu_size():
    app = make_app(config_path=str(CONFIG), lang="en")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assumed = app.session.estimate
        assert assumed is not None and assumed.result["gpu_memory_bytes"] == 80 * GIB
        await paste(pilot, (FIXTURES / "training_oom.log").read_text())
        view = app.session.estimate
        assert view is not None and view.gpu_from_log
        # the full PyTorch message: "GPU 1 has a total capacity of 79.11 GiB"
        assert view.result["gpu_memory_bytes"] == pytest.approx(79.11 * GIB, rel=1e-3)
        await pilot.press("ctrl+5")
        text = tab_text(app)
        assert "79.11 GiB per GPU, the capacity the log states" in text
        assert "from the log" in text  # said in the assumptions too
        await pilot.press("ctrl+r")  # start over: no log, back to the default size
        await settle(pilot)
        assert app.session.estimate.result["gpu_memory_bytes"] == 80 * GIB


@pilot_test
async def test_language_switch_relabels_the_tab_and_the_table():
    app = make_app(config_path=str(CONFIG), lang="en")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+l")
        await settle(pilot)
        tabs = app.query_one(TabbedContent)
        assert str(tabs.get_tab("tab-estimate").label) == "估算"
        rows = table_rows(app)
        assert rows["actor"][-1] == "否" and rows["rollout"][-1] == "是"
        assert "有引擎放不下" in tab_text(app)


def assumption_lines(app) -> list[str]:
    return shown(app.query_one("#estimate-assumptions", Static)).splitlines()


@pilot_test
async def test_zh_tab_lists_the_assumptions_in_chinese():
    app = make_app(config_path=str(CONFIG), lang="zh")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+5")
        lines = assumption_lines(app)
        assert len(lines) >= 5 and "· 显存：假定 80 GiB（未给 --gpu-memory）" in lines
        for line in lines:
            assert CJK.search(line) and not english_words(line), line
        await paste(pilot, (FIXTURES / "training_oom.log").read_text())
        await pilot.press("ctrl+5")
        assert any(line.startswith("· 显存：79.11 GiB，来自日志") for line in assumption_lines(app))


@pilot_test
async def test_language_switch_translates_the_assumptions():
    app = make_app(config_path=str(CONFIG), lang="en")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+5")
        assert "· GPU memory: 80 GiB assumed (no --gpu-memory)" in assumption_lines(app)
        await pilot.press("ctrl+l")  # no log yet: the estimate alone is fetched again
        await settle(pilot)
        assert app.session.estimate.lang == "zh"
        assert "· 显存：假定 80 GiB（未给 --gpu-memory）" in assumption_lines(app)
        await pilot.press("ctrl+l")
        await settle(pilot)
        assert "· GPU memory: 80 GiB assumed (no --gpu-memory)" in assumption_lines(app)


@pilot_test
async def test_an_unknown_model_says_why_in_the_tab(tmp_path):
    config = tmp_path / "own-model.yaml"
    config.write_text(
        "experiment_name: x\ntrial_name: y\n"
        "actor: {backend: 'fsdp:d1', path: ./my-own-model}\n"
        "rollout: {backend: 'sglang:d1'}\n"
    )
    app = make_app(lang="en")
    async with app.run_test(size=SIZE) as pilot:
        await open_config(pilot, config)
        assert "cannot tell the model's sizes" in shown(app.query_one("#estimate-error", Static))
        assert "No memory estimate for this config" in chat_texts(app)[-1]


def test_estimate_of_uses_the_logs_capacity_only_when_stated():
    config = load_config(str(CONFIG))
    assert estimate_of(None, None) is None
    stated = LogReport(
        oom=True,
        phase="training",
        kind="cuda_oom",
        confidence=0.9,
        metrics={"total_capacity_bytes": 40 * GIB},
    )
    view = estimate_of(config, stated)
    assert view is not None and view.gpu_from_log
    assert view.result["gpu_memory_bytes"] == 40 * GIB
    silent = LogReport(oom=True, phase="training", kind="cuda_oom", confidence=0.9)
    default = estimate_of(config, silent)
    assert default is not None and not default.gpu_from_log
    assert default.result["gpu_memory_bytes"] == 80 * GIB


def test_the_capacity_of_a_later_finding_counts_when_the_root_cause_lacks_it():
    from assistant.models import Finding
    from assistant.tui.session import gpu_capacity

    truncated = Finding("cut", "cuda_oom", "training", [], metrics={"rank": 1})
    full = Finding("full", "cuda_oom", "training", [], metrics={"total_capacity_bytes": 7 * GIB})
    report = LogReport(
        oom=True, phase="training", kind="cuda_oom", confidence=0.9, findings=[truncated, full]
    )
    assert gpu_capacity(report) == 7 * GIB
    stated = replace(report, metrics={"total_capacity_bytes": 9 * GIB})
    assert gpu_capacity(stated) == 9 * GIB
    assert gpu_capacity(LogReport(oom=False, phase="none", kind="none", confidence=0)) is None


def test_a_config_job_carries_the_estimate_and_session_keeps_it():
    session = Session(lang="en")
    outcome = session.load_config(str(CONFIG)).run(lambda done, total: None)
    assert isinstance(outcome.estimate, EstimateView) and outcome.estimate.result is not None
    session.accept(outcome)
    assert session.estimate is outcome.estimate


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_estimate_string_exists_in_both_languages(lang):
    from assistant.tui.i18n import strings

    table = strings()
    keys = [k for k in table if k.startswith(("estimate.", "chat.estimate")) or k == "tab.estimate"]
    assert len(keys) >= 12
    assert all(table[k].get(lang) for k in keys)
