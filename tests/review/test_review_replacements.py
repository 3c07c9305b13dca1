"""What the review cannot call safe: a table the provider replaces (a lower warm throughput), a change the
provider never applies (a local index's projection), and, in production, an on-demand maximum below the
declared peak (lint TW313: an error there, and the change waits for the window). The provider's own verdict
on every argument is checked in tests/review/test_replacing_attributes.py (slow tier)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import yaml

from tablewright.blueprint.load import load_blueprints
from tablewright.review.changes import from_configs
from tablewright.review.classify import classify
from tablewright.review.gate import gate
from tablewright.review.review import build_review
from tests.conftest import ROOT
from tests.support.gate_support import NOW, entry, plan

ORDERS = ROOT / "blueprints" / "orders.yaml"


def orders(directory: Path, name: str, edit) -> Path:
    """The bundled orders blueprint with `edit` applied to its YAML (as data)."""
    if not (directory / "shared").exists():
        shutil.copytree(ROOT / "blueprints" / "shared", directory / "shared")
    data = yaml.safe_load(ORDERS.read_text())
    edit(data)
    path = directory / name
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def warm(table: dict | None = None, gsi: dict | None = None):
    def edit(data: dict) -> None:
        data["terraform"] = {"aws_provider": ">= 6.13, < 7.0"}
        data["table"]["warm_throughput"] = table or {"read": 20000, "write": 8000}
        data["indexes"] = {"GSI1": {"warm_throughput": gsi or {"read": 15000, "write": 6000}}}
    return edit


def prod_changes(base: Path, head: Path) -> list:
    [prod] = [stack for stack in build_review(str(base), str(head), "prod").stacks]
    return prod.changes


def test_a_lower_warm_throughput_replaces_the_table_and_is_blocked(tmp_path):
    base = orders(tmp_path, "base.yaml", warm())
    lower = orders(tmp_path, "lower.yaml", warm(table={"read": 20000, "write": 4000}))
    [table] = [c for c in prod_changes(base, lower) if c.category == "table"]
    assert (table.action, table.cls, table.unblocked_by) == ("replace", "blocked", "destroy")
    assert "warm throughput lowered (write): the provider creates a new table for it" in \
        table.reason
    higher = orders(tmp_path, "higher.yaml", warm(table={"read": 30000, "write": 8000}))
    [raised] = [c for c in prod_changes(base, higher) if c.category == "capacity"]
    assert (raised.action, raised.cls, raised.subject) == ("update", "safe", "table prod-orders_main: warm throughput")


def test_a_lower_warm_throughput_of_an_index_changes_it_in_place(tmp_path):
    """The provider documents that a GSI's warm throughput goes up or down without recreation."""
    base = orders(tmp_path, "base.yaml", warm())
    lower = orders(tmp_path, "lower.yaml", warm(gsi={"read": 12000, "write": 6000}))
    changes = prod_changes(base, lower)
    assert [c for c in changes if c.category in ("index", "table")] == []
    [warm_change] = [c for c in changes if c.subject == "GSI GSI1 warm throughput"]
    assert (warm_change.action, warm_change.cls) == ("update", "safe")


def _table(lsi_projection: str, key_type: str = "S") -> dict:
    return {"resource": {"aws_dynamodb_table": {"t": {
        "name": "t", "hash_key": "PK", "range_key": "SK", "billing_mode": "PAY_PER_REQUEST",
        "attribute": [{"name": "PK", "type": key_type}, {"name": "SK", "type": "S"}, {"name": "LSI1SK", "type": "S"}],
        "local_secondary_index": [{"name": "LSI1", "range_key": "LSI1SK", "projection_type": lsi_projection}]}}}}


def test_a_change_the_provider_never_applies_is_blocked_not_a_replacement():
    """The provider tells local indexes and attribute definitions apart by name: a local index's projection (or
    a key attribute's type) changed in place is never applied, and the deployed table keeps the old one."""
    [change] = from_configs(_table("KEYS_ONLY"), _table("ALL"))
    assert change.action == "update"
    [local] = classify([change], production=False)
    assert (local.category, local.cls, local.unblocked_by) == ("index", "blocked", None)
    assert local.reason.startswith("LSI1 LSI1SK, KEYS_ONLY -> LSI1 LSI1SK, ALL: the provider tells local indexes apart "
                                   "by name only and never applies this")
    [typed] = [c for c in classify(from_configs(_table("ALL"), _table("ALL", key_type="N")), production=False)
               if c.cls == "blocked"]
    assert typed.subject == "table t: key attribute types" and "never changes the type of a key attribute" in \
        typed.reason


def _guarded(maximum: int):
    def edit(data: dict) -> None:
        data["table"]["max_throughput"] = {"read": maximum, "write": 600}
    return edit


def test_a_production_maximum_below_the_peak_is_a_lint_error(tmp_path, run_cli):
    def everywhere(data: dict) -> None:
        _guarded(1)(data)
        data["environments"] = {"dev": {"table": {"max_throughput": {"read": 1, "write": 600}}}, "prod": {}}
    low = orders(tmp_path, "low.yaml", everywhere)
    code, out, _ = run_cli("lint", low, "--env", "prod", "--format", "json")
    assert code == 1
    [finding, gsi] = [f for f in json.loads(out)[0]["findings"] if f["code"] == "TW313"]
    assert finding["severity"] == gsi["severity"] == "error" and gsi["message"].startswith("GSI1: ")
    assert finding["message"] == ("the table: on-demand read maximum 1 request units/s is below the estimated peak "
                                  "1,080 (average 360, at its busiest second): requests above it are throttled "
                                  "(production: an error)")
    code, out, _ = run_cli("lint", low, "--env", "dev", "--format", "json")
    assert [f["severity"] for f in json.loads(out)[0]["findings"] if f["code"] == "TW313"] == ["warning"] * 2


def test_a_production_maximum_below_the_peak_waits_for_the_window(tmp_path):
    base = orders(tmp_path, "base.yaml", _guarded(1600))
    low = orders(tmp_path, "low.yaml", _guarded(1))
    [gsi, guard] = sorted((c for c in prod_changes(base, low) if c.subject.endswith("on-demand maximum")),
                          key=lambda c: c.subject)
    assert (gsi.subject, gsi.cls, guard.cls) == ("GSI GSI1 on-demand maximum", "window", "window")
    assert guard.reason == ("read/write 1600/600 -> 1/600: requests above it are throttled; production: read below "
                            "the declared peak 1,080 (lint TW313), so traffic the blueprint expects is throttled")
    enough = orders(tmp_path, "enough.yaml", _guarded(2000))
    assert [c.cls for c in prod_changes(base, enough) if c.subject.endswith("on-demand maximum")] == ["safe"] * 2


def test_only_the_maximum_below_the_peak_waits(tmp_path):
    """GSI1 keeps its own maximum below the peak; raising only the table's is still safe."""
    def edit(table_read: int):
        def apply(data: dict) -> None:
            _guarded(table_read)(data)
            data["indexes"] = {"GSI1": {"max_throughput": {"read": 1, "write": 600}}}
        return apply
    base, raised = orders(tmp_path, "base.yaml", edit(1600)), orders(tmp_path, "raised.yaml", edit(2000))
    assert [(c.subject, c.cls) for c in prod_changes(base, raised) if c.subject.endswith("on-demand maximum")] == [
        ("table prod-orders_main: on-demand maximum", "safe")]


def test_the_gate_holds_a_production_maximum_below_the_peak_for_the_window(tmp_path):
    [_, prod] = load_blueprints(orders(tmp_path, "low.yaml", _guarded(1)))
    table = {"name": "prod-orders_main", "on_demand_throughput": [{"max_read_request_units": 1600,
                                                                   "max_write_request_units": 600}]}
    lowered = {**table, "on_demand_throughput": [{"max_read_request_units": 1, "max_write_request_units": 600}]}
    stack, decision = gate(plan(entry("aws_dynamodb_table.orders", ["update"], table, lowered)), prod, NOW)
    assert [(c.subject, c.cls) for c in stack.changes] == [("table prod-orders_main: on-demand maximum", "window")]
    assert decision.verdict == "window"
