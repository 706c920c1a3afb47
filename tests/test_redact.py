"""--redact: no host name, IP, user name, e-mail or secret survives."""

from __future__ import annotations

import pytest

from assistant.redact import redact_obj, redact_text

SECRETS = [
    ("ssh to 10.0.3.17 failed", "10.0.3.17"),
    ("peer fe80:0:0:0:200:f8ff:fe21:67cf down", "fe80:0:0:0:200:f8ff:fe21:67cf"),
    ('File "/home/alice/AReaL/areal/engine/fsdp_engine.py", line 3', "alice"),
    ("mail bob.smith@example.com for access", "bob.smith@example.com"),
    (
        "WANDB_API_KEY=0123456789abcdef0123456789abcdef01234567",
        "0123456789abcdef0123456789abcdef01234567",
    ),
    ("using token hf_AbCdEfGhIjKlMnOpQrStUvWxYz123456", "hf_AbCdEfGhIjKlMnOpQrStUvWxYz123456"),
    ("node gpu-node-17.cluster.internal lost", "gpu-node-17.cluster.internal"),
    ("(ActorWorker pid=123, ip=192.168.1.20) OOM", "192.168.1.20"),
    ("password: hunter2hunter2", "hunter2hunter2"),
    ("login as carol@dgx-a100-01", "carol"),
]


@pytest.mark.parametrize(("text", "secret"), SECRETS)
def test_secret_does_not_survive(text: str, secret: str) -> None:
    assert secret not in redact_text(text)


def test_numbers_that_matter_survive() -> None:
    line = "CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.11 GiB"
    assert redact_text(line) == line


def test_nested_structures_are_redacted_keys_too() -> None:
    data = {
        "evidence": [{"file": "/home/dave/run.log", "text": "from 10.1.1.1"}],
        "/home/erin/x": 1,
    }
    flat = repr(redact_obj(data))
    for secret in ("dave", "10.1.1.1", "erin"):
        assert secret not in flat
