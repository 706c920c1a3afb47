"""Every spelling of a death by a signal is one fact (signatures.yaml kills)."""

from __future__ import annotations

import pytest

from assistant.logs import classify_text
from assistant.logs.rules import load_rules

SPELLINGS = [
    ("failed (exitcode: -9) local_rank: 0 (pid: 4242) of binary: /usr/bin/python3", "SIGKILL"),
    ("[launch.py:319:sigkill_handler] ['python', 'sft.py'] exits with return code = -9", "SIGKILL"),
    ("Command '['python', 'train.py']' died with <Signals.SIGKILL: 9>.", "SIGKILL"),
    ("<Process name='Worker-3' pid=812 parent=800 stopped exitcode=-SIGKILL>", "SIGKILL"),
    ("traceback : Signal 9 (SIGKILL) received by PID 4242", "SIGKILL"),
    ("Container trainer exited with exit code 137, Reason [Error]", "SIGKILL"),
    ("process 1 terminated with signal SIGKILL", "SIGKILL"),
    ("Killed", "SIGKILL"),
    ("  12%|█▏        | 120/1000 [02:01<14:50]已杀死", "SIGKILL"),
    ("训练跑到一半程序被kill掉了", "SIGKILL"),
    ("进程被杀死，没有报错", "SIGKILL"),
    ("failed (exitcode: -15) local_rank: 1 (pid: 4243)", "SIGTERM"),
    ("docker compose: trainer-1 exited with code 143", "SIGTERM"),
    ("failed (exitcode: -6) local_rank: 0 (pid: 77)", "SIGABRT"),
    ("Aborted (core dumped)", "SIGABRT"),
    ("job exited with exit code 139", "SIGSEGV"),
    ("DataLoader worker (pid 25902) is killed by signal: Segmentation fault.", "SIGSEGV"),
    ("failed (exitcode: -7) local_rank: 0 (pid: 5406) of binary: /usr/bin/python3", "SIGBUS"),
]


@pytest.mark.parametrize(("text", "signal"), SPELLINGS)
def test_each_spelling_names_its_signal_and_number(text: str, signal: str) -> None:
    kills = load_rules().kills
    fact = kills.normalise(text)
    assert fact is not None
    numbers = {s.name: s.number for s in kills.signals}
    assert (fact.signal, fact.number) == (signal, numbers[signal])


@pytest.mark.parametrize(
    "text",
    ["failed (exitcode: 1) local_rank: 0", "exitcode: -90", "processed 137 samples", "程序中断了"],
)
def test_other_exits_are_no_kill(text: str) -> None:
    assert load_rules().kills.normalise(text) is None


def test_the_report_carries_the_kill_as_one_fact() -> None:
    for text in ("exits with return code = -9", "Killed", "Pod exited with exit code 137"):
        report = classify_text(f"step 3 loss 1.2\n{text}\n")
        assert (report.facts.get("kill_signal"), report.facts.get("kill_signal_number")) == (
            "SIGKILL",
            9,
        ), text


def test_a_launcher_sigkill_lone_is_unproven_host_memory() -> None:
    # DeepSpeed's launcher spelling: a lone SIGKILL counts as host memory, unproven
    report = classify_text(
        "Loading checkpoint shards: 100%|██████████| 4/4\n"
        "[launch.py:319:sigkill_handler] ['/usr/bin/python3', '-u', 'sft.py'] "
        "exits with return code = -9\n"
    )
    assert (report.oom, report.kind) == (True, "host_oom")
    assert report.facts.get("memory_unproven") is True


def test_killing_the_other_children_is_the_cascade_not_a_death() -> None:
    report = classify_text(
        "Loading prepared training docs from ./train.json\n"
        "Killing subprocess 5571\nKilling subprocess 5572\n"
    )
    assert report.oom is False
    assert "kill_signal" not in report.facts


def test_a_fatal_signal_of_its_own_explains_the_death() -> None:
    report = classify_text(
        "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -11) "
        "local_rank: 0 (pid: 812) of binary: /usr/bin/python3\n"
    )
    assert report.oom is False
    assert report.facts.get("first_error_kind") == "fatal-signal"
    assert report.facts.get("kill_signal") == "SIGSEGV"


def test_ray_worker_death_without_the_oom_killer_named_is_no_kill() -> None:
    report = classify_text(
        "2024-03-02 10:26:04,761 WARNING worker.py:1851 -- A worker died or was killed while "
        "executing a task by an unexpected system error. To troubleshoot the problem, check the "
        "logs for the dead worker. RayTask ID: 0a344eb1d37602251cc1062494b6d430787ca61c01000000 "
        "Worker ID: c01d7bc0fbc31febd6361b29357cef7b6008052ff4a4cfb299738b7a Node ID: "
        "c50e31373a1c67d955963980eea3362a5044fcc7b909635e1f4fbf5d Worker IP address: 10.1.2.3 "
        "Worker port: 10002 Worker PID: 922 Worker exit type: SYSTEM_ERROR Worker exit detail: "
        "The leased worker has unrecoverable failure. Worker is requested to be destroyed when "
        "it is returned.\n(_map_block_split pid=2306) done 10000\n"
    )
    assert report.input_kind == "log"
    assert report.oom is False


def test_a_reporters_kill_sentence_beside_a_log_is_an_unproven_kill() -> None:
    report = classify_text(
        "用deepspeed zero3微调llama 13b，加载完checkpoint之后程序被kill掉了\n"
        "Loading checkpoint shards: 100%|██████████| 3/3 [01:02<00:00, 20.8s/it]\n"
        "[2024-05-01 10:00:30,001] [INFO] [launch.py:316:sigkill_handler] Killing subprocess 1234\n"
    )
    assert (report.oom, report.kind, report.input_kind) == (True, "host_oom", "log")
    assert report.facts.get("memory_unproven") is True


def test_the_same_sentence_alone_stays_a_description() -> None:
    report = classify_text("加载模型时内存不足，进程被杀")
    assert report.input_kind == "description"


def test_a_pod_evicted_for_disk_pressure_is_not_killed_by_memory() -> None:
    report = classify_text(
        "$ kubectl describe pod trainer-0\n"
        "Status:           Failed\n"
        "Reason:           Evicted\n"
        "Message:          The node was low on resource: ephemeral-storage. Threshold quantity: "
        "38654705664, available: 31244128Ki.\n"
        "    State:          Terminated\n"
        "      Reason:       Error\n"
        "      Exit Code:    137\n"
    )
    assert report.oom is False
    assert report.facts.get("first_error_kind") == "node-pressure-eviction"


def test_a_reporters_guess_does_not_corroborate_a_kill() -> None:
    report = classify_text(
        "I assumed OOM but the host memory graphs are flat the whole time.\n"
        "[2026-03-11 09:16:41,003] torch.distributed.elastic.multiprocessing.api: [ERROR] "
        "failed (exitcode: -9) local_rank: 0 (pid: 5120) of binary: /opt/conda/bin/python\n"
    )
    assert (report.oom, report.kind) == (True, "host_oom")
    assert report.facts.get("memory_unproven") is True
