"""Dropping a global secondary index is the contract step of the migrations of the entities it holds: the review and
the gate block `indexes.<name>.remove: true` while a declaration (still in the blueprint, or leaving it in the same
change) that concerns one of them has no record of `tablewright migrate verify` in the design lock.

Each case starts from the review corpus's shop, whose GSI1 holds Order (`order_by_id`), with the lock `synth` wrote
for it; the base retires GSI1 in one change (its lock written by `synth` from the shop's), the head drops it."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from tablewright.blueprint.language import Migration
from tablewright.blueprint.load import load_blueprints
from tablewright.blueprint.lock import MigratedRecord, StackLock, lock_path, lock_text
from tablewright.constructs.record import stack_record
from tablewright.design.evolution import (
    declaration,
    declaration_entities,
    declared_entities,
    migration_entities,
    rename_declaration,
)
from tablewright.design.locked import KeyFacts
from tablewright.review.gate import gate
from tablewright.review.index_contract import index_contract
from tablewright.review.review import build_review
from tablewright.stacks.stack import build_stacks
from tablewright.synth.synth import write_locks
from tests.support.gate_support import NOW, entry, plan, shop
from tests.support.review_corpus import merged

ORDER_BY_ID = {"order_by_id": {"returns": ["placedAt", "total"]}}
NEW_ORDER_KEY = {"pk": "CUSTOMER#{customerId}", "sk": "ORDER#{placedAt}#{orderId}"}
OLD_ORDER_KEY = {"pk": "CUSTOMER#{customerId}", "sk": "ORDER#{orderId}"}
REKEYED = {"entities": {"Order": {"key": NEW_ORDER_KEY}}, "access_patterns": {"order_by_id": None},
           "migrations": [{"entity": "Order", "from": OLD_ORDER_KEY, "to": NEW_ORDER_KEY, "reason": "by time"}]}
RENAMED_TOTAL = {"entities": {"Order": {"attributes": {"total": None, "totalCents": {
    "type": "number", "renamed_from": "total"}}}}, "access_patterns": {"order_by_id": {
        "returns": ["placedAt", "totalCents"]}}}  # GSI1 projects `total` by name: GSI2 succeeds it
DROP = {"indexes": {"GSI1": {"remove": True}}}
TOTAL_RENAMED = "attribute Order.total renamed totalCents"
CUSTOMER_RENAMED = {"entities": {"Customer": {"attributes": {"name": None, "fullName": {
    "type": "string", "renamed_from": "name"}}}}}


def record(*declarations: str, endpoint: str | None = None) -> dict[str, Any]:
    found = {"identity": "0123456789abcdef", "declarations": list(declarations), "items": 3,
             "verified": "2026-12-06T03:00:00Z", "table": "shop_main"}
    return {**found, "endpoint": endpoint} if endpoint else found


def versions(tmp_path: Path, base: dict[str, Any], head: dict[str, Any],
             *records: dict[str, Any], **common: Any) -> tuple[Path, Path]:
    """The shop (its lock), the base (`base` over it, its lock written by `synth` from the shop's) and the head
    (`head` over the base, the base's lock with `records` added): the paths of the base and the head."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    shop(tmp_path, "shop.yaml", access_patterns=ORDER_BY_ID, **common)
    write_locks(build_stacks(load_blueprints(tmp_path / "shop.yaml")))
    earlier = merged({"access_patterns": ORDER_BY_ID, **common}, base)
    base_path = shop(tmp_path, "base.yaml", **earlier)
    shutil.copy(lock_path(tmp_path / "shop.yaml"), lock_path(base_path))
    write_locks(build_stacks(load_blueprints(base_path)))
    head_path = shop(tmp_path, "head.yaml", **merged(earlier, head))
    lock = json.loads(lock_path(base_path).read_text())
    lock["environments"]["default"]["migrated"] = list(records)
    lock_path(head_path).write_text(lock_text(lock))
    return base_path, head_path


def contract_steps(base: Path, head: Path) -> tuple[str, list[tuple[str, str]], str]:
    """The review's verdict, its contract steps (subject, class) and the reason of the index's."""
    review = build_review(str(base), str(head))
    steps = [(c.subject, c.cls) for c in review.changes if c.subject.startswith("contract: ")]
    reason = next((c.reason for c in review.changes if c.subject == "contract: drop index GSI1"), "")
    return review.verdict, steps, reason


def test_dropping_an_index_while_a_key_migration_of_its_entity_is_pending_is_blocked(tmp_path):
    base, head = versions(tmp_path, REKEYED, DROP)
    verdict, steps, reason = contract_steps(base, head)
    assert verdict == "blocked" and steps == [("contract: drop index GSI1", "blocked")]
    assert reason.startswith("GSI1 holds Order, whose migration no `tablewright migrate verify` recorded in the "
                             "design lock: keys of Order on table.")
    assert "`tablewright migrate run`" in reason and "`tablewright migrate verify`" in reason
    assert "then drop GSI1" in reason


def test_a_verified_record_in_the_lock_lets_the_index_go(tmp_path):
    base, head = versions(tmp_path / "pending", REKEYED, DROP, record("keys of Customer on table"))
    assert contract_steps(base, head)[:2] == ("blocked", [("contract: drop index GSI1", "blocked")])
    base, head = versions(tmp_path / "verified", REKEYED, DROP, record("keys of Order on table"))
    assert contract_steps(base, head)[:2] == ("window", [])


def test_the_declaration_leaving_with_the_index_still_needs_its_record(tmp_path):
    """The contract step of both at once: the declaration removed and the index dropped in one change."""
    both = {**DROP, "migrations": None}
    base, head = versions(tmp_path / "pending", REKEYED, both)
    assert contract_steps(base, head)[:2] == ("blocked", [("contract: keys of Order on table", "blocked"),
                                                          ("contract: drop index GSI1", "blocked")])
    base, head = versions(tmp_path / "verified", REKEYED, both, record("keys of Order on table"))
    assert contract_steps(base, head)[:2] == ("window", [])


def test_a_pending_attribute_rename_that_retired_the_index_blocks_its_drop(tmp_path):
    base, head = versions(tmp_path / "pending", RENAMED_TOTAL, DROP)
    verdict, steps, reason = contract_steps(base, head)
    assert verdict == "blocked" and steps == [("contract: drop index GSI1", "blocked")]
    assert "the design lock: attribute Order.total renamed totalCents." in reason
    base, head = versions(tmp_path / "verified", RENAMED_TOTAL, DROP, record(TOTAL_RENAMED))
    assert contract_steps(base, head)[:2] == ("window", [])


def test_a_record_made_against_an_emulator_lifts_nothing_in_production(tmp_path):
    emulated = record("keys of Order on table", endpoint="http://127.0.0.1:4566")
    for production, steps in ((True, [("contract: drop index GSI1", "blocked")]), (False, [])):
        base, head = versions(tmp_path / str(production), REKEYED, DROP, emulated, production=production)
        assert contract_steps(base, head)[1] == steps, production


def test_a_pending_migration_of_an_entity_the_index_does_not_hold_changes_nothing(tmp_path):
    """Customer is not on GSI1: its pending rename leaves the drop a window change, as without it; Order's (on
    GSI1) blocks it."""
    retired = {"access_patterns": {"order_by_id": None}, **CUSTOMER_RENAMED}
    base, head = versions(tmp_path / "customer", retired, DROP)
    assert contract_steps(base, head)[:2] == ("window", [])
    base, head = versions(tmp_path / "order", merged(REKEYED, CUSTOMER_RENAMED), DROP)
    assert contract_steps(base, head)[1] == [("contract: drop index GSI1", "blocked")]


def test_an_entity_renamed_keeps_its_place_on_the_index_for_its_other_migrations():
    """GSI1 held Order, renamed Purchase (verified): a pending migration of Purchase still concerns it."""
    renamed, removed = "entity Order renamed Purchase", "attribute Purchase.note (delete)"
    declared = {renamed: ("Order", "Purchase"), removed: ("Purchase",), "keys of Customer on table": ("Customer",)}
    lock = StackLock(table="shop_main", migrated=[MigratedRecord(**record(renamed))])
    keys = KeyFacts("K#{id} / S", None, (), "PK/SK", "id: string")
    held = {("Order", "GSI1"): keys, ("Customer", "table"): keys}
    [step] = index_contract([("aws_dynamodb_table.shop", "GSI1")], held, declared, lock)
    assert (step.subject, step.cls, step.address) == ("contract: drop index GSI1", "blocked", "aws_dynamodb_table.shop")
    assert step.reason.startswith(f"GSI1 holds Purchase, whose migration no `tablewright migrate verify` recorded in "
                                  f"the design lock: {removed}.")
    assert index_contract([("aws_dynamodb_table.shop", "GSI1")], held, {renamed: ("Order", "Purchase")}, lock) == []


# The gate: a plan whose table update deletes GSI1, and the `tablewright` records of the base (the state it starts
# from) and of the head (what it plans), as `terraform show -json` carries them.

def _gsi(name: str) -> dict[str, Any]:
    return {"name": name, "hash_key": "GSI1PK", "range_key": "GSI1SK", "projection_type": "ALL"}


def drop_plan(base: Path, head: Path, before_record: dict[str, Any] | None = None) -> dict[str, Any]:
    [old], [new] = build_stacks(load_blueprints(base)), build_stacks(load_blueprints(head))
    table = {"name": "shop_main", "hash_key": "PK", "range_key": "SK"}
    update = entry("aws_dynamodb_table.shop", ["update"], {**table, "global_secondary_index": [_gsi("GSI1"),
                                                                                                _gsi("GSI2")]},
                   {**table, "global_secondary_index": [_gsi("GSI2")]})
    outputs = {"tablewright": {"actions": ["update"], "before": before_record or stack_record(old.design),
                               "after": stack_record(new.design)}}
    return plan(update, outputs=outputs)


def gate_steps(plan_json: dict[str, Any], head: Path, lock: Any = None) -> tuple[list[tuple[str, str]], Any]:
    [loaded] = load_blueprints(head)
    if lock is not None:
        loaded = replace(loaded, lock=lock)
    stack, decision = gate(plan_json, loaded, NOW)
    return [(c.subject, c.cls) for c in stack.changes if c.subject.startswith("contract: ")], decision


def test_the_gate_blocks_the_drop_until_the_lock_records_the_migration(tmp_path):
    base, head = versions(tmp_path / "pending", RENAMED_TOTAL, DROP)
    steps, decision = gate_steps(drop_plan(base, head), head)
    assert steps == [("contract: drop index GSI1", "blocked")] and not decision.passed
    assert "1 contract step(s) before their migration is verified" in decision.reason
    assert "undeclared" not in decision.reason
    base, head = versions(tmp_path / "verified", RENAMED_TOTAL, DROP, record(TOTAL_RENAMED))
    steps, decision = gate_steps(drop_plan(base, head), head)
    assert steps == [] and decision.passed


def test_the_gate_reads_a_declaration_that_leaves_from_the_prior_record(tmp_path):
    """The head drops `renamed_from` with the index: only the state's record still names the rename, and it
    concerns Order, which GSI1 holds."""
    contracted = {**DROP, "entities": {"Order": {"attributes": {"totalCents": "number"}}}}
    base, head = versions(tmp_path, RENAMED_TOTAL, contracted)
    steps, decision = gate_steps(drop_plan(base, head), head)
    assert steps == [("contract: attribute Order.total renamed totalCents", "blocked"),
                     ("contract: drop index GSI1", "blocked")] and not decision.passed
    assert "2 contract step(s)" in decision.reason


def test_a_prior_record_without_keys_is_judged_as_before(tmp_path):
    """A state recorded before keys were: the gate cannot tell what GSI1 held, and the drop stays a window change
    (with the keys recorded, it is blocked)."""
    base, head = versions(tmp_path, RENAMED_TOTAL, DROP)
    [old] = build_stacks(load_blueprints(base))
    recorded = stack_record(old.design)
    older = {key: value for key, value in recorded.items() if key not in ("keys", "attributes")}
    steps, decision = gate_steps(drop_plan(base, head, {**older, "version": 1}), head)
    assert steps == [] and decision.passed
    assert gate_steps(drop_plan(base, head, recorded), head)[0] == [("contract: drop index GSI1", "blocked")]


MIGRATIONS = [
    ({"entity": "Order", "index": "GSI1", "from": OLD_ORDER_KEY, "to": NEW_ORDER_KEY, "reason": "r"}, ("Order",)),
    ({"entity": "Client", "renamed_from": "Customer", "reason": "r"}, ("Customer", "Client")),
    ({"entity": "Invoice", "removal": "delete", "reason": "r"}, ("Invoice",)),
    ({"entity": "Invoice", "removal": "expire", "reason": "r"}, ("Invoice",)),
    ({"entity": "Order", "attribute": "note", "removal": "delete", "reason": "r"}, ("Order",)),
    ({"entity": "Order", "attribute": "tier", "default": "FREE", "reason": "r"}, ("Order",)),
    ({"entity": "Order", "attribute": "age", "convert": True, "reason": "r"}, ("Order",)),
]


@pytest.mark.parametrize(("fields", "entities"), MIGRATIONS, ids=lambda value: str(value)[:40])
def test_a_declarations_entities_read_from_its_text_are_its_models(fields, entities):
    migration = Migration.model_validate(fields)
    text = declaration(migration)
    assert text is not None and declaration_entities(text) == migration_entities(migration) == entities


def test_a_renamed_attribute_and_what_runs_nothing_or_is_no_declaration():
    assert declaration_entities(rename_declaration("Order", "total", "totalCents")) == ("Order",)
    assert declaration(Migration.model_validate({"entity": "Invoice", "removal": "keep", "reason": "r"})) is None
    assert declaration_entities("keys of order on table") == declaration_entities("something else") == ()


def test_the_blueprints_declarations_come_with_their_entities(tmp_path):
    [loaded] = load_blueprints(shop(tmp_path, **merged(REKEYED, CUSTOMER_RENAMED)))
    assert declared_entities(loaded.blueprint) == {"keys of Order on table": ("Order",),
                                                   "attribute Customer.name renamed fullName": ("Customer",)}
