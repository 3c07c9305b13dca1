"""Verification reports: a table per blueprint, as text, Markdown or JSON."""

from __future__ import annotations

import json

from tablewright.report.markdown import one_line, sanitize
from tablewright.report.tables import markdown_table, text_table
from tablewright.verify.runner import BlueprintResult

HEADERS = ("Pattern", "Index", "Ops/call", "Items", "RCU/call (model)", "Result")
INDEX_HEADERS = ("Index", "Sparse by", "Items on it", "Result")
CLIENT_HEADERS = ("Generated client", "Result")


def _rows(result: BlueprintResult) -> list[list[str]]:
    return [
        [r.pattern, r.index, r.operations_per_call, str(r.items), f"{r.capacity:g}", "PASS" if r.passed else "FAIL"]
        for r in result.results
    ]


def _index_rows(result: BlueprintResult) -> list[list[str]]:
    return [
        [i.index, ", ".join(i.sparse) or "-", f"{i.found} of {i.expected} expected", "PASS" if i.passed else "FAIL"]
        for i in result.indexes
    ]


def _client_rows(result: BlueprintResult) -> list[list[str]]:
    return [[c.name, "PASS" if c.passed else "FAIL"] for c in result.client]


def _failures(result: BlueprintResult) -> list[str]:
    return result.failures


def _heading(result: BlueprintResult) -> str:
    passed = sum(r.passed for r in result.results)
    heading = (f"{result.blueprint}: table {result.table}, {result.items_written} sample items, "
               f"{passed}/{len(result.results)} patterns pass")
    if result.indexes:
        held = sum(i.passed for i in result.indexes)
        heading += f", {held}/{len(result.indexes)} indexes hold exactly their items"
    if result.client:
        heading += f", {sum(c.passed for c in result.client)}/{len(result.client)} client checks pass"
    return heading


NOTE = ("RCU/call: the capacity model on the items each call reads (4 KB rounding per request, every shard or "
        "time bucket of a fan-out a request of its own, half for eventually consistent reads); the embedded "
        "DynamoDB (moto) reports fixed figures, so they are not used. Indexes: each must hold exactly the items "
        "that carry its key attributes (sparse by an optional attribute: only the items that have it).")


def render_text(results: list[BlueprintResult]) -> str:
    parts = []
    for result in results:
        parts += [_heading(result), text_table(HEADERS, _rows(result))]
        if result.indexes:
            parts += ["", text_table(INDEX_HEADERS, _index_rows(result))]
        if result.client:
            parts += ["", text_table(CLIENT_HEADERS, _client_rows(result))]
        parts += [*(f"FAIL {f}" for f in _failures(result)), ""]
    return "\n".join([*parts, NOTE]) + "\n"


def render_markdown(results: list[BlueprintResult]) -> str:
    parts = []
    for result in results:
        parts += [f"### {_heading(result)}", "", markdown_table(HEADERS, _rows(result)), ""]
        if result.indexes:
            parts += [markdown_table(INDEX_HEADERS, _index_rows(result)), ""]
        if result.client:
            parts += [markdown_table(CLIENT_HEADERS, _client_rows(result)), ""]
        parts += [f"- **FAIL** {one_line(f)}" for f in _failures(result)]
    return sanitize("\n".join([*parts, "", f"_{NOTE}_"]) + "\n")


def render_json(results: list[BlueprintResult]) -> str:
    data = [
        {
            "blueprint": result.blueprint,
            "table": result.table,
            "sample_items": result.items_written,
            "passed": result.passed,
            "refused": result.refused,
            "patterns": [
                {
                    "pattern": r.pattern,
                    "index": r.index,
                    "operation": r.operation,
                    "operations_per_call": r.operations_per_call,
                    "items": r.items,
                    "capacity_per_call": {"read_units": r.capacity, "requests": r.read_requests, "source": "model",
                                          "emulator_reported": r.emulator_capacity},
                    "probes": r.probes,
                    "requests": r.requests,
                    "result": "PASS" if r.passed else "FAIL",
                    "failure": r.failure,
                }
                for r in result.results
            ],
            "indexes": [
                {"index": i.index, "sparse_by": list(i.sparse), "items": i.found, "expected": i.expected,
                 "result": "PASS" if i.passed else "FAIL", "failure": i.failure}
                for i in result.indexes
            ],
            "client": [{"check": c.name, "result": "PASS" if c.passed else "FAIL", "failure": c.failure}
                       for c in result.client],
        }
        for result in results
    ]
    return json.dumps(data, indent=2, sort_keys=True) + "\n"
