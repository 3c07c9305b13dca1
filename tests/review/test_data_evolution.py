"""Attribute identity and key collisions: a renamed, removed, retyped or newly required stored attribute is a data
migration (review, gate, `lint --against`), a renamed key attribute keeps its locked index, and no change merges
two entities' items (many renamed into one, an entity on keys another's items hold)."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from tablewright.blueprint.load import load_blueprints
from tablewright.blueprint.lock import MigratedRecord, lock_path, lock_text, read_lock
from tablewright.constructs.record import stack_record
from tablewright.design.locked import lock_of
from tablewright.review.gate import gate
from tablewright.stacks.stack import build_stacks
from tablewright.synth.synth import write_locks
from tests.conftest import ROOT
from tests.support.gate_support import NOW, TABLE, plan, shop

GATE_SCHEMA = json.loads((ROOT / "schema" / "gate.schema.json").read_text())
CUSTOMER = {"customerId": "string", "email": "string", "name": "string",
            "region": {"type": "string", "values": ["EU", "US", "APAC"]}}


def customer(**attributes: Any) -> dict[str, Any]:
    """An overlay of the shop's Customer attributes (a value None removes one)."""
    return {"Customer": {"attributes": attributes}}


def sides(tmp_path: Path, **overlay: Any) -> tuple[Path, Path]:
    for side in ("base", "head"):
        (tmp_path / side).mkdir(parents=True)
    return shop(tmp_path / "base"), shop(tmp_path / "head", **overlay)


def review(run_cli, base: Path, head: Path) -> dict[str, Any]:
    code, out, err = run_cli("review", "--base", base, "--head", head, "--format", "json")
    assert code == 0, err
    return json.loads(out)


def lint_findings(out: str) -> list[dict[str, Any]]:
    [stack] = json.loads(out)
    return list(stack["findings"])


def breaking(result: dict[str, Any]) -> list[dict[str, Any]]:
    [stack] = result["stacks"]
    return [change for change in stack["data_changes"] if change["breaking"]]


def attribute_changes(result: dict[str, Any]) -> list[tuple[str, str, bool]]:
    return [(c["attribute"]["name"], c["attribute"]["change"], c["attribute"]["declared"])
            for c in breaking(result) if c["kind"] == "attribute"]


def test_a_renamed_attribute_without_renamed_from_is_blocked_and_says_what_old_items_hold(tmp_path, run_cli):
    base, head = sides(tmp_path, entities=customer(name=None, fullName="string"))
    result = review(run_cli, base, head)
    assert result["verdict"] == "blocked"
    assert attribute_changes(result) == [("fullName", "required", False), ("name", "removal", False)]
    removal = next(c for c in breaking(result) if c["attribute"]["change"] == "removal")
    assert removal["attribute"]["application_sees"].startswith("every Customer item written before keeps `name`")
    assert "renamed_from" in removal["steps"][0]
    code, markdown, _ = run_cli("review", "--base", base, "--head", head)
    assert code == 0 and "Customer.name removed (was string) (NOT declared: blocked)" in markdown


def test_a_declared_attribute_rename_is_a_window_change_with_the_migrate_steps(tmp_path, run_cli):
    base, head = sides(tmp_path, entities=customer(name=None, fullName={"type": "string", "renamed_from": "name"}))
    result = review(run_cli, base, head)
    assert result["verdict"] == "window"
    [change] = breaking(result)
    assert change["attribute"] == {
        "name": "fullName", "change": "rename", "former": "name", "before": "string", "after": "string",
        "declared": True, "application_sees": "every Customer item written before carries the value as `name`: "
        "readers of `fullName` find nothing on them until the attribute is renamed in the items"}
    assert any("`tablewright migrate run` renames `name` to `fullName`" in step for step in change["steps"])
    [window] = [c for c in result["stacks"][0]["changes"] if c["category"] == "data"]
    assert (window["cls"], window["subject"]) == ("window", "Customer.name renamed fullName")


def test_lint_against_reports_the_attribute_change_until_the_major_version_is_bumped(tmp_path, run_cli):
    base, head = sides(tmp_path, entities=customer(name=None, fullName={"type": "string", "renamed_from": "name"}))
    code, out, _ = run_cli("lint", head, "--against", base, "--format", "json")
    findings = [f for f in lint_findings(out) if f["code"] == "TW404"]
    assert code == 1 and [f["severity"] for f in findings] == ["error"]
    assert findings[0]["message"].startswith("Customer.name renamed fullName: every Customer item written before")
    bumped = shop(tmp_path / "head", name="bumped.yaml", version="2.0.0",
                  entities=customer(name=None, fullName={"type": "string", "renamed_from": "name"}))
    code, out, _ = run_cli("lint", bumped, "--against", base, "--format", "json")
    assert [f["severity"] for f in lint_findings(out) if f["code"] == "TW404"] == ["info"]


@pytest.mark.parametrize(("attributes", "migration", "change"), [
    ({"email": None}, {"removal": "keep"}, ("email", "removal")),
    ({"email": None}, {"removal": "delete"}, ("email", "removal")),
    ({"email": "number"}, {"convert": True}, ("email", "type")),
    ({"tier": "string"}, {"default": "FREE"}, ("tier", "required")),
    ({"region": {"type": "string", "values": ["EU", "US", "APAC"], "optional": True}}, None, None),
], ids=["removal-keep", "removal-delete", "type", "required", "made-optional"])
def test_each_attribute_change_is_blocked_until_declared(tmp_path, run_cli, attributes, migration, change):
    base, head = sides(tmp_path, entities=customer(**attributes))
    undeclared = review(run_cli, base, head)
    if change is None:  # old items satisfy an optional attribute
        assert breaking(undeclared) == [] and undeclared["verdict"] != "blocked"
        return
    assert attribute_changes(undeclared) == [(*change, False)] and undeclared["verdict"] == "blocked"
    entry = {"entity": "Customer", "attribute": change[0], **migration, "reason": "r"}
    declared = shop(tmp_path / "head", name="declared.yaml", entities=customer(**attributes), migrations=[entry])
    result = review(run_cli, base, declared)
    assert attribute_changes(result) == [(*change, True)] and result["verdict"] == "window"
    assert breaking(result)[0]["declared"]["attribute"] == change[0]
    assert result["stacks"][0]["warnings"] == []


@pytest.mark.parametrize(("migration", "message"), [
    ({"entity": "Customer", "attribute": "nickname", "default": "x"}, "`nickname` is not an attribute of `Customer`"),
    ({"entity": "Customer", "attribute": "email", "removal": "delete"}, "names an attribute the entity still "
                                                                        "declares"),
    ({"entity": "Customer", "attribute": "region", "default": "MARS"}, "`default` is not a value of `region`"),
    ({"entity": "Customer", "attribute": "email", "removal": "expire"}, "applies to whole items"),
    ({"entity": "Customer", "attribute": "email", "convert": True, "default": "x"}, "says one thing"),
    ({"entity": "Customer", "default": "x"}, "`default` applies to an attribute migration"),
])
def test_a_wrong_attribute_migration_is_a_located_error(tmp_path, run_cli, migration, message):
    (tmp_path / "head").mkdir()
    path = shop(tmp_path / "head", migrations=[{**migration, "reason": "r"}])
    code, out, err = run_cli("lint", path)
    assert (code, out) == (2, "") and message in err and "\n  fix: " in err and "Traceback" not in err


def test_the_gate_reads_attribute_changes_from_the_plan_alone(tmp_path):
    """The `tablewright` output records every entity's stored attributes: an undeclared rename is blocked by the gate
    from the plan and the head blueprint, a declared one passes in the window."""
    for overlay, blocked in (({"name": None, "fullName": "string"}, True),
                             ({"name": None, "fullName": {"type": "string", "renamed_from": "name"}}, False)):
        base, head = sides(tmp_path / str(blocked), entities=customer(**overlay))
        [before], [after] = build_stacks(load_blueprints(base)), build_stacks(load_blueprints(head))
        outputs = {"tablewright": {"actions": ["update"], "before": stack_record(before.design),
                                   "after": stack_record(after.design)}}
        [loaded] = load_blueprints(head)
        stack, decision = gate(plan(TABLE, outputs=outputs), loaded, NOW)
        data = [(c.subject, c.cls) for c in stack.changes if c.category == "data"]
        if blocked:
            assert data == [("Customer.fullName required (was not stored)", "blocked"),
                            ("Customer.name removed (was string)", "blocked")] and not decision.passed
        else:
            assert data == [("Customer.name renamed fullName", "window")] and decision.passed
        from tablewright.report.review import gate_data

        jsonschema.validate(gate_data(stack, decision), GATE_SCHEMA)


def test_a_record_without_attributes_compares_keys_only(tmp_path):
    """A state written before attributes were recorded: nothing to compare, nothing invented."""
    base, head = sides(tmp_path, entities=customer(name=None, fullName="string"))
    [before], [after] = build_stacks(load_blueprints(base)), build_stacks(load_blueprints(head))
    old = {key: value for key, value in stack_record(before.design).items() if key != "attributes"}
    outputs = {"tablewright": {"actions": ["update"], "before": old, "after": stack_record(after.design)}}
    [loaded] = load_blueprints(head)
    stack, _ = gate(plan(TABLE, outputs=outputs), loaded, NOW)
    assert [c for c in stack.changes if c.category == "data"] == []


def test_a_renamed_key_attribute_keeps_its_locked_index_and_moves_no_key(tmp_path, run_cli):
    """`orderId` is in Order's table key and in the key of the index `order_by_id` reads. Renamed `id` with
    `renamed_from`, the locked design keeps both keys (their text is the same for the same values): no E403, no
    key change, only the stored attribute's rename; the index, which projects `orderId` by name, gets a successor
    that projects `id` (expand; the old one retires), never a blocked change."""
    base, _ = sides(tmp_path)
    [stack] = build_stacks(load_blueprints(base))
    write_locks([stack])
    order = {"attributes": {"orderId": None, "id": {"type": "string", "renamed_from": "orderId"}},
             "key": {"sk": "ORDER#{id}"}}
    head = shop(tmp_path / "head", entities={"Order": order},
                access_patterns={"order_by_id": {"entity": "Order", "where": {"orderId": None, "id": "="}}})
    shutil.copy(base.with_name("shop.lock.json"), head.with_name("shop.lock.json"))
    code, _, err = run_cli("lint", head)
    assert code in (0, 1) and "E403" not in err, err
    result = review(run_cli, base, head)
    assert [(c["kind"], c["attribute"] and c["attribute"]["change"]) for c in breaking(result)] == [
        ("attribute", "rename")]
    index_changes = [c for c in result["stacks"][0]["changes"] if c["category"] == "index"]
    assert [(c["subject"], c["cls"]) for c in index_changes] == [("GSI GSI2", "window")]
    assert "projection INCLUDE [customerId, expiresAt, id, orderId," in index_changes[0]["reason"]
    assert result["verdict"] == "window"
    plain = {"attributes": {"orderId": None, "id": "string"}, "key": {"sk": "ORDER#{id}"}}
    unrenamed = shop(tmp_path / "head", name="plain.yaml", entities={"Order": plain},
                     access_patterns={"order_by_id": {"entity": "Order", "where": {"orderId": None, "id": "="}}})
    shutil.copy(base.with_name("shop.lock.json"), unrenamed.with_name("plain.lock.json"))
    code, _, err = run_cli("lint", unrenamed)
    assert code == 2 and "E403" in err and "renamed_from: <old name>" in err


def test_two_entities_renamed_into_one_are_refused(tmp_path, run_cli):
    """Order and Customer both renamed Purchase would merge their items (and overwrite where keys meet)."""
    (tmp_path / "head").mkdir()
    purchase = {"attributes": {"orderId": "string", "customerId": "string"},
                "key": {"pk": "CUSTOMER#{customerId}", "sk": "ORDER#{orderId}"}, "writes_per_second": 10}
    head = shop(tmp_path / "head", entities={"Order": None, "Customer": None, "Purchase": purchase},
                access_patterns={"customer": None, "order_by_id": None,
                                 "customer_orders": {"entity": "Purchase", "where": {"customerId": "="}}},
                migrations=[{"entity": "Purchase", "renamed_from": "Order", "reason": "r"},
                            {"entity": "Purchase", "renamed_from": "Customer", "reason": "r"}])
    code, out, err = run_cli("lint", head)
    assert (code, out) == (2, "")
    assert "`Order` and `Customer` are both renamed `Purchase`: their items would merge" in err and "fix: " in err


INVOICE = {"attributes": {"orderId": "string", "customerId": "string", "amount": "number",
                          "expiresAt": {"type": "timestamp", "format": "epoch_seconds"}},
           "key": {"pk": "CUSTOMER#{customerId}", "sk": "ORDER#{orderId}"}, "writes_per_second": 1}


@pytest.mark.parametrize("removal", ["keep", "delete"])
def test_a_new_entity_on_the_keys_of_kept_items_is_blocked_whatever_is_declared(tmp_path, run_cli, removal):
    base, head = sides(tmp_path, entities={"Order": None, "Invoice": INVOICE},
                       access_patterns={"customer_orders": None, "order_by_id": None,
                                        "invoices": {"entity": "Invoice", "where": {"customerId": "="}, "rps": 5}},
                       migrations=[{"entity": "Order", "removal": removal, "reason": "r"}])
    result = review(run_cli, base, head)
    assert result["verdict"] == "blocked"
    [collision] = [c for c in breaking(result) if c["kind"] == "collision"]
    assert (collision["entity"], collision["former"]) == ("Invoice", "Order")
    assert collision["collision"] == (
        "Invoice (CUSTOMER#{customerId} / ORDER#{orderId}) on the keys Order's items hold (CUSTOMER#{customerId} / "
        "ORDER#{orderId}): reads of Invoice would return Order items and its puts would overwrite them")
    assert "Give Invoice a key of its own" in collision["steps"][0]
    code, out, _ = run_cli("lint", head, "--against", base, "--format", "json")
    assert code == 1 and [f["code"] for f in lint_findings(out) if f["code"] == "TW405"] == ["TW405"]
    own = {**INVOICE, "key": {"pk": "CUSTOMER#{customerId}", "sk": "INVOICE#{orderId}"}}
    apart = shop(tmp_path / "head", name="apart.yaml", entities={"Order": None, "Invoice": own},
                 access_patterns={"customer_orders": None, "order_by_id": None,
                                  "invoices": {"entity": "Invoice", "where": {"customerId": "="}, "rps": 5}},
                 migrations=[{"entity": "Order", "removal": removal, "reason": "r"}])
    assert [c for c in breaking(review(run_cli, base, apart)) if c["kind"] == "collision"] == []


def test_a_rename_onto_the_keys_another_entity_holds_is_blocked(tmp_path, run_cli):
    """Order removed (its items kept) and Customer renamed Client onto keys of Order's shape (CUSTOMER#{}/ORDER#{}):
    Client reads would return the kept orders."""
    client = {"attributes": {**CUSTOMER, "orderId": "string"},
              "key": {"pk": "CUSTOMER#{customerId}", "sk": "ORDER#{orderId}"}, "writes_per_second": 2}
    base, head = sides(tmp_path, entities={"Customer": None, "Order": None, "Client": client},
                       access_patterns={"customer": {"entity": "Client"}, "customer_orders": None,
                                        "order_by_id": None},
                       table={"ttl_attribute": None},
                       migrations=[{"entity": "Client", "renamed_from": "Customer", "reason": "r"},
                                   {"entity": "Order", "removal": "keep", "reason": "r"}])
    result = review(run_cli, base, head)
    assert result["verdict"] == "blocked"
    [collision] = [c for c in breaking(result) if c["kind"] == "collision"]
    assert (collision["entity"], collision["former"]) == ("Client", "Order")


def test_the_gate_blocks_a_contract_step_until_migrate_verify_recorded_it(tmp_path):
    """The state's record lists the declarations in force; a plan whose record drops one (`renamed_from` removed)
    needs the lock's record of `migrate verify` for it."""
    renamed = {"name": None, "fullName": {"type": "string", "renamed_from": "name"}}
    _, head = sides(tmp_path, entities=customer(**renamed))
    done = shop(tmp_path / "head", name="done.yaml", entities=customer(name=None, fullName="string"))
    [declaring], [contracted] = build_stacks(load_blueprints(head)), build_stacks(load_blueprints(done))
    outputs = {"tablewright": {"actions": ["update"], "before": stack_record(declaring.design),
                               "after": stack_record(contracted.design)}}
    assert outputs["tablewright"]["before"]["declared"] == ["attribute Customer.name renamed fullName"]
    [loaded] = load_blueprints(done)
    stack, decision = gate(plan(TABLE, outputs=outputs), loaded, NOW)
    assert [(c.subject, c.cls) for c in stack.changes if c.category == "data"] == [
        ("contract: attribute Customer.name renamed fullName", "blocked")] and not decision.passed
    record = MigratedRecord(identity="0123456789abcdef", declarations=["attribute Customer.name renamed fullName"],
                            items=3, verified="2026-12-06T03:00:00Z", table=contracted.design.blueprint.table.name)
    recorded = replace(loaded, lock=contracted_lock(contracted, record))
    stack, decision = gate(plan(TABLE, outputs=outputs), recorded, NOW)
    assert [c for c in stack.changes if c.category == "data"] == [] and decision.passed


def contracted_lock(stack: Any, record: Any) -> Any:
    return lock_of(stack.design).model_copy(update={"migrated": [record]})


def test_a_record_of_another_table_or_of_an_emulator_in_production_lifts_nothing(tmp_path):
    """A record the pull request's author wrote by hand (another table), or one `migrate verify` wrote against an
    emulator, does not stand for the production table's migration."""
    from tablewright.review.data import contracted

    [stack] = build_stacks(load_blueprints(shop(tmp_path, production=True)))
    declared = ["attribute Customer.name renamed fullName"]

    def record(**fields: Any) -> Any:
        values = {"identity": "0123456789abcdef", "declarations": declared, "items": 3,
                  "verified": "2026-12-06T03:00:00Z", "table": stack.design.blueprint.table.name, **fields}
        return contracted_lock(stack, MigratedRecord(**values))

    for lock, production, lifted in ((record(), True, True), (record(table="other_table"), True, False),
                                     (record(endpoint="http://127.0.0.1:4566"), True, False),
                                     (record(endpoint="http://127.0.0.1:4566"), False, True)):
        blocked = contracted(declared, [], lock, "blueprint", production)
        assert (blocked == []) == lifted, (lock.migrated, production)


@pytest.mark.parametrize("verified", ["2099-01-01T00:00:00Z", "2026-13-45T99:99:99Z"])
def test_a_record_from_the_future_or_of_no_date_is_refused(verified):
    from pydantic import ValidationError

    with pytest.raises(ValidationError):
        MigratedRecord(identity="0123456789abcdef", declarations=[], items=0, verified=verified, table="t")


def test_the_keys_of_kept_items_stay_taken_in_later_changes(tmp_path, run_cli):
    """Order removed with `keep` in one change (its lock retains Order's table keys), Invoice on those keys in the
    next: still blocked, by the review and by `lint --against`; once a delete of the items is verified, allowed."""
    (tmp_path / "first").mkdir()
    (tmp_path / "second").mkdir()
    removal = {"entities": {"Order": None}, "access_patterns": {"customer_orders": None, "order_by_id": None},
               "table": {"ttl_attribute": None}}
    first = shop(tmp_path / "first", **removal, migrations=[{"entity": "Order", "removal": "keep", "reason": "r"}])
    base = shop(tmp_path / "first", name="base.yaml")
    [old] = build_stacks(load_blueprints(base))
    write_locks([old])
    shutil.copy(lock_path(base), lock_path(first))
    [removed] = build_stacks(load_blueprints(first))
    write_locks([removed])
    assert read_lock(lock_path(first)).environments["default"].retained["Order"].sk == "ORDER#{orderId}"
    invoice = {**INVOICE, "attributes": {k: v for k, v in INVOICE["attributes"].items() if k != "expiresAt"}}
    second = shop(tmp_path / "second", entities={"Order": None, "Invoice": invoice}, table={"ttl_attribute": None},
                  access_patterns={"customer_orders": None, "order_by_id": None,
                                   "invoices": {"entity": "Invoice", "where": {"customerId": "="}, "rps": 5}})
    shutil.copy(lock_path(first), lock_path(second))
    result = review(run_cli, first, second)
    assert result["verdict"] == "blocked"
    [collision] = [c for c in breaking(result) if c["kind"] == "collision"]
    assert (collision["entity"], collision["former"]) == ("Invoice", "Order")
    _, out, _ = run_cli("lint", second, "--against", first, "--format", "json")
    assert [f["code"] for f in lint_findings(out) if f["code"] == "TW405"] == ["TW405"]
    lock = read_lock(lock_path(second))
    entry = lock.environments["default"]
    done = MigratedRecord(identity="0123456789abcdef", declarations=["entity Order removed (delete)"], items=9,
                          verified="2026-12-06T03:00:00Z", table=entry.table)
    updated = lock.model_copy(update={"environments": {"default": entry.model_copy(update={"migrated": [done]})}})
    lock_path(first).write_text(lock_text(updated.model_dump(mode="json", exclude_defaults=True)))
    [verified] = build_stacks(load_blueprints(first))
    assert verified.design.retained == {}


def test_keys_that_can_render_the_same_text_collide_though_their_templates_differ(tmp_path, run_cli):
    """Customer removed (its items kept) and Note on `CUSTOMER#{customerId} / {topic}`: a Note whose topic is PROFILE
    is a kept Customer's key. `CUSTOMER#{customerId} / NOTE#{topic}` never is (a value holds no '#')."""
    note = {"attributes": {"customerId": "string", "topic": "string"}, "writes_per_second": 1}
    notes = {"entity": "Note", "where": {"customerId": "=", "topic": "="}}
    change = {"access_patterns": {"customer": None, "notes": notes},
              "migrations": [{"entity": "Customer", "removal": "keep", "reason": "r"}]}
    base, meets = sides(tmp_path, entities={"Customer": None, "Note": {
        **note, "key": {"pk": "CUSTOMER#{customerId}", "sk": "{topic}"}}}, **change)
    [collision] = [c for c in breaking(review(run_cli, base, meets)) if c["kind"] == "collision"]
    assert (collision["entity"], collision["former"]) == ("Note", "Customer")
    apart = shop(tmp_path / "head", name="apart.yaml", **change, entities={"Customer": None, "Note": {
        **note, "key": {"pk": "CUSTOMER#{customerId}", "sk": "NOTE#{topic}"}}})
    assert [c for c in breaking(review(run_cli, base, apart)) if c["kind"] == "collision"] == []


def test_a_key_whose_encoding_alone_changes_says_how(tmp_path, run_cli):
    base, head = sides(tmp_path, entities=customer(customerId="number"))
    result = review(run_cli, base, head)
    subjects = [c["subject"] for c in result["stacks"][0]["changes"] if c["category"] == "data"]
    assert "Customer keys on the table: CUSTOMER#{customerId} / PROFILE in PK/SK [customerId: string] -> " \
           "CUSTOMER#{customerId} / PROFILE in PK/SK [customerId: number]" in subjects
    assert "Customer.customerId stored as string -> number" in subjects and result["verdict"] == "blocked"


def test_a_renamed_from_that_names_nothing_is_warned_about(tmp_path, run_cli):
    base, head = sides(tmp_path, entities=customer(nick={"type": "string", "optional": True, "renamed_from": "nic"}))
    [warning] = review(run_cli, base, head)["stacks"][0]["warnings"]
    assert warning.startswith("`Customer.nick` is declared `renamed_from: nic`, but `nic` is not an attribute")


def test_a_literal_template_sequence_in_the_record_reaches_terraform_escaped(tmp_path):
    """A timestamp format and a default may hold `${`: the `tablewright` output writes them as text Terraform does
    not evaluate, and a migration's declaration never carries the default's value."""
    from tablewright.constructs.record import terraform_record
    from tablewright.constructs.terraform import _evaluated

    path = shop(tmp_path, entities={"Customer": {"attributes": {
        "seenAt": {"type": "timestamp", "format": "%Y${aws_iam_role.x.arn}"}, "tier": "string"}}},
        migrations=[{"entity": "Customer", "attribute": "tier", "default": "${aws_iam_role.x.arn}", "reason": "r"}])
    [stack] = build_stacks(load_blueprints(path))
    assert stack_record(stack.design)["declared"] == ["attribute Customer.tier (default)"]
    written = json.dumps(terraform_record(stack.design))
    assert "$${aws_iam_role.x.arn}" in written and list(_evaluated(written)) == []
