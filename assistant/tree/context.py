"""What a condition or a value function can look at while the tree is walked."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from assistant.config.engines import engine_layout
from assistant.config.loader import ExperimentConfig
from assistant.config.model_info import model_path, params_from_name
from assistant.errors import KnowledgeError
from assistant.i18n import message
from assistant.models import LogReport
from assistant.tree.questions import QuestionBook

GIB = 1024**3
DERIVED: dict[str, Callable[[Context], Any]] = {}
EMPTY_CONFIG_PATH = "<no config: AReaL defaults>"


def derived(name: str) -> Callable[[Callable[[Context], Any]], Callable[[Context], Any]]:
    def register(func: Callable[[Context], Any]) -> Callable[[Context], Any]:
        DERIVED[name] = func
        return func

    return register


class Context:
    """The log report, the config (AReaL defaults when none was given) and the answers."""

    def __init__(
        self,
        report: LogReport,
        config: ExperimentConfig | None,
        book: QuestionBook,
        lang: str,
        settings: dict[str, Any],
    ) -> None:
        self.report = report
        self.has_config = config is not None
        self.config = config if config is not None else ExperimentConfig(EMPTY_CONFIG_PATH, "", {})
        self.book = book
        self.lang = lang
        self.settings = settings
        self._cache: dict[str, Any] = {}
        # every answer consulted, in order: conditions (answer.ID, given.ID), value
        # functions and derived values. The engine slices it per lead, plan and fix and
        # lists the questions from those slices; reading an answer asks nothing.
        self.reads: list[str] = []

    @contextmanager
    def peek(self) -> Iterator[None]:
        """Consult answers without the decision depending on them (no question)."""
        mark = len(self.reads)
        try:
            yield
        finally:
            del self.reads[mark:]

    def lookup(self, path: str) -> Any:
        head, _, rest = path.partition(".")
        if head in ("phase", "kind", "oom", "stage"):
            return getattr(self.report, head)
        if head == "given":  # an answer the user gave (flag or TUI), not one found or defaulted
            return self.answer(rest) if rest in self.book.given else None
        if head == "facts":
            return self.report.facts.get(rest)
        if head == "metrics":
            return self.report.metrics.get(rest)
        if head == "inference":
            return self.inference(rest)
        if head == "config":
            return self.config.get(rest)
        if head == "source":
            return self.config.source(rest)
        if head == "answer":
            return self.answer(rest)
        if head == "derived":
            if rest not in DERIVED:
                raise KnowledgeError(f"tree.yaml: unknown derived value '{rest}'")
            if rest not in self._cache:
                self._cache[rest] = DERIVED[rest](self)
            return self._cache[rest]
        raise KnowledgeError(f"tree.yaml: unknown condition path '{path}'")

    def answer(self, qid: str) -> Any:
        """The answer in force, recorded as one the decision needed."""
        self.reads.append(qid)
        return self.book.value(qid)

    def inference(self, name: str) -> Any:
        """The value of an inference the log reader stated (an id of inferences.yaml)."""
        from assistant.logs.infer import inference_id

        wanted = inference_id(name)
        for item in self.report.inferences:
            if item.id == wanted:
                return True if item.value is None else item.value
        return None

    def tags(self) -> list[str]:
        tags = self.report.facts.get("signature_tags") or []
        return [str(t) for t in tags] if isinstance(tags, list | tuple | set) else []

    def metric_gib(self, name: str) -> float | None:
        value = self.report.metrics.get(name)
        return round(value / GIB, 2) if isinstance(value, int | float) else None

    def text_vars(self) -> dict[str, Any]:
        """Figures every text may use (absent ones stay absent); names in TEXT_VARS."""
        names = GIB_VARS
        found: dict[str, Any] = {key: self.metric_gib(metric) for key, metric in names.items()}
        facts = self.report.facts
        for name in ("running_req", "token_usage", "queue_req"):
            found[name] = facts.get(name)
        queue = facts.get("queue_req")
        found["queue_text"] = (
            message("tree.queue_text", self.lang, queue=queue)
            if isinstance(queue, int) and queue > 0
            else ""
        )
        usage = facts.get("token_usage")
        found["pool_text"] = (
            message("tree.pool_text", self.lang, usage=usage)
            if isinstance(usage, int | float)
            else ""
        )
        share = self.lookup("derived.others_share")
        found["others_share"] = f"{share:.0%}" if isinstance(share, float) else None
        fileroot = self.config.get("cluster.fileroot") if self.has_config else None
        found["fileroot"] = fileroot if isinstance(fileroot, str) else None
        buffer_mb = _weight_buffer_mb(self)
        found["weight_buffer_mb"] = f"{buffer_mb:g}" if buffer_mb is not None else None
        return {k: v for k, v in found.items() if v is not None}


GIB_VARS = {
    "tried_gib": "tried_to_allocate_bytes",
    "total_gib": "total_capacity_bytes",
    "free_gib": "free_bytes",
    "reserved_unallocated_gib": "reserved_unallocated_bytes",
    "other_processes_gib": "other_processes_bytes",
}
# every {placeholder} a why-text or note of tree.yaml may use without a value function
TEXT_VARS = (
    *GIB_VARS,
    "running_req",
    "token_usage",
    "queue_req",
    "queue_text",
    "pool_text",
    "others_share",
    "fileroot",
    "weight_buffer_mb",
)


# --- derived values (names used in tree.yaml as derived.NAME) ---------------------------


@derived("config_given")
def _config_given(ctx: Context) -> bool:
    """A --config was passed (and read): texts that name the config say so only then."""
    return ctx.has_config


@derived("server")
def _server(ctx: Context) -> str | None:
    server = ctx.report.facts.get("server")
    if isinstance(server, str) and server:
        return server.lower()
    if ctx.has_config:
        layout = engine_layout(ctx.config, "rollout")
        if layout is not None and layout.backend.name:
            return layout.backend.name
    return None


@derived("train_backend")
def _train_backend(ctx: Context) -> str | None:
    if ctx.has_config:
        layout = engine_layout(ctx.config, "actor")
        if layout is not None:
            return layout.backend.name or "fsdp"
    engine = ctx.report.facts.get("train_engine")
    return engine.lower() if isinstance(engine, str) and engine else None


@derived("foreign")
def _foreign(ctx: Context) -> bool:
    """Figures show memory held elsewhere, or the message itself says so (tag)."""
    return ctx.inference("held-by-other-processes") is not None or "other_processes" in ctx.tags()


@derived("oversized")
def _oversized(ctx: Context) -> bool:
    if ctx.inference("request-exceeds-gpu") is not None:
        return True
    tried = ctx.report.metrics.get("tried_to_allocate_bytes")
    total = ctx.report.metrics.get("total_capacity_bytes")
    return isinstance(tried, int | float) and isinstance(total, int | float) and tried > total > 0


@derived("weight_buffer_request")
def _weight_buffer_request(ctx: Context) -> bool:
    """The failed request is the weight-update buffer the run sets (the log states its
    size, or the config does): "Tried to allocate" matches it within PyTorch's rounding.
    Then the buffer is the tensor that did not fit, and a smaller one is the fix."""
    from assistant.memory.sizes import printed_tolerance

    tried = ctx.report.metrics.get("tried_to_allocate_bytes")
    buffer_mb = _weight_buffer_mb(ctx)
    if not isinstance(tried, int | float) or buffer_mb is None:
        return False
    failure = ctx.report.evidence[0].text if ctx.report.evidence else ""
    size = int(buffer_mb * (1 << 20))
    return abs(int(tried) - size) <= printed_tolerance(failure, int(tried))


def _weight_buffer_mb(ctx: Context) -> float | None:
    """The buffer's MiB: the config's (memory.setup reads it), else the log's statement."""
    from assistant.memory.setup import train_setup

    if ctx.has_config:
        chunk = train_setup(ctx.config).weight_chunk_bytes
        if chunk:
            return chunk / (1 << 20)
    stated = ctx.report.facts.get("weight_buffer_mb")
    if not isinstance(stated, str | int | float):
        return None
    try:
        value = float(stated)
    except ValueError:
        return None
    return value if value > 0 else None


@derived("fragmentation")
def _fragmentation(ctx: Context) -> bool:
    """The log reader stated the fragmentation inference (its rule: knowledge/inferences.yaml)."""
    return _fragmentation_times(ctx) is not None


def _fragmentation_times(ctx: Context) -> float | None:
    from assistant.logs.infer import fragmentation_times

    stated = ctx.inference("fragmentation")
    if isinstance(stated, int | float) and not isinstance(stated, bool):
        return stated
    return fragmentation_times(ctx.report.metrics)  # the same rule on the figures


@derived("fragmentation_lead")
def _fragmentation_lead(ctx: Context) -> bool:
    from assistant.logs.infer import rules

    times = _fragmentation_times(ctx)
    rule = rules()["fragmentation"]
    if not isinstance(times, int | float) or times < rule["lead_times_request"]:
        return False
    # ... and the cache's slack is a real part of what PyTorch holds: 1 GiB spare out of
    # 38 reserved on a full card is normal churn, not the reason a 96 MiB request failed
    share = ctx.inference("reserved-unallocated-share")  # the reader's figure
    return not isinstance(share, int | float) or share >= rule["lead_min_share"]


@derived("others_share")
def _others_share(ctx: Context) -> float | None:
    """Share of the GPU the log shows held outside the failing process."""
    held = ctx.inference("held-by-other-processes")
    total = ctx.report.metrics.get("total_capacity_bytes") or ctx.report.metrics.get(
        "snapshot_device_total_bytes"
    )
    if not isinstance(held, int | float) or isinstance(held, bool) or not total:
        return None
    return round(held / total, 3)


@derived("foreign_lead")
def _foreign_lead(ctx: Context) -> bool:
    """Memory held elsewhere is the first fix: a large share of the GPU, or stated by the
    log without figures (held_elsewhere.lead_min_share in inferences.yaml)."""
    from assistant.logs.infer import rules

    if not _foreign(ctx):
        return False
    share = ctx.lookup("derived.others_share")
    return not isinstance(share, float) or share >= rules()["held_elsewhere"]["lead_min_share"]


@derived("others_most")
def _others_most(ctx: Context) -> bool:
    from assistant.logs.infer import rules

    share = ctx.lookup("derived.others_share")
    return isinstance(share, float) and share >= rules()["held_elsewhere"]["most_share"]


@derived("pool_full")
def _pool_full(ctx: Context) -> bool:
    """The server's last status line shows its KV pool (nearly) full."""
    usage = ctx.report.facts.get("token_usage")
    return isinstance(usage, int | float) and usage >= ctx.settings["pool_full_token_usage"]


@derived("colocated")
def _colocated(ctx: Context) -> bool:
    """Trainer and inference server take turns on the same GPUs (offload, colocation):
    the config says so, or without a config the log does (facts.yaml colocated)."""
    if not ctx.has_config:
        return ctx.report.facts.get("colocated") is True
    if ctx.config.get("enable_offload") is True:
        return True
    for engine in ("rollout", "actor"):
        layout = engine_layout(ctx.config, engine)
        if layout is not None and layout.colocated:
            return True
    return False


@derived("failing_engine")
def _failing_engine(ctx: Context) -> str:
    """The engine whose worker ran out of memory: its scheduling_spec gets env vars."""
    if ctx.report.phase == "generation" or ctx.report.stage == "inference_side":
        return "rollout"
    return "actor"


@derived("fileroot_node_local")
def _fileroot_node_local(ctx: Context) -> bool:
    fileroot = ctx.config.get("cluster.fileroot") if ctx.has_config else None
    prefixes = ctx.settings["node_local_prefixes"]
    return isinstance(fileroot, str) and any(
        fileroot == p or fileroot.startswith(p.rstrip("/") + "/") for p in prefixes
    )


@derived("startup_kv")
def _startup_kv(ctx: Context) -> bool:
    if "startup_kv_pool" in ctx.tags():
        return True
    metrics = ctx.report.metrics
    return (
        ctx.report.kind == "kv_cache" and "kv_cache_tokens" in metrics and "max_seq_len" in metrics
    )


def _alloc_conf_texts(ctx: Context) -> list[str]:
    """The allocator settings the log and the config's worker environments show."""
    where = ctx.settings["alloc_conf"]
    texts = [str(ctx.report.facts.get("alloc_conf") or "")]
    for engine in where["engines"]:
        specs = ctx.config.get(f"{engine}.scheduling_spec")
        for spec in specs if isinstance(specs, list) else []:
            env = spec.get("env_vars") if isinstance(spec, dict) else None
            if isinstance(env, dict) and env.get(where["env_var"]):
                texts.append(str(env[where["env_var"]]))
    return [t.lower().replace(" ", "") for t in texts]


@derived("expandable_segments")
def _expandable_segments(ctx: Context) -> bool:
    if ctx.report.facts.get("expandable_segments") is True:
        return True
    marker = ctx.settings["alloc_conf"]["expandable_segments"]
    return any(marker in text for text in _alloc_conf_texts(ctx))


@derived("custom_allocator")
def _custom_allocator(ctx: Context) -> bool:
    if ctx.report.facts.get("sleep_mode") is True:
        return True
    markers = ctx.settings["alloc_conf"]["custom_allocator_markers"]
    if any(m in text for text in _alloc_conf_texts(ctx) for m in markers):
        return True
    return any(ctx.config.get(key) is True for key in ctx.settings["custom_allocator_keys"])


@derived("model_params_b")
def _model_params_b(ctx: Context) -> float | None:
    """The model size if the log or config already tell it (never asks)."""
    fact = ctx.report.facts.get("model_params_b")
    if isinstance(fact, int | float) and fact > 0:
        return fact
    given = ctx.book.given.get("model_params_b")
    if given is not None:
        value: float | None = given[0]
        return value
    return params_from_name(model_path(ctx.config)) if ctx.has_config else None


@derived("micro_batch_floor")
def _micro_batch_floor(ctx: Context) -> int | None:
    from assistant.tree.values import micro_batch_floor_value

    return micro_batch_floor_value(ctx)[0]
