"""Load and validate the classifier's rule files in knowledge/.

signatures.yaml  memory-failure messages, their figures and hints
vocabulary/      the frame vocabulary: core words and per-framework entries for the phase
lookalikes.yaml  errors that are not memory failures, cascade events, error lines
facts.yaml       settings the log reveals (allocator config, sleep mode, model)
describe.yaml    bilingual keywords for short descriptions instead of logs

Every entry is checked when loaded; a broken one raises KnowledgeError naming
the file and the entry, so an editing mistake never turns into a wrong diagnosis.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from assistant.errors import KnowledgeError
from assistant.knowledge import load_yaml  # a module name here, so tests can swap a file
from assistant.logs.kills import KillTable, kill_spec, load_kills
from assistant.logs.lazyre import LazyPattern
from assistant.logs.schema import VALIDATION, Entry, entries
from assistant.logs.units import UNITS
from assistant.models import KINDS, PHASES, Kind, Phase

SCOPES = ("line", "traceback", "before", "after")
SIGNATURE_KEYS = (
    "id", "kind", "priority", "confidence", "patterns", "triggers", "unless", "figures", "tags",
    "phase_hints", "facts", "lines", "weak", "corroborate", "yields_to", "unproven_confidence",
    "learned_from", "unless_traceback", "kill", "match", "no_match", "scope", "prose",
)  # fmt: skip
EXAMPLE_KEYS = ("match", "no_match")  # inline examples, checked by tests/test_rule_examples.py
AGGREGATES = ("first", "sum", "max", "count", "list")
LOOKALIKE_SCOPES = ("log", "window")


@dataclass(frozen=True)
class Figure:
    id: str
    metric: str
    unit: str
    aggregate: str
    patterns: tuple[LazyPattern, ...]


@dataclass(frozen=True)
class Signature:
    id: str
    kind: Kind
    priority: int
    confidence: float
    patterns: tuple[LazyPattern, ...]
    triggers: tuple[str, ...]
    unless: tuple[LazyPattern, ...] = ()
    figures: tuple[Figure, ...] = ()
    tags: tuple[str, ...] = ()
    phase_hints: Mapping[str, float] = field(default_factory=dict)
    facts: Mapping[str, Any] = field(default_factory=dict)
    lines: int = 1
    weak: bool = False
    corroborate: tuple[LazyPattern, ...] = ()
    yields_to: tuple[str, ...] = ()
    # a weak signature with no corroboration still counts, at this confidence, when
    # the input shows no other error that could explain it (the tree then asks why)
    unproven_confidence: float | None = None
    # regexes that veto the match when found in the traceback that ends at the line
    # (os.fork's ENOMEM is the overcommit policy refusing a copy, not RAM running out)
    unless_traceback: tuple[LazyPattern, ...] = ()
    # labelled families whose logs this rule was written from (benchmarks only:
    # eval_logs.py --leave-family-out switches a family's own rules off)
    learned_from: tuple[str, ...] = ()
    # "node": the message reports a machine (a kernel, Ray or Slurm kill), not a rank; it
    # borrows no rank from the lines around it
    scope: str = "process"
    # a reporter's sentence ("程序被kill掉了"): evidence inside a log, but not what makes a
    # short text a log (a short description still goes to describe.yaml)
    prose: bool = False


@dataclass(frozen=True)
class Lookalike:
    id: str
    patterns: tuple[LazyPattern, ...]
    triggers: tuple[str, ...]
    what: Mapping[str, str]
    pressure: str | None = None  # phase this back-pressure notice points to
    notice: str | None = None  # id in the report's `notices` (counted, explained)
    poisons: bool = False  # later CUDA errors in the same process are its consequences
    recovers: bool = False  # the memory failure just around it was caught and retried
    informational: bool = False  # a note: never the first error of a run without a failure
    # a header that opens ("opens") a block of past, already solved errors in a paste,
    # or one that opens the current error ("closes" the past block)
    past: str | None = None
    # "log": its triggers enter the byte prefilter of the whole input; "window": a
    # heading- or prose-style rule whose words fill healthy logs ("new", "current"):
    # never a prefilter trigger, it is tried on the lines just before a memory failure
    # (and on lines that are candidates for another rule's trigger)
    scope: str = "log"


@dataclass(frozen=True)
class ConsequenceRule:
    id: str
    what: str
    patterns: tuple[LazyPattern, ...]
    triggers: tuple[str, ...]
    hang: bool = False  # a watchdog saw a process hang: a kill after it is the hang's end


@dataclass(frozen=True)
class ErrorRules:
    patterns: tuple[LazyPattern, ...]
    ignore: tuple[LazyPattern, ...]
    triggers: tuple[str, ...]


@dataclass(frozen=True)
class PhasePattern:
    """One entry of the frame vocabulary: evidence for a phase.

    It fires on a line by a regex (a frame, a line shape), by one of its ``words`` (each
    a tuple of identifier parts that must follow each other, see
    ``assistant.logs.vocabulary.parts``) or by one of its ``phrases`` (substrings of the
    lower-cased line). ``generic`` entries (the core vocabulary) are weighed by the kind of
    line they are on and its distance from the failure."""

    id: str
    phase: Phase
    weight: float
    regex: LazyPattern | None
    where: frozenset[str]
    tags: tuple[str, ...] = ()
    facts: Mapping[str, Any] = field(default_factory=dict)
    learned_from: tuple[str, ...] = ()  # as Signature.learned_from
    words: tuple[tuple[str, ...], ...] = ()
    phrases: tuple[str, ...] = ()
    generic: bool = False
    examples: tuple[str, ...] = ()  # lines it must fire on (tests check them)
    counter_examples: tuple[str, ...] = ()  # lines it must not fire on
    # entries whose evidence counts for this entry's phase when this one fires too
    # (an inference server's words make its loading words its start-up)
    absorbs: tuple[str, ...] = ()
    # entries whose evidence from the lines before the failure no longer counts when
    # this one fires there (an RL loop's progress lines do not say which phase failed)
    cancels: tuple[str, ...] = ()
    # the words are names that may sit inside a longer identifier (AsyncvLLMServer,
    # SGLangHttpServer): matched within each identifier, not only as its parts
    inside: bool = False
    # evidence too weak to show a phase: it only makes a lean (facts.phase_leaning)
    lean_only: bool = False


@dataclass(frozen=True)
class PhaseConfig:
    min_score: float
    scope_factor: Mapping[str, float]
    before_lines: int
    after_lines: int
    patterns: tuple[PhasePattern, ...]
    # the generic core (knowledge/vocabulary/core.yaml): line roles and distance decay
    role_factor: Mapping[str, float] = field(default_factory=dict)
    decay_lines: Mapping[str, float] = field(default_factory=dict)
    core_min_score: float = 1.0  # what the core alone must reach (no framework entry did)
    core_margin: float = 0.0  # ... ahead of the runner-up
    quiet: tuple[LazyPattern, ...] = ()  # lines whose words are no evidence
    core_lean_score: float = 0.1  # phase unknown: the score that makes a lean


@dataclass(frozen=True)
class FactRule:
    id: str
    fact: str
    patterns: tuple[LazyPattern, ...]
    triggers: tuple[str, ...]
    value: Any = None  # fixed value, or None to use the pattern's first group
    unless: tuple[LazyPattern, ...] = ()


@dataclass(frozen=True)
class Rules:
    signatures: tuple[Signature, ...]
    lookalikes: tuple[Lookalike, ...]
    consequences: tuple[ConsequenceRule, ...]
    errors: ErrorRules
    phases: PhaseConfig
    facts: tuple[FactRule, ...]
    describe: Mapping[str, Any]
    # every spelling of a death by a signal (signatures.yaml kills)
    kills: KillTable = field(default_factory=lambda: KillTable((), ()))
    # figures read from a status line the failing process printed before the
    # failure (e.g. AReaL's Memory-Usage snapshot), for messages without figures
    context_figures: tuple[Figure, ...] = ()
    # a line that quotes a memory error to deny it is prose, not a failure
    denials: tuple[LazyPattern, ...] = ()
    # signatures.yaml reading: windows around a hit (raise_lookahead, recovery_*)
    reading: Mapping[str, int] = field(default_factory=dict)
    # a negation before a weak signature's corroborating words
    corroboration_denied: LazyPattern | None = None

    @property
    def triggers(self) -> tuple[str, ...]:
        """Every trigger of the byte prefilter, deduplicated, in a stable order.

        Fact triggers are not among them: facts are looked for in the head of
        each log (see facts.py), since lines such as "[FSDPEngine Rank 0]" can
        fill a whole log; nor are those of look-alikes with ``scope: window``
        (headings whose words fill healthy logs: see ``window_triggers``).
        """
        seen: dict[str, None] = {}
        groups: list[tuple[str, ...]] = [s.triggers for s in self.signatures]
        groups += [x.triggers for x in self.lookalikes if x.scope == "log"]
        groups += [c.triggers for c in self.consequences]
        groups += [self.errors.triggers]
        for group in groups:
            for trigger in group:
                seen.setdefault(trigger, None)
        return tuple(seen)

    @property
    def window_triggers(self) -> tuple[str, ...]:
        """Triggers of the look-alikes tried only on the lines before a memory failure."""
        found = (t for x in self.lookalikes if x.scope == "window" for t in x.triggers)
        return tuple(dict.fromkeys(found))

    def signature(self, sig_id: str) -> Signature:
        for sig in self.signatures:
            if sig.id == sig_id:
                return sig
        raise KeyError(sig_id)


def _load_figures(data: Any) -> dict[str, Figure]:
    file = "signatures.yaml"
    raw = data.get("figures") if isinstance(data, dict) else None
    if not isinstance(raw, dict):
        raise KnowledgeError(f"knowledge/{file}: top-level 'figures' mapping is missing")
    figures: dict[str, Figure] = {}
    for ident, spec in raw.items():
        entry = Entry(file, spec, f"figure '{ident}'").only(
            "metric", "unit", "aggregate", "patterns"
        )
        patterns = entry.regexes("patterns", expand=True)
        for pattern in patterns:
            if VALIDATION.patterns and pattern.groups != 1:
                entry.fail(f"pattern {pattern.pattern!r} must capture exactly one value")
        figures[ident] = Figure(
            id=ident,
            metric=entry.get("metric", str),
            unit=entry.get("unit", str, check=lambda u: u in UNITS),
            aggregate=entry.get("aggregate", str, "first", check=lambda a: a in AGGREGATES),
            patterns=patterns,
        )
    return figures


def _in(choices: tuple[str, ...]) -> Callable[[Any], bool]:
    return lambda value: value in choices


def _load_signatures() -> tuple[Signature, ...]:
    file = "signatures.yaml"
    data = load_yaml(file)
    Entry(file, data, "(top level)").only(
        "figures",
        "context_figures",
        "denied_in_prose",
        "reading",
        "corroboration_denied",
        "kills",
        "signatures",
        "computed",
    )
    figures = _load_figures(data)
    kills = load_kills(data)
    signatures: list[Signature] = []
    for entry in entries(file, data, "signatures"):
        entry.only(*SIGNATURE_KEYS)
        figure_ids = entry.strings("figures")
        for fid in figure_ids:
            if fid not in figures:
                entry.fail(f"unknown figure '{fid}'")
        hints = entry.get("phase_hints", dict, {})
        for phase, weight in hints.items():
            if phase not in PHASES or not isinstance(weight, int | float):
                entry.fail(f"bad phase hint {phase!r}: {weight!r}")
        weak = entry.get("weak", bool, False)
        patterns, triggers = _patterns_and_triggers(entry, kills)
        signatures.append(
            Signature(
                id=entry.get("id", str),
                kind=entry.get("kind", str, check=_in(KINDS[:-1])),
                priority=entry.get("priority", int),
                confidence=entry.get("confidence", float, check=lambda c: 0 < c <= 1),
                patterns=patterns,
                triggers=triggers,
                unless=entry.regexes("unless", required=False),
                figures=tuple(figures[f] for f in figure_ids),
                tags=entry.strings("tags"),
                phase_hints=hints,
                facts=entry.get("facts", dict, {}),
                lines=entry.get("lines", int, 1, check=lambda n: 1 <= n <= 12),
                weak=weak,
                corroborate=entry.regexes("corroborate", required=weak),
                yields_to=entry.strings("yields_to"),
                unproven_confidence=entry.get(
                    "unproven_confidence", float, None, check=lambda c: 0 < c <= 1
                ),
                learned_from=entry.strings("learned_from"),
                unless_traceback=entry.regexes("unless_traceback", required=False),
                scope=entry.get("scope", str, "process", check=_in(("process", "node"))),
                prose=entry.get("prose", bool, False),
            )
        )
        _examples(entry)
    ids = {s.id for s in signatures}
    for sig in signatures:
        for target in sig.yields_to:
            if target not in ids:
                raise KnowledgeError(
                    f"knowledge/{file}: entry '{sig.id}': unknown yields_to '{target}'"
                )
    return tuple(signatures)


def _patterns_and_triggers(
    entry: Entry, kills: KillTable
) -> tuple[tuple[LazyPattern, ...], tuple[str, ...]]:
    """A rule's own patterns and triggers, and those of the kills it names (`kill:`)."""
    kill_patterns, kill_triggers = kill_spec(entry, kills)
    own = not kill_patterns or "patterns" in entry.data
    patterns = entry.regexes("patterns", required=own) + kill_patterns
    triggers = entry.triggers() if own else entry.strings("triggers")
    return patterns, triggers + tuple(t for t in kill_triggers if t not in triggers)


def _examples(entry: Entry) -> None:
    """`match` / `no_match`: example lines (or a few-line block) as strings."""
    for key in EXAMPLE_KEYS:
        raw = entry.get(key, (list, str), [])
        items = [raw] if isinstance(raw, str) else raw
        if not all(isinstance(item, str) and item.strip() for item in items):
            entry.fail(f"'{key}' must be example lines (strings)")


def _load_kills() -> KillTable:
    return load_kills(load_yaml("signatures.yaml"))


def _load_lookalikes() -> tuple[tuple[Lookalike, ...], tuple[ConsequenceRule, ...], ErrorRules]:
    file = "lookalikes.yaml"
    data = load_yaml(file)
    kills = _load_kills()
    lookalikes = []
    for entry in entries(file, data, "lookalikes"):
        entry.only(
            "id",
            "patterns",
            "triggers",
            "what",
            "pressure",
            "poisons",
            "notice",
            "informational",
            "recovers",
            "past",
            "scope",
            "kill",
            *EXAMPLE_KEYS,
        )
        what = entry.get("what", dict)
        if not {"en", "zh"} <= set(what):
            entry.fail("'what' needs 'en' and 'zh'")
        scope = entry.get("scope", str, "log", check=_in(LOOKALIKE_SCOPES))
        past = entry.get("past", str, None, check=_in(("opens", "closes")))
        if past is not None and scope != "window":
            entry.fail("a 'past' header is a heading: it needs 'scope: window'")
        _examples(entry)
        patterns, triggers = _patterns_and_triggers(entry, kills)
        lookalikes.append(
            Lookalike(
                id=entry.get("id", str),
                patterns=patterns,
                triggers=triggers,
                what=what,
                pressure=entry.get("pressure", str, None, check=_in(PHASES)),
                poisons=entry.get("poisons", bool, False),
                recovers=entry.get("recovers", bool, False),
                notice=entry.get("notice", str, None),
                informational=entry.get("informational", bool, False),
                past=past,
                scope=scope,
            )
        )
    consequences = []
    for entry in entries(file, data, "consequences"):
        entry.only("id", "what", "patterns", "triggers", "hang", "kill", *EXAMPLE_KEYS)
        _examples(entry)
        patterns, triggers = _patterns_and_triggers(entry, kills)
        consequences.append(
            ConsequenceRule(
                id=entry.get("id", str),
                what=entry.get("what", str),
                patterns=patterns,
                triggers=triggers,
                hang=entry.get("hang", bool, False),
            )
        )
    Entry(file, data, "(top level)").only("lookalikes", "consequences", "error_lines")
    err = Entry(file, data.get("error_lines"), "'error_lines'").only(
        "patterns", "ignore", "triggers"
    )
    errors = ErrorRules(err.regexes("patterns"), err.regexes("ignore", False), err.triggers())
    return tuple(lookalikes), tuple(consequences), errors


VOCABULARY = "vocabulary"
CORE_VOCABULARY = "vocabulary/core.yaml"
FRAMEWORKS = "vocabulary/frameworks"
VOCABULARY_KEYS = (
    "id", "phase", "weight", "pattern", "words", "phrases", "where", "tags", "facts",
    "learned_from", "match", "no_match", "absorbs", "cancels", "inside", "lean_only",
)  # fmt: skip
LINE_ROLES = ("message", "frame", "code", "command", "record", "prose")
SETTINGS_KEYS = (
    "min_score", "before_lines", "after_lines", "scope_factor", "role_factor", "decay_lines",
    "core_min_score", "core_margin", "core_lean_score", "quiet_lines",
)  # fmt: skip


def framework_files() -> tuple[str, ...]:
    """The per-framework vocabulary files (knowledge/vocabulary/frameworks/*.yaml)."""
    from assistant.knowledge import knowledge_path

    folder = knowledge_path(FRAMEWORKS)
    if not folder.is_dir():
        return ()
    return tuple(f"{FRAMEWORKS}/{p.name}" for p in sorted(folder.iterdir()) if p.suffix == ".yaml")


def _load_phases() -> PhaseConfig:
    """The frame vocabulary: the core's settings and words, and every framework file."""
    file = CORE_VOCABULARY
    data = load_yaml(file)
    Entry(file, data, "(top level)").only("settings", "words", "shapes")
    settings = Entry(file, data.get("settings"), "'settings'").only(*SETTINGS_KEYS)
    factors = settings.get("scope_factor", dict)
    if set(factors) != set(SCOPES) or not all(isinstance(v, int | float) for v in factors.values()):
        settings.fail(f"'scope_factor' needs numbers for exactly {', '.join(SCOPES)}")
    roles = settings.get("role_factor", dict)
    if set(roles) != set(LINE_ROLES) or not all(isinstance(v, int | float) for v in roles.values()):
        settings.fail(f"'role_factor' needs numbers for exactly {', '.join(LINE_ROLES)}")
    decay = settings.get("decay_lines", dict)
    if set(decay) != {"before", "after"} or not all(
        isinstance(v, int | float) and v >= 0 for v in decay.values()
    ):
        settings.fail("'decay_lines' needs numbers >= 0 for exactly before, after")
    patterns: list[PhasePattern] = []
    homes: list[str] = []  # the file of each entry, for errors
    for name in framework_files():
        framework = load_yaml(name)
        Entry(name, framework, "(top level)").only("entries")
        for entry in entries(name, framework, "entries"):
            patterns.append(_vocabulary_entry(entry, False))
            homes.append(name)
    for section in ("words", "shapes"):
        for entry in entries(file, data, section):
            if section == "shapes" and "pattern" not in entry.data:
                entry.fail("a shape needs a 'pattern'")
            if section == "words" and "pattern" in entry.data:
                entry.fail("a word entry has 'words' or 'phrases', not a 'pattern'")
            patterns.append(_vocabulary_entry(entry, True))
            homes.append(file)
    _check_references(patterns, homes)
    return PhaseConfig(
        min_score=float(settings.get("min_score", (int, float), check=_positive)),
        scope_factor={k: float(v) for k, v in factors.items()},
        before_lines=settings.get("before_lines", int),
        after_lines=settings.get("after_lines", int),
        patterns=tuple(patterns),
        role_factor={k: float(v) for k, v in roles.items()},
        decay_lines={k: float(v) for k, v in decay.items()},
        core_min_score=float(settings.get("core_min_score", (int, float), check=_positive)),
        core_margin=float(settings.get("core_margin", (int, float), check=lambda v: v >= 0)),
        quiet=settings.regexes("quiet_lines", required=False),
        core_lean_score=float(settings.get("core_lean_score", (int, float), check=_positive)),
    )


def _positive(value: float) -> bool:
    return value > 0


def _vocabulary_entry(entry: Entry, generic: bool) -> PhasePattern:
    from assistant.logs.vocabulary import parts

    entry.only(*VOCABULARY_KEYS)
    words = tuple(parts(w) for w in entry.strings("words", required=False))
    phrases = tuple(p.lower() for p in entry.strings("phrases", required=False))
    raw = entry.get("pattern", str, None)
    if raw is None and not (words or phrases):
        entry.fail("needs a 'pattern', 'words' or 'phrases'")
    if any(not w for w in words):
        entry.fail("every word must contain a letter or digit")
    where = entry.strings("where") or SCOPES
    if not set(where) <= set(SCOPES):
        entry.fail(f"'where' must name scopes among {SCOPES}")
    return PhasePattern(
        id=entry.get("id", str),
        phase=entry.get("phase", str, check=_in(PHASES[:-2])),
        weight=float(entry.get("weight", (int, float), check=lambda v: v >= 0)),
        regex=entry.compile(raw) if raw is not None else None,
        where=frozenset(where),
        tags=entry.strings("tags"),
        facts=entry.get("facts", dict, {}),
        learned_from=entry.strings("learned_from"),
        words=words,
        phrases=phrases,
        generic=generic,
        examples=entry.strings("match", required=False),
        counter_examples=entry.strings("no_match", required=False),
        absorbs=entry.strings("absorbs", required=False),
        cancels=entry.strings("cancels", required=False),
        inside=entry.get("inside", bool, False),
        lean_only=entry.get("lean_only", bool, False),
    )


def _check_references(patterns: list[PhasePattern], homes: list[str]) -> None:
    """Ids are unique across the vocabulary's files; absorbs / cancels name real ids."""
    ids = {p.id for p in patterns}
    seen: dict[str, str] = {}
    for pattern, home in zip(patterns, homes, strict=True):
        where = f"knowledge/{home}: entry '{pattern.id}'"
        if pattern.id in seen:
            raise KnowledgeError(
                f"{where}: the id is used twice (also in knowledge/{seen[pattern.id]})"
            )
        seen[pattern.id] = home
        if not set(pattern.absorbs) | set(pattern.cancels) <= ids:
            raise KnowledgeError(f"{where}: 'absorbs' / 'cancels' name an unknown id")


def _load_facts() -> tuple[FactRule, ...]:
    file = "facts.yaml"
    rules = []
    data = load_yaml(file)
    Entry(file, data, "(top level)").only("facts", "computed")
    for entry in entries(file, data, "facts"):
        entry.only("id", "fact", "patterns", "triggers", "value", "unless")
        patterns = entry.regexes("patterns")
        value = entry.get("value", (bool, str, int, float), None)
        if value is None and any(p.groups < 1 for p in patterns):
            entry.fail("without 'value' every pattern must capture the value in a group")
        rules.append(
            FactRule(
                id=entry.get("id", str),
                fact=entry.get("fact", str),
                patterns=patterns,
                triggers=entry.triggers(),
                value=value,
                unless=entry.regexes("unless", required=False),
            )
        )
    return tuple(rules)


def _load_describe() -> Mapping[str, Any]:
    file = "describe.yaml"
    data: Mapping[str, Any] = load_yaml(file)
    top = Entry(file, data, "(top level)")
    top.only("max_chars", "oom_words", "hedges", "not_oom_words", "phases", "kinds")
    top.get("max_chars", int)
    for key in ("oom_words", "hedges", "not_oom_words"):
        top.strings(key, required=key == "oom_words")
    for hedge in data.get("hedges") or []:
        try:
            re.compile(hedge)
        except re.error as exc:
            top.fail(f"'hedges' entry {hedge!r} is not a valid regex: {exc}")
    for key in ("phases", "kinds"):
        table = top.get(key, dict)
        allowed = PHASES if key == "phases" else KINDS
        for name, words in table.items():
            if name not in allowed or not isinstance(words, list) or not words:
                top.fail(f"'{key}.{name}' must be a known id with a list of words")
    return data


def _load_context_figures() -> tuple[Figure, ...]:
    file = "signatures.yaml"
    data = load_yaml(file)
    figures = _load_figures(data)
    ids = data.get("context_figures") or []
    if not isinstance(ids, list) or any(i not in figures for i in ids):
        raise KnowledgeError(f"knowledge/{file}: 'context_figures' must list known figure ids")
    return tuple(figures[i] for i in ids)


VERDICT = "rules-valid"  # kept in the one cache, whose key covers every rule file
RULE_FILES = ("signatures.yaml", CORE_VOCABULARY, "lookalikes.yaml", "facts.yaml", "describe.yaml")


def rule_files() -> tuple[str, ...]:
    """Every rule file, the framework vocabularies included."""
    return (*RULE_FILES, *framework_files())


@cache
def load_rules() -> Rules:
    """All rule files, validated (once per process).

    Validating compiles every pattern; once these exact files have passed, later runs
    defer compiling each pattern to its first use (the verdict is kept in the one cache,
    ``assistant/cache.py``, keyed by every knowledge file)."""
    from assistant.cache import has_stamp, set_stamp

    validated_before = has_stamp(VERDICT)
    VALIDATION.patterns = not validated_before
    try:
        rules = _load_all()
    finally:
        VALIDATION.patterns = True
    if not validated_before:
        set_stamp(VERDICT)
    return rules


def _load_denials() -> tuple[LazyPattern, ...]:
    file = "signatures.yaml"
    top = Entry(file, load_yaml(file), "(top level)")
    return tuple(top.compile(p) for p in top.strings("denied_in_prose"))


READING_KEYS = ("raise_lookahead", "recovery_before", "recovery_after", "past_block")


def _load_reading() -> tuple[Mapping[str, int], LazyPattern]:
    file = "signatures.yaml"
    top = Entry(file, load_yaml(file), "(top level)")
    entry = Entry(file, top.get("reading", dict), "'reading'").only(*READING_KEYS)
    reading = {key: entry.get(key, int, check=lambda n: n >= 0) for key in READING_KEYS}
    denied = top.get("corroboration_denied", str)
    try:
        re.compile(denied)  # one pattern, used on every weak hit: checked at once
    except re.error as exc:
        top.fail(f"'corroboration_denied' does not compile: {exc}")
    return reading, top.compile(denied)


def _load_all() -> Rules:
    lookalikes, consequences, errors = _load_lookalikes()
    reading, corroboration_denied = _load_reading()
    return Rules(
        signatures=_load_signatures(),
        lookalikes=lookalikes,
        consequences=consequences,
        errors=errors,
        phases=_load_phases(),
        facts=_load_facts(),
        describe=_load_describe(),
        kills=_load_kills(),
        context_figures=_load_context_figures(),
        denials=_load_denials(),
        reading=reading,
        corroboration_denied=corroboration_denied,
    )
