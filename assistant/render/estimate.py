"""Text and JSON of `areal-doctor estimate` (schema areal-doctor/estimate/v1)."""

from __future__ import annotations

from typing import Any

from assistant.i18n import message
from assistant.render.text import BOLD, DIM, GREEN, RED, Styler

COLUMNS = (
    ("weights_bytes", "weights"),
    ("gradients_bytes", "grads"),
    ("optimizer_states_bytes", "optim"),
    ("activations_bytes", "activ"),
    ("logits_bytes", "logits"),
    ("kv_cache_bytes", "kv cache"),
)


def _gib(value: Any) -> str:
    return f"{value / (1 << 30):.2f}" if isinstance(value, int | float) and value else "-"


def estimate_table(result: dict[str, Any]) -> list[list[str]]:
    """Rows of the estimate table (header first), sizes in GiB; shared with the TUI."""
    rows = [["engine", "backend", *(label for _, label in COLUMNS), "total", "fits"]]
    for name, engine in result["engines"].items():
        per_gpu = engine["per_gpu"]
        rows.append(
            [
                name,
                engine.get("backend") or "-",
                *(_gib(per_gpu.get(key)) for key, _ in COLUMNS),
                _gib(engine["total_bytes"]),
                "yes" if engine["fits"] else "NO",
            ]
        )
    return rows


def render_estimate_text(result: dict[str, Any], *, color: bool, lang: str) -> str:
    s = Styler(color)
    model = result["model"]
    lines = [
        s(
            message(
                "estimate_model",
                lang,
                name=model["name"],
                params=model["params"] / 1e9,
                vocab=model["vocab_size"],
                layers=model["layers"],
                source=model["source"],
            ),
            BOLD,
        ),
        message("estimate_gpu", lang, gib=result["gpu_memory_bytes"] / (1 << 30)),
        "",
    ]
    rows = estimate_table(result)
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for number, row in enumerate(rows):
        cells = [
            cell.rjust(w) if i > 1 else cell.ljust(w)
            for i, (cell, w) in enumerate(zip(row, widths, strict=True))
        ]
        text = "  ".join(cells).rstrip()
        if number == 0:
            text = s(text, BOLD)
        elif row[-1] == "NO":
            text = s(text, RED)
        lines.append(text)
    lines.append(s(message("estimate_units", lang), DIM))
    for name, engine in result["engines"].items():
        lines += _engine_notes(name, engine, lang)
    lines += ["", s(message("estimate_assumptions", lang), BOLD)]
    lines += [f"  - {item}" for item in result["assumptions"]]
    verdict = "estimate_all_fit" if result["fits"] else "estimate_not_fit"
    lines += ["", s(message(verdict, lang), GREEN if result["fits"] else RED)]
    return "\n".join(lines) + "\n"


def _engine_notes(name: str, engine: dict[str, Any], lang: str) -> list[str]:
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
