"""Findings: a stable code, a severity, the field it points at, a message with numbers, and the fix."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Literal

from tablewright.capacity.loads import CapacityReport
from tablewright.design.design import TableDesign
from tablewright.errors import FieldPath
from tablewright.simulate.stack import ModeRun, run_mode

Severity = Literal["error", "warning", "info"]
SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}


@dataclass(frozen=True)
class Issue:
    """What a rule reports; the rule's registered code makes it a `Finding`."""

    severity: Severity
    message: str
    fix: str
    path: FieldPath


@dataclass(frozen=True)
class Finding:
    code: str
    severity: Severity
    message: str
    fix: str
    path: FieldPath


@dataclass(frozen=True)
class Context:
    design: TableDesign
    capacity: CapacityReport

    @cached_property
    def memo(self) -> dict[str, Any]:
        """Figures rules share within one lint run."""
        return {}

    @cached_property
    def simulated(self) -> ModeRun:
        """The declared day in the blueprint's billing mode (simulated once per lint run, when a rule asks)."""
        return run_mode(self.design, self.capacity, self.design.blueprint.table.billing)


Check = Callable[[Context], Iterable[Issue]]


# The lint reference (docs/reference/lint.md) is generated from the registered rules: each code has its anchor.
LINT_REFERENCE = "docs/reference/lint.md"


@dataclass(frozen=True, kw_only=True)
class Rule:
    code: str
    title: str
    help: str  # what to do: the documented fix (docs, SARIF)
    why: str  # what the rule finds, and why it matters
    severity: str  # the severities it reports, and when
    # None for rules that compare two versions of a blueprint (`lint --against`), not one design.
    check: Check | None

    @property
    def docs_anchor(self) -> str:
        return f"{LINT_REFERENCE}#{self.code.lower()}"

    def finding(self, issue: Issue) -> Finding:
        return Finding(self.code, issue.severity, issue.message, issue.fix, issue.path)


RULES: dict[str, Rule] = {}


def comparison_rule(code: str, title: str, help: str, *, why: str, severity: str) -> Rule:
    RULES[code] = Rule(code=code, title=title, help=help, why=why, severity=severity, check=None)
    return RULES[code]


def rule(code: str, title: str, help: str, *, why: str, severity: str) -> Callable[[Check], Check]:
    """Register a check under a stable code; `help` is the documented fix (docs, SARIF)."""

    def register(check: Check) -> Check:
        RULES[code] = Rule(code=code, title=title, help=help, why=why, severity=severity, check=check)
        return check

    return register
