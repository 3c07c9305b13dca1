"""Hostile plan files and gate arguments: malformed `terraform show -json` documents (wrong shapes, duplicate keys, NaN,
deep nesting, trailing garbage, 2 GB), a `--now` at the ends of the calendar, and a pull request that turns
production protection off, which neither `review` nor `gate` lets through. The contract:
tests/support/hostile_support.py. The gate's own attacks (windows, regions, hidden changes): test_gate_hardening.py."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import pytest

from tests.support.hostile_support import (
    NESTED,
    SHOP,
    SHOP_TEXT,
    assert_refused,
    ids,
    lay_out,
    run_slow,
)

# The plan gate -----------------------------------------------------------------------------------

TABLE_BEFORE = {"name": "shop_main", "hash_key": "PK", "range_key": "SK", "billing_mode": "PROVISIONED",
                "attribute": [{"name": "PK", "type": "S"}, {"name": "SK", "type": "S"}], "stream_enabled": False,
                "point_in_time_recovery": [{"enabled": True}], "deletion_protection_enabled": True}
VALID_PLAN = {  # a window change: the stream is turned on
    "format_version": "1.2", "terraform_version": "1.11.0", "planned_values": {"root_module": {}},
    "resource_changes": [{
        "address": "aws_dynamodb_table.shop", "mode": "managed", "type": "aws_dynamodb_table", "name": "shop",
        "change": {"actions": ["update"], "before": TABLE_BEFORE,
                   "after": {**TABLE_BEFORE, "stream_enabled": True, "stream_view_type": "NEW_AND_OLD_IMAGES"},
                   "after_unknown": {}},
    }],
}


def plan_with(change: Callable[[dict], Any]) -> str:
    plan = copy.deepcopy(VALID_PLAN)
    change(plan)
    return json.dumps(plan)


def first_entry(plan: dict) -> dict:
    return plan["resource_changes"][0]


def with_prior_state(value: str) -> str:
    """The valid plan with `value` (JSON text, valid or not) in its prior state."""
    return json.dumps(VALID_PLAN)[:-1] + ', "prior_state": {"x": ' + value + "}}"


PLAN_SHAPES = [
    ("resource-changes-a-dict", plan_with(lambda p: p.update(resource_changes={"a": first_entry(p)}))),
    ("resource-changes-a-string", plan_with(lambda p: p.update(resource_changes="all"))),
    ("entry-a-string", plan_with(lambda p: p.update(resource_changes=["aws_dynamodb_table.shop"]))),
    ("actions-null", plan_with(lambda p: first_entry(p)["change"].update(actions=None))),
    ("actions-a-number", plan_with(lambda p: first_entry(p)["change"].update(actions=7))),
    ("entry-without-address", plan_with(lambda p: first_entry(p).pop("address"))),
    ("entry-without-type", plan_with(lambda p: first_entry(p).pop("type"))),
    ("entry-without-change", plan_with(lambda p: first_entry(p).pop("change"))),
    ("change-a-list", plan_with(lambda p: first_entry(p).update(change=[]))),
    ("before-a-string", plan_with(lambda p: first_entry(p)["change"].update(before="shop_main"))),
    ("after-a-list", plan_with(lambda p: first_entry(p)["change"].update(after=[1, 2]))),
    ("address-a-number", plan_with(lambda p: first_entry(p).update(address=42))),
    ("top-level-list", json.dumps([VALID_PLAN])),
    ("top-level-string", '"terraform plan"'),
    ("top-level-null", "null"),
    ("deeply-nested-json", NESTED),
    ("deeply-nested-resource-changes", json.dumps({**VALID_PLAN, "resource_changes": []})[:-1].replace(
        '"resource_changes": []', '"resource_changes": ' + NESTED) + "}"),
    ("invalid-utf8", '{"format_version": "caf\udce9"}'),
    # Strict JSON: what parsers resolve differently (or not at all) is refused, wherever it is.
    ("duplicate-top-level-key", json.dumps(VALID_PLAN)[:-1] + ', "resource_changes": []}'),
    ("duplicate-key-in-prior-state", json.dumps(VALID_PLAN)[:-1] + ', "prior_state": {"a": 1, "a": 2}}'),
    ("duplicate-key-in-an-entry", json.dumps(VALID_PLAN).replace('"name": "shop", ', '"name": "shop", "name": "x", ')),
    ("nan", with_prior_state("NaN")),
    ("infinity", with_prior_state("Infinity")),
    ("minus-infinity", with_prior_state("-Infinity")),
    ("number-of-5000-digits", with_prior_state("9" * 5000)),
    ("number-beyond-a-double", with_prior_state("1e999")),
    ("format-version-2", plan_with(lambda p: p.update(format_version="2.0"))),
    ("format-version-a-number", plan_with(lambda p: p.update(format_version=1.2))),
    ("planned-values-a-list", plan_with(lambda p: p.update(planned_values=[]))),
    ("output-changes-a-list", plan_with(lambda p: p.update(output_changes=[]))),
    ("output-change-a-string", plan_with(lambda p: p.update(output_changes={"tablewright": "x"}))),
    ("output-change-without-actions", plan_with(lambda p: p.update(output_changes={"x": {"before": 1}}))),
    ("resource-drift-an-object", plan_with(lambda p: p.update(resource_drift={"a": 1}))),
    ("resource-drift-entry-a-string", plan_with(lambda p: p.update(resource_drift=["aws_dynamodb_table.shop"]))),
    ("trailing-garbage", json.dumps(VALID_PLAN) + " x"),
    ("two-documents", json.dumps(VALID_PLAN) + json.dumps(VALID_PLAN)),
    ("byte-order-mark", "\ufeff" + json.dumps(VALID_PLAN)),
    ("truncated", json.dumps(VALID_PLAN)[:-40]),
    ("empty", ""),
]


@pytest.mark.parametrize("name, text", PLAN_SHAPES, ids=ids(PLAN_SHAPES))
def test_gate_refuses_a_malformed_plan(name, text, tmp_path, run_cli):
    lay_out(tmp_path, {"plan.json": text})
    result = run_cli("gate", "--plan", tmp_path / "plan.json", "--blueprint", SHOP, "--now", "2026-12-01T12:00:00Z")
    assert_refused(result, mentions=("plan.json", "--plan"))


def test_gate_refuses_a_2gb_plan_without_reading_it(tmp_path):
    plan = tmp_path / "plan.json"
    with plan.open("wb") as handle:
        handle.truncate(2 * 1024**3)
    result = run_slow("gate", "--plan", plan, "--blueprint", SHOP, "--now", "2026-12-01T12:00:00Z", cwd=tmp_path)
    assert_refused(result, mentions=("plan.json", "--plan"))


GATE_NOW = [
    ("end-of-year-9999", "9999-12-31T23:59:59+00:00"),
    ("start-of-year-1", "0001-01-01T00:00:00+00:00"),
    ("year-1-east-of-utc", "0001-01-01T00:00:00+14:00"),
]


@pytest.mark.parametrize("name, now", GATE_NOW, ids=ids(GATE_NOW))
def test_gate_refuses_a_time_it_cannot_compute_with(name, now, tmp_path, run_cli):
    lay_out(tmp_path, {"plan.json": json.dumps(VALID_PLAN)})
    assert_refused(run_cli("gate", "--plan", tmp_path / "plan.json", "--blueprint", SHOP, "--now", now),
                   option="--now")


# Production protection cannot be switched off through review/gate ---------------------------------

PROD_BASE = SHOP_TEXT + "environments:\n  dev: {}\n  prod: {production: true}\n"
PRODUCTION_BYPASS = [
    ("overlay-turns-everything-off", "environments:\n  dev: {}\n  prod:\n    production: false\n"
                                     "    table: {deletion_protection: false, point_in_time_recovery: false}\n"),
    ("overlay-only-flips-production", "environments:\n  dev: {}\n  prod: {production: false}\n"),
    ("production-environment-loses-its-overlay", "environments:\n  dev: {}\n  prod: {}\n"),
]


@pytest.mark.parametrize("name, environments", PRODUCTION_BYPASS, ids=ids(PRODUCTION_BYPASS))
def test_review_blocks_turning_production_protection_off(name, environments, tmp_path, run_cli):
    lay_out(tmp_path, {"base.yaml": PROD_BASE, "head.yaml": SHOP_TEXT + environments})
    code, out, err = run_cli("review", "--base", tmp_path / "base.yaml", "--head", tmp_path / "head.yaml",
                             "--format", "json")
    assert code == 0, err
    assert json.loads(out)["verdict"] == "blocked"


def test_gate_blocks_a_plan_that_strips_protection_from_a_table_that_had_it(tmp_path, run_cli):
    """The head blueprint says the prod table is no longer production; the plan shows what it loses."""
    before = {**TABLE_BEFORE, "name": "shop_main-prod"}
    plan = copy.deepcopy(VALID_PLAN)
    first_entry(plan)["change"].update(before=before, after={
        **before, "deletion_protection_enabled": False, "point_in_time_recovery": [{"enabled": False}]})
    lay_out(tmp_path, {"plan.json": json.dumps(plan), "head.yaml": SHOP_TEXT + PRODUCTION_BYPASS[0][1]})
    code, out, err = run_cli("gate", "--plan", tmp_path / "plan.json", "--blueprint", tmp_path / "head.yaml",
                             "--env", "prod", "--now", "2026-12-01T02:30:00Z", "--format", "json")  # in the window
    assert code == 1, err
    assert json.loads(out)["verdict"] == "blocked"
