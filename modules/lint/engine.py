"""Run every rule on a design; apply the blueprint's `lint.ignore`; report as text, JSON or SARIF."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass

from modules.blueprint.load import LoadedBlueprint
from modules.capacity.model import estimate
from modules.design.model import TableDesign
from modules.errors import SourceLocation
from modules.lint import hot, keys, limits, versions  # noqa: F401  (registers the rules)
from modules.lint.findings import RULES, SEVERITY_ORDER, Context, Finding

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
SARIF_LEVEL = {"error": "error", "warning": "warning", "info": "note"}


@dataclass(frozen=True)
class Located:
    finding: Finding
    location: SourceLocation


@dataclass(frozen=True)
class LintResult:
    blueprint: str
    findings: tuple[Located, ...]
    suppressed: tuple[tuple[str, str, int], ...]  # code, reason, how many

    def count(self, severity: str) -> int:
        return sum(1 for f in self.findings if f.finding.severity == severity)


def lint_design(design: TableDesign) -> tuple[list[Finding], list[tuple[str, str, int]]]:
    """Every finding of every rule, in a stable order, minus the ignored codes (counted)."""
    context = Context(design, estimate(design))
    found = [finding for code in sorted(RULES) if RULES[code].check for finding in RULES[code].check(context)]
    ignore = design.blueprint.lint.ignore
    suppressed = [(code, reason, sum(1 for f in found if f.code == code)) for code, reason in sorted(ignore.items())]
    return [f for f in found if f.code not in ignore], suppressed


def lint_loaded(loaded: LoadedBlueprint, design: TableDesign, extra: list[Finding] = ()) -> LintResult:
    findings, suppressed = lint_design(design)
    findings += [f for f in extra if f.code not in design.blueprint.lint.ignore]
    located = [Located(f, loaded.source.locate(f.path)) for f in findings]
    located.sort(key=lambda x: (x.location.line, x.location.column, SEVERITY_ORDER[x.finding.severity], x.finding.code))
    return LintResult(loaded.stack_name, tuple(located), tuple(suppressed))


def failed(results: list[LintResult], strict: bool) -> bool:
    return any(r.count("error") or (strict and r.count("warning")) for r in results)


def render_text(results: list[LintResult]) -> str:
    lines = []
    for result in results:
        for item in result.findings:
            f = item.finding
            lines += [f"{item.location}: {f.severity} {f.code}: {f.message}", f"  fix: {f.fix}"]
        for code, reason, count in result.suppressed:
            lines.append(f"{result.blueprint}: {count} {code} finding(s) ignored: {reason}")
        lines.append(f"{result.blueprint}: {result.count('error')} error(s), {result.count('warning')} warning(s), "
                     f"{result.count('info')} note(s)")
    return "\n".join(lines) + "\n"


def render_json(results: list[LintResult]) -> str:
    data = [
        {
            "blueprint": result.blueprint,
            "findings": [
                {"code": x.finding.code, "severity": x.finding.severity, "message": x.finding.message,
                 "fix": x.finding.fix, "field": ".".join(map(str, x.finding.path)), "file": x.location.file,
                 "line": x.location.line, "column": x.location.column}
                for x in result.findings
            ],
            "ignored": [{"code": code, "reason": reason, "count": count} for code, reason, count in result.suppressed],
        }
        for result in results
    ]
    return json.dumps(data, indent=2) + "\n"


def render_sarif(results: list[LintResult]) -> str:
    """SARIF 2.1.0, so CI code scanning annotates the blueprint lines in pull requests."""
    rules = [
        {
            "id": rule.code,
            "name": rule.title.replace(" ", ""),
            "shortDescription": {"text": rule.title},
            "help": {"text": rule.help},
            "helpUri": f"https://github.com/tablewright/tablewright#{rule.code.lower()}",
        }
        for rule in (RULES[code] for code in sorted(RULES))
    ]
    index = {rule["id"]: position for position, rule in enumerate(rules)}
    sarif_results = [
        {
            "ruleId": x.finding.code,
            "ruleIndex": index[x.finding.code],
            "level": SARIF_LEVEL[x.finding.severity],
            "message": {"text": f"{x.finding.message}. Fix: {x.finding.fix}"},
            "locations": [{
                "physicalLocation": {
                    "artifactLocation": {"uri": _uri(x.location.file)},
                    "region": {"startLine": x.location.line, "startColumn": x.location.column},
                }
            }],
        }
        for result in results for x in result.findings
    ]
    document = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "tablewright", "informationUri": "https://github.com/tablewright/tablewright",
                                "rules": rules}},
            "results": sarif_results,
        }],
    }
    return json.dumps(document, indent=2) + "\n"


def _uri(path: str) -> str:
    relative = os.path.relpath(path)
    return (relative if not relative.startswith("..") else os.path.abspath(path)).replace(os.sep, "/")
