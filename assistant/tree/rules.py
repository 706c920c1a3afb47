"""knowledge/tree.yaml, loaded once into frozen dataclasses: the one validator of that file.

The loader checks every shape (unknown keys, wrong types) and every name the file uses
(fixes, facts, metrics, inferences, questions, derived values, value functions, reasons,
guide sections, stages, text placeholders) and fails with file, entry and field, the way
``assistant/logs/rules.py`` loads the signatures. Conditions are parsed here into the
typed predicates of ``conditions.py``: a path is resolved to the function that reads its
value once, at load; nothing is looked up by name while the tree is walked.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from types import MappingProxyType
from typing import Any

import assistant.knowledge_schema.names as names
from assistant.errors import KnowledgeError
from assistant.knowledge import load_yaml as load_yaml  # re-exported: tests swap it here
from assistant.knowledge_schema.shapes import bilingual, known, texts
from assistant.logs.schema import Entry
from assistant.models import KINDS, PHASES
from assistant.tree.conditions import (
    ALWAYS,
    Check,
    Compare,
    Condition,
    Contains,
    Equals,
    Getter,
    Negated,
    Not,
    OneOf,
    Present,
    Term,
    Test,
    all_of,
    any_of,
)
from assistant.tree.context import Context
from assistant.tree.derived import DERIVED, TEXT_VARS
from assistant.tree.functions import VALUE_FUNCTIONS
from assistant.tree.settings import Settings, parse_settings
from assistant.tree.steps import Step

FILE = "tree.yaml"
OPERATORS = ("present", "eq", "ne", "in", "contains", "contains_any", "gt", "gte", "lt", "lte")
PLAIN_PATHS = ("phase", "kind", "oom", "stage")
NAMED_PATHS = ("given", "facts", "metrics", "inference", "config", "source", "answer", "derived")
FIX_KEYS = (
    "section",
    "priority",
    "when",
    "unless",
    "patch",
    "why",
    "notes",
    "already",
    "code_change",
    "match",
)
EXAMPLE_KEYS = ("phase", "kind", "stage", "facts", "metrics", "config", "answers")
STEP_SHAPES = (
    {"key", "value"},
    {"key", "fn"},
    {"fn"},
    {"env", "fn"},
    {"env", "value"},
    {"vars"},
)
# the reasons the engine itself gives (value functions declare theirs), with their
# text variables: the loader checks both against tree.yaml's ``reasons``
ENGINE_REASONS = {
    "not-first-no-patch": ("fix", "first"),
    "same-change-as": ("first",),
    "check-your-value": ("key", "default", "usual", "lower"),
    "check-your-value-unset": ("key", "default", "usual", "lower"),
    "breaks-constraint": ("warning",),
}


@dataclass(frozen=True)
class Texts:
    en: str
    zh: str

    def pick(self, lang: str) -> str:
        return (self.zh if lang == "zh" else self.en) or self.en


@dataclass(frozen=True)
class Guard:
    when: Condition
    why: Texts


@dataclass(frozen=True)
class Note:
    when: Condition
    when_vars: tuple[str, ...]  # text variables a value function must have given
    text: Texts


@dataclass(frozen=True)
class Example:
    """A diagnosis that selects the fix (``match:``): what the log shows, the config and
    the answers given; tests/test_tree_fix_examples.py runs each through ``decide``."""

    phase: str
    kind: str
    stage: str | None
    facts: Mapping[str, Any]
    metrics: Mapping[str, Any]
    config: Mapping[str, Any] | None
    answers: Mapping[str, str]


@dataclass(frozen=True)
class Fix:
    id: str
    section: str
    when: Condition
    unless: tuple[Guard, ...]  # those the log and config decide first
    patch: tuple[Step, ...]
    why: Texts
    notes: tuple[Note, ...]
    already: Texts | None
    code_change: Texts | None
    auto_patch: bool  # False: recommended, never the patch written
    priority: Mapping[str, int]  # phase -> place among that phase's fixes (lower first)
    match: tuple[Example, ...]  # diagnoses that select it

    @property
    def changes_config(self) -> bool:
        """Some step changes a key (not only text variables)."""
        return any(not step.vars_only for step in self.patch)


@dataclass(frozen=True)
class Lead:
    fix: str
    when: Condition
    second: bool  # offered right after the plan's first fix


@dataclass(frozen=True)
class Plan:
    id: str
    when: Condition
    fixes: tuple[str, ...]  # listed (``fixes``) or derived (``fixes_of``)
    fixes_of: str | None  # the phase whose fixes, by priority, the plan offers


@dataclass(frozen=True)
class Tree:
    settings: Settings
    fallback: str | None
    leads: tuple[Lead, ...]
    plans: tuple[Plan, ...]
    reasons: Mapping[str, Texts]
    fixes: Mapping[str, Fix]


@cache
def load_tree() -> Tree:
    """tree.yaml as loaded and checked, once per process."""
    return parse_tree(load_yaml(FILE))


class Names:
    """Every name a condition or text of tree.yaml may use, gathered once per load."""

    def __init__(self) -> None:
        self.facts = names.facts()
        self.metrics = names.metrics()
        self.inferences = names.inferences()
        self.questions = names.questions()
        self.sections = names.sections()
        self.stages = names.stages()


def parse_tree(data: Any) -> Tree:
    """Check tree.yaml and build it; KnowledgeError names file, entry and field."""
    top = Entry(FILE, data, "(top level)").only(
        "settings", "fallback", "leads", "plans", "reasons", "fixes"
    )
    found = Names()
    fix_data = top.get("fixes", dict)
    settings = parse_settings(top.get("settings", dict))
    for fix_id in settings.fit_escalation:
        known(Entry(FILE, data["settings"], "settings"), "fix", fix_id, fix_data, "fit_escalation")
    fallback = top.get("fallback", str, None)
    if fallback is not None:
        known(top, "fix", fallback, fix_data, "fallback")
    leads: list[Lead] = []
    for index, lead in enumerate(top.get("leads", list)):
        entry = Entry(FILE, lead, f"leads #{index + 1}").only("fix", "when", "second")
        fix = entry.get("fix", str)
        known(entry, "fix", fix, fix_data, "fix")
        second = entry.get("second", bool, False)
        leads.append(Lead(fix, _condition(entry, lead.get("when"), "when", found), second))
    reasons = _reasons(top.get("reasons", dict))
    fixes = {fix_id: _fix(fix_id, spec, found) for fix_id, spec in fix_data.items()}
    by_phase = _phase_order(fixes)
    plans: list[Plan] = []
    for index, plan in enumerate(top.get("plans", list)):
        label = f"plan '{plan.get('id')}'" if isinstance(plan, dict) else f"plans #{index + 1}"
        entry = Entry(FILE, plan, label).only("id", "when", "fixes", "fixes_of", "without")
        ident = entry.get("id", str)
        if any(p.id == ident for p in plans):
            entry.fail("duplicate id")
        when = _condition(entry, plan.get("when"), "when", found)
        plans.append(Plan(ident, when, *_members(entry, fix_data, by_phase)))
    return Tree(
        settings=settings,
        fallback=fallback,
        leads=tuple(leads),
        plans=tuple(plans),
        reasons=MappingProxyType(reasons),
        fixes=MappingProxyType(fixes),
    )


def _phase_order(fixes: Mapping[str, Fix]) -> dict[str, tuple[str, ...]]:
    """Per phase, the fixes that name it under ``priority``, lowest number first."""
    order: dict[str, list[Fix]] = {}
    for fix in fixes.values():
        for phase, rank in fix.priority.items():
            same_rank = [f.id for f in order.get(phase, []) if f.priority[phase] == rank]
            if same_rank:  # the order would be the file's, by accident
                where = f"fix '{fix.id}'"
                text = f"'priority': {phase} {rank} is also {same_rank[0]}'s; give each its own"
                raise KnowledgeError(f"knowledge/{FILE}: entry {where}: {text}")
            order.setdefault(phase, []).append(fix)
    return {
        phase: tuple(f.id for f in sorted(members, key=lambda f: f.priority[phase]))
        for phase, members in order.items()
    }


def _members(
    entry: Entry, fix_data: Mapping[str, Any], by_phase: Mapping[str, tuple[str, ...]]
) -> tuple[tuple[str, ...], str | None]:
    """A plan's fixes: its ``fixes`` list, or the fixes of phase ``fixes_of`` by priority
    (less those of ``without``); the plan's own list only where its order is the
    evidence's, not the guide's."""
    if ("fixes" in entry.data) == ("fixes_of" in entry.data):
        entry.fail("a plan has either 'fixes' (a list) or 'fixes_of' (a phase)")
    if "fixes" in entry.data:
        if "without" in entry.data:
            entry.fail("'without' only goes with 'fixes_of'")
        members = entry.get("fixes", list)
        for fix in members:
            known(entry, "fix", fix, fix_data, "fixes")
        return tuple(members), None
    phase = entry.get("fixes_of", str)
    known(entry, "phase", phase, PHASES, "fixes_of")
    derived = by_phase.get(phase, ())
    if not derived:
        entry.fail(f"'fixes_of': no fix gives a priority for phase '{phase}'")
    left_out = entry.strings("without")
    for fix in left_out:
        known(entry, f"fix of phase {phase}", fix, derived, "without")
    return tuple(f for f in derived if f not in left_out), phase


def _priority(entry: Entry) -> dict[str, int]:
    raw = entry.get("priority", dict, {})
    for phase, rank in raw.items():
        known(entry, "phase", phase, PHASES, "priority")
        if isinstance(rank, bool) or not isinstance(rank, int):
            entry.fail(f"'priority': {phase} takes a whole number, not {rank!r}")
    return {str(phase): int(rank) for phase, rank in raw.items()}


def _texts(value: Any) -> Texts:
    return Texts(str(value["en"]), str(value["zh"]))


def _reasons(reasons: dict[str, Any]) -> dict[str, Texts]:
    entry = Entry(FILE, reasons, "reasons")
    allowed: dict[str, set[str]] = {rid: set(v) for rid, v in ENGINE_REASONS.items()}
    for function in VALUE_FUNCTIONS.values():
        for rid in function.reasons:
            allowed.setdefault(rid, set()).update(function.vars)
    for rid in allowed:
        if rid not in reasons:
            users = [n for n, f in VALUE_FUNCTIONS.items() if rid in f.reasons] or ["the engine"]
            entry.fail(f"'{rid}' is missing (used by {', '.join(sorted(users))})")
    for rid, value in reasons.items():
        if rid not in allowed:
            entry.fail(f"'{rid}' is used by no value function nor the engine")
        bilingual(Entry(FILE, value, f"reasons '{rid}'"), value, rid, allowed[rid])
    return {rid: _texts(value) for rid, value in reasons.items()}


def _fix(fix_id: str, spec: Any, found: Names) -> Fix:
    entry = Entry(FILE, spec, f"fix '{fix_id}'").only(*FIX_KEYS, "auto_patch")
    section = entry.get("section", str)
    known(entry, "guide section", section, found.sections, "section")
    auto_patch = entry.get("auto_patch", bool, True)
    when = _condition(entry, entry.data.get("when"), "when", found)
    variables = set(TEXT_VARS)
    steps: list[Step] = []
    for index, step in enumerate(entry.get("patch", list, [])):
        parsed = _step(entry, step, index)
        steps.append(parsed)
        if parsed.fn:
            variables |= VALUE_FUNCTIONS[parsed.fn].vars
    texts(entry, "why", variables)
    texts(entry, "already", (), required=False)
    texts(entry, "code_change", (), required=False)
    guards: list[Guard] = []
    for index, guard in enumerate(entry.get("unless", list, [])):
        sub = Entry(FILE, guard, f"{entry.label} unless #{index + 1}").only("when", "why")
        if "when" not in guard:
            sub.fail("missing 'when'")
        guard_when = _condition(sub, guard["when"], "when", found)
        texts(sub, "why", TEXT_VARS)
        guards.append(Guard(guard_when, _texts(guard["why"])))
    notes: list[Note] = []
    for index, note in enumerate(entry.get("notes", list, [])):
        sub = Entry(FILE, note, f"{entry.label} notes #{index + 1}").only(
            "en", "zh", "when", "when_vars"
        )
        when_vars = sub.strings("when_vars")
        for name in when_vars:
            known(sub, "text variable", name, variables, "when_vars")
        note_when = _condition(sub, note.get("when"), "when", found)
        bilingual(sub, {k: v for k, v in note.items() if k in ("en", "zh")}, "text", variables)
        notes.append(Note(note_when, when_vars, _texts(note)))
    return Fix(
        id=fix_id,
        section=section,
        when=when,
        # guards the log and config decide come first: a guard that needs an answer is
        # only consulted when none of them holds, whatever order tree.yaml lists them in
        unless=tuple(sorted(guards, key=lambda g: g.when.asks)),
        patch=tuple(steps),
        why=_texts(spec["why"]),
        notes=tuple(notes),
        already=_texts(spec["already"]) if spec.get("already") else None,
        code_change=_texts(spec["code_change"]) if spec.get("code_change") else None,
        auto_patch=auto_patch,
        priority=MappingProxyType(_priority(entry)),
        match=tuple(
            _example(entry, example, index, found)
            for index, example in enumerate(entry.get("match", list, []))
        ),
    )


def _example(entry: Entry, data: Any, index: int, found: Names) -> Example:
    sub = Entry(FILE, data, f"{entry.label} match #{index + 1}").only(*EXAMPLE_KEYS)
    phase = sub.get("phase", str)
    kind = sub.get("kind", str, "cuda_oom")
    stage = sub.get("stage", str, None)
    known(sub, "phase", phase, PHASES, "phase")
    known(sub, "kind", kind, KINDS, "kind")
    if stage is not None:
        known(sub, "stage", stage, found.stages, "stage")
    facts = sub.get("facts", dict, {})
    metrics = sub.get("metrics", dict, {})
    answers = sub.get("answers", dict, {})
    for name in facts:
        known(sub, "fact", name, found.facts, "facts")
    for name in metrics:
        known(sub, "metric", name, found.metrics, "metrics")
    for name in answers:
        known(sub, "question", name, found.questions, "answers")
    config = sub.get("config", dict, None)
    return Example(
        phase=phase,
        kind=kind,
        stage=stage,
        facts=MappingProxyType(dict(facts)),
        metrics=MappingProxyType(dict(metrics)),
        config=MappingProxyType(dict(config)) if config is not None else None,
        answers=MappingProxyType({str(k): str(v) for k, v in answers.items()}),
    )


def _step(entry: Entry, step: Any, index: int) -> Step:
    sub = Entry(FILE, step, f"{entry.label} patch #{index + 1}").only(
        "key", "value", "fn", "env", "vars", "ask"
    )
    if set(step) - {"ask"} not in STEP_SHAPES:
        shapes = ", ".join("+".join(sorted(s)) for s in STEP_SHAPES)
        sub.fail(f"a step is one of {shapes}")
    name = step.get("fn") or step.get("vars")
    if name is not None:
        known(sub, "value function", name, VALUE_FUNCTIONS, "fn" if "fn" in step else "vars")
    return Step(
        key=str(sub.get("key", str, "")),
        value=step.get("value"),
        has_value="value" in step,
        fn=str(name or ""),
        env=str(sub.get("env", str, "")),
        vars_only="vars" in step,
        ask=bool(sub.get("ask", bool, False)),
    )


# --- conditions ---------------------------------------------------------------------------


def _condition(entry: Entry, condition: Any, where: str, found: Names) -> Condition:
    if condition is None:
        return ALWAYS
    if isinstance(condition, list):
        return any_of([_condition(entry, item, where, found) for item in condition])
    if not isinstance(condition, dict):
        entry.fail(f"'{where}': a condition is a mapping or a list, not {condition!r}")
    terms: list[Condition] = []
    for path, test in condition.items():
        if path in ("all", "any"):
            if not isinstance(test, list):
                entry.fail(f"'{where}': '{path}' takes a list of conditions")
            items = [_condition(entry, item, where, found) for item in test]
            terms.append(all_of(items) if path == "all" else any_of(items))
        elif path == "not":
            inner = _condition(entry, test, where, found)
            terms.append(Not(inner, inner.asks))
        else:
            terms.append(_term(entry, str(path), test, where, found))
    return all_of(terms)


def _term(entry: Entry, path: str, test: Any, where: str, found: Names) -> Term:
    head, _, rest = path.partition(".")
    if head in PLAIN_PATHS and not rest:
        choices = {"phase": PHASES, "kind": KINDS, "stage": found.stages}.get(head)
        for value in _compared(test):
            if choices is not None and value is not None and value not in choices:
                entry.fail(f"'{where}': {head} '{value}' is not one of {', '.join(choices)}")
        return Term(path, _report_field(head), _test(entry, test, where), False)
    if head not in NAMED_PATHS or not rest:
        entry.fail(f"'{where}': unknown condition path '{path}'")
    tables = {
        "facts": ("fact (no rule file produces it)", found.facts),
        "metrics": ("metric (no figure produces it)", found.metrics),
        "inference": ("inference", found.inferences),
        "answer": ("question", found.questions),
        "given": ("question", found.questions),
        "derived": ("derived value", DERIVED),
    }
    if head in tables:
        what, table = tables[head]
        if rest not in table:
            entry.fail(f"'{where}' uses unknown {what} '{path}'")
    return Term(path, _getter(head, rest), _test(entry, test, where), head == "answer")


def _report_field(name: str) -> Getter:
    def get(ctx: Context) -> Any:
        return getattr(ctx.report, name)

    return get


def _getter(head: str, name: str) -> Getter:
    """The function that reads ``head.name`` from a Context, chosen once here."""
    if head == "derived":
        return DERIVED[name]
    getters: dict[str, Getter] = {
        "given": lambda ctx: ctx.given(name),
        "facts": lambda ctx: ctx.report.facts.get(name),
        "metrics": lambda ctx: ctx.report.metrics.get(name),
        "inference": lambda ctx: ctx.inference(name),
        "config": lambda ctx: ctx.config.get(name),
        "source": lambda ctx: ctx.config.source(name),
        "answer": lambda ctx: ctx.answer(name),
    }
    return getters[head]


def _compared(test: Any) -> list[Any]:
    """The values a test compares with (checked against the phase, kind and stage ids)."""
    if isinstance(test, list):
        return list(test)
    if not isinstance(test, dict):
        return [test]
    out: list[Any] = []
    for op, arg in test.items():
        if op in ("eq", "ne"):
            out.append(arg)
        elif op == "in":
            out += list(arg) if isinstance(arg, list) else [arg]
    return out


def _test(entry: Entry, test: Any, where: str) -> Test:
    if isinstance(test, list):
        return Test((OneOf(tuple(test)),))
    if not isinstance(test, dict):
        return Test((Equals(test),))
    checks: list[Check] = []
    for op, arg in test.items():
        if op not in OPERATORS:
            entry.fail(f"'{where}': unknown operator '{op}' (known: {', '.join(OPERATORS)})")
        if op == "present":
            checks.append(Present(bool(arg)))
        elif op == "eq":
            checks.append(Equals(arg))
        elif op == "ne":
            checks.append(Negated(Equals(arg)))
        elif op == "in":
            checks.append(OneOf(tuple(arg) if isinstance(arg, list) else (arg,)))
        elif op in ("contains", "contains_any"):
            checks.append(Contains(tuple(arg) if isinstance(arg, list) else (arg,)))
        else:
            if isinstance(arg, bool) or not isinstance(arg, int | float):
                entry.fail(f"'{where}': '{op}' takes a number, not {arg!r}")
            checks.append(Compare(op, float(arg)))
    return Test(tuple(checks))
