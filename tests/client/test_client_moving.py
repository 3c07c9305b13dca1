"""Clients while a migration moves items to new keys: until `migrate verify` records it, the generated module reads
the keys old items still carry (and the old entity name they carry after a rename) as well as the new ones, and every
write leaves the item in the new shape only; once recorded, it reads and writes the new design alone."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import boto3
import pytest

from tablewright.blueprint.load import load_blueprints
from tablewright.blueprint.lock import lock_path, read_lock
from tablewright.client.generate import generate
from tablewright.client.model import client_of
from tablewright.design.items import build_item
from tablewright.stacks.stack import build_stacks
from tablewright.synth.synth import write_locks
from tests.client.test_client_migrating import record
from tests.support.client_support import TypeScriptTable, module_text, python_module, run_tsc, table_of
from tests.support.emulator import Emulator
from tests.support.gate_support import shop

RENAMED = {"Customer": None, "Client": {
    "attributes": {"customerId": "string", "email": "string", "name": "string",
                   "region": {"type": "string", "values": ["EU", "US", "APAC"]}},
    "key": {"pk": "CLIENT#{customerId}", "sk": "PROFILE"}, "writes_per_second": 2}}
REKEYED = {"Order": {"key": {"pk": "CUST#{customerId}", "sk": "ORDER#{orderId}"}}}
MOVES = [{"entity": "Client", "renamed_from": "Customer", "reason": "the CRM calls them clients"},
         {"entity": "Order", "from": {"pk": "CUSTOMER#{customerId}", "sk": "ORDER#{orderId}"},
          "to": {"pk": "CUST#{customerId}", "sk": "ORDER#{orderId}"}, "reason": "shorter keys"}]
DECLARATIONS = ("entity Customer renamed Client", "keys of Order on table")
PLACED = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


def moved(tmp_path: Path) -> tuple[Path, Any, Any]:
    """The shop and its next version, which renames Customer (onto new keys) and re-keys Order; the next version is
    synthesized once (its lock now holds the old keys as `moving`). Returns its path and both designs."""
    for side in ("base", "head"):
        (tmp_path / side).mkdir()
    base = shop(tmp_path / "base")
    [old] = build_stacks(load_blueprints(base))
    write_locks([old])
    head = shop(tmp_path / "head", entities={**RENAMED, **REKEYED}, migrations=MOVES,
                access_patterns={"customer": {"entity": "Client"}})
    shutil.copy(lock_path(base), lock_path(head))
    [new] = build_stacks(load_blueprints(head))
    write_locks([new])
    return head, old.design, new.design


def order(number: int, **values: Any) -> dict[str, Any]:
    return {"orderId": f"o{number}", "customerId": "c1", "placedAt": PLACED, "status": "PLACED", "total": number,
            **values}


def test_the_lock_keeps_the_old_keys_until_the_migration_is_recorded(tmp_path):
    head, _, new = moved(tmp_path)
    entry = read_lock(lock_path(head)).environments["default"]
    client, placed = entry.entities["Client"].moving, entry.entities["Order"].moving
    assert client is not None and client.entity == "Customer" and client.keys["table"].pk == "CUSTOMER#{customerId}"
    assert placed is not None and placed.entity == "Order" and placed.keys["table"].pk == "CUSTOMER#{customerId}"
    assert placed.declarations == ["keys of Order on table"]
    [again] = build_stacks(load_blueprints(head))  # designed against the rewritten lock: the old keys stay
    assert again.design.moving == new.moving
    record(head, *DECLARATIONS)
    [done] = build_stacks(load_blueprints(head))
    assert done.design.moving == {}


def test_reads_find_old_items_under_their_old_keys_and_name(aws, tmp_path):
    head, old, _ = moved(tmp_path)
    name = table_of(aws, head, tmp_path)
    aws.put_item(TableName=name, Item=build_item(old, "Customer", {
        "customerId": "c1", "email": "a@example.com", "name": "Ann", "region": "EU"}))
    for number in (1, 2, 4):
        aws.put_item(TableName=name, Item=build_item(old, "Order", order(number)))
    table = python_module(head).ShopTable(aws, name)
    table.put_order(order(3))
    assert table.customer(customerId="c1")["name"] == "Ann"
    assert table.customer(customerId="c9") is None
    page = table.customer_orders(customerId="c1")
    assert [item["orderId"] for item in page.items] == ["o1", "o2", "o3", "o4"] and page.next is None
    first = table.customer_orders(customerId="c1", limit=3)  # merged in sort-key order, across both keys
    rest = table.customer_orders(customerId="c1", limit=3, start=first.next)
    assert [item["orderId"] for item in first.items + rest.items] == ["o1", "o2", "o3", "o4"] and rest.next is None
    assert [item["total"] for item in table.order_by_id(orderId="o2").items] == [2]  # its index keys did not move


def test_writes_leave_each_item_in_the_new_shape_only(aws, tmp_path):
    head, old, _ = moved(tmp_path)
    name = table_of(aws, head, tmp_path)
    customer = {"customerId": "c1", "email": "a@example.com", "name": "Ann", "region": "EU"}
    aws.put_item(TableName=name, Item=build_item(old, "Customer", customer))
    aws.put_item(TableName=name, Item=build_item(old, "Customer", {**customer, "customerId": "c2"}))
    for number in (1, 2):
        aws.put_item(TableName=name, Item=build_item(old, "Order", order(number)))
    table = python_module(head).ShopTable(aws, name)

    def stored(pk: str, sk: str) -> dict[str, Any] | None:
        found: dict[str, Any] | None = aws.get_item(TableName=name, Key={"PK": {"S": pk}, "SK": {"S": sk}}).get("Item")
        return found

    table.update_order({"customerId": "c1", "orderId": "o1"}, {"status": "PAID"})
    assert stored("CUSTOMER#c1", "ORDER#o1") is None
    assert (stored("CUST#c1", "ORDER#o1") or {})["status"] == {"S": "PAID"}
    table.delete_order({"customerId": "c1", "orderId": "o2"})
    assert stored("CUSTOMER#c1", "ORDER#o2") is None and stored("CUST#c1", "ORDER#o2") is None
    table.put_client({**customer, "name": "Ann Lee"})
    assert stored("CUSTOMER#c1", "PROFILE") is None
    assert (stored("CLIENT#c1", "PROFILE") or {})["_entity"] == {"S": "Client"}
    table.update_client({"customerId": "c2"}, {"region": "US"})
    assert stored("CUSTOMER#c2", "PROFILE") is None
    assert stored("CLIENT#c2", "PROFILE") == {**build_item(old, "Customer", {**customer, "customerId": "c2"}),
                                              "PK": {"S": "CLIENT#c2"}, "_entity": {"S": "Client"},
                                              "region": {"S": "US"}}
    with pytest.raises(Exception, match="no Client"):
        table.update_client({"customerId": "c9"}, {"region": "US"})


def test_once_recorded_the_module_reads_and_writes_the_new_design_only(tmp_path):
    head, _, _ = moved(tmp_path)
    (pending,) = generate(build_stacks(load_blueprints(head)), "python").values()
    assert "_CUSTOMER_ORDERS_REQUEST_BEFORE" in pending and "_CUSTOMER_REQUEST_BEFORE" in pending
    assert 'former="Customer",' in pending and "moved=_Keys(" in pending
    record(head, *DECLARATIONS)
    (done,) = generate(build_stacks(load_blueprints(head)), "python").values()
    assert "_BEFORE" not in done and "former=" not in done and "moved=" not in done


def test_a_read_whose_old_keys_share_its_partition_is_not_doubled(tmp_path):
    """An old sort key in the same partition: the new request finds what its condition matches there, and a second
    request would return those items twice, so none is sent (the items the new condition misses wait for the
    backfill)."""
    (tmp_path / "base").mkdir()
    (tmp_path / "head").mkdir()
    base = shop(tmp_path / "base")
    [old] = build_stacks(load_blueprints(base))
    write_locks([old])
    head = shop(tmp_path / "head", entities={"Order": {"key": {"sk": "ORDER#{placedAt}#{orderId}"}}}, migrations=[
        {"entity": "Order", "from": {"pk": "CUSTOMER#{customerId}", "sk": "ORDER#{orderId}"},
         "to": {"pk": "CUSTOMER#{customerId}", "sk": "ORDER#{placedAt}#{orderId}"}, "reason": "by time"}])
    shutil.copy(lock_path(base), lock_path(head))
    client = client_of(build_stacks(load_blueprints(head)), "")
    assert client.entity("Order").moved is not None  # writes still clear the old key
    assert next(read for read in client.reads if read.pattern == "customer_orders").before is None


def test_an_index_key_move_reads_old_items_on_the_index_until_recorded(aws, tmp_path):
    (tmp_path / "base").mkdir()
    (tmp_path / "head").mkdir()
    base = shop(tmp_path / "base")
    [old] = build_stacks(load_blueprints(base))
    write_locks([old])
    was, now = {"pk": "ORDER#{orderId}", "sk": "{customerId}"}, {"pk": "ORDERID#{orderId}", "sk": "{customerId}"}
    head = shop(tmp_path / "head", entities={"Order": {"index_keys": {"GSI1": now}}}, migrations=[
        {"entity": "Order", "index": "GSI1", "from": was, "to": now, "reason": "clearer"}])
    shutil.copy(lock_path(base), lock_path(head))
    name = table_of(aws, head, tmp_path)
    aws.put_item(TableName=name, Item=build_item(old.design, "Order", order(1)))
    table = python_module(head).ShopTable(aws, name)
    table.put_order(order(2))
    assert [item["total"] for item in table.order_by_id(orderId="o1").items] == [1]
    assert [item["total"] for item in table.order_by_id(orderId="o2").items] == [2]
    record(head, "keys of Order on GSI1")
    done = python_module(head, text=module_text(head))
    assert done.ShopTable(aws, name).order_by_id(orderId="o1").items == []  # the old keys are no longer read


def test_old_keys_made_of_values_a_call_lacks_are_left_to_the_backfill(aws, tmp_path):
    """Old keys of `email`, new ones of `customerId`: a read by `customerId` cannot build the old key (it waits for the
    backfill), an update by key cannot find the old item (ItemNotFound), and a put, which has every value, still
    clears it."""
    (tmp_path / "base").mkdir()
    (tmp_path / "head").mkdir()
    base = shop(tmp_path / "base", entities={"Customer": {"key": {"pk": "CUSTOMER#{email}"}}},
                access_patterns={"customer": {"where": {"email": "="}}})
    [old] = build_stacks(load_blueprints(base))
    write_locks([old])
    head = shop(tmp_path / "head", entities=RENAMED, migrations=MOVES[:1], access_patterns={
        "customer": {"entity": "Client"}})
    shutil.copy(lock_path(base), lock_path(head))
    name = table_of(aws, head, tmp_path)
    customer = {"customerId": "c1", "email": "a@example.com", "name": "Ann", "region": "EU"}
    aws.put_item(TableName=name, Item=build_item(old.design, "Customer", customer))
    module = python_module(head)
    assert "_CUSTOMER_REQUEST_BEFORE" not in module_text(head)
    table = module.ShopTable(aws, name)
    assert table.customer(customerId="c1") is None
    with pytest.raises(module.ItemNotFound):
        table.update_client({"customerId": "c1"}, {"region": "US"})
    table.put_client(customer)
    old_key = {"PK": {"S": "CUSTOMER#a@example.com"}, "SK": {"S": "PROFILE"}}
    assert "Item" not in aws.get_item(TableName=name, Key=old_key)
    assert table.customer(customerId="c1")["email"] == "a@example.com"


def test_old_items_of_an_entity_renamed_in_place_are_read_and_written_under_the_new_name(aws, tmp_path):
    """A rename that keeps the keys: nothing moves, but old items carry the old name, which a collection names its
    items by and a Scan filters on; writes take them over under the new name."""
    (tmp_path / "base").mkdir()
    (tmp_path / "head").mkdir()
    patterns = {"everyone": {"entity": "Customer", "where": {"region": "="}, "scan": "allowed", "reason": "admin",
                             "rps": 0.01},
                "customer_and_orders": {"entity": ["Customer", "Order"], "where": {"customerId": "="}}}
    base = shop(tmp_path / "base", access_patterns=patterns)
    [old] = build_stacks(load_blueprints(base))
    write_locks([old])
    renamed = {**RENAMED, "Client": {**RENAMED["Client"], "key": {"pk": "CUSTOMER#{customerId}", "sk": "PROFILE"}}}
    head = shop(tmp_path / "head", entities=renamed, migrations=MOVES[:1], access_patterns={
        "customer": {"entity": "Client"}, "everyone": {**patterns["everyone"], "entity": "Client"},
        "customer_and_orders": {"entity": ["Client", "Order"], "where": {"customerId": "="}}})
    shutil.copy(lock_path(base), lock_path(head))
    name = table_of(aws, head, tmp_path)
    customer = {"customerId": "c1", "email": "a@example.com", "name": "Ann", "region": "EU"}
    aws.put_item(TableName=name, Item=build_item(old.design, "Customer", customer))
    aws.put_item(TableName=name, Item=build_item(old.design, "Order", order(1)))
    table = python_module(head).ShopTable(aws, name)
    assert [item["_entity"] for item in table.customer_and_orders(customerId="c1").items] == ["Order", "Client"]
    assert [item["customerId"] for item in table.everyone(region="EU").items] == ["c1"]
    table.update_client({"customerId": "c1"}, {"region": "US"})
    stored = aws.get_item(TableName=name, Key={"PK": {"S": "CUSTOMER#c1"}, "SK": {"S": "PROFILE"}})["Item"]
    assert stored["_entity"] == {"S": "Client"} and stored["region"] == {"S": "US"}


@pytest.mark.terraform
def test_the_typescript_client_reads_and_writes_both_shapes(tmp_path):
    head, old, new = moved(tmp_path)
    (tmp_path / "ts").mkdir()
    (tmp_path / "ts" / "shop_client.ts").write_text(module_text(head, "typescript"))
    done = run_tsc(tmp_path / "ts", "*.ts", out_dir="build")
    assert done.returncode == 0, done.stdout + done.stderr
    with Emulator() as emulator:
        aws = boto3.client("dynamodb", endpoint_url=emulator.endpoint, region_name="us-east-1",
                           aws_access_key_id="testing", aws_secret_access_key="testing")
        name = table_of(aws, head, tmp_path)
        aws.put_item(TableName=name, Item=build_item(old, "Customer", {
            "customerId": "c1", "email": "a@example.com", "name": "Ann", "region": "EU"}))
        for number in (1, 2):
            aws.put_item(TableName=name, Item=build_item(old, "Order", order(number)))
        aws.put_item(TableName=name, Item=build_item(new, "Order", order(3)))
        aws.put_item(TableName=name, Item=build_item(old, "Customer", {
            "customerId": "c2", "email": "b@example.com", "name": "Bo", "region": "EU"}))
        table = TypeScriptTable(tmp_path / "ts" / "build" / "shop_client.js", client_of(build_stacks(
            load_blueprints(head)), ""), emulator.endpoint, name)
        try:
            assert table.customer(customerId="c1")["name"] == "Ann"
            assert [item["orderId"] for item in table.customer_orders(customerId="c1").items] == ["o1", "o2", "o3"]
            table.update_order({"customerId": "c1", "orderId": "o1"}, {"status": "PAID"})
            table.delete_order({"customerId": "c1", "orderId": "o2"})
            table.update_client({"customerId": "c1"}, {"region": "US"})
            table.put_client({"customerId": "c2", "email": "b@example.com", "name": "Bo Li", "region": "EU"})
        finally:
            table.close()

        def stored(pk: str, sk: str) -> dict[str, Any] | None:
            found: dict[str, Any] | None = aws.get_item(TableName=name, Key={"PK": {"S": pk}, "SK": {"S": sk}}).get(
                "Item")
            return found

        assert stored("CUSTOMER#c1", "ORDER#o1") is None and stored("CUST#c1", "ORDER#o1")["status"] == {"S": "PAID"}
        assert stored("CUSTOMER#c1", "ORDER#o2") is None and stored("CUST#c1", "ORDER#o2") is None
        assert stored("CUSTOMER#c1", "PROFILE") is None
        assert stored("CLIENT#c1", "PROFILE")["_entity"] == {"S": "Client"}
        assert stored("CUSTOMER#c2", "PROFILE") is None and stored("CLIENT#c2", "PROFILE")["name"] == {"S": "Bo Li"}
