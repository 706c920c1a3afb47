"""Walk ``knowledge/tree.yaml`` for one log report and config: the generic engine.

Order of work for each candidate fix: precondition (``when``), guards
(``unless``), patch steps (value functions), then two automatic checks: a patch
that changes nothing is "already in place", and a patch that would break a
constraint of ``knowledge/constraints.yaml`` is refused. Both land in ``skipped``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from assistant.config import check_config
from assistant.config.loader import ExperimentConfig
from assistant.errors import KnowledgeError
from assistant.i18n import message
from assistant.knowledge_schema import ensure_valid
from assistant.models import Answers, ConfigWarning, Decision, LogReport, Recommendation, Skipped
from assistant.tree.conditions import same
from assistant.tree.context import Context
from assistant.tree.derived import micro_batch_floor_value, text_vars
from assistant.tree.functions import VALUE_FUNCTIONS
from assistant.tree.questions import QuestionBook
from assistant.tree.relevance import mark_relevance
from assistant.tree.rules import Fix, Tree, load_tree
from assistant.tree.steps import NotApplicable, Step, StepResult
from assistant.tree.values import env_patch

GUIDE_NUMBER = re.compile(r"^\s*\d+\.\s*")  # "1. Optimize ..." -> "Optimize ..."
T = TypeVar("T")


def tree() -> Tree:
    """The decision tree; every knowledge file is checked once per change of knowledge/."""
    ensure_valid()
    return load_tree()


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
    focus = max(0, min(focus, len(decision.recommendations) - 1))
    borrow = config is not None and report.phase != "unknown"
    decision = _choose_patch(replace(decision, focus=focus), tree(), borrow=borrow)

    def rerun(changed: Answers) -> Decision:
        return _decide(report, config, changed, lang, use_defaults)

    return replace(decision, questions=mark_relevance(decision, answers, rerun))


@dataclass
class _Draft:
    """The fixes of one walk while it runs; ``Decision`` is built from it once, at the end."""

    recommendations: list[Recommendation] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)


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
    ctx = Context(report, config, book, lang, data.settings, _OtherFixes(data))
    draft = _Draft()
    known = _known_facts(ctx)
    baseline = check_config(config, lang=lang, known=known) if config is not None else []
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
                draft.recommendations.append(outcome)
            elif isinstance(outcome, Skipped):
                draft.skipped.append(outcome)
        fallback = data.fallback
        if not draft.recommendations and fallback and fallback not in candidates:
            outcome, step_needs = _needing(ctx, _evaluate, ctx, fallback, data, baseline)
            needs.append(step_needs)
            if isinstance(outcome, Recommendation):
                draft.recommendations.append(outcome)
        with ctx.peek():  # the same lead conditions again: nothing new is needed
            _place_second(draft, second_leads(ctx, data))
        _drop_repeated_changes(draft, data, lang)
        if use_defaults and ctx.has_config:
            _patchable_first(ctx, draft, data)
    return Decision(
        # the explicit pass: the questions are those the chosen plan and fixes needed
        questions=book.questions(qid for step in needs for qid in step),
        recommendations=draft.recommendations,
        skipped=draft.skipped,
        warnings=baseline,
        answers_read=tuple(sorted(book.read)),
    )


def _choose_patch(decision: Decision, data: Tree, *, borrow: bool) -> Decision:
    """THE patch (and its overrides, what --patch-out writes) is the change of the fix in
    view (``focus``). When that fix changes no key, only a config given for a known
    phase lends the patch to the next fix that has one (``patch_from`` names it, and
    the output says whose it is); without a config, or when the phase is a guess, a
    later fix's change is no patch to apply."""
    recs = decision.recommendations
    later = range(decision.focus, len(recs)) if borrow else range(decision.focus, len(recs))[:1]
    index = next((i for i in later if _auto(recs[i], data)), None)
    if index is None:
        return decision
    chosen = recs[index]
    return replace(
        decision,
        patch_from=index,
        flat_patch=dict(chosen.patch),
        cli_overrides=[f"{key}={override_text(value)}" for key, value in chosen.patch.items()],
    )


def _needing(ctx: Context, step: Callable[..., T], *args: Any) -> tuple[T, list[str]]:
    """Run one step of the walk; also return the answers it consulted, in order."""
    mark = len(ctx.reads)
    result = step(*args)
    return result, ctx.reads[mark:]


def candidate_fixes(ctx: Context, data: Tree) -> list[str]:
    """Lead fixes the evidence calls for, then the first matching plan's fixes.

    A lead marked ``second`` is offered right after the plan's first fix (see
    ``_place_second``): the evidence calls for it, but not strongly enough to put
    it before the guide's order.
    """
    chosen: list[str] = [lead.fix for lead in data.leads if lead.when.holds(ctx)]
    for plan in data.plans:
        if plan.when.holds(ctx):
            chosen += plan.fixes
            break
    return list(dict.fromkeys(chosen))


def second_leads(ctx: Context, data: Tree) -> set[str]:
    firsts = {lead.fix for lead in data.leads if not lead.second and lead.when.holds(ctx)}
    return {
        lead.fix
        for lead in data.leads
        if lead.second and lead.fix not in firsts and lead.when.holds(ctx)
    }


def _place_second(decision: _Draft, seconds: set[str]) -> None:
    recs = decision.recommendations
    moved = [r for r in recs if r.fix in seconds]
    rest = [r for r in recs if r.fix not in seconds]
    if moved and rest:
        decision.recommendations = rest[:1] + moved + rest[1:]


def _drop_repeated_changes(decision: _Draft, data: Tree, lang: str) -> None:
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


def _auto(rec: Recommendation, data: Tree) -> bool:
    """A fix whose patch may be applied without a person choosing it (never SGD)."""
    fix = data.fixes.get(rec.fix)
    return bool(rec.patch) and (fix is None or fix.auto_patch)


def _patchable_first(ctx: Context, decision: _Draft, data: Tree) -> None:
    """Without a person to ask, the first fix must be one whose patch can be computed;
    the ones passed over stay in the list and ``skipped`` says why they are not first."""
    recs = decision.recommendations
    index = next((i for i, r in enumerate(recs) if _auto(r, data)), None)
    if not index:
        return
    first = recs[index]

    def uncomputed(rec: Recommendation) -> bool:
        """A config fix whose value needed an answer (not advice or a code change)."""
        fix = data.fixes.get(rec.fix)
        changes = fix is not None and fix.changes_config
        return changes and not rec.patch and not rec.env and not rec.code_change

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
    heads = ctx.book.given_answer("attention_heads") or ctx.report.facts.get("attention_heads")
    known: dict[str, Any] = {"attention_heads": heads} if isinstance(heads, int) else {}
    known["log_phase"] = ctx.report.phase  # a config that runs no engine of the log's phase
    for qid in ("shared_fileroot", "areal_memory"):  # areal_memory: what the estimate assumes
        if qid in ctx.book.given:
            known[qid] = ctx.book.given_answer(qid)
    total = ctx.report.metrics.get("total_capacity_bytes")
    if isinstance(total, int | float) and total > 0:  # the estimate on the log's GPU
        known["gpu_bytes"] = int(total)
    if ctx.has_config:
        with ctx.peek():  # the floor must not add questions by itself
            floor, terms = micro_batch_floor_value(ctx)
        if floor is not None:
            known["micro_batch_floor"] = (floor, terms)
    return known


def config_known(config: ExperimentConfig, lang: str = "en") -> dict[str, Any]:
    """What ``check`` knows without a log: the same floor ``diagnose`` uses by default."""
    report = LogReport(False, "none", "none", 1.0)
    book = QuestionBook(report, config, {}, lang, True)
    data = tree()
    ctx = Context(report, config, book, lang, data.settings, _OtherFixes(data))
    return _known_facts(ctx)


def _evaluate(
    ctx: Context, fix_id: str, data: Tree, baseline: list[ConfigWarning]
) -> Recommendation | Skipped | None:
    fix = data.fixes[fix_id]
    section = fix.section
    if not fix.when.holds(ctx):
        return None
    for guard in fix.unless:  # the loader put those the log and config decide first
        if guard.when.holds(ctx):
            return Skipped(section, guard.why.pick(ctx.lang), fix_id)
    try:
        result = _run_steps(ctx, fix)
    except NotApplicable as exc:
        text = reason(data, exc.reason, ctx.lang)
        return Skipped(section, _format(text, exc.text_vars), fix_id)
    wanted = {ctx.config.write_key(key): value for key, value in result.patch.items()}
    patch = {key: value for key, value in wanted.items() if not same(ctx.config.get(key), value)}
    if wanted and not patch:
        return Skipped(section, _already_text(ctx, fix, wanted), fix_id)
    if patch and ctx.has_config:
        broken = _new_violations(ctx, patch, baseline)
        if broken:
            text = reason(data, "breaks-constraint", ctx.lang)
            return Skipped(section, _format(text, {"warning": broken[0].text}), fix_id)
    patch, checks = _split_usual(ctx, patch, data)
    why = _why(ctx, fix, result, patch)
    if checks:
        why = "\n".join([why, *checks])
    return Recommendation(
        section=section,
        title=GUIDE_NUMBER.sub("", section_title(section, ctx.lang)),
        why=why,
        patch=patch,
        fix=fix_id,
        env=result.env,
        code_change=fix.code_change.pick(ctx.lang) if fix.code_change else None,
        checks=checks,
    )


def _split_usual(
    ctx: Context, patch: Mapping[str, Any], data: Tree
) -> tuple[dict[str, Any], list[str]]:
    """Keep out of the patch a new value that is only news against AReaL's default.

    When the user's file does not set a key, its old value is AReaL's default, an
    assumption. If the new value is what most real configs already use
    (``settings.usual_values``), the change is likely a no-op for this user: say
    "check your value" instead of patching.
    """
    usual = ctx.settings.usual_values
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
        return override_text(round(value - ctx.settings.fraction_step, 2))
    return "?"


def _run_steps(ctx: Context, fix: Fix) -> StepResult:
    total = StepResult(vars=text_vars(ctx))
    for step in fix.patch:
        if step.fn:  # a function may check the changes so far (memory_fit_check)
            part = _call(step.fn, ctx, step, dict(total.patch))
        elif step.env:
            part = StepResult(env={step.env: str(step.value)})
        else:
            part = StepResult({step.key: step.value})
        total.patch.update(part.patch)
        total.env.update(part.env)
        total.vars.update({k: v for k, v in part.vars.items() if v is not None})
    # an environment variable goes where AReaL starts the engine's workers
    total.patch.update(env_patch(ctx, total.env))
    return total


def _call(name: str, ctx: Context, step: Step, so_far: Mapping[str, Any]) -> StepResult:
    """A value function, held to what it declared (its text variables and reasons):
    the tree loader checks the texts against those declarations."""
    function = VALUE_FUNCTIONS[name]
    try:
        part = function(ctx, step, so_far)
    except NotApplicable as exc:
        if exc.reason not in function.reasons:
            message = f"value function {name} raised undeclared reason {exc.reason}"
            raise KnowledgeError(message) from exc
        raise
    undeclared = sorted(set(part.vars) - function.vars)
    if undeclared:
        raise KnowledgeError(f"value function {name} gives undeclared text vars {undeclared}")
    return part


class _OtherFixes:
    """Another fix seen from a value function (``Context.other_fix``)."""

    def __init__(self, data: Tree) -> None:
        self.data = data

    def section(self, fix_id: str) -> str:
        return self.data.fixes[fix_id].section

    def patch(self, ctx: Context, fix_id: str) -> dict[str, Any]:
        fix = self.data.fixes.get(fix_id)
        return _fix_patch(ctx, fix) if fix is not None else {}


def _fix_patch(ctx: Context, fix: Fix) -> dict[str, Any]:
    """The changes another fix of tree.yaml would make to this config (its precondition
    and guards hold, its value functions apply), without asking anything."""
    patch: dict[str, Any] = {}
    with ctx.peek():
        if not fix.when.holds(ctx):
            return {}
        if any(guard.when.holds(ctx) for guard in fix.unless):
            return {}
        for step in fix.patch:
            if step.vars_only or step.env or step.fn == "memory_fit_check":
                continue
            if step.fn:
                try:
                    patch.update(VALUE_FUNCTIONS[step.fn](ctx, step, {}).patch)
                except NotApplicable:
                    return {}
            else:
                patch[step.key] = step.value
    written = {ctx.config.write_key(k): v for k, v in patch.items()}
    return {k: v for k, v in written.items() if not same(ctx.config.get(k), v)}


def reason(data: Tree, reason_id: str, lang: str) -> str:
    """The text of a ``reasons`` entry of tree.yaml (the loader checked every id used)."""
    texts = data.reasons.get(reason_id)
    if texts is None:
        raise KnowledgeError(f"knowledge/tree.yaml: entry reasons: '{reason_id}' is missing")
    return texts.pick(lang)


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


def _already_text(ctx: Context, fix: Fix, patch: Mapping[str, Any]) -> str:
    if fix.already is not None:
        return fix.already.pick(ctx.lang)
    parts = ", ".join(f"{k} = {override_text(v)}" for k, v in patch.items())
    return message("tree.already_in_place", ctx.lang, parts=parts)


def _why(ctx: Context, fix: Fix, result: StepResult, patch: Mapping[str, Any]) -> str:
    parts = [_format(fix.why.pick(ctx.lang), result.vars)]
    for note in fix.notes:
        needed = note.when_vars
        if all(result.vars.get(name) is not None for name in needed) and note.when.holds(ctx):
            parts.append(_format(note.text.pick(ctx.lang), result.vars))
    for key, value in patch.items():
        old = ctx.config.get(key)
        old_text = message("tree.unset", ctx.lang) if old is None else override_text(old)
        if old is not None and ctx.config.source(key) != "config":
            old_text = message("tree.assumed", ctx.lang, value=old_text)
        new_text = override_text(value)
        parts.append(message("tree.change_line", ctx.lang, key=key, old=old_text, new=new_text))
    return "\n".join(parts)


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
