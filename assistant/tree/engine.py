"""Walk ``knowledge/tree.yaml`` for one log report and config: the generic engine.

Order of work for each candidate fix: precondition (``when``), guards
(``unless``), patch steps (value functions), then two automatic checks: a patch
that changes nothing is "already in place", and a patch that would break a
constraint of ``knowledge/constraints.yaml`` is refused. Both land in ``skipped``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from functools import cache
from typing import Any

from assistant.config import check_config
from assistant.config.loader import ExperimentConfig
from assistant.errors import KnowledgeError
from assistant.i18n import message
from assistant.knowledge import load_yaml as load_yaml  # re-exported: tests swap it here
from assistant.models import Answers, ConfigWarning, Decision, LogReport, Recommendation, Skipped
from assistant.tree.conditions import asks, holds, same
from assistant.tree.context import Context
from assistant.tree.questions import QuestionBook
from assistant.tree.relevance import mark_relevance
from assistant.tree.values import (
    DECLARED,
    VALUE_FUNCTIONS,
    NotApplicable,
    StepResult,
    env_patch,
)

# the reasons the engine itself gives (value functions declare theirs), with their
# text variables: tree.yaml's validator checks both
ENGINE_REASONS = {
    "not-first-no-patch": ("fix", "first"),
    "same-change-as": ("first",),
    "check-your-value": ("key", "default", "usual", "lower"),
    "check-your-value-unset": ("key", "default", "usual", "lower"),
    "breaks-constraint": ("warning",),
}
GUIDE_NUMBER = re.compile(r"^\s*\d+\.\s*")  # "1. Optimize ..." -> "Optimize ..."


@cache
def tree() -> dict[str, Any]:
    from assistant.knowledge_schema import ensure_valid

    ensure_valid()  # every knowledge file and reference, once per change of knowledge/
    data = load_yaml("tree.yaml") or {}
    fixes = data.get("fixes") or {}
    for plan in data.get("plans") or []:
        for fix_id in plan.get("fixes") or []:
            if fix_id not in fixes:
                raise KnowledgeError(f"tree.yaml: plan {plan.get('id')} names unknown fix {fix_id}")
    if data.get("fallback") and data["fallback"] not in fixes:
        raise KnowledgeError("tree.yaml: the fallback names an unknown fix")
    for fix_id, spec in fixes.items():
        for step in spec.get("patch") or []:
            name = step.get("fn") or step.get("vars")
            if name is not None and name not in VALUE_FUNCTIONS:
                raise KnowledgeError(f"tree.yaml: fix {fix_id} names unknown function {name}")
    return data


def decide(
    report: LogReport,
    config: ExperimentConfig | None,
    answers: Answers,
    lang: str,
    use_defaults: bool,
    focus: int = 0,
) -> Decision:
    """Questions, ranked fixes, skipped fixes, config warnings and the patch to try first.

    ``focus`` is the index of the fix the user is looking at (0: fix #1). Each
    question not answered by the user, the log or the config is marked with
    whether its answer can change that fix or the ones before it (``matters``):
    only those are asked; the others wait until the user moves on, or take their
    default.
    """
    decision = _decide(report, config, answers, lang, use_defaults)
    decision.focus = max(0, min(focus, len(decision.recommendations) - 1))
    _choose_patch(decision, tree(), borrow=config is not None and report.phase != "unknown")

    def rerun(changed: Answers) -> Decision:
        return _decide(report, config, changed, lang, use_defaults)

    mark_relevance(decision, answers, rerun)
    return decision


def _decide(
    report: LogReport,
    config: ExperimentConfig | None,
    answers: Answers,
    lang: str,
    use_defaults: bool,
) -> Decision:
    lang = lang if lang in ("zh", "en") else "en"
    book = QuestionBook(report, config, answers, lang, use_defaults)
    data = tree()
    ctx = Context(report, config, book, lang, dict(data.get("settings") or {}))
    decision = Decision()
    known = _known_facts(ctx)
    baseline = check_config(config, lang=lang, known=known) if config is not None else []
    decision.warnings = baseline
    # the answers each step of the walk depended on: the leads and the plan chosen,
    # then each fix considered (its precondition, guards, value functions, notes)
    needs: list[list[str]] = []
    if report.oom:
        candidates, step_needs = _needing(ctx, candidate_fixes, ctx, data)
        needs.append(step_needs)
        for fix_id in candidates:
            outcome, step_needs = _needing(ctx, _evaluate, ctx, fix_id, data, baseline)
            needs.append(step_needs)
            if isinstance(outcome, Recommendation):
                decision.recommendations.append(outcome)
            elif isinstance(outcome, Skipped):
                decision.skipped.append(outcome)
        fallback = data.get("fallback")
        if not decision.recommendations and fallback and fallback not in candidates:
            outcome, step_needs = _needing(ctx, _evaluate, ctx, fallback, data, baseline)
            needs.append(step_needs)
            if isinstance(outcome, Recommendation):
                decision.recommendations.append(outcome)
        with ctx.peek():  # the same lead conditions again: nothing new is needed
            _place_second(decision, second_leads(ctx, data))
        _drop_repeated_changes(decision, data, lang)
        if use_defaults and ctx.has_config:
            _patchable_first(ctx, decision, data)
    # the explicit pass: the questions are those the chosen plan and fixes needed
    decision.questions = book.questions(qid for step in needs for qid in step)
    return decision


def _choose_patch(decision: Decision, data: Mapping[str, Any], *, borrow: bool) -> None:
    """THE patch (and its overrides, what --patch-out writes) is the change of the fix in
    view (``focus``). When that fix changes no key, only a config given for a known
    phase lends the patch to the next fix that has one (``patch_from`` names it, and
    the output says whose it is); without a config, or when the phase is a guess, a
    later fix's change is no patch to apply."""
    recs = decision.recommendations
    later = range(decision.focus, len(recs)) if borrow else range(decision.focus, len(recs))[:1]
    index = next((i for i in later if _auto(recs[i], data)), None)
    if index is None:
        return
    chosen = recs[index]
    decision.patch_from = index
    decision.flat_patch = dict(chosen.patch)
    decision.cli_overrides = [
        f"{key}={override_text(value)}" for key, value in chosen.patch.items()
    ]


def _needing(ctx: Context, step: Callable[..., Any], *args: Any) -> tuple[Any, list[str]]:
    """Run one step of the walk; also return the answers it consulted, in order."""
    mark = len(ctx.reads)
    result = step(*args)
    return result, ctx.reads[mark:]


def candidate_fixes(ctx: Context, data: Mapping[str, Any]) -> list[str]:
    """Lead fixes the evidence calls for, then the first matching plan's fixes.

    A lead marked ``second`` is offered right after the plan's first fix (see
    ``_place_second``): the evidence calls for it, but not strongly enough to put
    it before the guide's order.
    """
    chosen: list[str] = [
        lead["fix"] for lead in data.get("leads") or [] if holds(lead.get("when"), ctx.lookup)
    ]
    for plan in data.get("plans") or []:
        if holds(plan.get("when"), ctx.lookup):
            chosen += plan.get("fixes") or []
            break
    return list(dict.fromkeys(chosen))


def second_leads(ctx: Context, data: Mapping[str, Any]) -> set[str]:
    firsts = {
        lead["fix"]
        for lead in data.get("leads") or []
        if not lead.get("second") and holds(lead.get("when"), ctx.lookup)
    }
    return {
        lead["fix"]
        for lead in data.get("leads") or []
        if lead.get("second") and lead["fix"] not in firsts and holds(lead.get("when"), ctx.lookup)
    }


def _place_second(decision: Decision, seconds: set[str]) -> None:
    recs = decision.recommendations
    moved = [r for r in recs if r.fix in seconds]
    rest = [r for r in recs if r.fix not in seconds]
    if moved and rest:
        decision.recommendations = rest[:1] + moved + rest[1:]


def _drop_repeated_changes(decision: Decision, data: Mapping[str, Any], lang: str) -> None:
    """A fix whose change an earlier fix already makes (a lead and a plan fix that both
    lower gpu_memory_utilization) is listed once; the later one goes to ``skipped``."""
    kept: list[Recommendation] = []
    for rec in decision.recommendations:
        earlier = next(
            (k for k in kept if rec.patch and rec.patch == k.patch and rec.env == k.env), None
        )
        if earlier is None:
            kept.append(rec)
            continue
        text = _format(reason(data, "same-change-as", lang), {"first": earlier.section})
        decision.skipped.append(Skipped(rec.section, text, rec.fix))
    decision.recommendations = kept


def _auto(rec: Recommendation, data: Mapping[str, Any]) -> bool:
    """A fix whose patch may be applied without a person choosing it (never SGD)."""
    return bool(rec.patch) and data["fixes"].get(rec.fix, {}).get("auto_patch", True) is not False


def _patchable_first(ctx: Context, decision: Decision, data: Mapping[str, Any]) -> None:
    """Without a person to ask, the first fix must be one whose patch can be computed;
    the ones passed over stay in the list and ``skipped`` says why they are not first."""
    recs = decision.recommendations
    index = next((i for i, r in enumerate(recs) if _auto(r, data)), None)
    if not index:
        return
    first = recs[index]

    def uncomputed(rec: Recommendation) -> bool:
        """A config fix whose value needed an answer (not advice or a code change)."""
        steps = data["fixes"].get(rec.fix, {}).get("patch") or []
        changes = [s for s in steps if "vars" not in s]
        return bool(changes) and not rec.patch and not rec.env and not rec.code_change

    passed_over = [r for r in recs[:index] if uncomputed(r)]
    if not passed_over:
        return
    for passed in passed_over:
        template = reason(data, "not-first-no-patch", ctx.lang)
        text = _format(template, {"fix": passed.section, "first": first.section})
        decision.skipped.append(Skipped(passed.section, text, passed.fix))
    kept = [r for r in recs[:index] if not uncomputed(r)]
    decision.recommendations = kept + [first] + passed_over + recs[index + 1 :]


def _known_facts(ctx: Context) -> dict[str, Any]:
    """Facts for config checks that need no question (heads from a flag or the log),
    what the user answered (a check never overrides it), and the micro-batch floor
    the tree computes, so that warnings and fixes use the same floor."""
    heads = ctx.book.given.get("attention_heads", (None,))[0] or ctx.report.facts.get(
        "attention_heads"
    )
    known: dict[str, Any] = {"attention_heads": heads} if isinstance(heads, int) else {}
    known["log_phase"] = ctx.report.phase  # a config that runs no engine of the log's phase
    if "shared_fileroot" in ctx.book.given:
        known["shared_fileroot"] = ctx.book.given["shared_fileroot"][0]
    if "areal_memory" in ctx.book.given:  # which AReaL memory behaviour the estimate assumes
        known["areal_memory"] = ctx.book.given["areal_memory"][0]
    total = ctx.report.metrics.get("total_capacity_bytes")
    if isinstance(total, int | float) and total > 0:  # the estimate on the log's GPU
        known["gpu_bytes"] = int(total)
    if ctx.has_config:
        from assistant.tree.values import micro_batch_floor_value

        with ctx.peek():  # the floor must not add questions by itself
            floor, terms = micro_batch_floor_value(ctx)
        if floor is not None:
            known["micro_batch_floor"] = (floor, terms)
    return known


def config_known(config: ExperimentConfig, lang: str = "en") -> dict[str, Any]:
    """What ``check`` knows without a log: the same floor ``diagnose`` uses by default."""
    report = LogReport(False, "none", "none", 1.0)
    book = QuestionBook(report, config, {}, lang, True)
    ctx = Context(report, config, book, lang, dict(tree().get("settings") or {}))
    return _known_facts(ctx)


def _evaluate(
    ctx: Context, fix_id: str, data: Mapping[str, Any], baseline: list[ConfigWarning]
) -> Recommendation | Skipped | None:
    spec = data["fixes"][fix_id]
    section = spec["section"]
    if not holds(spec.get("when"), ctx.lookup):
        return None
    # guards the log and config decide come first: a guard that needs an answer is
    # only consulted when none of them holds, whatever order tree.yaml lists them in
    for guard in sorted(spec.get("unless") or [], key=lambda g: asks(g.get("when"))):
        if holds(guard.get("when"), ctx.lookup):
            return Skipped(section, _pick(guard["why"], ctx.lang), fix_id)
    try:
        result = _run_steps(ctx, spec)
    except NotApplicable as exc:
        text = reason(data, exc.reason, ctx.lang)
        return Skipped(section, _format(text, exc.text_vars), fix_id)
    wanted = {ctx.config.write_key(key): value for key, value in result.patch.items()}
    patch = {key: value for key, value in wanted.items() if not same(ctx.config.get(key), value)}
    if wanted and not patch:
        return Skipped(section, _already_text(ctx, spec, wanted), fix_id)
    if patch and ctx.has_config:
        broken = _new_violations(ctx, patch, baseline)
        if broken:
            text = reason(data, "breaks-constraint", ctx.lang)
            return Skipped(section, _format(text, {"warning": broken[0].text}), fix_id)
    patch, checks = _split_usual(ctx, patch, data)
    why = _why(ctx, spec, result, patch)
    if checks:
        why = "\n".join([why, *checks])
    return Recommendation(
        section=section,
        title=GUIDE_NUMBER.sub("", section_title(section, ctx.lang)),
        why=why,
        patch=patch,
        fix=fix_id,
        env=result.env,
        code_change=_pick(spec["code_change"], ctx.lang) if spec.get("code_change") else None,
        checks=checks,
    )


def _split_usual(
    ctx: Context, patch: Mapping[str, Any], data: Mapping[str, Any]
) -> tuple[dict[str, Any], list[str]]:
    """Keep out of the patch a new value that is only news against AReaL's default.

    When the user's file does not set a key, its old value is AReaL's default, an
    assumption. If the new value is what most real configs already use
    (``settings.usual_values``), the change is likely a no-op for this user: say
    "check your value" instead of patching.
    """
    usual = ctx.settings.get("usual_values") or {}
    kept: dict[str, Any] = {}
    checks: list[str] = []
    for key, value in patch.items():
        if ctx.config.source(key) != "config" and key in usual and same(usual[key], value):
            text = (  # a config was given and leaves the key out, or no config at all
                reason(data, "check-your-value-unset", ctx.lang)
                if ctx.has_config
                else reason(data, "check-your-value", ctx.lang)
            )
            checks.append(
                _format(
                    text,
                    {
                        "key": key,
                        "default": override_text(ctx.config.get(key)),
                        "usual": override_text(usual[key]),
                        "lower": _one_step_below(ctx, usual[key]),
                    },
                )
            )
        else:
            kept[key] = value
    return kept, checks


def _one_step_below(ctx: Context, value: Any) -> str:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return override_text(round(value - ctx.settings["fraction_step"], 2))
    return "?"


def _run_steps(ctx: Context, spec: Mapping[str, Any]) -> StepResult:
    total = StepResult(vars=ctx.text_vars())
    for step in spec.get("patch") or []:
        name = step.get("fn") or step.get("vars")
        if name is not None:  # a function may check the changes so far (memory_fit_check)
            part = _call(name, ctx, {**step, "patch_so_far": dict(total.patch)})
        elif "env" in step:
            part = StepResult(env={step["env"]: str(step["value"])})
        else:
            part = StepResult({step["key"]: step["value"]})
        total.patch.update(part.patch)
        total.env.update(part.env)
        total.vars.update({k: v for k, v in part.vars.items() if v is not None})
    # an environment variable goes where AReaL starts the engine's workers
    total.patch.update(env_patch(ctx, total.env))
    return total


def _call(name: str, ctx: Context, step: Mapping[str, Any]) -> StepResult:
    """A value function, held to what it declared (its text variables and reasons):
    the tree.yaml validator checks the texts against those declarations."""
    declared = DECLARED[name]
    try:
        part = VALUE_FUNCTIONS[name](ctx, step)
    except NotApplicable as exc:
        if exc.reason not in declared.reasons:
            message = f"value function {name} raised undeclared reason {exc.reason}"
            raise KnowledgeError(message) from exc
        raise
    undeclared = sorted(set(part.vars) - declared.vars)
    if undeclared:
        raise KnowledgeError(f"value function {name} gives undeclared text vars {undeclared}")
    return part


def reason(data: Mapping[str, Any], reason_id: str, lang: str) -> str:
    """The text of a ``reasons`` entry of tree.yaml; a missing one names the file."""
    texts = data["reasons"].get(reason_id)
    if texts is None:
        raise KnowledgeError(f"knowledge/tree.yaml: entry reasons: '{reason_id}' is missing")
    return _pick(texts, lang)


def _new_violations(
    ctx: Context, patch: Mapping[str, Any], baseline: list[ConfigWarning]
) -> list[ConfigWarning]:
    before = {(w.id, w.text) for w in baseline}
    known = _known_facts(ctx)
    if "attention_heads" in ctx.reads:  # a fix of this walk needed the head count
        heads = ctx.book.value("attention_heads")
        if isinstance(heads, int) and not isinstance(heads, bool):
            known["attention_heads"] = heads
    after = check_config(ctx.config.with_patch(patch), lang=ctx.lang, known=known)
    before_ids = {w.id for w in baseline}
    return [w for w in after if w.id not in before_ids and (w.id, w.text) not in before]


def _already_text(ctx: Context, spec: Mapping[str, Any], patch: Mapping[str, Any]) -> str:
    if spec.get("already"):
        return _pick(spec["already"], ctx.lang)
    parts = ", ".join(f"{k} = {override_text(v)}" for k, v in patch.items())
    return message("tree.already_in_place", ctx.lang, parts=parts)


def _why(
    ctx: Context, spec: Mapping[str, Any], result: StepResult, patch: Mapping[str, Any]
) -> str:
    parts = [_format(_pick(spec["why"], ctx.lang), result.vars)]
    for note in spec.get("notes") or []:
        needed = note.get("when_vars") or []
        if all(result.vars.get(name) is not None for name in needed) and holds(
            note.get("when"), ctx.lookup
        ):
            parts.append(_format(_pick(note, ctx.lang), result.vars))
    for key, value in patch.items():
        old = ctx.config.get(key)
        old_text = message("tree.unset", ctx.lang) if old is None else override_text(old)
        if old is not None and ctx.config.source(key) != "config":
            old_text = message("tree.assumed", ctx.lang, value=old_text)
        new_text = override_text(value)
        parts.append(message("tree.change_line", ctx.lang, key=key, old=old_text, new=new_text))
    return "\n".join(parts)


def _pick(texts: Mapping[str, str], lang: str) -> str:
    return texts.get(lang) or texts["en"]


class _Blank(dict[str, str]):
    def __missing__(self, key: str) -> str:
        return "?"


def _format(template: str, values: Mapping[str, Any]) -> str:
    shown = {k: override_text(v) if isinstance(v, bool) else v for k, v in values.items()}
    return template.format_map(_Blank(shown))


def override_text(value: Any) -> str:
    """AReaL's ``key=value`` spelling of a value (OmegaConf/Hydra style)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    return str(value)


def section_title(section: str, lang: str) -> str:
    """The guide's heading for a section, from the search index; the id if unavailable."""
    try:
        from assistant.search import section_title as lookup

        return lookup(section, lang)
    except (ImportError, AttributeError, KeyError, LookupError):
        return section
