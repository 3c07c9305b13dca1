"""Entities keep their identity: an entity renamed or removed is a data change, like a changed key. Undeclared,
the review and the gate block it and `lint --against` reports it (TW403); declared (a rename with its former
name, a removal saying what happens to the items) it is a window change with its steps."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from tablewright.blueprint.load import load_blueprints
from tablewright.constructs.record import stack_record
from tablewright.review.gate import gate
from tablewright.stacks.stack import build_stacks
from tablewright.synth.synth import write_locks
from tests.conftest import ROOT
from tests.support.gate_support import NOW, OUTSIDE, TABLE, plan, shop

CLIENT = {"attributes": {"customerId": "string", "email": "string", "name": "string",
                         "region": {"type": "string", "values": ["EU", "US", "APAC"]}},
          "key": {"pk": "CLIENT#{customerId}", "sk": "PROFILE"}, "writes_per_second": 2}
PATTERNS = {"customer": {"entity": "Client", "where": {"customerId": "="}, "rps": 20},
            "customer_orders": {"entity": "Order", "where": {"customerId": "="}, "rps": 30},
            "order_by_id": {"entity": "Order", "where": {"orderId": "="}, "rps": 40}}
RENAME = {"entity": "Client", "renamed_from": "Customer", "reason": "the CRM calls them clients"}
GATE_SCHEMA = json.loads((ROOT / "schema" / "gate.schema.json").read_text())


def renamed(directory: Path, *migrations: dict[str, Any], **overlay: Any) -> Path:
    """The shop with Customer renamed Client, its key prefix CUSTOMER# now CLIENT#."""
    return shop(directory, entities={"Customer": None, "Client": CLIENT}, access_patterns=PATTERNS,
                migrations=list(migrations), **overlay)


def removed(directory: Path, *migrations: dict[str, Any], **overlay: Any) -> Path:
    """The shop without Customer (and its pattern)."""
    patterns = {name: spec for name, spec in PATTERNS.items() if name != "customer"}
    return shop(directory, entities={"Customer": None}, access_patterns={"customer": None, **patterns},
                migrations=list(migrations), **overlay)


def sides(tmp_path: Path) -> tuple[Path, Path]:
    (tmp_path / "base").mkdir()
    (tmp_path / "head").mkdir()
    return shop(tmp_path / "base"), tmp_path / "head"


def review(run_cli, base: Path, head: Path, *flags: str) -> dict[str, Any]:
    code, out, stderr = run_cli("review", "--base", base, "--head", head, "--format", "json", *flags)
    assert code == 0, stderr
    return json.loads(out)


def data(result: dict[str, Any]) -> list[dict[str, Any]]:
    [stack] = result["stacks"]
    return [change for change in stack["data_changes"] if change["breaking"]]


def test_an_undeclared_rename_is_a_blocked_removal_that_names_the_new_entity(tmp_path, run_cli):
    base, head = sides(tmp_path)
    result = review(run_cli, base, renamed(head))
    assert result["verdict"] == "blocked"
    [change] = data(result)
    assert (change["kind"], change["entity"], change["before"], change["after"]) == (
        "removal", "Customer", "CUSTOMER#{customerId} / PROFILE in PK/SK [customerId: string]", None)
    assert change["declared"] is None
    assert "If one of them is Customer renamed" in change["steps"][-1] and "New in this change: Client" in \
        change["steps"][-1]
    [blocked] = [c for c in result["stacks"][0]["changes"] if c["category"] == "data"]
    assert blocked["cls"] == "blocked" and "renamed_from" in blocked["reason"]
    code, markdown, _ = run_cli("review", "--base", base, "--head", renamed(head))
    assert code == 0
    assert "> **Data migration:** `shop`: Customer removed, its items left in the table (NOT declared: blocked)" \
        in markdown
    assert "**Breaking for items already written: Customer is removed**" in markdown


def test_a_declared_rename_is_a_window_change_with_its_steps(tmp_path, run_cli):
    base, head = sides(tmp_path)
    result = review(run_cli, base, renamed(head, RENAME))
    assert result["verdict"] == "window"
    [change] = data(result)
    assert (change["kind"], change["entity"], change["former"]) == ("rename", "Client", "Customer")
    assert change["after"] == "CLIENT#{customerId} / PROFILE in PK/SK [customerId: string]"
    assert change["declared"] == {"entity": "Client", "renamed_from": "Customer", "strategy": "dual_write_backfill",
                                  "reason": "the CRM calls them clients"}
    assert "the table: CUSTOMER#{customerId} / PROFILE -> CLIENT#{customerId} / PROFILE" in change["steps"][0]
    assert any("`tablewright migrate run` moves each item marked `_entity = Customer`" in step
               for step in change["steps"])
    [window] = [c for c in result["stacks"][0]["changes"] if c["category"] == "data"]
    assert window["cls"] == "window" and window["subject"] == (
        "Customer renamed Client, keys CUSTOMER#{customerId} / PROFILE -> CLIENT#{customerId} / PROFILE")
    assert result["stacks"][0]["warnings"] == []


def test_a_rename_that_keeps_the_keys_is_still_a_data_change(tmp_path, run_cli):
    """Every item carries `_entity = Customer`: collections and scans filter by it."""
    base, head = sides(tmp_path)
    same_keys = {**CLIENT, "key": {"pk": "CUSTOMER#{customerId}", "sk": "PROFILE"}}
    undeclared = shop(head, entities={"Customer": None, "Client": same_keys}, access_patterns=PATTERNS,
                      lint={"ignore": {"TW204": "the profile shares the customer's partition, as before"}})
    assert review(run_cli, base, undeclared)["verdict"] == "blocked"
    declared = shop(head, name="declared.yaml", entities={"Customer": None, "Client": same_keys},
                    access_patterns=PATTERNS, migrations=[RENAME],
                    lint={"ignore": {"TW204": "the profile shares the customer's partition, as before"}})
    [change] = data(review(run_cli, base, declared))
    assert change["kind"] == "rename" and change["before"] == change["after"]
    assert "the keys stay as they are" in change["steps"][0]
    assert "`tablewright migrate run` sets `_entity` to `Client`" in change["steps"][1]


@pytest.mark.parametrize("removal", ["delete", "keep", "expire"])
def test_a_declared_removal_says_what_happens_to_the_items(removal, tmp_path, run_cli):
    base, head = sides(tmp_path)
    blocked = review(run_cli, base, removed(head))
    assert blocked["verdict"] == "blocked"
    assert data(blocked)[0]["steps"][0].startswith("Customer is gone from the blueprint, but its items stay")
    migration = {"entity": "Customer", "removal": removal, "reason": "customers moved to the CRM service"}
    result = review(run_cli, base, removed(head, migration))
    assert result["verdict"] == "window"
    [change] = data(result)
    assert change["kind"] == "removal" and change["declared"] == {"entity": "Customer", "removal": removal,
                                                                   "reason": "customers moved to the CRM service"}
    expected = {"delete": "DeleteItem", "keep": "read by no pattern", "expire": "`expiresAt` to now"}[removal]
    assert any(expected in step for step in change["steps"]), change["steps"]


def test_a_declared_migration_that_matches_nothing_is_a_warning(tmp_path, run_cli):
    """A rename left in the blueprint after it was applied: the base already calls the entity Client."""
    (tmp_path / "base").mkdir()
    (tmp_path / "head").mkdir()
    base = renamed(tmp_path / "base")
    result = review(run_cli, base, renamed(tmp_path / "head", RENAME))
    assert result["verdict"] == "safe"
    assert result["stacks"][0]["warnings"] == [
        "the declared migration renaming Customer to Client matches no entity of the design before in this pull "
        "request: remove it once the migration is done, or correct `renamed_from`"]


def test_lint_against_reports_a_rename_and_a_removal(tmp_path, run_cli):
    base, head = sides(tmp_path)
    code, out, _ = run_cli("lint", renamed(head), "--against", base, "--format", "json")
    assert code == 1
    [finding] = [f for f in json.loads(out)[0]["findings"] if f["code"] == "TW403"]
    assert finding["severity"] == "error"
    assert finding["message"].startswith("entity `Customer` is removed: its items already written keep the name "
                                         "`Customer` and their keys (CUSTOMER#{customerId} / PROFILE)")
    assert "(new in this version: Client)" in finding["message"]
    assert "entity: Client, renamed_from: Customer" in finding["fix"]
    code, out, _ = run_cli("lint", renamed(head, RENAME, version="2.0.0"), "--against", base, "--format", "json")
    [finding] = [f for f in json.loads(out)[0]["findings"] if f["code"] == "TW403"]
    assert finding["severity"] == "info" and "is renamed `Client`" in finding["message"]


def _rename_plan(tmp_path: Path, head: Path) -> dict[str, Any]:
    """No resource changes; the `tablewright` record's keys go from the base's entities to the head's."""
    base = shop(tmp_path / "base")
    [before] = build_stacks(load_blueprints(base))
    write_locks([before])
    (head.parent / "shop.lock.json").write_text((base.parent / "shop.lock.json").read_text())
    [after] = build_stacks(load_blueprints(head))
    outputs = {"tablewright": {"actions": ["update"], "before": stack_record(before.design),
                               "after": stack_record(after.design)}}
    return plan(TABLE, outputs=outputs)


def test_the_gate_blocks_an_undeclared_rename_from_the_plan_alone(tmp_path):
    _, head = sides(tmp_path)
    path = renamed(head)
    [loaded] = load_blueprints(path)
    stack, decision = gate(_rename_plan(tmp_path, path), loaded, NOW)
    assert [(c.category, c.cls) for c in stack.changes if c.category == "data"] == [("data", "blocked")]
    assert not decision.passed and "1 undeclared data migration(s)" in decision.reason
    from tablewright.report.review import gate_data

    document = gate_data(stack, decision)
    jsonschema.validate(document, GATE_SCHEMA)
    assert [change["kind"] for change in document["data_changes"]] == ["removal"]


def test_the_gate_lets_a_declared_rename_through_in_the_window(tmp_path):
    _, head = sides(tmp_path)
    path = renamed(head, RENAME)
    [loaded] = load_blueprints(path)
    stack, decision = gate(_rename_plan(tmp_path, path), loaded, NOW)
    assert [(c.category, c.cls) for c in stack.changes if c.category == "data"] == [("data", "window")]
    assert decision.passed
    from tablewright.report.review import gate_data

    jsonschema.validate(gate_data(stack, decision), GATE_SCHEMA)
    _, outside = gate(_rename_plan(tmp_path, path), loaded, OUTSIDE)
    assert outside.outcome == "wait"


@pytest.mark.parametrize(("migration", "table", "expected"), [
    ({"entity": "Order", "removal": "delete", "reason": "r"}, {},
     "migrations[0].entity: the removal of `Order` names an entity the blueprint still declares [E204]"),
    ({"entity": "Order", "renamed_from": "Customer", "reason": "r"}, {},
     "migrations[0].renamed_from: `Customer` is still an entity of the blueprint, so it was not renamed [E204]"),
    ({"entity": "Gone", "removal": "expire", "reason": "r"}, {"ttl_attribute": None},
     "migrations[0].removal: `removal: expire` needs the table's TTL (`table.ttl_attribute`) [E204]"),
    ({"entity": "Order", "renamed_from": "Old", "from": {"pk": "A", "sk": "B"}, "reason": "r"}, {},
     "migrations[0].from: `from` does not apply to a rename"),
    ({"entity": "Order", "renamed_from": "Order", "reason": "r"}, {},
     "migrations[0].renamed_from: `renamed_from` is the entity's own name `Order`"),
    ({"entity": "Gone", "removal": "delete", "strategy": "backfill", "reason": "r"}, {},
     "migrations[0].strategy: `strategy` does not apply to a removal"),
    ({"entity": "Order", "from": {"pk": "A", "sk": "B"}, "reason": "r"}, {},
     "migrations[0]: a key migration needs `from` and `to` (`to` is missing) [E201]"),
    ({"entity": "Gone", "removal": "keep", "renamed_from": "Old", "reason": "r"}, {},
     "migrations[0].removal: a migration is a rename or a removal, not both"),
])
def test_a_malformed_migration_is_a_located_error(migration, table, expected, tmp_path, run_cli):
    path = shop(tmp_path, migrations=[migration], table=table)
    code, stdout, stderr = run_cli("lint", path)
    assert code == 2 and stdout == "", stderr
    assert stderr.startswith(f"error: {path}:") and "\n  fix: " in stderr
    assert expected in stderr, stderr


def test_a_declared_rename_keeps_its_place_on_the_locked_indexes(tmp_path, run_cli):
    """The lock knows the entity by its old name: a declared rename inherits its locked index keys, so the bundled
    CRM's Customer renamed Client builds no index, and only its marker moves."""
    shutil.copytree(ROOT / "blueprints", tmp_path / "blueprints")
    head = tmp_path / "blueprints" / "crm.yaml"
    head.write_text(re.sub(r"\bCustomer\b", "Client", head.read_text()))
    code, out, _ = run_cli("review", "--base", ROOT / "blueprints" / "crm.yaml", "--head", head, "--env", "prod",
                           "--format", "json")
    [stack] = json.loads(out)["stacks"]
    assert json.loads(out)["verdict"] == "blocked"
    assert [c["kind"] for c in stack["data_changes"] if c["breaking"]] == ["removal", "collision"]
    [collision] = [c for c in stack["data_changes"] if c["kind"] == "collision"]
    assert collision["entity"] == "Client" and collision["former"] == "Customer"
    assert "declare the rename (`entity: Client`, `renamed_from: Customer`" in collision["steps"][-1]
    with head.open("a") as text:
        text.write("migrations:\n  - {entity: Client, renamed_from: Customer, reason: clients}\n")
    code, out, err = run_cli("review", "--base", ROOT / "blueprints" / "crm.yaml", "--head", head, "--env", "prod",
                             "--format", "json")
    assert code == 0, err
    review = json.loads(out)
    [stack] = review["stacks"]
    assert review["verdict"] == "window"
    assert [c for c in stack["changes"] if c["category"] == "index"] == []  # GSI1 and GSI2 keep Client
    [rename] = [c for c in stack["data_changes"] if c["breaking"]]
    assert (rename["kind"], rename["before"], rename["after"]) == ("rename", rename["after"], rename["after"])
    assert rename["steps"][0].startswith("Deploy writers that write Client items (marked `_entity = Client`); the "
                                         "keys stay as they are")


def test_a_rename_and_a_removal_of_one_entity_contradict_each_other(tmp_path, run_cli):
    _, head = sides(tmp_path)
    removal = {"entity": "Customer", "removal": "delete", "reason": "r"}
    code, _, err = run_cli("lint", renamed(head, RENAME, removal))
    assert code == 2 and "migrations[1].entity: `Customer` is declared both renamed (to `Client`) and removed" in err


def test_the_gate_blocks_a_plan_that_takes_the_recorded_keys_away(tmp_path):
    """The state records the keys; a plan whose `tablewright` output after it is gone, empty or not a record
    could hide any key change: blocked."""
    _, head = sides(tmp_path)
    path = shop(head)
    [loaded] = load_blueprints(path)
    document = _rename_plan(tmp_path, path)
    record = document["output_changes"]["tablewright"]
    for after in (None, {}, "x", {"production": False}):
        document["output_changes"]["tablewright"] = {**record, "after": after}
        stack, decision = gate(document, loaded, NOW)
        assert [(c.subject, c.cls) for c in stack.changes if c.cls == "blocked"] == [
            ("the stack's recorded keys", "blocked")], after
        assert not decision.passed
