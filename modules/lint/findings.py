"""Findings: a stable code, a severity, the field it points at, a message with numbers, and the fix."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable, Literal

from modules.capacity.model import CapacityReport
from modules.design.model import TableDesign
from modules.errors import FieldPath

Severity = Literal["error", "warning", "info"]
SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}


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


@dataclass(frozen=True)
class Rule:
    code: str
    title: str
    help: str
    # None for rules that compare two versions of a blueprint (`lint --against`), not one design.
    check: Callable[[Context], Iterable[Finding]] | None


RULES: dict[str, Rule] = {}


def comparison_rule(code: str, title: str, help: str) -> None:
    RULES[code] = Rule(code, title, help, None)


def rule(code: str, title: str, help: str) -> Callable:
    """Register a check under a stable code; `help` is the documented fix (README, SARIF)."""

    def register(check: Callable[[Context], Iterable[Finding]]) -> Callable[[Context], Iterable[Finding]]:
        RULES[code] = Rule(code, title, help, check)
        return check

    return register
