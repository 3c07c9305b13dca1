"""What `migrate run` writes for each item (`migrate.items.Rewriter`), and what `migrate plan` figures: pinned to
the items the designs write and to hand arithmetic from the documented rules."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from tablewright.blueprint.load import load_blueprints
from tablewright.design.items import build_item
from tablewright.errors import TablewrightError
from tablewright.migrate.migration import Migration, migration
from tablewright.migrate.plan import plan_of, scan_units
from tablewright.report.migrate import render_plan_json, render_plan_text
from tablewright.stacks.stack import build_stacks
from tests.support.gate_support import shop

RENAMED = {"name": None, "fullName": {"type": "string", "renamed_from": "name"}}
BY_STATUS = {"orders_by_status": {"entity": "Order", "where": {"status": "="}, "order_by": "placedAt", "rps": 5}}


def plan_between(tmp_path: Path, base: dict[str, Any], head: dict[str, Any]) -> Migration:
    for side in ("base", "head"):
        (tmp_path / side).mkdir(exist_ok=True)
    [old] = build_stacks(load_blueprints(shop(tmp_path / "base", **base)))
    [new] = build_stacks(load_blueprints(shop(tmp_path / "head", **head)))
    return migration(old, new)


def customer(plan: Migration, **values: Any) -> dict[str, Any]:
    """A Customer item as the earlier design wrote it."""
    base = {"customerId": "c1", "email": "a@example.com", "name": "Ann", "region": "EU"}
    return build_item(plan.old.design, "Customer", {**base, **values})


def test_a_renamed_attribute_moves_under_its_new_name_conditioned_on_what_was_read(tmp_path):
    plan = plan_between(tmp_path, {}, {"entities": {"Customer": {"attributes": RENAMED}}})
    item = customer(plan)
    [request] = plan.rewriter.rewrite(item).requests
    update = request["Update"]
    assert update["Key"] == {"PK": item["PK"], "SK": item["SK"]}
    names, values = update["ExpressionAttributeNames"], update["ExpressionAttributeValues"]
    set_name = next(key for key, name in names.items() if key.startswith("#s") and name == "fullName")
    assert update["UpdateExpression"].startswith(f"SET {set_name} = :s0") and "REMOVE #r0" in update["UpdateExpression"]
    assert values[":s0"] == {"S": "Ann"} and names["#r0"] == "name"
    condition = update["ConditionExpression"]
    for name, typed in item.items():  # every value read, as read
        key = next(k for k, n in names.items() if n == name and k.startswith("#c"))
        assert f"{key} = :{key[1:]}" in condition and values[f":{key[1:]}"] == typed
    absent = next(k for k, n in names.items() if n == "fullName" and k.startswith("#c"))
    assert f"attribute_not_exists({absent})" in condition
    migrated = {k: v for k, v in item.items() if k != "name"} | {"fullName": {"S": "Ann"}}
    assert plan.rewriter.rewrite(migrated) is None  # idempotent
    assert plan.rewriter.problem(migrated) is None and "name" in plan.rewriter.problem(item)


def test_a_value_the_application_wrote_under_the_new_name_wins(tmp_path):
    plan = plan_between(tmp_path, {}, {"entities": {"Customer": {"attributes": RENAMED}}})
    item = customer(plan) | {"fullName": {"S": "Ann Lee"}}  # the new client updated it during the migration
    [request] = plan.rewriter.rewrite(item).requests
    assert request["Update"]["UpdateExpression"] == "REMOVE #r0"
    assert request["Update"]["ExpressionAttributeNames"]["#r0"] == "name"


def test_old_items_get_the_keys_of_a_new_index_exactly_as_the_application_writes_them(tmp_path):
    plan = plan_between(tmp_path, {}, {"access_patterns": BY_STATUS})
    values = {"orderId": "o1", "customerId": "c1", "placedAt": "2024-03-01T09:30:00Z", "status": "PAID",
              "total": 12.5, "expiresAt": "2030-01-01T00:00:00Z"}
    from tablewright.blueprint.encoding import parse_value

    specs = plan.old.design.blueprint.entities["Order"].attributes
    semantic = {name: parse_value(specs[name], raw) for name, raw in values.items()}
    old_item = build_item(plan.old.design, "Order", semantic)
    new_item = build_item(plan.new.design, "Order", semantic)
    added = {name: typed for name, typed in new_item.items() if name not in old_item}
    assert added, "the new index adds key attributes"
    [request] = plan.rewriter.rewrite(old_item).requests
    update = request["Update"]
    names, values_sent = update["ExpressionAttributeNames"], update["ExpressionAttributeValues"]
    written = {names[f"#s{i}"]: values_sent[f":s{i}"] for i in range(len(added))}
    assert written == added and "REMOVE" not in update["UpdateExpression"]
    assert plan.rewriter.rewrite(new_item) is None


@pytest.mark.parametrize(("stored", "expected"), [({"S": "42"}, {"N": "42"}), ({"S": "abc"}, None)])
def test_a_converted_attribute_is_written_as_its_new_type_or_reported(tmp_path, stored, expected):
    migrations = [{"entity": "Customer", "attribute": "email", "convert": True, "reason": "r"}]
    plan = plan_between(tmp_path, {}, {"entities": {"Customer": {"attributes": {"email": "number"}}},
                                       "migrations": migrations})
    item = customer(plan) | {"email": stored}
    rewrite = plan.rewriter.rewrite(item)
    if expected is None:
        assert rewrite is None and "is not a number" in plan.rewriter.failures[-1]
        assert "is not a number" in plan.rewriter.problem(item)
        return
    update = rewrite.requests[0]["Update"]
    assert update["ExpressionAttributeNames"]["#s0"] == "email" and update["ExpressionAttributeValues"][":s0"] == \
        expected


def test_a_required_attribute_gets_its_declared_default_where_missing(tmp_path):
    migrations = [{"entity": "Customer", "attribute": "tier", "default": "FREE", "reason": "r"}]
    plan = plan_between(tmp_path, {}, {"entities": {"Customer": {"attributes": {"tier": "string"}}},
                                       "migrations": migrations})
    update = plan.rewriter.rewrite(customer(plan)).requests[0]["Update"]
    assert update["ExpressionAttributeNames"]["#s0"] == "tier" and update["ExpressionAttributeValues"][":s0"] == \
        {"S": "FREE"}
    assert plan.rewriter.rewrite(customer(plan) | {"tier": {"S": "GOLD"}}) is None  # a value of its own stays


CLIENT = {"attributes": {"customerId": "string", "email": "string", "name": "string",
                         "region": {"type": "string", "values": ["EU", "US", "APAC"]}},
          "key": {"pk": "CLIENT#{customerId}", "sk": "PROFILE"}, "writes_per_second": 2}
RENAME_ENTITY = {"entities": {"Customer": None, "Client": CLIENT},
                 "access_patterns": {"customer": {"entity": "Client"}},
                 "migrations": [{"entity": "Client", "renamed_from": "Customer", "reason": "r"}]}


def test_an_entity_that_moves_keys_is_put_and_deleted_in_one_transaction_unless_already_written(tmp_path):
    plan = plan_between(tmp_path, {}, RENAME_ENTITY)
    item = customer(plan)
    put, delete = plan.rewriter.rewrite(item).requests
    assert put["Put"]["Item"]["PK"] == {"S": "CLIENT#c1"} and put["Put"]["Item"]["_entity"] == {"S": "Client"}
    assert put["Put"]["ConditionExpression"] == "attribute_not_exists(#k)"
    assert delete["Delete"]["Key"] == {"PK": {"S": "CUSTOMER#c1"}, "SK": {"S": "PROFILE"}}
    from dataclasses import replace

    moved = put["Put"]["Item"]
    dual_written = replace(plan.rewriter, existing=lambda key: moved if key["PK"] == {"S": "CLIENT#c1"} else None)
    [only] = dual_written.rewrite(item).requests
    assert list(only) == ["Delete"]
    someone_else = replace(plan.rewriter, existing=lambda key: {**moved, "customerId": {"S": "c9"}})
    assert someone_else.rewrite(item) is None and "holds another item; left where it is" in \
        someone_else.failures[-1]


def test_a_re_key_that_would_put_several_items_under_one_key_is_refused(tmp_path):
    """Order's sort key ORDER#{orderId} becoming ORDER#{status}: orders of one customer and status would share a
    key, and moving them would lose all but one."""
    migrations = [{"entity": "Order", "index": "table", "from": {"pk": "CUSTOMER#{customerId}",
                                                                 "sk": "ORDER#{orderId}"},
                   "to": {"pk": "CUSTOMER#{customerId}", "sk": "ORDER#{status}"}, "reason": "r"}]
    with pytest.raises(TablewrightError, match="is not made of `orderId`, which told its items apart"):
        plan_between(tmp_path, {}, {"entities": {"Order": {"key": {"sk": "ORDER#{status}"}}},
                                    "access_patterns": {"order_by_id": None}, "migrations": migrations})


def test_undeclared_changes_stop_the_migration_before_anything_runs(tmp_path):
    with pytest.raises(TablewrightError, match=r"data change\(s\) are blocked: Customer\.fullName required"):
        plan_between(tmp_path, {}, {"entities": {"Customer": {"attributes": {"name": None, "fullName": "string"}}}})
    with pytest.raises(TablewrightError, match="no item needs migrating"):
        plan_between(tmp_path, {}, {})


def test_write_units_per_request_follow_the_documented_rule(tmp_path):
    """1 unit per KB of the larger of the item before and after; on an index, its entry's units once when the entry
    is new or a projected attribute changes, twice when its keys change, none otherwise."""
    from tablewright.design.design import IndexDesign, KeyNames, Projection
    from tablewright.migrate.items import write_units

    include = IndexDesign("GSI1", KeyNames("GSI1PK", "GSI1SK"), (), Projection("INCLUDE", ("status",)), (), "")
    keys = ("PK", "SK")
    item = {"PK": {"S": "x"}, "SK": {"S": "y"}, "blob": {"S": "z" * 1530}}  # 2 + 1 + 2 + 1 + 4 + 1530 bytes
    assert write_units(item, item, (), keys) == 2  # 1,540 bytes: 2 units
    indexed = item | {"GSI1PK": {"S": "a"}, "GSI1SK": {"S": "b"}, "status": {"S": "OPEN"}}
    assert write_units(item, indexed, (include,), keys) == 2 + 1  # 1,566 bytes on the table, a new small entry
    moved = indexed | {"GSI1PK": {"S": "c"}}
    assert write_units(indexed, moved, (include,), keys) == 2 + 2 * 1  # the entry's keys change: delete and put
    assert write_units(indexed, indexed | {"blob": {"S": "w"}}, (include,), keys) == 2  # not projected: no entry write
    assert write_units(indexed, indexed | {"status": {"S": "DONE"}}, (include,), keys) == 2 + 1


def test_an_item_whose_writes_exceed_a_second_of_the_budget_is_left_and_said(tmp_path):
    from dataclasses import replace

    plan = plan_between(tmp_path, {}, {"entities": {"Customer": {"attributes": RENAMED}}})
    tight = replace(plan.rewriter, max_units=0.5)
    assert tight.rewrite(customer(plan)) is None and "more than a second of this worker's budget (0.5)" in \
        tight.failures[-1]


FLAT = {"traffic": {"peak_factor": 1}, "table": {"capacity": {"write": {"min": 50, "max": 50}}}}


def test_plan_figures_are_the_hand_arithmetic_of_the_declared_counts_and_traffic(tmp_path):
    """Customer (5,000 items under 1 KB, on no index) renamed: 5,000 units, 100 s at 50 WCU. The table has 50 WCU
    all day (min = max) and takes 2 + 10 writes a second (Customer and Order, flat, under 1 KB each): 38 units of
    headroom every hour, so 38 fits at every hour and 39 at none."""
    entities = {"Customer": {"item_count": 5000}}
    plan = plan_between(tmp_path, {**FLAT, "entities": entities},
                        {**FLAT, "entities": {"Customer": {"item_count": 5000, "attributes": RENAMED}}})
    figures = plan_of(plan, 50)
    assert figures.write_units == 5000 and figures.seconds == 100
    assert figures.scan_read_units == math.ceil(plan.old.cost.table_bytes / 4096) / 2
    assert scan_units(4097) == 1.0 and scan_units(8192) == 1.0 and scan_units(0) == 0
    assert figures.shares == {"table": 1.0}
    assert figures.largest_budget == pytest.approx(38)
    assert plan_of(plan, 38).fitting_hours == tuple(range(24)) and plan_of(plan, 39).fitting_hours == ()
    blueprint = plan.new.design.blueprint
    prices = plan.new.capacity.prices.table_class(blueprint.region, blueprint.table.table_class)
    hand = 1 * (50 * prices.provisioned_wcu_hour + figures.scan_read_units / 100 * prices.provisioned_rcu_hour)
    assert figures.cost_usd == pytest.approx(hand)
    text = render_plan_text(figures)
    assert "Customer: 5,000 item(s), 1 write unit(s) each" in text and "At --max-wcu 50: 100 s" in text
    assert "The largest budget that fits in some hour: --max-wcu 38" in text
    assert '"write_units": 5000' in render_plan_json(figures)


def test_an_unknown_item_count_says_so_instead_of_inventing_one(tmp_path):
    plan = plan_between(tmp_path, {}, {"entities": {"Customer": {"attributes": RENAMED}}})
    figures = plan_of(plan, 50)
    assert figures.write_units is None and figures.seconds is None and figures.cost_usd is None
    assert "unknown (declare `item_count`, or count with --endpoint-url)" in render_plan_text(figures)
    assert plan_of(plan, 50, {"Customer": 10}).write_units == 10


def test_write_units_per_item_on_each_index_follow_the_documented_rule(tmp_path):
    """Customer (under 1 KB) renamed `name` -> `fullName` and newly read by region (a new index of its own): 1 unit
    on the table (the item rewritten in place) and 1 on the new index (a new entry, under 1 KB); Order, on GSI1 and
    untouched, is not migrated at all."""
    by_region = {"customers_by_region": {"entity": "Customer", "where": {"region": "="},
                                         "returns": ["customerId", "email"], "rps": 5}}
    plan = plan_between(tmp_path, {"entities": {"Customer": {"item_count": 10}}},
                        {"entities": {"Customer": {"item_count": 10, "attributes": RENAMED}},
                         "access_patterns": by_region})
    [work] = plan_of(plan, 10).works
    new_index = next(index for index in plan.new.design.shapes["Customer"] if index != "table")
    assert work.units_by_target == {"table": 1.0, new_index: 1.0} and work.units_per_item == 2
    assert plan_of(plan, 10).write_units == 20 and plan_of(plan, 10).shares == {"table": 0.5, new_index: 0.5}


def test_verify_records_only_the_declarations_the_migration_carried_out(tmp_path):
    """Against a design that already has `fullName`, the rename declared in the blueprint is no change of this
    migration (only the new index's backfill is): its record must not claim it."""
    from tablewright.design.evolution import declarations

    plan = plan_between(tmp_path, {"entities": {"Customer": {"attributes": {"name": None, "fullName": "string"}}}},
                        {"entities": {"Customer": {"attributes": RENAMED}}, "access_patterns": BY_STATUS})
    assert declarations(plan.new.design.blueprint) == ["attribute Customer.name renamed fullName"]
    assert plan.declarations == [] and plan.entities == ("Order",)


def test_a_key_printed_from_table_data_is_escaped(tmp_path):
    plan = plan_between(tmp_path, {}, {"entities": {"Customer": {"attributes": RENAMED}}})
    item = customer(plan, customerId="c\x1b]0;x\x07") | {"customerId": {"N": "1"}}
    problem = plan.rewriter.problem(item)
    assert problem is not None and "\x1b" not in problem and "\\x1b" in problem


def test_verify_finds_a_migrated_attribute_missing_or_of_another_type(tmp_path):
    plan = plan_between(tmp_path, {}, {"entities": {"Customer": {"attributes": RENAMED}}})
    migrated = {k: v for k, v in customer(plan).items() if k != "name"}
    assert plan.rewriter.problem(migrated | {"fullName": {"S": "Ann"}}) is None
    assert "`fullName` stored as N, the later design reads a string" in plan.rewriter.problem(
        migrated | {"fullName": {"N": "42"}})
    assert "no `fullName`, which the later design requires" in plan.rewriter.problem(migrated)


def test_against_a_bare_revision_reads_the_blueprint_at_it(tmp_path, monkeypatch):
    from tablewright.cli.migrate_commands import against
    from tests.conftest import ROOT

    monkeypatch.chdir(ROOT)
    assert against("origin/main", "blueprints/crm.yaml") == "origin/main:blueprints/crm.yaml"
    assert against("HEAD~1", str(ROOT / "blueprints" / "crm.yaml")) == "HEAD~1:blueprints/crm.yaml"
    assert against("old.yaml", "blueprints/crm.yaml") == "old.yaml"  # a file, though it does not exist
    assert against("HEAD:blueprints/orders.yaml", "blueprints/crm.yaml") == "HEAD:blueprints/orders.yaml"
