"""The knowledge files besides the log rules and the tree: shapes and references."""

from __future__ import annotations

from typing import Any

import assistant.knowledge_schema.names as names
from assistant.knowledge import load_yaml
from assistant.knowledge_schema.shapes import LANGS, bilingual, known, texts
from assistant.logs.schema import Entry
from assistant.models import KINDS, PHASES

SOURCE_SHAPES = (
    {"fact"},
    {"metric"},
    {"config"},
    {"config_present", "answer"},
    {"config_equals", "value", "answer"},
    {"model_name"},
)
CONSTRAINT_PARAMS = (
    "key", "keys", "sum", "known_floor", "dims", "when", "allowed", "low", "high",
    "include_high_for", "fraction_keys", "shared_below_fraction", "node_local_prefixes",
    "problems", "gpu_notes", "behaviour", "phases", "offline_types",
)  # fmt: skip
KNOWN_FLOORS = ("micro_batch_floor",)  # what assistant/tree/engine.py's _known_facts gives
MODEL_KEYS = (
    "id", "source", "aliases", "model_type", "vocab_size", "hidden_size", "num_hidden_layers",
    "num_attention_heads", "num_key_value_heads", "head_dim", "intermediate_size",
    "tie_word_embeddings", "attention_bias", "num_experts", "num_local_experts",
    "n_routed_experts", "n_shared_experts", "num_experts_per_tok", "moe_intermediate_size",
    "first_k_dense_replace", "kv_lora_rank", "q_lora_rank", "qk_nope_head_dim",
    "qk_rope_head_dim", "v_head_dim",
)  # fmt: skip


def check_files() -> None:
    for check in (
        questions,
        constraints,
        config_defaults,
        stages,
        inferences,
        memory,
        models,
        docs_query,
        redact,
        glossary,
        section_terms,
        query_cues,
        phase_terms,
        i18n,
        guide,
    ):
        check()


def _top(file: str, *allowed: str) -> Entry:
    return Entry(file, load_yaml(file), "(top level)").only(*allowed)


def questions() -> None:
    from assistant.errors import UserError
    from assistant.tree.questions import parse_answer

    file = "questions.yaml"
    top = _top(
        file, "questions", "yes_words", "no_words", "skip_words", "number_probes", "number_suffixes"
    )
    top.get("number_suffixes", dict, {})
    for key in ("yes_words", "no_words", "skip_words"):
        top.strings(key, required=True)
    top.get("number_probes", list)
    facts, metrics = names.facts(), names.metrics()
    for qid, spec in top.get("questions", dict).items():
        entry = Entry(file, spec, f"'{qid}'").only(
            "type",
            "default",
            "text",
            "sources",
            "choices",
            "probes",
            "aliases",
            "suffixes",
            "outcome",
        )
        kind = entry.get("type", str, check=lambda t: t in ("yesno", "number", "choice"))
        texts(entry, "text")
        if kind == "choice":
            entry.strings("choices", required=True)
        elif "choices" in spec:
            entry.fail("'choices' only go with type: choice")
        entry.get("probes", list, [])
        _answer_shapes(entry, spec, kind)
        if spec.get("default") is not None:
            try:
                parse_answer(qid, spec["default"])
            except UserError as exc:
                entry.fail(f"'default' does not parse: {exc}")
        for index, source in enumerate(entry.get("sources", list, [])):
            sub = Entry(file, source, f"'{qid}' sources #{index + 1}")
            if set(source) not in SOURCE_SHAPES:
                sub.fail(
                    "a source is one of " + ", ".join("+".join(sorted(s)) for s in SOURCE_SHAPES)
                )
            if "fact" in source:
                known(sub, "fact (no rule file produces it)", source["fact"], facts, "fact")
            if "metric" in source:
                known(sub, "metric", source["metric"], metrics, "metric")
            if "model_name" in source:
                known(
                    sub,
                    "model_name reading",
                    source["model_name"],
                    ("params", "vlm", "heads"),
                    "model_name",
                )


def _answer_shapes(entry: Entry, spec: Any, kind: str) -> None:
    """aliases name a choice, suffixes go with numbers, an outcome sets oom or phase."""
    for word, target in (entry.get("aliases", dict, {}) or {}).items():
        if kind != "choice" or str(target) not in (spec.get("choices") or []):
            entry.fail(f"alias '{word}' names no choice of this question")
    if entry.get("suffixes", dict, {}) and kind != "number":
        entry.fail("'suffixes' only go with type: number")
    for rule in entry.get("outcome", list, []):
        if not isinstance(rule, dict) or not set(rule) - {"when"} <= {"oom", "phase"}:
            entry.fail("an outcome sets oom or phase (with an optional when)")
        elif "oom" in rule and not isinstance(rule["oom"], bool):
            entry.fail("an outcome's oom is true or false")
        elif "phase" in rule and rule["phase"] != "answer" and rule["phase"] not in PHASES:
            entry.fail("an outcome's phase is a phase or 'answer'")
        elif rule.get("phase") == "answer" and not set(spec.get("choices") or []) <= set(PHASES):
            entry.fail("phase: answer needs a question whose choices are phases")


def constraints() -> None:
    from assistant.config.constraints import CHECKERS

    file = "constraints.yaml"
    top = _top(file, "backends", "constraints")
    for name, spec in top.get("backends", dict).items():
        entry = Entry(file, spec, f"backend '{name}'").only("role", "dims", "hybrid")
        entry.get("role", str, check=lambda r: r in ("inference", "training"))
        entry.get("dims", str)
        entry.get("hybrid", bool, False)
    sections = names.sections()
    seen: set[str] = set()
    for index, item in enumerate(top.get("constraints", list)):
        label = f"'{item.get('id')}'" if isinstance(item, dict) else f"#{index + 1}"
        entry = Entry(file, item, label).only("id", "section", "check", "text", *CONSTRAINT_PARAMS)
        ident = entry.get("id", str)
        if ident in seen:
            entry.fail("duplicate id")
        seen.add(ident)
        known(entry, "guide section", entry.get("section", str), sections, "section")
        known(entry, "checker", entry.get("check", str), CHECKERS, "check")
        if "known_floor" in item:
            known(entry, "known fact", item["known_floor"], KNOWN_FLOORS, "known_floor")
        texts(entry, "text")


def config_defaults() -> None:
    file = "config_defaults.yaml"
    top = _top(file, "defaults", "aliases", "engines")
    top.get("defaults", dict)
    for key, spellings in top.get("aliases", dict).items():
        if not isinstance(spellings, list) or not all(isinstance(s, str) for s in spellings):
            top.fail(f"'aliases.{key}' must be a list of keys")
    for engine, spec in top.get("engines", dict).items():
        Entry(file, spec, f"engine '{engine}'").get("role", str)


def stages() -> None:
    file = "stages.yaml"
    top = _top(file, "before_lines", "after_lines", "status", "stages")
    top.get("before_lines", int)
    top.get("after_lines", int, 0, check=lambda n: n >= 0)
    for index, item in enumerate(top.get("status", list)):
        entry = Entry(file, item, f"status #{index + 1}").only("fact", "pattern")
        entry.get("fact", str)
        entry.compile(entry.get("pattern", str))
    for entry in _entries(file, top.get("stages", list)):
        entry.only("id", "phase", "name", "match", "context")
        entry.get("phase", str, check=lambda p: p in PHASES)
        entry.regexes("match", required=False)
        entry.regexes("context", required=False)


def inferences() -> None:
    file = "inferences.yaml"
    top = _top(file, "ids", "fragmentation", "held_elsewhere")
    top.strings("ids", required=True)
    cuts = {
        "fragmentation": (
            "min_times_request",
            "min_unallocated_bytes",
            "lead_times_request",
            "lead_min_share",
        ),
        "held_elsewhere": (
            "min_share",
            "lead_min_share",
            "most_share",
            "min_share_without_process_figure",
            "min_share_at_snapshot",
        ),
    }
    for key, fields in cuts.items():
        entry = Entry(file, top.get(key, dict), f"'{key}'").only(*fields)
        for field in fields:
            entry.get(field, (int, float))


def memory() -> None:
    file = "memory.yaml"
    top = _top(file, "frames", "assumptions", "lora", "storage")
    families: set[str] = set()
    also: list[tuple[Entry, tuple[str, ...]]] = []
    for index, item in enumerate(top.get("frames", list)):
        entry = Entry(file, item, f"frames #{index + 1}").only("family", "patterns", "also")
        family = entry.get("family", str)
        entry.regexes("patterns")
        families.add(family)
        also.append((entry, entry.strings("also")))
    for entry, names_ in also:
        for name in names_:
            known(entry, "tensor family", name, families, "also")
    for key, value in top.get("assumptions", dict).items():
        if not isinstance(value, int | float | str) or isinstance(value, bool):
            top.fail(f"'assumptions.{key}' must be a number or a string")
    lora = Entry(file, top.get("lora", dict), "'lora'").only(
        "default_rank", "all_linear", "targets"
    )
    lora.get("default_rank", int, check=lambda n: n > 0)
    sizes = {"hidden", "q", "kv", "q+2kv", "mlp", "2mlp"}
    targets = lora.get("targets", dict)
    for name, shape in targets.items():
        ok = isinstance(shape, list) and len(shape) == 3 and set(shape[:2]) <= sizes
        if not ok or shape[2] not in ("attention", "mlp"):
            lora.fail(f"target '{name}' must be [input, output, attention|mlp] of {sorted(sizes)}")
    for name in lora.strings("all_linear", required=True):
        known(lora, "LoRA target", name, set(targets), "all_linear")
    storage(Entry(file, top.get("storage", dict), "'storage'"))


def storage(top: Entry) -> None:
    """memory.yaml ``storage``: every figure a number or a dtype name, with a source."""
    top.only("default", "behaviours", "engines", "offload")
    behaviours = top.get("behaviours", dict)
    known(top, "memory behaviour", top.get("default", str), set(behaviours), "default")
    for ident, spec in behaviours.items():
        entry = Entry(top.file, spec, f"storage behaviour '{ident}'").only(
            "optimizer_dtype_default", "shown_by_config_keys", "en", "zh", "other_en", "other_zh"
        )
        for key in ("en", "zh", "other_en", "other_zh"):
            entry.get(key, str)
        entry.strings("shown_by_config_keys")
    engines = top.get("engines", dict)

    def figure(entry: Entry, value: object, where: str) -> None:
        ok = value in ("dtype", "optimizer_dtype") or (
            isinstance(value, int | float) and not isinstance(value, bool) and value >= 0
        )
        if not ok:
            entry.fail(f"{where}: a figure is bytes per parameter, 'dtype' or 'optimizer_dtype'")

    for name, spec in engines.items():
        if not isinstance(spec, dict):
            top.fail(f"engine '{name}' must be a mapping")
        if "same_as" in spec:
            known(top, "engine", spec["same_as"], set(engines), f"engines.{name}.same_as")
            continue
        for ident, version in spec.items():
            entry = Entry(top.file, version, f"storage engine '{name}' '{ident}'")
            known(entry, "memory behaviour", ident, set(behaviours), "behaviour")
            if "same_as" in version:
                known(entry, "behaviour", version["same_as"], set(spec), "same_as")
                continue
            entry.only("weights", "gradients", "master", "optimizers")
            for term in ("weights", "gradients", "master"):
                item = Entry(top.file, entry.get(term, dict), f"'{name}.{ident}.{term}'")
                item.only("bytes", "source")
                item.get("source", str)
                figure(item, item.data.get("bytes"), "bytes")
            for opt, chosen in entry.get("optimizers", dict).items():
                item = Entry(top.file, chosen, f"'{name}.{ident}.optimizers.{opt}'")
                item.only("states", "source")
                item.get("source", str)
                for state, value in item.get("states", dict).items():
                    figure(item, value, f"states.{state}")
    for index, item in enumerate(top.get("offload", list)):
        entry = Entry(top.file, item, f"storage offload #{index + 1}").only(
            "key", "backends", "moves", "source"
        )
        entry.get("key", str)
        entry.get("source", str)
        entry.strings("backends", required=True)
        for term in entry.strings("moves", required=True):
            if term not in ("weights", "gradients", "optimizer_states"):
                entry.fail(f"moves: unknown term '{term}'")


def models() -> None:
    file = "models.yaml"
    top = _top(file, "models")
    for entry in _entries(file, top.get("models", list)):
        entry.only(*MODEL_KEYS)
        entry.get("source", str)
        for key in ("vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads"):
            entry.get(key, int, check=lambda n: n > 0)


def docs_query() -> None:
    file = "docs_query.yaml"
    top = _top(file, *LANGS)
    for lang in LANGS:
        for phase, words in top.get(lang, dict).items():
            if phase not in (*PHASES, *KINDS) or not isinstance(words, str):
                top.fail(f"'{lang}.{phase}' must be a phase or kind id with a string of words")


def redact() -> None:
    file = "redact.yaml"
    top = _top(file, "rules")
    for index, item in enumerate(top.get("rules", list)):
        entry = Entry(file, item, f"rules #{index + 1}").only("name", "pattern", "replace")
        entry.get("name", str)
        entry.compile(entry.get("pattern", str))
        entry.get("replace", str)


def glossary() -> None:
    file = "glossary.yaml"
    data = load_yaml(file)
    if not isinstance(data, list):
        Entry(file, {}, "(top level)").fail("must be a list of rings")
    for index, ring in enumerate(data):
        entry = Entry(file, ring, f"ring #{index + 1}").only(*LANGS)
        for lang in LANGS:
            entry.strings(lang)


def section_terms() -> None:
    """Concept words per guide section: known section ids, en/zh word lists."""
    file = "section_terms.yaml"
    known_sections = names.sections()
    top = _top(file, *sorted(known_sections))
    for section in top.data:
        entry = Entry(file, top.data[section], f"'{section}'").only(*LANGS)
        for lang in LANGS:
            entry.strings(lang, required=True)


def query_cues() -> None:
    """Set-aside cues: a factor in (0, 1], per language regexes with an 'aside' group;
    pasted-error patterns (regexes) and the hint shown for them, per language;
    alternatives: a factor in (0, 1] and sets of two or more words; expansions: an id,
    the words to add, regexes that must all match and/or a size pattern with its bar."""
    import re

    file = "query_cues.yaml"
    top = _top(file, "factor", "pasted_error", "alternatives", "expansions", *LANGS)
    _expansions(file, top)
    alternatives = Entry(file, top.get("alternatives", dict), "'alternatives'")
    alternatives.only("factor", "sets").get("factor", float, check=lambda f: 0 < f <= 1)
    for group in alternatives.get("sets", list):
        if (
            not isinstance(group, list)
            or len(group) < 2
            or not all(isinstance(word, str) and word for word in group)
        ):
            alternatives.fail(f"set {group!r} is not a list of two or more words")
    pasted = Entry(file, top.get("pasted_error", dict), "'pasted_error'")
    pasted.only("generic", "patterns", "hint")
    for pattern in (*pasted.strings("generic"), *pasted.strings("patterns", required=True)):
        try:
            re.compile(pattern)
        except re.error as exc:
            pasted.fail(f"pattern {pattern!r} does not compile: {exc}")
    hint = Entry(file, pasted.get("hint", dict), "'pasted_error.hint'").only(*LANGS)
    for lang in LANGS:
        hint.get(lang, str)
    top.get("factor", float, check=lambda f: 0 < f <= 1)
    for lang in LANGS:
        entry = Entry(file, top.get(lang, dict), f"'{lang}'").only("cues", "end")
        for pattern in entry.strings("cues", required=True):
            if "(?P<aside>" not in pattern:
                entry.fail(f"cue {pattern!r} has no named group 'aside'")
            try:
                re.compile(pattern)
            except re.error as exc:
                entry.fail(f"cue {pattern!r} does not compile: {exc}")
        try:
            re.compile(entry.get("end", str))
        except re.error as exc:
            entry.fail(f"'end' does not compile: {exc}")


def _expansions(file: str, top: Entry) -> None:
    import re

    for index, spec in enumerate(top.get("expansions", list, [])):
        entry = Entry(file, spec, f"expansion {index + 1}").only("id", "all_of", "size", "add")
        entry.get("id", str)
        entry.get("add", str, check=lambda words: bool(words.strip()))
        patterns = list(entry.strings("all_of"))
        size = spec.get("size") if isinstance(spec, dict) else None
        if size is not None:
            bar = Entry(file, size, f"expansion {index + 1} 'size'").only("pattern", "at_least_gib")
            bar.get("at_least_gib", (int, float), check=lambda gib: gib > 0)
            patterns.append(bar.get("pattern", str))
        if not patterns:
            entry.fail("needs 'all_of' regexes or a 'size'")
        for pattern in patterns:
            try:
                compiled = re.compile(pattern)
            except re.error as exc:
                entry.fail(f"pattern {pattern!r} does not compile: {exc}")
            if size is not None and pattern == size.get("pattern") and compiled.groups != 2:
                entry.fail("the 'size' pattern must capture a number and a unit (2 groups)")


def phase_terms() -> None:
    file = "phase_terms.yaml"
    top = _top(file, *PHASES[:-2])
    for phase in top.data:
        entry = Entry(file, top.data[phase], f"'{phase}'").only(*LANGS)
        for lang in LANGS:
            entry.strings(lang, required=True)


def i18n() -> None:
    for file in ("i18n/cli.yaml", "i18n/tui.yaml"):
        data = load_yaml(file)
        top = Entry(file, data, "(top level)")
        for key, value in data.items():
            entry = Entry(file, value, f"'{key}'").only(*LANGS)
            if all(isinstance(value.get(lang), str) for lang in LANGS):
                bilingual(entry, value, "text", None)
            elif not all(isinstance(value.get(lang), list | dict) for lang in LANGS):
                top.fail(f"'{key}' needs 'en' and 'zh' of the same kind")


def guide() -> None:
    """Front matter of every section, in both languages, with the same ids."""
    from assistant.search.sections import list_sections

    ids = {lang: {s.id for s in list_sections(lang)} for lang in LANGS}
    if ids["en"] != ids["zh"]:
        odd = sorted(ids["en"] ^ ids["zh"])
        Entry("guide/", {}, f"'{odd[0]}'").fail("the section is missing in one language")


def _entries(file: str, items: list[Any]) -> list[Entry]:
    out = []
    for index, item in enumerate(items):
        label = (
            f"'{item.get('id')}'" if isinstance(item, dict) and "id" in item else f"#{index + 1}"
        )
        out.append(Entry(file, item, label))
    return out
