"""The gate's versioned JSON against its published schema (schema/gate.schema.json: every field it writes documented),
the Rego policy that reads it (examples/policy/tablewright.rego, evaluated by regopy), the gate's exit codes, and the
exit codes the docs list. Plans in the shape of `terraform show -json`, built from two syntheses
(tests/support/plan_fixtures.py)."""

from __future__ import annotations

import copy
import json
import re
from datetime import datetime
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator, FormatChecker

from tablewright.errors import EXIT_BAD_INPUT, EXIT_FAILED, EXIT_INTERNAL, EXIT_OK, EXIT_WINDOW
from tests.conftest import ROOT
from tests.support.plan_fixtures import plan_between, synthesis, write_plan
from tests.support.review_corpus import BASE, CASES, Case, write_case
from tests.support.terraform_support import missing_tool

GATE_SCHEMA = json.loads((ROOT / "schema" / "gate.schema.json").read_text())
POLICY = ROOT / "examples" / "policy" / "tablewright.rego"


def case_named(name: str) -> Case:
    return next(case for case in CASES if case.name == name)


# The gate's JSON, its schema and the Rego policy ---------------------------------------------------------------


MIGRATION = {"migrations": [  # the table's sort key, and GSI1's, which follows it
    {"entity": "Order", "index": "table", "from": {"pk": "CUSTOMER#{customerId}", "sk": "ORDER#{orderId}"},
     "to": {"pk": "CUSTOMER#{customerId}", "sk": "ORDER#{placedAt}#{orderId}"},
     "reason": "orders list by time; the orders team runs the backfill"},
    {"entity": "Order", "index": "GSI1", "from": {"pk": "ORDER#{orderId}", "sk": "{customerId}"},
     "to": {"pk": "ORDER#{orderId}", "sk": "{customerId}#{placedAt}"}, "reason": "follows the table's key"}]}
GATE_CASES = {  # name: (corpus change, extra overlay, --now, decision)
    "window-closed": ("stream_on", {}, "2026-12-01T12:00:00Z", "wait"),
    "window-open": ("stream_on", {}, "2026-12-01T02:30:00Z", "apply"),
    "no-window": ("stream_on", {"maintenance_window": None}, "2026-12-01T02:30:00Z", "hold"),  # nor had the base
    "window-removed": ("stream_on", {"maintenance_window": None}, "2026-12-01T12:00:00Z", "wait"),  # the old one
    "blocked": ("rename_table", {}, "2026-12-01T02:30:00Z", "hold"),
    "safe": ("retag", {}, "2026-12-01T12:00:00Z", "apply"),
    "undeclared-migration": ("change_key_template", {}, "2026-12-01T02:30:00Z", "hold"),
    "declared-migration": ("change_key_template", MIGRATION, "2026-12-01T12:00:00Z", "wait"),
}


@pytest.fixture(scope="module")
def base_synthesis(tmp_path_factory) -> dict:
    return synthesis(BASE, None, tmp_path_factory.mktemp("base") / "out")


def gate_json(name: str, base: dict, tmp_path: Path, run_cli, *extra: str) -> tuple[int, dict]:
    """The gate's JSON on the plan from the base to the case. The window in force is the one the base's state
    records: for `no-window` the base has none either."""
    corpus, overlay, now, _ = GATE_CASES[name]
    case = case_named(corpus)
    if name == "no-window":
        base = synthesis(write_case(Case("base-no-window", overlay, "safe"), tmp_path), None, tmp_path / "base.out")
    head = write_case(Case(name, {**case.overlay, **overlay}, case.verdict), tmp_path)
    plan = write_plan(plan_between(base, synthesis(head, None, tmp_path / f"{name}.out")), tmp_path / f"{name}.json")
    code, out, err = run_cli("gate", "--plan", plan, head, "--now", now, "--format", "json", *extra)
    assert code != EXIT_BAD_INPUT, err
    return code, json.loads(out)


def strict(schema: dict) -> dict:
    """The schema with no room for undocumented fields: every object lists all of its properties."""
    result = copy.deepcopy(schema)

    def close(node):
        if isinstance(node, dict):
            if "properties" in node:
                node["additionalProperties"] = False
            for value in node.values():
                close(value)
        elif isinstance(node, list):
            for value in node:
                close(value)

    close(result)
    return result


def test_the_gate_schema_is_a_valid_schema():
    Draft202012Validator.check_schema(GATE_SCHEMA)
    assert GATE_SCHEMA["properties"]["schema_version"] == {"const": 1, "description": GATE_SCHEMA["properties"][
        "schema_version"]["description"]}


@pytest.mark.parametrize("name", GATE_CASES)
def test_the_gate_json_validates_against_its_published_schema(name, base_synthesis, tmp_path, run_cli):
    code, document = gate_json(name, base_synthesis, tmp_path, run_cli)
    Draft202012Validator(GATE_SCHEMA, format_checker=FormatChecker()).validate(document)
    Draft202012Validator(strict(GATE_SCHEMA)).validate(document)  # and every field it writes is documented
    expected = GATE_CASES[name][3]
    assert document["decision"] == expected and document["passed"] is (expected == "apply")
    assert code == (EXIT_OK if expected == "apply" else EXIT_FAILED)
    assert datetime.fromisoformat(document["decided_at"]) == datetime.fromisoformat(GATE_CASES[name][2])
    if expected == "wait":
        assert document["window_open"] is False and datetime.fromisoformat(document["window_opens"]) > \
            datetime.fromisoformat(document["decided_at"])
    if name == "no-window":
        assert document["window_open"] is None and document["window_opens"] is None
    if name == "declared-migration":
        [data] = [d for d in document["data_changes"] if d["index"] == "table"]
        assert data["declared"]["strategy"] == "dual_write_backfill" and data["breaking"] is True


def test_the_strict_schema_catches_an_undocumented_field(base_synthesis, tmp_path, run_cli):
    _, document = gate_json("safe", base_synthesis, tmp_path, run_cli)
    document["changes"][0]["surprise"] = True
    Draft202012Validator(GATE_SCHEMA).validate(document)  # consumers: unknown fields are allowed
    with pytest.raises(Exception, match="surprise"):
        Draft202012Validator(strict(GATE_SCHEMA)).validate(document)


@pytest.mark.parametrize(("name", "detailed"), [("window-closed", EXIT_WINDOW), ("window-open", EXIT_OK),
                                                ("no-window", EXIT_FAILED), ("blocked", EXIT_FAILED),
                                                ("safe", EXIT_OK)])
def test_gate_detailed_exit_codes(name, detailed, base_synthesis, tmp_path, run_cli):
    assert gate_json(name, base_synthesis, tmp_path, run_cli, "--detailed-exitcode")[0] == detailed


def test_the_gate_picks_the_blueprint_whose_table_the_plan_manages(base_synthesis, tmp_path, run_cli):
    head = write_case(case_named("retag"), tmp_path)
    plan = write_plan(plan_between(base_synthesis, synthesis(head, None, tmp_path / "o")), tmp_path / "p.json")
    crm = ROOT / "blueprints" / "crm.yaml"
    code, out, _ = run_cli("gate", "--plan", plan, crm, "--blueprint", head, "--format", "json")
    assert code == 0 and json.loads(out)["stack"] == "shop"


def rego():
    try:
        import regopy
    except ImportError:
        missing_tool("regopy (a Rego interpreter, the `test` extra) is not installed")
    return regopy


def evaluate(policy: Path, document: dict) -> dict[str, list[str]]:
    """The policy's `deny` and `warn` on a gate document, by a Rego interpreter (rego-cpp, via regopy)."""
    interpreter = rego().Interpreter()
    interpreter.add_module("tablewright", policy.read_text())
    interpreter.set_input(document)
    found = {}
    for rule in ("deny", "warn"):
        [result] = interpreter.query(f"data.tablewright.{rule}").results
        [[messages]] = [result.expressions]
        found[rule] = sorted(messages)
    return found


@pytest.mark.parametrize("name", GATE_CASES)
def test_the_rego_policy_denies_what_the_gate_holds_back(name, base_synthesis, tmp_path, run_cli):
    _, document = gate_json(name, base_synthesis, tmp_path, run_cli)
    found = evaluate(POLICY, document)
    assert (found["deny"] == []) is document["passed"], found
    blocked = [c for c in document["changes"] if c["cls"] == "blocked"]
    assert len([m for m in found["deny"] if ": blocked: " in m]) == len(blocked)
    if name == "blocked":
        assert any("replace table shop_main" in m and "--allow-destroy lifts it" in m for m in found["deny"])
    if name == "window-closed":
        assert found["deny"] == [f"shop: 1 window change(s) and the maintenance window is closed: it opens "
                                 f"{document['window_opens']}"]
    if name == "no-window":
        assert found["deny"] == ["shop: 1 window change(s) and the maintenance window is not declared (add "
                                 "maintenance_window to the blueprint)"]
    assert len(found["warn"]) == document["counts"]["window"]


def test_the_rego_policy_refuses_a_schema_version_it_does_not_read(base_synthesis, tmp_path, run_cli):
    _, document = gate_json("safe", base_synthesis, tmp_path, run_cli)
    assert evaluate(POLICY, document)["deny"] == []
    document["schema_version"] = 2
    assert evaluate(POLICY, document)["deny"] == ["the gate's JSON has schema_version 2; this policy reads version 1"]


# Exit codes ------------------------------------------------------------------------------------------------


def test_the_docs_document_every_exit_code():
    page = (ROOT / "docs" / "reference" / "exit-codes.md").read_text()
    documented = {int(code) for code in re.findall(r"^\| `?(\d+)`? \|", page, re.MULTILINE)}
    assert documented == {EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT, EXIT_INTERNAL, EXIT_WINDOW, 130, 141}
    assert "--detailed-exitcode" in page
