"""Property-based tests: the log reader and the config reader/patcher on generated input.

Whatever the input, the only exception that may come out is ``UserError`` (one line,
exit 2). A real failure line keeps being found whatever surrounds it, and a patch
changes the keys it patches and nothing else.
"""

from __future__ import annotations

import gzip
import math
import tempfile
from pathlib import Path

import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from hypothesis_budget import examples

from assistant.config import check_config, config_from_text, patched_text
from assistant.config.loader import set_dotted
from assistant.errors import UserError
from assistant.logs import classify_text, read_and_classify

FAST = settings(
    max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)

FAILURES = [
    (item["line"], item["kind"])
    for item in yaml.safe_load(
        (Path(__file__).parent / "fixtures" / "hardening" / "failure_lines.yaml").read_text()
    )
]
ANSI = st.sampled_from(["", "\x1b[31m", "\x1b[1;38;2;180;140;80m", "\x1b[0m", "\x1b[2K"])
DIGITS = st.integers(0, 9).map(str)


@st.composite
def prefixes(draw) -> str:
    """Producer prefixes as real logs stack them, with random numbers and colours."""
    rank, pid = draw(st.integers(0, 511)), draw(st.integers(1, 99999))
    ip = ".".join(str(draw(st.integers(0, 255))) for _ in range(4))
    clock = f"{draw(st.integers(0, 23)):02d}:{draw(st.integers(0, 59)):02d}:0{draw(DIGITS)}"
    options = [
        "",
        f"[rank{rank}]: ",
        f"(ActorWorker pid={pid}, ip={ip}) ",
        f"(AReaL) 202603{draw(st.integers(10, 28))}-{clock}.123 FSDPEngine ERROR: ",
        f"[2026-03-01 {clock}] ",
        f"[actor]   [rank{rank}]: ",
        f"I0301 {clock}.123 {pid} train.py:42] ",
    ]
    parts = draw(st.lists(st.sampled_from(options), max_size=3))
    return draw(ANSI) + "".join(parts) + draw(ANSI)


# Ordinary text that cannot spell a memory word or an error (no e, k, m, o).
NOISE = st.text(alphabet="abcdfghijlnpqrstuvwxyz0123456789 ._-:/[]()=", max_size=80)


def _read_file(data: bytes, name: str = "x.log"):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / name
        path.write_bytes(data)
        return read_and_classify([str(path)])


@FAST
@given(st.binary(max_size=4096), st.sampled_from(["x.log", "x.log.gz"]))
def test_random_bytes_give_an_answer_or_a_user_error(data: bytes, name: str) -> None:
    for attempt in (data, b"\x1f\x8b" + data, b"\xff\xfe" + data):
        try:
            report = _read_file(attempt, name)
        except UserError:
            continue
        assert report.kind in ("cuda_oom", "cuda_error_oom", "kv_cache", "nccl", "host_oom", "none")
        assert report.oom == (report.kind != "none")


@FAST
@given(st.text(max_size=2000))
def test_random_pasted_text_gives_an_answer_or_a_user_error(text: str) -> None:
    try:
        report = classify_text(text)
    except UserError:
        return
    assert report.oom == (report.kind != "none")


@FAST
@given(
    failure=st.sampled_from(FAILURES),
    prefix=prefixes(),
    before=st.lists(NOISE, max_size=20),
    after=st.lists(NOISE, max_size=20),
    suffix=ANSI,
    encoding=st.sampled_from(["utf-8", "utf-16", "gbk", "gzip"]),
    crlf=st.booleans(),
)
def test_a_real_failure_is_found_whatever_surrounds_it(
    failure, prefix, before, after, suffix, encoding, crlf
) -> None:
    line, kind = failure
    newline = "\r\n" if crlf else "\n"
    text = newline.join([*before, prefix + line + suffix, *after]) + newline
    data = gzip.compress(text.encode()) if encoding == "gzip" else text.encode(encoding)
    report = _read_file(data)
    assert report.oom and report.kind == kind, (report.kind, text)
    if kind == "cuda_oom":
        assert report.metrics["tried_to_allocate_bytes"] == 2 << 30
    assert "\x1b" not in report.evidence[0].text


# --- configs -----------------------------------------------------------------------------

KEYS = st.sampled_from(["actor", "rollout", "mb_spec", "max_tokens_per_mb", "path", "x", "n_1"])
LEAVES = st.one_of(
    st.integers(-(2**40), 2**40),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.none(),
    st.text(max_size=20),
    st.sampled_from(["${actor.path}", "${x}", "/data/${rollout.x}/y", "${oc.env:HOME}", "${a"]),
)
MAPPINGS = st.recursive(
    st.dictionaries(KEYS, LEAVES, max_size=4),
    lambda children: st.dictionaries(KEYS, st.one_of(LEAVES, children), max_size=4),
    max_leaves=20,
)


def _with_comments(data: dict, every: int, flow: bool = False) -> str:
    """``data`` as YAML with a comment line before some top-level keys and after some values.

    Lines are never wrapped, so a comment cannot land inside a multi-line scalar.
    """
    text = yaml.safe_dump(data, default_flow_style=flow, width=float("inf"))
    out = []
    for number, line in enumerate(text.splitlines()):
        if every and number % every == 0 and line[:1].isalnum():
            out.append(f"# comment {number}")
        tail = f"  # note {number}" if every and line.endswith((": 1", ": true")) else ""
        out.append(line + tail)
    return "\n".join(out) + "\n"


@FAST
@given(MAPPINGS, st.integers(0, 3), st.booleans())
def test_generated_configs_load_or_refuse(data: dict, every: int, flow: bool) -> None:
    text = _with_comments(data, every, flow)
    try:
        config = config_from_text(text)
    except UserError:
        return
    assert _same(config.data, yaml.safe_load(text) or {})
    check_config(config)
    for key in ("actor.path", "x", "rollout.x", "gconfig.max_new_tokens"):
        config.get(key)


@FAST
@given(st.text(max_size=400))
def test_random_text_as_config_loads_or_refuses(text: str) -> None:
    try:
        config = config_from_text(text)
    except UserError:
        return
    check_config(config)


PATCH_VALUES = st.one_of(st.integers(1, 10**6), st.booleans(), st.text(max_size=12))


@settings(FAST, max_examples=examples(150))
@example(data={"x": "a"}, every=0, key="x", value="\x85\u2028 NEL", flow=False)
@example(data={"x": 1}, every=1, key="y", value="\x7f\x9b\x1b[2J DEL, CSI, ESC", flow=False)
@example(data={}, every=0, key="actor", value="0,", flow=False)  # "{}" then "{actor: 0,}"
@example(data={}, every=0, key="actor", value="0?", flow=False)  # "?" differs in flow
@example(data={"actor": {"fsdp": None, "x": 1}}, every=0, key="actor.fsdp.y", value=1, flow=None)
@given(
    data=MAPPINGS,
    every=st.integers(0, 3),
    key=st.lists(KEYS, min_size=1, max_size=3).map(".".join),
    value=PATCH_VALUES,
    flow=st.sampled_from([False, False, None]),  # None: inner mappings in flow style
)
def test_patching_changes_only_the_patched_key(
    data: dict, every: int, key: str, value, flow: bool | None
) -> None:
    text = _with_comments(data, every, flow)
    try:
        config = config_from_text(text)
    except UserError:
        return
    try:
        new_text = patched_text(config, {key: value})
    except UserError as exc:  # a refusal (a key below a scalar, a block scalar) ...
        assert "round-trip" not in str(exc)  # ... never a patch that broke the file
        return
    expected = yaml.safe_load(text) or {}
    set_dotted(expected, key, value)
    assert _same(config_from_text(new_text).data, expected)
    kept = [line for line in text.splitlines() if line.startswith("# comment")]
    assert all(line in new_text.splitlines() for line in kept)


def _same(a, b) -> bool:
    """Equality where nan equals nan (YAML's .nan loads as a float nan)."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return a == b
