"""The byte prefilter: block boundaries, long lines, line numbers, ranges, both backends."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_budget import examples

from assistant.logs import scan
from assistant.logs.scan import Prefilter, scan_files, scan_range, split_ranges

TRIGGERS = ("out of memory", "(?i)killed")
REFERENCE = re.compile(rb"out of memory|(?i:killed)")


@pytest.fixture(params=["hyperscan", "re2"])
def prefilter(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Prefilter:
    if request.param == "re2":
        monkeypatch.setenv("AREAL_DOCTOR_PREFILTER", "re2")
    else:
        pytest.importorskip("hyperscan")
    made = Prefilter(TRIGGERS, ("out of memory",))
    assert made.backend == request.param
    return made


@pytest.fixture
def small_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Blocks of 64 bytes make every boundary case happen in a small text."""
    monkeypatch.setattr(scan, "BLOCK_BYTES", 64)
    monkeypatch.setattr(scan, "HALF_SLICE", 40)
    monkeypatch.setattr(scan, "CARRY_CAP", 160)


def _reference_lines(data: bytes) -> set[int]:
    return {n for n, line in enumerate(data.split(b"\n"), 1) if REFERENCE.search(line)}


line_text = st.one_of(
    st.sampled_from(["step ok", "CUDA out of memory. x", "Killed", "a KILLED b", "", "out of"]),
    st.text(alphabet="abc xyz", max_size=30),
    st.builds(lambda n: "x" * n + " out of memory " + "y" * n, st.integers(0, 120)),
)


@settings(max_examples=examples(60), deadline=None)
@given(lines=st.lists(line_text, max_size=40), final_newline=st.booleans())
def test_candidates_match_a_line_by_line_reference(tmp_path_factory, lines, final_newline) -> None:
    data = "\n".join(lines).encode() + (b"\n" if final_newline and lines else b"")
    path = tmp_path_factory.mktemp("scan") / "x.log"
    path.write_bytes(data)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(scan, "BLOCK_BYTES", 64)
        patch.setattr(scan, "HALF_SLICE", 40)
        patch.setattr(scan, "CARRY_CAP", 160)
        result = scan_range(str(path), 0, len(data), Prefilter(TRIGGERS, ()))
    assert {c.line for c in result.candidates} == _reference_lines(data)
    assert all(REFERENCE.search(c.data) for c in result.candidates)
    assert result.newlines == data.count(b"\n")
    for cand in result.candidates:
        assert data[cand.offset : cand.offset + len(cand.data)] == cand.data


def test_long_line_gives_slices_around_each_match(tmp_path: Path, prefilter, small_blocks) -> None:
    data = (
        b"head\n" + b"z" * 500 + b" out of memory " + b"z" * 500 + b" Killed " + b"z" * 300 + b"\n"
    )
    path = tmp_path / "long.log"
    path.write_bytes(data)
    result = scan_range(str(path), 0, len(data), prefilter)
    assert [c.line for c in result.candidates] == [2, 2]
    assert all(len(c.data) <= 2 * scan.HALF_SLICE for c in result.candidates)
    assert b"out of memory" in result.candidates[0].data
    assert b"Killed" in result.candidates[1].data


def test_ranges_are_line_aligned_and_merge_to_absolute_lines(tmp_path: Path, monkeypatch) -> None:
    lines = [f"line {i} out of memory" if i % 97 == 0 else f"line {i} fine" for i in range(5000)]
    data = ("\n".join(lines) + "\n").encode()
    path = tmp_path / "big.log"
    path.write_bytes(data)
    ranges = split_ranges(str(path), len(data), range_bytes=10_000)
    assert len(ranges) > 5 and ranges[0][0] == 0 and ranges[-1][1] == len(data)
    assert all(data[start - 1 : start] == b"\n" for start, _ in ranges[1:])
    monkeypatch.setattr(scan, "RANGE_BYTES", 10_000)
    monkeypatch.setattr(scan, "PARALLEL_MIN_BYTES", 0)
    for workers in (1, 2):
        merged = scan_files([str(path)], [len(data)], workers=workers)[0]
        assert [c.line for c in merged.candidates] == [i + 1 for i in range(0, 5000, 97)]
        assert merged.newlines == 5000


def test_progress_reports_bytes(tmp_path: Path) -> None:
    path = tmp_path / "a.log"
    path.write_bytes(b"ok\n" * 1000)
    seen: list[tuple[int, int]] = []
    scan_files([str(path)], [3000], progress=lambda done, total: seen.append((done, total)))
    assert seen[-1] == (3000, 3000)


def test_candidate_cap_keeps_memory_lines(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(scan, "MAX_CANDIDATES", 10)
    monkeypatch.setattr(scan, "TAIL_CANDIDATES", 5)
    data = b"Killed\n" * 50 + b"CUDA out of memory\n"
    path = tmp_path / "noisy.log"
    path.write_bytes(data)
    result = scan_range(str(path), 0, len(data), Prefilter(TRIGGERS, ("out of memory",)))
    assert result.candidates[-1].line == 51
    assert result.dropped == 35  # past the cap, the last five other lines are kept too
    assert [c.line for c in result.candidates[10:]] == [46, 47, 48, 49, 50, 51]


def test_past_the_cap_the_last_lines_are_kept(tmp_path: Path, monkeypatch) -> None:
    """A crash ends its log: however many candidates came before, its last lines are
    read (they were dropped once the cap was reached, unless a memory signature's)."""
    monkeypatch.setattr(scan, "MAX_CANDIDATES", 10)
    monkeypatch.setattr(scan, "TAIL_CANDIDATES", 5)
    data = b"".join(b"worker %d KILLED\n" % n for n in range(50))
    path = tmp_path / "noisy.log"
    path.write_bytes(data)
    result = scan_range(str(path), 0, len(data), Prefilter(TRIGGERS, ("out of memory",)))
    assert [c.line for c in result.candidates] == [*range(1, 11), *range(46, 51)]
    assert result.dropped == 35


def test_a_flood_of_one_line_shape_is_folded_and_counted(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(scan, "FOLD_AFTER", 4)
    monkeypatch.setattr(scan, "FOLD_KEEP", 3)
    flood = b"".join(b"step %d: worker KILLED and restarted\n" % n for n in range(10, 30))
    data = b"fine\n" + flood + b"worker 7 KILLED\n"
    path = tmp_path / "flood.log"
    path.write_bytes(data)
    result = scan_range(str(path), 0, len(data), Prefilter(TRIGGERS, ("out of memory",)))
    # 4 kept as they came, then 3 of the shape, and its last; the other 12 counted
    assert [c.line for c in result.candidates] == [2, 3, 4, 5, 6, 7, 8, 21, 22]
    assert result.folded == {b"step ##: worker KILLED and restarted": 12}


def test_the_last_line_of_a_folded_shape_is_kept(tmp_path: Path, monkeypatch) -> None:
    """The crash that ends a log may repeat the message of failures caught before it:
    the last line of every folded shape is read, with its own line number."""
    monkeypatch.setattr(scan, "FOLD_AFTER", 4)
    monkeypatch.setattr(scan, "FOLD_KEEP", 3)
    flood = b"".join(b"step %d: CUDA out of memory, retrying\n" % n for n in range(10, 30))
    data = flood + b"fine\n" * 3
    path = tmp_path / "retries.log"
    path.write_bytes(data)
    result = scan_range(str(path), 0, len(data), Prefilter(TRIGGERS, ("out of memory",)))
    assert [c.line for c in result.candidates] == [1, 2, 3, 4, 5, 6, 7, 20]
    assert result.candidates[-1].data == b"step 29: CUDA out of memory, retrying"
    assert result.folded == {b"step ##: CUDA out of memory, retrying": 12}
    assert result.newlines == 23


def test_lines_whose_numbers_decide_what_they_are_are_never_folded() -> None:
    assert scan.line_shape(b"worker 3 exited with exit code 137") is None
    assert scan.line_shape(b"Signal 9 (SIGKILL) received by PID 1234") is None
    assert scan.line_shape(b"NCCL WARN Cuda failure 2 'out of memory'") is None
    assert scan.line_shape(b"RuntimeError: CUDA error: 2") is None
    assert scan.line_shape(b"train/error=0.12 at step 40") == b"train/error=#.## at step ##"


def test_compiled_hyperscan_database_is_reused_from_the_cache(tmp_path: Path, monkeypatch) -> None:
    pytest.importorskip("hyperscan")
    from assistant import cache

    monkeypatch.setenv("AREAL_DOCTOR_CACHE_DIR", str(tmp_path))
    cache.cache_dir.cache_clear()
    try:
        data = b"fine\nCUDA out of memory\nworker KILLED\n"
        first = Prefilter(TRIGGERS, ())
        stored = list(tmp_path.glob("k-*/prefilter-*.hsdb"))
        assert len(stored) == 1
        again = Prefilter(TRIGGERS, ())  # loaded, not compiled
        assert again.ends(data) == first.ends(data) == [m.end() for m in REFERENCE.finditer(data)]
        stored[0].write_bytes(b"not a database")  # a foreign file: compiled again
        assert Prefilter(TRIGGERS, ()).ends(data) == first.ends(data)
    finally:
        cache.cache_dir.cache_clear()
