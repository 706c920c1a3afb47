"""knowledge/tree.yaml: leads, plans, reasons and fixes, and every name they use."""

from __future__ import annotations

from typing import Any

from assistant.knowledge_schema import names
from assistant.knowledge_schema.shapes import bilingual, known, texts
from assistant.logs.schema import Entry
from assistant.models import KINDS, PHASES

FILE = "tree.yaml"
OPERATORS = ("present", "eq", "ne", "in", "contains", "contains_any", "gt", "gte", "lt", "lte")
PLAIN_PATHS = ("phase", "kind", "oom", "stage")
NAMED_PATHS = ("given", "facts", "metrics", "inference", "config", "source", "answer", "derived")
FIX_KEYS = ("section", "when", "unless", "patch", "why", "notes", "already", "code_change")
SETTINGS = {
    "pool_full_token_usage": float,
    "offline_dataset_types": list,
    "node_local_prefixes": list,
    "fraction_step": float,
    "fraction_small_step": float,
    "fraction_floor": float,
    "fraction_ceiling": float,
    "concurrency_cut": float,
    "context_round_to": int,
    "alloc_conf": dict,
    "custom_allocator_keys": list,
    "usual_values": dict,
    "fit_escalation": list,
}


class Names:
    """Every name a condition or text of tree.yaml may use, gathered once per check."""

    def __init__(self) -> None:
        from assistant.tree import engine
        from assistant.tree.context import TEXT_VARS
        from assistant.tree.values import DECLARED

        self.facts = names.facts()
        self.metrics = names.metrics()
        self.inferences = names.inferences()
        self.derived = names.derived()
        self.questions = names.questions()
        self.sections = names.sections()
        self.stages = names.stages()
        self.functions = DECLARED
        self.text_vars = set(TEXT_VARS)
        self.engine_reasons = engine.ENGINE_REASONS


def check_tree(data: Any = None) -> None:
    from assistant.tree import engine

    data = engine.load_yaml(FILE) if data is None else data
    top = Entry(FILE, data, "(top level)").only(
        "settings", "fallback", "leads", "plans", "reasons", "fixes"
    )
    found = Names()
    fixes = top.get("fixes", dict)
    reasons = top.get("reasons", dict)
    _settings(Entry(FILE, top.get("settings", dict), "settings"))
    fallback = top.get("fallback", str, None)
    if fallback is not None:
        known(top, "fix", fallback, fixes, "fallback")
    for index, lead in enumerate(top.get("leads", list)):
        entry = Entry(FILE, lead, f"leads #{index + 1}").only("fix", "when", "second")
        known(entry, "fix", entry.get("fix", str), fixes, "fix")
        entry.get("second", bool, False)
        _condition(entry, lead.get("when"), "when", found)
    plan_ids: set[str] = set()
    for index, plan in enumerate(top.get("plans", list)):
        label = f"plan '{plan.get('id')}'" if isinstance(plan, dict) else f"plans #{index + 1}"
        entry = Entry(FILE, plan, label).only("id", "when", "fixes")
        ident = entry.get("id", str)
        if ident in plan_ids:
            entry.fail("duplicate id")
        plan_ids.add(ident)
        for fix in entry.get("fixes", list):
            known(entry, "fix", fix, fixes, "fixes")
        _condition(entry, plan.get("when"), "when", found)
    _reasons(reasons, found)
    for fix_id, spec in fixes.items():
        _fix(Entry(FILE, spec, f"fix '{fix_id}'"), found)


def _settings(entry: Entry) -> None:
    entry.only(*SETTINGS)
    for key, kind in SETTINGS.items():
        entry.get(key, (int, float) if kind is float else kind)
    alloc = Entry(FILE, entry.data["alloc_conf"], "settings.alloc_conf")
    alloc.only("engines", "env_var", "expandable_segments", "custom_allocator_markers")
    alloc.strings("engines", required=True)
    alloc.get("env_var", str)
    alloc.get("expandable_segments", str)
    alloc.strings("custom_allocator_markers", required=True)


def _reasons(reasons: dict[str, Any], found: Names) -> None:
    entry = Entry(FILE, reasons, "reasons")
    allowed: dict[str, set[str]] = {rid: set(v) for rid, v in found.engine_reasons.items()}
    for declared in found.functions.values():
        for rid in declared.reasons:
            allowed.setdefault(rid, set()).update(declared.vars)
    for rid in allowed:
        if rid not in reasons:
            users = [n for n, d in found.functions.items() if rid in d.reasons] or ["the engine"]
            entry.fail(f"'{rid}' is missing (used by {', '.join(sorted(users))})")
    for rid, value in reasons.items():
        if rid not in allowed:
            entry.fail(f"'{rid}' is used by no value function nor the engine")
        bilingual(Entry(FILE, value, f"reasons '{rid}'"), value, rid, allowed[rid])


def _fix(entry: Entry, found: Names) -> None:
    entry.only(*FIX_KEYS, "auto_patch")
    known(entry, "guide section", entry.get("section", str), found.sections, "section")
    entry.get("auto_patch", bool, True)
    _condition(entry, entry.data.get("when"), "when", found)
    variables = set(found.text_vars)
    for index, step in enumerate(entry.get("patch", list, [])):
        variables |= _step(entry, step, index, found)
    texts(entry, "why", variables)
    texts(entry, "already", (), required=False)
    texts(entry, "code_change", (), required=False)
    for index, guard in enumerate(entry.get("unless", list, [])):
        where = f"unless #{index + 1}"
        sub = Entry(FILE, guard, f"{entry.label} {where}").only("when", "why")
        if "when" not in guard:
            sub.fail("missing 'when'")
        _condition(sub, guard["when"], "when", found)
        texts(sub, "why", found.text_vars)
    for index, note in enumerate(entry.get("notes", list, [])):
        sub = Entry(FILE, note, f"{entry.label} notes #{index + 1}").only(
            "en", "zh", "when", "when_vars"
        )
        for name in sub.strings("when_vars"):
            known(sub, "text variable", name, variables, "when_vars")
        _condition(sub, note.get("when"), "when", found)
        bilingual(sub, {k: v for k, v in note.items() if k in ("en", "zh")}, "text", variables)


def _step(entry: Entry, step: Any, index: int, found: Names) -> set[str]:
    sub = Entry(FILE, step, f"{entry.label} patch #{index + 1}").only(
        "key", "value", "fn", "env", "vars", "ask"
    )
    keys = set(step)
    shapes = [{"key", "value"}, {"key", "fn"}, {"fn"}, {"env", "fn"}, {"env", "value"}, {"vars"}]
    if keys - {"ask"} not in shapes:
        sub.fail(f"a step is one of {', '.join('+'.join(sorted(s)) for s in shapes)}")
    name = step.get("fn") or step.get("vars")
    if name is None:
        return set()
    known(sub, "value function", name, found.functions, "fn" if "fn" in step else "vars")
    return set(found.functions[name].vars)


def _condition(entry: Entry, condition: Any, where: str, found: Names) -> None:
    if condition is None:
        return
    if isinstance(condition, list):
        for item in condition:
            _condition(entry, item, where, found)
        return
    if not isinstance(condition, dict):
        entry.fail(f"'{where}': a condition is a mapping or a list, not {condition!r}")
    for path, test in condition.items():
        if path in ("all", "any"):
            if not isinstance(test, list):
                entry.fail(f"'{where}': '{path}' takes a list of conditions")
            _condition(entry, test, where, found)
        elif path == "not":
            _condition(entry, test, where, found)
        else:
            _path(entry, str(path), test, where, found)


def _path(entry: Entry, path: str, test: Any, where: str, found: Names) -> None:
    head, _, rest = path.partition(".")
    if head in PLAIN_PATHS and not rest:
        choices = {"phase": PHASES, "kind": KINDS, "stage": found.stages}.get(head)
        for value in _values(entry, test, where):
            if choices is not None and value is not None and value not in choices:
                entry.fail(f"'{where}': {head} '{value}' is not one of {', '.join(choices)}")
        return
    if head not in NAMED_PATHS or not rest:
        entry.fail(f"'{where}': unknown condition path '{path}'")
    tables = {
        "facts": ("fact (no rule file produces it)", found.facts),
        "metrics": ("metric (no figure produces it)", found.metrics),
        "inference": ("inference", found.inferences),
        "answer": ("question", found.questions),
        "given": ("question", found.questions),
        "derived": ("derived value", found.derived),
    }
    if head in tables:
        what, table = tables[head]
        if rest not in table:
            entry.fail(f"'{where}' uses unknown {what} '{path}'")
    _values(entry, test, where)


def _values(entry: Entry, test: Any, where: str) -> list[Any]:
    """The values a test compares with; unknown operators fail."""
    if isinstance(test, list):
        return list(test)
    if not isinstance(test, dict):
        return [test]
    out: list[Any] = []
    for op, arg in test.items():
        if op not in OPERATORS:
            entry.fail(f"'{where}': unknown operator '{op}' (known: {', '.join(OPERATORS)})")
        if op in ("eq", "ne"):
            out.append(arg)
        elif op == "in":
            out += list(arg) if isinstance(arg, list) else [arg]
    return out
