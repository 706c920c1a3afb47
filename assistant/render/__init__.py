"""Renderers: each reads a finished Diagnosis; structured formats map a name to a dumper."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from assistant.models import ConfigWarning, Diagnosis
from assistant.render.data import check_to_dict, diagnosis_to_dict, dump_json, dump_yaml
from assistant.render.text import render_check_text, render_text

DUMPERS: dict[str, Callable[[Any], str]] = {"json": dump_json, "yaml": dump_yaml}


def render_diagnosis(diagnosis: Diagnosis, fmt: str, *, color: bool, redact: bool) -> str:
    if fmt == "text":
        return _maybe_redact_text(render_text(diagnosis, color=color), redact)
    return DUMPERS[fmt](_maybe_redact_obj(diagnosis_to_dict(diagnosis), redact))


def render_check(
    config: Any, warnings: list[ConfigWarning], fmt: str, *, color: bool, lang: str, redact: bool
) -> str:
    if fmt == "text":
        text = render_check_text(config, warnings, color=color, lang=lang)
        return _maybe_redact_text(text, redact)
    return DUMPERS[fmt](_maybe_redact_obj(check_to_dict(config, warnings), redact))


def _maybe_redact_text(text: str, redact: bool) -> str:
    if not redact:
        return text
    from assistant.redact import redact_text

    return redact_text(text)


def _maybe_redact_obj(data: Any, redact: bool) -> Any:
    if not redact:
        return data
    from assistant.redact import redact_obj

    return redact_obj(data)
