"""Verification reports: a table per blueprint, as text, Markdown or JSON."""

from __future__ import annotations

import json

from modules.report.markdown import one_line, sanitize
from modules.report.tables import markdown_table, text_table
from modules.verify.runner import BlueprintResult

HEADERS = ("Pattern", "Index", "Ops/call", "Items", "RCU/call (model)", "Result")


def _rows(result: BlueprintResult) -> list[list[str]]:
    return [
        [r.pattern, r.index, r.operations_per_call, str(r.items), f"{r.capacity:g}", "PASS" if r.passed else "FAIL"]
        for r in result.results
    ]


def _failures(result: BlueprintResult) -> list[str]:
    return [r.failure for r in result.results if r.failure]


def _heading(result: BlueprintResult) -> str:
    passed = sum(r.passed for r in result.results)
    return (f"{result.blueprint}: table {result.table}, {result.items_written} sample items, "
            f"{passed}/{len(result.results)} patterns pass")


NOTE = ("RCU/call: the capacity model on the items each call reads (4 KB rounding, half for eventually "
        "consistent reads); the embedded DynamoDB (moto) reports fixed figures, so they are not used.")


def render_text(results: list[BlueprintResult]) -> str:
    parts = []
    for result in results:
        parts += [_heading(result), text_table(HEADERS, _rows(result)), *(f"FAIL {f}" for f in _failures(result)), ""]
    return "\n".join([*parts, NOTE]) + "\n"


def render_markdown(results: list[BlueprintResult]) -> str:
    parts = []
    for result in results:
        parts += [f"### {_heading(result)}", "", markdown_table(HEADERS, _rows(result)), ""]
        parts += [f"- **FAIL** {one_line(f)}" for f in _failures(result)]
    return sanitize("\n".join([*parts, "", f"_{NOTE}_"]) + "\n")


def render_json(results: list[BlueprintResult]) -> str:
    data = [
        {
            "blueprint": result.blueprint,
            "table": result.table,
            "sample_items": result.items_written,
            "passed": result.passed,
            "patterns": [
                {
                    "pattern": r.pattern,
                    "index": r.index,
                    "operation": r.operation,
                    "operations_per_call": r.operations_per_call,
                    "items": r.items,
                    "capacity_per_call": {"read_units": r.capacity, "source": "model",
                                          "emulator_reported": r.emulator_capacity},
                    "probes": r.probes,
                    "requests": r.requests,
                    "result": "PASS" if r.passed else "FAIL",
                    "failure": r.failure,
                }
                for r in result.results
            ],
        }
        for result in results
    ]
    return json.dumps(data, indent=2, sort_keys=True) + "\n"
