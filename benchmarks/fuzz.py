"""Coverage-guided fuzzing (atheris) of the log reader and the config loader + patcher.

    .venv/bin/python benchmarks/fuzz.py logs --seconds 120
    .venv/bin/python benchmarks/fuzz.py config --seconds 120 --out /tmp/fuzz-findings
    .venv/bin/python benchmarks/fuzz.py all --seconds 240       # the time is split

Not part of the test suite: it runs for as long as it is told. The rule it checks is
the tool's promise to users: every input gets an answer or a ``UserError`` (one line,
exit 2). Any other exception is a finding; findings are collected (one per distinct
exception type and place), their inputs written to ``--out``, and fuzzing goes on.
At the end one summary line per target is printed: inputs run, seconds, findings.

Targets:

* ``logs``: the bytes become a log file around a real failure line (random noise
  lines, a random producer prefix, ANSI codes, then UTF-8, UTF-16, GBK or gzip), or,
  when the first byte is 0xff, the file is the bytes as they are. It is read by
  ``read_and_classify``; the same bytes as text go through ``classify_text``.
  When the noise alone shows no memory failure, no error and no memory words, the
  failure line must still be found with the right kind (a wrong answer is a finding).
* ``config``: the bytes are a YAML document (first byte 0: a document built from
  keys the tool reads, with values of random types: inf, nan, interpolations, lists),
  loaded, checked, given to the decision tree with an OOM report of one of several
  phases, and patched with the tree's own patch and one more key (some values are
  strings cut from the input). ``patched_text`` re-reads its output; a patch that
  broke the file or changed other keys ("did not round-trip") is a finding.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import os
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import atheris  # noqa: E402 - after the path so the package is importable from a checkout
import yaml  # noqa: E402 - not instrumented: its pure-Python parser would slow every run

with atheris.instrument_imports(include=["assistant"]):
    from assistant import config as config_api
    from assistant import logs as logs_api
    from assistant.errors import UserError
    from assistant.pipeline import flat_patch
    from assistant.tree import decide

FAILURE_LINES = [
    (item["line"], item["kind"])
    for item in yaml.safe_load(
        (ROOT / "tests" / "fixtures" / "hardening" / "failure_lines.yaml").read_text()
    )
]
PREFIXES = [
    "",
    "[rank7]: ",
    "(ActorWorker pid=9, ip=1.2.3.4) ",
    "(AReaL) 20260301-10:00:00.000 FSDPEngine ERROR: ",
    "[2026-03-01 10:00:00] ",
    "\x1b[31m",
    "[actor]   [rank0]: ",
    "I0301 10:00:00.123 123 train.py:42] ",
]
ENCODINGS = ["utf-8", "utf-16", "gbk", "gzip"]
PATCH_KEYS = [
    ("actor.mb_spec.max_tokens_per_mb", 4096),
    ("actor.gradient_checkpointing", True),
    ("actor.optimizer.type", "adam_bf16"),
    ("rollout.max_concurrent_rollouts", 16),
    ("sglang.mem_fraction_static", 0.7),
    ("actor.fsdp.memory_efficient_load", True),
    ("brand.new.key", "x: y # z"),
]
VALUE_KINDS = 12
MEMORY_WORDS = (b"memory", b"oom", b"alloc", b"kill", b"mem", b"sigterm", b"signal")


class Findings:
    """Distinct unexpected exceptions, keyed by type and innermost frame."""

    def __init__(self, target: str, out: Path, seconds: float) -> None:
        self.target, self.out, self.deadline = target, out, time.monotonic() + seconds
        self.started = time.monotonic()
        self.runs = self.refused = 0
        self.seen: dict[str, int] = {}

    def record(self, data: bytes, exc: BaseException) -> None:
        frame = traceback.extract_tb(exc.__traceback__)[-1] if exc.__traceback__ else None
        where = f"{Path(frame.filename).name}:{frame.lineno}" if frame else "?"
        key = f"{type(exc).__name__} at {where}"
        self.seen[key] = self.seen.get(key, 0) + 1
        if self.seen[key] == 1:
            digest = hashlib.sha1(data).hexdigest()[:12]
            self.out.mkdir(parents=True, exist_ok=True)
            (self.out / f"{self.target}-{digest}.bin").write_bytes(data)
            text = "".join(traceback.format_exception(exc))
            (self.out / f"{self.target}-{digest}.txt").write_text(text)
            print(f"finding: {key}: {exc!s:.200}", flush=True)

    def tick(self) -> None:
        self.runs += 1
        if time.monotonic() >= self.deadline:
            self.summary()
            os._exit(0)  # libFuzzer has no clean way back to Python

    def summary(self) -> None:
        took = time.monotonic() - self.started
        found = "; ".join(f"{k} x{n}" for k, n in self.seen.items()) or "none"
        print(
            f"{self.target}: {self.runs} inputs in {took:.0f} s "
            f"({self.refused} refused with a UserError); findings: {found}",
            flush=True,
        )


# --- logs ------------------------------------------------------------------------------


def _quiet(noise: bytes) -> bool:
    """The noise alone shows no memory failure, no error and no memory words.

    Memory words are excluded because a look-alike in the noise (a cgroup oom-kill
    notice, an illegal memory access) may rightly change the verdict on the line.
    """
    if any(word in noise.lower() for word in MEMORY_WORDS):
        return False
    try:
        report = logs_api.classify_text(noise.decode("utf-8", "replace"), name="noise")
    except UserError:
        return True
    return not report.oom and report.first_error is None


def build_log(data: bytes) -> tuple[bytes, str, str, bool]:
    """(file bytes, encoding, expected kind, noise is memory-free) from fuzz input."""
    fdp = atheris.FuzzedDataProvider(data)
    line, kind = FAILURE_LINES[fdp.ConsumeIntInRange(0, len(FAILURE_LINES) - 1)]
    prefix = PREFIXES[fdp.ConsumeIntInRange(0, len(PREFIXES) - 1)]
    encoding = ENCODINGS[fdp.ConsumeIntInRange(0, len(ENCODINGS) - 1)]
    before = fdp.ConsumeBytes(fdp.ConsumeIntInRange(0, 2048))
    after = fdp.ConsumeBytes(fdp.remaining_bytes())
    clean = _quiet(before + b"\n" + after)
    text = (
        before.decode("utf-8", "replace").replace("\r", " ")
        + "\n"
        + prefix
        + line
        + "\n"
        + after.decode("utf-8", "replace").replace("\r", " ")
    )
    if encoding == "gzip":
        return gzip.compress(text.encode("utf-8")), encoding, kind, clean
    return text.encode(encoding, "replace"), encoding, kind, clean


def fuzz_logs(findings: Findings, folder: Path):
    path = folder / "fuzz.log"

    def one(data: bytes) -> None:
        findings.tick()
        if data[:1] == b"\xff":  # the bytes as they are: any encoding, gzip or not
            raw, encoding, kind, clean = data[1:], "raw", "", False
        else:
            raw, encoding, kind, clean = build_log(data)
        path.write_bytes(raw)
        try:
            report = logs_api.read_and_classify([str(path)])
            if clean and (not report.oom or report.kind != kind):
                raise AssertionError(f"{encoding}: expected {kind}, got {report.kind}")
        except UserError:
            findings.refused += 1
        except Exception as exc:  # noqa: BLE001 - every other exception is a finding
            findings.record(raw, exc)
        try:
            logs_api.classify_text(data.decode("utf-8", "replace"), name="fuzz")
        except UserError:
            pass
        except Exception as exc:  # noqa: BLE001
            findings.record(data, exc)

    return one


# --- config ----------------------------------------------------------------------------


def phase_reports() -> list:
    """OOM reports of several phases (from the test fixtures) to drive the tree."""
    phases = ROOT / "tests" / "fixtures" / "logs" / "phases"
    reports = []
    for name in (
        "training-megatron.log",
        "generation-vllm-sampler.log",
        "weight-update-fsdp-xccl.log",
    ):
        path = phases / name
        if path.exists():
            reports.append(logs_api.read_and_classify([str(path)]))
    return reports


def known_keys() -> list[str]:
    """Dotted keys the tool reads: AReaL defaults, tree and constraint keys, fixtures."""
    import re

    keys: set[str] = set()
    for name in ("config_defaults.yaml", "tree.yaml", "constraints.yaml"):
        text = (ROOT / "knowledge" / name).read_text(encoding="utf-8")
        keys.update(re.findall(r"\b(?:[a-z_]+\.)+[a-z_]+\b", text))
    for path in (ROOT / "tests" / "fixtures" / "configs").glob("*.yaml"):
        with __import__("contextlib").suppress(UserError):
            keys.update(_flatten(config_api.load_config(str(path)).data))
    return sorted(k for k in keys if not k.endswith((".yaml", ".py", ".md")))


def _flatten(data: object, prefix: str = "") -> list[str]:
    if not isinstance(data, dict):
        return [prefix] if prefix else []
    out: list[str] = []
    for key, value in data.items():
        out += _flatten(value, f"{prefix}.{key}" if prefix else str(key))
    return out


def random_value(fdp, keys: list[str]) -> object:
    kind = fdp.ConsumeIntInRange(0, VALUE_KINDS - 1)
    pick = keys[fdp.ConsumeIntInRange(0, len(keys) - 1)]
    return [
        lambda: fdp.ConsumeInt(8),
        lambda: fdp.ConsumeRegularFloat(),
        lambda: [float("inf"), float("-inf"), float("nan"), 0, -1, 0.0, 1e300][
            fdp.ConsumeIntInRange(0, 6)
        ],
        lambda: fdp.ConsumeBool(),
        lambda: None,
        lambda: fdp.ConsumeUnicodeNoSurrogates(fdp.ConsumeIntInRange(0, 24)),
        lambda: "${" + pick + "}",
        lambda: f"/x/${{{pick}}}/y",
        lambda: ["fsdp:d4", "sglang:d2t2+fsdp:d4c2", "megatron:d1p2t3c5e7", "vllm:d0", "x"][
            fdp.ConsumeIntInRange(0, 4)
        ],
        lambda: [fdp.ConsumeInt(2), "a"],
        lambda: {"nested": fdp.ConsumeInt(2)},
        lambda: ["adam", "adam_bf16", "sgd", "bfloat16", "float32", "disk", "xccl"][
            fdp.ConsumeIntInRange(0, 6)
        ],
    ][kind]()


def structured_config(data: bytes, keys: list[str]) -> str:
    """A YAML document setting random known keys to random values of random types."""
    from assistant.config.loader import set_dotted

    fdp = atheris.FuzzedDataProvider(data)
    doc: dict = {}
    for _ in range(fdp.ConsumeIntInRange(1, 24)):
        key = keys[fdp.ConsumeIntInRange(0, len(keys) - 1)]
        set_dotted(doc, key, random_value(fdp, keys))
    flow = fdp.ConsumeBool()
    text = yaml.safe_dump(doc, default_flow_style=None if flow else False, allow_unicode=True)
    if fdp.ConsumeBool():  # comments after some values
        text = "\n".join(line + "  # note" if ": " in line else line for line in text.splitlines())
    return "# fuzz\n" + text + "\n"


def fuzz_config(findings: Findings, reports: list):
    keys = known_keys()

    def one(data: bytes) -> None:
        findings.tick()
        choice = data[1] if len(data) > 1 else 0
        if data[:1] == b"\x00":
            text = structured_config(data[2:], keys)
            data = text.encode("utf-8")
        else:
            text = data.decode("utf-8", "replace")
        try:
            config = config_api.config_from_text(text, "fuzz.yaml")
        except UserError:
            findings.refused += 1
            return
        except Exception as exc:  # noqa: BLE001
            findings.record(data, exc)
            return
        report = reports[choice % len(reports)]
        key, value = PATCH_KEYS[choice % len(PATCH_KEYS)]
        if choice % 2:  # a string from the input itself: quoting, flow context, escapes
            value = data[-12:].decode("utf-8", "replace")
        try:
            config_api.check_config(config)
            decision = decide(report, config, {}, "en", True)
            if decision.patch:
                config_api.patched_text(config, flat_patch(decision))
            config_api.patched_text(config, {key: value})
        except UserError as exc:
            if "round-trip" in str(exc):  # the patcher broke the file: not a refusal
                findings.record(data, AssertionError(str(exc)))
            findings.refused += 1
        except Exception as exc:  # noqa: BLE001
            findings.record(data, exc)

    return one


def seeds(target: str, folder: Path) -> Path:
    """A seed corpus from the test fixtures (own files, written for the tests)."""
    corpus = folder / "corpus"
    corpus.mkdir()
    fixtures = ROOT / "tests" / "fixtures"
    pattern = ("logs", "**/*.log") if target == "logs" else ("configs", "*.yaml")
    for index, path in enumerate(sorted((fixtures / pattern[0]).glob(pattern[1]))):
        data = path.read_bytes()[:8192]
        if target == "logs":
            choices = bytes([index % 4, index % 8, index % 4]) if index % 3 else b"\xff"
            data = choices + data
        (corpus / f"seed-{index}").write_bytes(data)
    if target == "config":  # structured documents (first byte 0)
        for index in range(16):
            (corpus / f"structured-{index}").write_bytes(b"\x00" + os.urandom(256))
    return corpus


def run_target(target: str, seconds: float, out: Path) -> None:
    findings = Findings(target, out, seconds)
    with tempfile.TemporaryDirectory(prefix="areal-doctor-fuzz-") as tmp:
        folder = Path(tmp)
        corpus = seeds(target, folder)
        if target == "logs":
            one = fuzz_logs(findings, folder)
        else:
            one = fuzz_config(findings, phase_reports())
        argv = [sys.argv[0], str(corpus), "-max_len=65536", "-rss_limit_mb=4096", "-timeout=20"]
        atheris.Setup(argv, one)
        atheris.Fuzz()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("target", choices=("logs", "config", "all"))
    parser.add_argument("--seconds", type=float, default=60.0, help="fuzzing time (60)")
    parser.add_argument("--out", type=Path, default=Path("fuzz-findings"), help="findings")
    args = parser.parse_args()
    if args.target != "all":
        run_target(args.target, args.seconds, args.out)
        return 0
    for target in ("logs", "config"):
        command = [sys.executable, __file__, target, "--seconds", str(args.seconds / 2)]
        subprocess.run([*command, "--out", str(args.out)], check=False)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
