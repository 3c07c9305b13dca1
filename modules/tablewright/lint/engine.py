"""Run every rule on a design and its capacity; apply the blueprint's `lint.ignore`
(modules/tablewright/report/lint.py renders the result as text, JSON or SARIF)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from tablewright.blueprint.load import LoadedBlueprint
from tablewright.capacity.loads import CapacityReport
from tablewright.design.design import TableDesign
from tablewright.errors import SourceLocation
from tablewright.lint import (  # noqa: F401  (registers the rules)
    expiry,
    hot,
    insights,
    jobs,
    keys,
    limits,
    requests,
    surges,
    tags,
    tenancy,
    versions,
)
from tablewright.lint.findings import RULES, SEVERITY_ORDER, Context, Finding
from tablewright.lint.hot import KeyLoad, Sharding, hot_loads, suggested_sharding

Suppressed = tuple[str, str, int]  # code, reason, how many findings it silenced


@dataclass(frozen=True)
class Located:
    finding: Finding
    location: SourceLocation


@dataclass(frozen=True)
class LintResult:
    blueprint: str
    findings: tuple[Located, ...]
    suppressed: tuple[Suppressed, ...]
    # The keys over `lint.hot_key_warning` of a partition's limit, table first, each with the fix the hot-key
    # charts draw (whatever `lint.ignore` silences).
    hot_keys: tuple[tuple[KeyLoad, Sharding], ...] = ()

    def count(self, severity: str) -> int:
        return sum(1 for f in self.findings if f.finding.severity == severity)


def lint_design(design: TableDesign, capacity: CapacityReport) -> list[Finding]:
    """Every finding of every rule, in a stable order (`lint.ignore` not applied yet)."""
    return _findings(Context(design, capacity))


def _findings(context: Context) -> list[Finding]:
    return [rule.finding(issue) for code, rule in sorted(RULES.items()) if rule.check for issue in rule.check(context)]


def apply_ignore(found: Sequence[Finding], ignore: dict[str, str]) -> tuple[list[Finding], tuple[Suppressed, ...]]:
    """The findings `lint.ignore` keeps, and per ignored code its reason and how many it silenced."""
    suppressed = tuple((code, reason, sum(1 for f in found if f.code == code))
                       for code, reason in sorted(ignore.items()))
    return [f for f in found if f.code not in ignore], suppressed


def lint_loaded(loaded: LoadedBlueprint, design: TableDesign, capacity: CapacityReport,
                extra: Sequence[Finding] = ()) -> LintResult:
    """The findings of one stack, located in its files, minus the ignored codes (counted)."""
    context = Context(design, capacity)
    kept, suppressed = apply_ignore(_findings(context) + list(extra), design.blueprint.lint.ignore)
    hot_keys = tuple((load, suggested_sharding(context, load)) for load in hot_loads(context))
    return LintResult(loaded.stack_name, _located(kept, loaded), suppressed, hot_keys)


def _located(findings: Sequence[Finding], loaded: LoadedBlueprint) -> tuple[Located, ...]:
    """The findings located in the stack's files, in file order."""
    located = [Located(f, loaded.source.locate(f.path)) for f in findings]
    located.sort(key=lambda x: (x.location.line, x.location.column, SEVERITY_ORDER[x.finding.severity], x.finding.code))
    return tuple(located)


def relocated(result: LintResult, loaded: LoadedBlueprint) -> LintResult:
    """Another environment's findings of the same design, as this stack's: located in its files."""
    return replace(result, blueprint=loaded.stack_name, findings=_located([x.finding for x in result.findings], loaded))


def failed(results: Sequence[LintResult], strict: bool) -> bool:
    return any(r.count("error") or (strict and r.count("warning")) for r in results)


def errors(result: LintResult) -> list[Located]:
    return [x for x in result.findings if x.finding.severity == "error"]


