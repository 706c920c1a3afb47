"""Repairing pasted logs: each repair on its own, and the line map back to the user's file."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_budget import examples

from assistant.logs import classify_text
from assistant.logs.paste import rejoin, repair

TRACE = [
    "Traceback (most recent call last):",
    '  File "/srv/train.py", line 88, in train_step',
    "    loss.backward()",
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total"
    " capacity of 79.19 GiB of which 1.05 GiB is free.",
]


def hard_wrap(lines: list[str], width: int) -> str:
    out: list[str] = []
    for line in lines:
        while len(line) > width:
            out.append(line[:width])
            line = line[width:]
        out.append(line)
    return "\n".join(out) + "\n"


def test_a_plain_log_needs_no_repair() -> None:
    assert repair("\n".join(TRACE) + "\n") is None


def test_fixed_width_wrap_is_joined_and_lines_map_back() -> None:
    text = hard_wrap([TRACE[0], "[rank1]: " + TRACE[1] + " and a long tail " * 3, *TRACE[2:]], 60)
    fixed = repair(text)
    assert fixed is not None
    joined = fixed.text.splitlines()
    oom = next(i for i, line in enumerate(joined, start=1) if "OutOfMemoryError" in line)
    assert "GPU 0 has a total capacity of 79.19 GiB" in joined[oom - 1]
    original = text.splitlines()
    assert "OutOfMemoryError" in original[fixed.original_line(oom) - 1]


def test_a_wrap_is_found_under_a_longer_line_the_reporter_typed_above_it() -> None:
    """tmux wrapped the log at 60 columns; the question above it was typed, not wrapped."""
    question = (
        "Step 1 dies in update_actor after rollout finished, pasted from tmux which wrapped it:"
    )
    assert len(question) > 60
    long_frame = (
        '  File "/usr/local/lib/python3.10/dist-packages/torch/optim/adam.py", line 737, in x'
    )
    text = question + "\n" + hard_wrap([TRACE[0], long_frame, long_frame, *TRACE[2:]], 60)
    fixed = repair(text)
    assert fixed is not None
    assert any(
        "GPU 0 has a total capacity of 79.19 GiB" in line for line in fixed.text.splitlines()
    )
    assert fixed.text.splitlines()[0] == question


def test_several_long_lines_mean_no_common_wrap_width() -> None:
    lines = [f"line {n}: " + "x" * (70 + n) for n in range(8)] + ["y" * 64, "z" * 64, "short"]
    assert repair("\n".join(lines) + "\n") is None


def test_indented_source_lines_are_never_joined_to_a_frame() -> None:
    frames = [
        '  File "/sgl/srt/model_executor/model_runner.py", line 1120, in init_memory_pool',
        "    raise RuntimeError('x')",
        '  File "/sgl/srt/model_executor/model_runner.py", line 1130, in init_memory_pool',
        "    pool = Pool()",
    ]
    assert repair("\n".join(frames) + "\n") is None


def test_markdown_quote_fence_and_escape_remnants_are_removed() -> None:
    text = "Any idea?\n\n> ```\n" + "".join(f"> #033[31m{line}#033[0m^M\n" for line in TRACE)
    text += "> ```\n\nThanks\n"
    fixed = repair(text)
    assert fixed is not None
    lines = fixed.text.splitlines()
    assert "```" not in fixed.text and "#033[" not in fixed.text
    assert any(line.startswith("torch.OutOfMemoryError") for line in lines)


def test_a_flattened_traceback_is_cut_back_into_frames() -> None:
    flat = "   ".join(TRACE[:3] * 6 + TRACE[3:])
    fixed = repair(flat + "\n")
    assert fixed is not None
    lines = fixed.text.splitlines()
    assert len(lines) > 4
    assert all(number == 1 for number in fixed.line_map)  # every piece is line 1 of the file


def test_rejoin_joins_a_single_wrap_inside_a_message() -> None:
    text = (
        "E local_client.cc:672] Execution of replica 0 failed: Resource exhausted: Out \n"
        "of memory while trying to allocate 5520758552 bytes.\n"
    )
    assert repair(text) is None  # one wrap shows no common width
    fixed = rejoin(text)
    assert fixed is not None
    assert "Out of memory while trying to allocate" in fixed.text


def test_rejoined_paste_is_read_as_the_failure_it_was() -> None:
    text = (
        "2019-06-13 01:17:08.886805: E external/xla/local_client.cc:672] Execution of replica 0 "
        "failed: Resource exhausted: Out \nof memory while trying to allocate 5520758552 bytes.\n"
    )
    report = classify_text(text)
    assert (report.oom, report.kind) == (True, "cuda_oom")
    assert report.metrics["tried_to_allocate_bytes"] == 5520758552
    assert report.evidence[0].line == 1


def test_a_quoted_paste_keeps_the_users_line_numbers() -> None:
    text = "Intro line\n\n" + "".join(f"> {line}\n" for line in TRACE)
    report = classify_text(text)
    assert report.oom
    assert report.evidence[0].line == 6  # where the user sees it


PIECES = [
    "> ",
    "```",
    "#033[31m",
    "^M",
    "File /x/y.py:12, in f(a)",
    "Cell In[3], line 2",
    '  File "/a.py", line 3, in g',
    "Traceback (most recent call last):",
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.",
    "x" * 70,
    "",
]


@settings(max_examples=examples(150), deadline=None)
@given(st.lists(st.sampled_from(PIECES) | st.text(max_size=90), max_size=40))
def test_repairs_never_fail_and_map_every_line_into_the_file(parts: list[str]) -> None:
    text = "\n".join(parts) + "\n"
    lines_in_file = text.count("\n")
    for fix in (repair, rejoin):
        fixed = fix(text)
        if fixed is None:
            continue
        assert len(fixed.line_map) == fixed.text.count("\n")
        assert all(1 <= n <= max(1, lines_in_file) for n in fixed.line_map)
        assert list(fixed.line_map) == sorted(fixed.line_map)  # order is kept
