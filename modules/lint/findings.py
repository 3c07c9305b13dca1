"""Findings: a stable code, a severity, the field it points at, a message with numbers, and the fix."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Literal

from modules.capacity.estimate import CapacityReport
from modules.design.design import TableDesign
from modules.errors import FieldPath

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


Check = Callable[[Context], Iterable[Issue]]


@dataclass(frozen=True)
class Rule:
    code: str
    title: str
    help: str
    # None for rules that compare two versions of a blueprint (`lint --against`), not one design.
    check: Check | None

    def finding(self, issue: Issue) -> Finding:
        return Finding(self.code, issue.severity, issue.message, issue.fix, issue.path)


RULES: dict[str, Rule] = {}


def comparison_rule(code: str, title: str, help: str) -> Rule:
    RULES[code] = Rule(code, title, help, None)
    return RULES[code]


def rule(code: str, title: str, help: str) -> Callable[[Check], Check]:
    """Register a check under a stable code; `help` is the documented fix (README, SARIF)."""

    def register(check: Check) -> Check:
        RULES[code] = Rule(code, title, help, check)
        return check

    return register
