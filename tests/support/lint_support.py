"""Lint findings of small designs built in Python (tests/support/design_helpers.py), and the entities and patterns the
lint rule tests share (tests/lint/test_lint.py, test_lint_limits.py)."""

from __future__ import annotations

from tablewright.capacity.loads import estimate
from tablewright.design.designer import design
from tablewright.lint.engine import apply_ignore, lint_design
from tests.support.design_helpers import blueprint


def lint(table):
    """Findings of a design, `lint.ignore` applied, and what it silenced."""
    return apply_ignore(lint_design(table, estimate(table)), table.blueprint.lint.ignore)


def findings(entities, patterns, **extra):
    found, _ = lint(design(blueprint(entities, patterns, **extra)))
    return found


def codes(entities, patterns, **extra) -> dict[str, str]:
    """code -> severity of the most severe finding with that code."""
    result: dict[str, str] = {}
    for f in findings(entities, patterns, **extra):
        if f.code not in result or f.severity == "error" or (f.severity == "warning" and result[f.code] == "info"):
            result[f.code] = f.severity
    return result


USER = {"attributes": {"userId": "string", "name": "string"}, "key": {"pk": "USER#{userId}", "sk": "PROFILE"}}
GET_USER = {"user": {"entity": "User", "where": {"userId": "="}}}


def order(writes: float = 10, size: int = 500, status: dict | None = None, **extra) -> dict:
    attributes = {"orderId": "string", "customerId": "string", "placedAt": "timestamp",
                  "status": status or {"type": "string", "values": ["PLACED", "PAID", "SHIPPED"]}}
    return {"attributes": attributes, "key": {"pk": "ORDER#{orderId}", "sk": "DETAILS"},
            "writes_per_second": writes, "item_bytes": size, **extra}


BY_STATUS = {"by_status": {"entity": "Order", "where": {"status": "="}, "order_by": "placedAt", "order": "desc",
                           "limit": 20, "returns": ["orderId", "placedAt"]}}
