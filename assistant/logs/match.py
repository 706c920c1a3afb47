"""Run the full rules on candidate lines: signatures, look-alikes, cascade, errors, facts."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from assistant.logs.lines import CleanLine
from assistant.logs.rules import ConsequenceRule, FactRule, Figure, Lookalike, Rules, Signature
from assistant.logs.units import parse_value

# Source lines echoed inside a Python traceback (``raise ValueError("No available
# memory ...")``) quote a message without it having happened.
_RAISE_ECHO = re.compile(r"^\s*raise\s+[\w.]+\(")
# A traceback's source line (string literals alone on an indented line, as a message
# split over source lines: tracebacks indent their source lines); a structured log line
# that starts with a quoted message and goes on with key=value pairs (klog: "HTTP call
# done" worker=1 ...) is no code, nor is a quoted sentence at the start of a line (a
# paste quoting what a pop-up said).
_CODE_ECHO = re.compile(
    r"""^\s*(?:raise\s|assert\s|logger\.\w+\(|logging\.\w+\(|print\(|warnings\.warn\(|"""
    r"""[\w.]+\s*[+]?=\s*f?["'])|^\s+(?:[fFrRbB]?(["'])(?:(?!\1).)*\1\s*)+[),+]*\s*$"""
)


_REGEX_SYNTAX = re.compile(r"(?<!\\)[.\[\](){}?*+|^$]|\\[a-zA-Z0-9]")
_ESCAPED = re.compile(r"\\(.)")


def trigger_gate(triggers: tuple[str, ...]) -> tuple[str, ...] | None:
    """Lower-case literal texts one of which a line must hold for a rule to apply, or
    None when a trigger is a real regex (the rule is then tried on every line)."""
    literals: list[str] = []
    for trigger in triggers:
        body = trigger.removeprefix("(?i)")
        if _REGEX_SYNTAX.search(body):
            return None
        literals.append(_ESCAPED.sub(r"\1", body).lower())
    return tuple(literals)


def _open(gate: tuple[str, ...] | None, lower: str) -> bool:
    return gate is None or any(map(lower.__contains__, gate))


@dataclass(frozen=True)
class Hit:
    """A rule that fired on one line of one source."""

    category: str  # signature | raise | lookalike | consequence | error
    rule: str  # rule id ("" for plain error lines)
    source: int
    line: int
    offset: int  # byte offset of the line (slice) in the source
    clean: CleanLine
    start: int = 0  # where the matched text starts in ``clean.text``

    @property
    def text(self) -> str:
        return self.clean.text


@dataclass(frozen=True)
class FactHit:
    fact: str
    value: Any
    rule: str
    source: int
    line: int


VERDICTS_KEPT = 50_000  # distinct line texts whose verdict is remembered (memory bound)


class LineMatcher:
    """Applies the rule files to cleaned lines.

    A rule is tried only on a line that holds one of its triggers (the rule files
    promise that every line a pattern matches contains one): most lines reach few
    rules, and patterns compile on first use (assistant/logs/lazyre.py)."""

    def __init__(self, rules: Rules) -> None:
        self.rules = rules
        ordered = sorted(rules.signatures, key=lambda s: -s.priority)
        self._signatures = [(sig, trigger_gate(sig.triggers)) for sig in ordered]
        self._lookalikes = [(rule, trigger_gate(rule.triggers)) for rule in rules.lookalikes]
        self._consequences = [(rule, trigger_gate(rule.triggers)) for rule in rules.consequences]
        self._facts = [(rule, trigger_gate(rule.triggers)) for rule in rules.facts]
        self._lowered = ("", "")
        # what classify found per line text: the same text comes back on every rank of a
        # job (a server's start-up lines, a watchdog's message), and the verdict depends
        # on the text alone
        self._verdicts: dict[str, tuple[str, str, int] | None] = {}

    def _lower(self, text: str) -> str:
        if self._lowered[0] is not text:
            self._lowered = (text, text.lower())
        return self._lowered[1]

    def lookalike(self, text: str) -> Lookalike | None:
        lower = self._lower(text)
        for rule, gate in self._lookalikes:
            if _open(gate, lower) and any(p.search(text) for p in rule.patterns):
                return rule
        return None

    def signature(self, text: str) -> tuple[Signature, int] | None:
        """The highest-priority signature on ``text`` and where its match starts."""
        if _CODE_ECHO.match(text):
            return None
        return self._first_signature(text)

    def raised(self, text: str) -> tuple[Signature, int] | None:
        """A traceback's source line that raises a memory error by its message
        (``raise ValueError("No available memory for the cache blocks. "``)."""
        if not _RAISE_ECHO.match(text):
            return None
        return self._first_signature(text)

    def _first_signature(self, text: str) -> tuple[Signature, int] | None:
        lower = self._lower(text)
        for sig, gate in self._signatures:
            if not _open(gate, lower):
                continue
            for pattern in sig.patterns:
                found = pattern.search(text)
                if found and not any(u.search(text) for u in sig.unless):
                    if any(d.search(text) for d in self.rules.denials):
                        return None  # a reporter quoting the error to deny it
                    return sig, found.start()
        return None

    def consequence(self, text: str) -> ConsequenceRule | None:
        lower = self._lower(text)
        for rule, gate in self._consequences:
            if _open(gate, lower) and any(p.search(text) for p in rule.patterns):
                return rule
        return None

    def is_error(self, text: str) -> bool:
        errors = self.rules.errors
        if any(p.search(text) for p in errors.ignore):
            return False
        return any(p.search(text) for p in errors.patterns)

    def fact_value(self, rule: FactRule, text: str) -> Any:
        """The value ``rule`` reads from ``text``, or None."""
        if any(u.search(text) for u in rule.unless):
            return None
        for pattern in rule.patterns:
            match = pattern.search(text)
            if match:
                return rule.value if rule.value is not None else match.group(1)
        return None

    def facts(self, text: str) -> list[tuple[FactRule, Any]]:
        lower = self._lower(text)
        found: list[tuple[FactRule, Any]] = []
        for rule, gate in self._facts:
            if not _open(gate, lower):
                continue
            value = self.fact_value(rule, text)
            if value is not None:
                found.append((rule, value))
        return found

    def classify(self, clean: CleanLine, source: int, line: int, offset: int) -> Hit | None:
        """The one category a line belongs to (look-alikes first, then signatures)."""
        text = clean.text
        if text in self._verdicts:
            verdict = self._verdicts[text]
        else:
            verdict = self._verdict(text)
            if len(self._verdicts) < VERDICTS_KEPT:
                self._verdicts[text] = verdict
        if verdict is None:
            return None
        category, rule_id, start = verdict
        return Hit(category, rule_id, source, line, offset, clean, start)

    def _verdict(self, text: str) -> tuple[str, str, int] | None:
        """(category, rule id, match start) of ``text``, or None."""
        rule = self.lookalike(text)
        if rule is not None:
            return ("lookalike", rule.id, 0)
        matched = self.signature(text)
        if matched is not None:
            return ("signature", matched[0].id, matched[1])
        raised = self.raised(text)
        if raised is not None:
            return ("raise", raised[0].id, raised[1])
        cascade = self.consequence(text)
        if cascade is not None:
            return ("consequence", cascade.id, 0)
        if self.is_error(text):
            return ("error", "", 0)
        return None


def extract_figures(sig: Signature, text: str) -> dict[str, Any]:
    """Figures the message states, converted to numbers; lists for 'list' figures."""
    values: dict[str, Any] = {}
    for figure in sig.figures:
        for metric, value in extract_values(figure, text).items():
            if metric not in values or figure.aggregate != "first":
                values[metric] = value
    return values


def extract_values(figure: Figure, text: str) -> dict[str, Any]:
    """The value one figure reads from ``text`` ({} when absent)."""
    found: list[int | float] = []
    for pattern in figure.patterns:
        for match in pattern.finditer(text):
            value = parse_value(match.group(1), figure.unit)
            if value is not None:
                found.append(value)
        if found and figure.aggregate == "first":
            break
    if not found:
        return {}
    if figure.aggregate == "first":
        return {figure.metric: found[0]}
    if figure.aggregate == "sum":
        return {figure.metric: sum(found)}
    if figure.aggregate == "max":
        return {figure.metric: max(found)}
    if figure.aggregate == "count":
        return {figure.metric: len(found)}
    return {figure.metric: found}
