"""Check a config against ``knowledge/constraints.yaml``.

Each constraint names one checker below; the checkers are generic (compare keys,
parse backends, count GPUs) and every id, key, limit and text lives in the data.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from functools import cache
from typing import TYPE_CHECKING, Any

from assistant.config.backend import BackendError, parse_allocation_mode, parse_backend
from assistant.config.engines import EngineLayout, all_layouts, backend_keys
from assistant.config.interpolate import has_interpolation
from assistant.config.model_info import attention_heads, model_path
from assistant.config.numbers import usable_number
from assistant.errors import KnowledgeError
from assistant.knowledge import load_yaml
from assistant.models import ConfigWarning

if TYPE_CHECKING:
    from assistant.config.loader import ExperimentConfig

# A checker yields one dict of placeholder values per violation.
Checker = Callable[
    ["ExperimentConfig", dict[str, Any], Mapping[str, Any], str], Iterator[dict[str, Any]]
]
CHECKERS: dict[str, Checker] = {}


def checker(name: str) -> Callable[[Checker], Checker]:
    def register(func: Checker) -> Checker:
        CHECKERS[name] = func
        return func

    return register


@cache
def constraints() -> list[dict[str, Any]]:
    items = list((load_yaml("constraints.yaml") or {}).get("constraints") or [])
    for item in items:
        if item.get("check") not in CHECKERS:
            raise KnowledgeError(f"constraints.yaml: {item.get('id')}: unknown check")
    return items


def check_config(
    config: ExperimentConfig, *, lang: str = "en", known: Mapping[str, Any] | None = None
) -> list[ConfigWarning]:
    """Every constraint the config breaks. ``known`` adds facts such as attention_heads."""
    found: list[ConfigWarning] = []
    for item in constraints():
        for values in CHECKERS[item["check"]](config, item, known or {}, lang):
            found.append(ConfigWarning(item["id"], item["section"], _text(item, lang, values)))
    return found


def _text(item: Mapping[str, Any], lang: str, values: Mapping[str, Any]) -> str:
    template: str = item["text"].get(lang) or item["text"]["en"]
    return template.format_map(_Blank(values))


class _Blank(dict[str, Any]):
    def __missing__(self, key: str) -> str:
        return "?"


def _equal(actual: Any, expected: Any) -> bool:
    if isinstance(expected, bool) or isinstance(actual, bool):
        return actual is expected or (
            isinstance(actual, str) and actual.lower() == str(expected).lower()
        )
    if isinstance(actual, str) and isinstance(expected, str):
        return actual.strip().lower() == expected.strip().lower()
    return bool(actual == expected)


@checker("at_least_sum")
def _at_least_sum(
    config: ExperimentConfig, item: dict[str, Any], known: Mapping[str, Any], lang: str
) -> Iterator[dict[str, Any]]:
    value = usable_number(config.get(item["key"]))
    floor = known.get(item["known_floor"]) if item.get("known_floor") else None
    if floor is not None:  # the decision tree's floor (multi-turn, SFT, answers)
        limit, terms = floor
        if value is not None and config.source(item["key"]) == "config" and value < limit:
            yield {"value": value, "limit": limit, "terms": terms}
        return
    addends = [usable_number(config.get(k)) for k in item["sum"]]
    written = all(config.source(k) == "config" for k in [item["key"], *item["sum"]])
    if value is None or None in addends or not written:
        return
    limit = sum(a for a in addends if a is not None)
    if value < limit:
        terms = " + ".join(item["sum"])
        yield {
            "value": value,
            "limit": int(limit) if float(limit).is_integer() else limit,
            "terms": terms,
        }


@checker("log_phase_without_engine")
def _log_phase_without_engine(
    config: ExperimentConfig, item: dict[str, Any], known: Mapping[str, Any], lang: str
) -> Iterator[dict[str, Any]]:
    """The log failed in a phase (``known["log_phase"]``) whose engine the config does
    not run: none of ``keys`` is written, or the dataset is ``offline_types``."""
    if known.get("log_phase") not in item["phases"]:
        return
    kind = config.get("train_dataset.type")
    offline = isinstance(kind, str) and kind.lower() in item["offline_types"]
    if offline or all(config.source(key) != "config" for key in item["keys"]):
        yield {}


@checker("all_equal")
def _all_equal(
    config: ExperimentConfig, item: dict[str, Any], known: Mapping[str, Any], lang: str
) -> Iterator[dict[str, Any]]:
    if all(_equal(config.get(k), v) for k, v in item["keys"].items()):
        yield {}


@checker("requires")
def _requires(
    config: ExperimentConfig, item: dict[str, Any], known: Mapping[str, Any], lang: str
) -> Iterator[dict[str, Any]]:
    if not all(_equal(config.get(k), v) for k, v in item["when"].items()):
        return
    value = config.get(item["key"])
    if value is not None and not any(_equal(value, a) for a in item["allowed"]):
        yield {"value": value}


@checker("open_interval")
def _open_interval(
    config: ExperimentConfig, item: dict[str, Any], known: Mapping[str, Any], lang: str
) -> Iterator[dict[str, Any]]:
    inclusive = set(item.get("include_high_for") or [])
    for key in item["keys"]:
        if config.source(key) != "config":
            continue
        raw = config.get(key)
        value = usable_number(raw)
        if value is None:
            if raw is not None:
                yield {"key": key, "value": raw}
            continue
        high_ok = value <= item["high"] if key in inclusive else value < item["high"]
        if not (value > item["low"] and high_ok):
            yield {"key": key, "value": value}


@checker("backend_grammar")
def _backend_grammar(
    config: ExperimentConfig, item: dict[str, Any], known: Mapping[str, Any], lang: str
) -> Iterator[dict[str, Any]]:
    for key in backend_keys(config):
        text = config.get(key)
        if text is None or has_interpolation(config.raw(key)):
            continue  # a copy of another key is judged where it is written
        try:
            if key == "allocation_mode":
                parse_allocation_mode(text)
            else:
                parse_backend(text)
        except BackendError as exc:
            yield {"key": key, "problem": str(exc)}


@checker("gpu_count")
def _gpu_count(
    config: ExperimentConfig, item: dict[str, Any], known: Mapping[str, Any], lang: str
) -> Iterator[dict[str, Any]]:
    nodes, per_node = config.get("cluster.n_nodes"), config.get("cluster.n_gpus_per_node")
    if usable_number(nodes) is None or usable_number(per_node) is None or per_node == 0:
        return  # cluster size unknown, or a CPU-only template
    layouts = {lay.engine: lay for lay in all_layouts(config)}
    counted = [lay for lay in layouts.values() if _own_gpus(config, lay)]
    need = sum(lay.backend.gpus for lay in counted)
    rollout, actor = layouts.get("rollout"), layouts.get("actor")
    if rollout in counted and actor in counted and _rollout_shares_gpus(config, rollout, item):
        need -= min(rollout.backend.gpus, actor.backend.gpus)
    have = int(nodes) * int(per_node)
    if need > have:
        detail = ", ".join(
            f"{lay.engine} {lay.backend.text()} = {lay.backend.gpus}" for lay in counted
        )
        yield {"need": need, "have": have, "detail": detail}


def _own_gpus(config: ExperimentConfig, layout: EngineLayout) -> bool:
    """Rollout and actor get GPUs of their own; critic/ref/teacher share the actor's
    unless their scheduling_strategy asks for something other than colocation."""
    if layout.engine in ("rollout", "actor"):
        return not layout.colocated
    strategy = config.get(f"{layout.engine}.scheduling_strategy.type")
    return isinstance(strategy, str) and strategy.lower() != "colocation"


def _rollout_shares_gpus(
    config: ExperimentConfig, rollout: EngineLayout, item: dict[str, Any]
) -> bool:
    """Offloading, or a server told to take a small share of each GPU, means the
    rollout and the trainer take turns on the same GPUs."""
    if config.get("enable_offload") is True:
        return True
    key = item["fraction_keys"].get(rollout.backend.name or "")
    fraction = usable_number(config.get(key)) if key else None
    return fraction is not None and fraction <= item["shared_below_fraction"]


@checker("parallel_divides_heads")
def _parallel_divides_heads(
    config: ExperimentConfig, item: dict[str, Any], known: Mapping[str, Any], lang: str
) -> Iterator[dict[str, Any]]:
    heads = known.get("attention_heads") or attention_heads(model_path(config), tables=True)
    if not isinstance(heads, int) or heads <= 0:
        return
    valid = ", ".join(str(n) for n in range(1, heads + 1) if heads % n == 0)
    seen: set[str] = set()
    for layout in all_layouts(config):
        for dim in item["dims"]:
            size = layout.backend.size(dim)
            if size > 1 and heads % size and layout.key not in seen:
                seen.add(layout.key)
                yield {"key": layout.key, "size": size, "heads": heads, "valid": valid}


@checker("engine_fits")
def _engine_fits(
    config: ExperimentConfig, item: dict[str, Any], known: Mapping[str, Any], lang: str
) -> Iterator[dict[str, Any]]:
    """The estimate of every engine: one that needs more than the GPU is a warning, with
    its per-GPU figure and its largest term. Only with the model's own sizes (its
    config.json or the bundled table, never a relative's) and a parseable layout."""
    from assistant.memory.estimate import estimate, model_name
    from assistant.memory.facts import resolve_model

    name, _ = model_name(config)
    try:
        model = resolve_model(name)
        if model is None:
            return
        gpu = known.get("gpu_bytes")
        source = "log" if isinstance(gpu, int) and gpu > 0 else "assumed"
        result = estimate(
            config,
            model,
            gpu_bytes=gpu if source == "log" else None,
            gpu_source="log" if source == "log" else None,
            lang=lang,
            memory_answer=known.get("areal_memory"),
        )
    except (BackendError, ValueError, KeyError, ZeroDivisionError):
        return  # a layout the other checks report; nothing to estimate
    gib = 1 << 30
    for engine, figures in result["engines"].items():
        if figures["fits"]:
            continue
        per_gpu = figures["per_gpu"]
        term = max(per_gpu, key=lambda k: per_gpu[k])
        ident = figures.get("memory_behaviour")
        yield {
            "engine": engine,
            "backend": figures.get("backend") or "-",
            "total_gib": f"{figures['total_bytes'] / gib:.2f}",
            "gpu_gib": f"{result['gpu_memory_bytes'] / gib:.2f}",
            "gpu_note": _pick(item["gpu_notes"][source], lang),
            "term": term.removesuffix("_bytes"),
            "term_gib": f"{per_gpu[term] / gib:.2f}",
            "behaviour": _pick(item["behaviour"], lang).format(ident=ident) if ident else "-",
        }
    idents = {f.get("memory_behaviour") for f in result["engines"].values()} - {None}
    for group in result.get("colocated") or []:  # engines that share GPUs, together
        if group["fits"] or not all(result["engines"][n]["fits"] for n in group["engines"]):
            continue  # an engine that does not fit alone is already said
        parts = {"resident": group["resident_bytes"], "working": group["working_bytes"]}
        term = max(parts, key=lambda k: parts[k])
        ident = next(iter(sorted(idents)), None)
        yield {
            "engine": " + ".join(group["engines"]),
            "backend": "colocated",
            "total_gib": f"{group['total_bytes'] / gib:.2f}",
            "gpu_gib": f"{result['gpu_memory_bytes'] / gib:.2f}",
            "gpu_note": _pick(item["gpu_notes"][source], lang),
            "term": term,
            "term_gib": f"{parts[term] / gib:.2f}",
            "behaviour": _pick(item["behaviour"], lang).format(ident=ident) if ident else "-",
        }


@checker("shared_fileroot")
def _shared_fileroot(
    config: ExperimentConfig, item: dict[str, Any], known: Mapping[str, Any], lang: str
) -> Iterator[dict[str, Any]]:
    if not _equal(config.get("actor.weight_update_mode"), "disk"):
        return
    fileroot = config.get("cluster.fileroot")
    problems = item["problems"]
    if not isinstance(fileroot, str) or not fileroot.strip():
        yield {"problem": _pick(problems["unset"], lang)}
        return
    if known.get("shared_fileroot") is True:
        return  # the user said it is shared: the tree notes the doubt, the check does not overrule
    nodes = usable_number(config.get("cluster.n_nodes")) or 1
    local = any(
        fileroot == p or fileroot.startswith(p.rstrip("/") + "/")
        for p in item["node_local_prefixes"]
    )
    if nodes > 1 and local:
        yield {
            "problem": _pick(problems["node_local"], lang).format(
                fileroot=fileroot, nodes=int(nodes)
            )
        }


def _pick(texts: Mapping[str, str], lang: str) -> str:
    return texts.get(lang) or texts["en"]
