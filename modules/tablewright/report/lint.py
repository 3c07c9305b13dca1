"""Lint results as text, JSON, or SARIF 2.1.0 (so CI code scanning annotates the blueprint lines)."""

from __future__ import annotations

import json
import os

from tablewright.errors import CODE_DOCS, ErrorList, SourceLocation, TablewrightError, docs_anchor
from tablewright.lint.engine import LintResult, Located
from tablewright.lint.findings import RULES, Finding

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
SARIF_LEVEL = {"error": "error", "warning": "warning", "info": "note"}


def error_results(error: TablewrightError) -> list[LintResult]:
    """A blueprint that cannot be loaded or designed, as lint results: each error a finding with its code,
    so `--format json|sarif` stay machine-readable when the blueprint is broken."""
    errors = error.errors if isinstance(error, ErrorList) else [error]
    by_file: dict[str, list[Located]] = {}
    for item in errors:
        location = item.location or SourceLocation("", 1, 1)
        finding = Finding(item.code, "error", item.message, item.hint or "", item.path)
        by_file.setdefault(location.file, []).append(Located(finding, location))
    return [LintResult(file, tuple(found), ()) for file, found in sorted(by_file.items())]


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
            "helpUri": rule.docs_anchor,
        }
        for rule in (RULES[code] for code in sorted(RULES))
    ]
    known = {str(code): code for code in CODE_DOCS}
    errors = sorted({known[x.finding.code] for result in results for x in result.findings if x.finding.code in known})
    rules += [{"id": str(code), "name": f"InputError{code}", "shortDescription": {"text": CODE_DOCS[code].meaning},
               "help": {"text": CODE_DOCS[code].fix}, "helpUri": docs_anchor(code)} for code in errors]
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
