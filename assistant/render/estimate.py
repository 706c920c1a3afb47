"""Text and JSON of `areal-doctor estimate` (schema areal-doctor/estimate/v1)."""

from __future__ import annotations

import unicodedata
from typing import Any

from assistant.i18n import message
from assistant.render.text import BOLD, DIM, GREEN, RED, Styler

COLUMNS = (
    "weights_bytes",
    "gradients_bytes",
    "optimizer_states_bytes",
    "activations_bytes",
    "logits_bytes",
    "kv_cache_bytes",
)


def _gib(value: Any) -> str:
    return f"{value / (1 << 30):.2f}" if isinstance(value, int | float) and value else "-"


def headers(lang: str) -> list[str]:
    """The table's column names in ``lang`` (knowledge/i18n/cli.yaml)."""
    from assistant.knowledge import load_yaml

    entry = load_yaml("i18n/cli.yaml")["estimate_columns"]
    return [str(label) for label in entry.get(lang) or entry["en"]]


def estimate_table(result: dict[str, Any], lang: str = "en") -> list[list[str]]:
    """Rows of the estimate table (header first), sizes in GiB; shared with the TUI.

    "other" is what the total holds beyond the named columns (the CUDA context, NCCL
    and allocator slack, FSDP's all-gathered layers), so each row adds up to its total.
    """
    rows = [headers(lang)]
    yes, no = message("estimate_fits_yes", lang), message("estimate_fits_no", lang)
    for name, engine in result["engines"].items():
        per_gpu = engine["per_gpu"]
        named = [per_gpu.get(key) for key in COLUMNS]
        other = engine["total_bytes"] - sum(v for v in named if isinstance(v, int | float))
        rows.append(
            [
                name,
                engine.get("backend") or "-",
                *(_gib(value) for value in named),
                _gib(other),
                _gib(engine["total_bytes"]),
                yes if engine["fits"] else no,
            ]
        )
    return rows


def width(text: str) -> int:
    """Terminal cells of ``text``: CJK characters take two."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def pad(text: str, cells: int, *, right: bool) -> str:
    space = " " * max(cells - width(text), 0)
    return space + text if right else text + space


def model_line(result: dict[str, Any], lang: str) -> str:
    model = result["model"]
    return message(
        "estimate_model",
        lang,
        name=model["name"],
        params=model["params"] / 1e9,
        vocab=model["vocab_size"],
        layers=model["layers"],
        source=message(f"estimate_source_{model['source'].replace('.', '_')}", lang),
    )


def render_estimate_text(result: dict[str, Any], *, color: bool, lang: str) -> str:
    s = Styler(color)
    lines = [
        s(model_line(result, lang), BOLD),
        message("estimate_gpu", lang, gib=result["gpu_memory_bytes"] / (1 << 30)),
        "",
    ]
    rows = estimate_table(result, lang)
    fits = [True, *(engine["fits"] for engine in result["engines"].values())]
    widths = [max(width(row[i]) for row in rows) for i in range(len(rows[0]))]
    for number, row in enumerate(rows):
        cells = [
            pad(cell, w, right=i > 1) for i, (cell, w) in enumerate(zip(row, widths, strict=True))
        ]
        text = "  ".join(cells).rstrip()
        if number == 0:
            text = s(text, BOLD)
        elif not fits[number]:
            text = s(text, RED)
        lines.append(text)
    lines.append(s(message("estimate_units", lang), DIM))
    for name, engine in result["engines"].items():
        lines += engine_notes(name, engine, lang)
    for group, text in zip(result.get("colocated", []), colocated_notes(result, lang), strict=True):
        lines.append("  " + text if group["fits"] else s("  " + text, RED))
    lines += ["", s(message("estimate_assumptions", lang), BOLD)]
    lines += [f"  - {item}" for item in result["assumptions"]]
    verdict = "estimate_all_fit" if result["fits"] else "estimate_not_fit"
    lines += ["", s(message(verdict, lang), GREEN if result["fits"] else RED)]
    return "\n".join(lines) + "\n"


def colocated_notes(result: dict[str, Any], lang: str) -> list[str]:
    """A line per group of engines sharing GPUs: what they need there together."""
    return [
        message(
            "estimate_colocated_line",
            lang,
            engines=" + ".join(group["engines"]),
            resident=_gib(group["resident_bytes"]),
            working=_gib(group["working_bytes"]),
            total=_gib(group["total_bytes"]),
            fits=message("estimate_fits_yes" if group["fits"] else "estimate_fits_no", lang),
        )
        for group in result.get("colocated", [])
    ]


def engine_notes(name: str, engine: dict[str, Any], lang: str) -> list[str]:
    """Per-engine lines under the table (activations both ways, KV cache in sequences)."""
    lines: list[str] = []
    if engine.get("role") == "training" and "activations_with_checkpointing_bytes" in engine:
        lines.append(
            "  "
            + message(
                "estimate_training_line",
                lang,
                engine=name,
                tokens=engine["tokens_per_micro_batch"],
                without=_gib(engine["activations_without_checkpointing_bytes"]),
                with_=_gib(engine["activations_with_checkpointing_bytes"]),
            )
        )
    if engine.get("role") == "inference":
        lines.append(
            "  "
            + message(
                "estimate_kv_line",
                lang,
                engine=name,
                tokens=engine["kv_cache_tokens"],
                per_token=engine["kv_bytes_per_token"],
                sequences=engine["sequences_in_kv_cache"],
                length=engine["sequence_tokens"],
            )
        )
        if "tokens_for_full_concurrency" in engine:
            key = (
                "estimate_concurrency_ok"
                if engine["concurrency_fits"]
                else "estimate_concurrency_short"
            )
            lines.append(
                "  "
                + message(
                    key,
                    lang,
                    concurrent=engine["concurrent_rollouts_per_server"],
                    needed=engine["tokens_for_full_concurrency"],
                )
            )
    return lines
