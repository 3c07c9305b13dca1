"""Capacity and cost against figures computed by hand, rounding edges included."""

from __future__ import annotations

import json
import math

import pytest

from tablewright.capacity.cost import monthly_cost
from tablewright.capacity.estimate import write_units
from tablewright.capacity.loads import estimate
from tablewright.capacity.size import batch_read_units, item_size, read_units, value_size
from tablewright.design.designer import design
from tests.support.design_helpers import blueprint


def test_item_sizes_follow_dynamodb_rules():
    assert item_size({"PK": {"S": "USER#1"}}) == 2 + 6
    assert value_size({"N": "12345"}) == 3 + 1  # one byte per two significant digits, plus one
    assert value_size({"N": "1200"}) == 1 + 1  # trailing zeros are not significant
    assert value_size({"BOOL": True}) == 1
    assert item_size({"é": {"S": "ü"}}) == 2 + 2  # UTF-8 bytes


@pytest.mark.parametrize(
    "size, consistent, expected",
    [(0, False, 0.5), (1, True, 1.0), (4096, True, 1.0), (4096, False, 0.5), (4097, True, 2.0), (4097, False, 1.0),
     (8192, False, 1.0), (8193, False, 1.5)],
)
def test_read_units_round_up_to_4_kb_and_halve_for_eventual_consistency(size, consistent, expected):
    assert read_units(size, consistent) == expected


def test_batch_reads_round_each_item():
    # Three 1 KB items: one 4 KB unit each, not one unit for all three.
    assert batch_read_units([1024, 1024, 1024], consistent=True) == 3.0
    assert read_units(3 * 1024, consistent=True) == 1.0


@pytest.mark.parametrize("size, expected", [(1, 1), (1024, 1), (1025, 2), (2048, 2), (2049, 3)])
def test_write_units_round_up_to_1_kb(size, expected):
    assert write_units(size) == expected


def entity(size: int, writes: float = 0, **extra) -> dict:
    return {"attributes": {"id": "string", "at": "timestamp", "body": "string"},
            "key": {"pk": "ITEM#{id}", "sk": "{at}"}, "item_bytes": size, "writes_per_second": writes, **extra}


def test_query_cost_is_the_total_read_rounded_once():
    # 10 items x 800 bytes = 8,000 bytes -> 2 units; eventually consistent -> 1.0 RCU; at 50/s -> 50 RCU/s.
    bp = blueprint({"Item": entity(800)}, {"recent": {"entity": "Item", "where": {"id": "="}, "items": 10, "rps": 50}})
    read = estimate(design(bp)).read("recent")
    assert (read.units_per_call, read.units_per_second) == (1.0, 50.0)
    strong = blueprint({"Item": entity(800)},
                       {"recent": {"entity": "Item", "where": {"id": "="}, "items": 10, "consistent": True}})
    assert estimate(design(strong)).read("recent").units_per_call == 2.0


@pytest.mark.parametrize("size, expected", [(4096, 0.5), (4097, 1.0)])
def test_get_item_at_the_4_kb_edge(size, expected):
    item = {**entity(size), "key": {"pk": "ITEM#{id}", "sk": "ITEM"}}
    bp = blueprint({"Item": item}, {"one": {"entity": "Item", "where": {"id": "="}}})
    assert estimate(design(bp)).read("one").units_per_call == expected


def test_keys_only_index_counts_the_follow_up_reads():
    kind = {**entity(5000), "attributes": {"id": "string", "at": "timestamp", "body": "string", "kindOf": "string"}}
    bp = blueprint({"Item": kind}, {"by_kind": {"entity": "Item", "where": {"kindOf": "="}, "items": 3,
                                                "returns": ["body"]}},
                   indexes={"GSI1": {"projection": "keys_only"}})
    read = estimate(design(bp)).read("by_kind")
    # The keys-only query reads 3 small entries (one 4 KB unit, halved); each 5,000-byte item then costs
    # its own 2 units, halved: 3 x 1.0.
    assert read.units_per_call == 0.5
    assert read.table_units_per_call == 3.0
    assert read.requests_per_call == 2


def units(cost, kind: str) -> dict[str, float]:
    return next(k.units for k in cost.kinds if k.kind == kind)


TICKET = {"attributes": {"id": "string", "at": "timestamp", "body": "string", "owner": "string",
                         "state": {"type": "string", "values": ["NEW", "DONE"]}},
          "key": {"pk": "TICKET#{id}", "sk": "TICKET"}, "item_bytes": 1500}
BY_STATE = {"by_state": {"entity": "Ticket", "where": {"state": "="}, "order_by": "at", "returns": ["id", "owner"]}}


def ticket_costs(writes: dict, **extra):
    bp = blueprint({"Ticket": {**TICKET, "writes": writes, **extra}}, BY_STATE)
    return estimate(design(bp)).writes[0]


def test_inserts_write_the_item_and_each_index_entry_once():
    # Table: 1,500 bytes -> 2 WCU. GSI1 entry (its keys, the table's keys, id, owner) under 1 KB -> 1 WCU.
    cost = ticket_costs({"inserts": 10})
    assert units(cost, "insert") == {"table": 2.0, "GSI1": 1.0}
    assert cost.units_per_second == {"table": 20.0, "GSI1": 10.0}


@pytest.mark.parametrize("changes, table, gsi", [
    (["state"], 2.0, 2.0),  # a GSI key attribute: delete the old entry, put the new one
    (["owner"], 2.0, 1.0),  # a projected attribute: the entry is rewritten once
    (["body"], 2.0, 0.0),  # neither: the index is not written at all
    (["id"], 8.0, 2.0),  # the table key: a delete and a put, in a transaction (2 x 2 x 2 WCU)
])
def test_updates_cost_what_they_change(changes, table, gsi):
    cost = ticket_costs({"updates": 5, "changes": changes})
    assert units(cost, "update") == {"table": table, "GSI1": gsi}
    assert cost.units_per_second == {"table": 5 * table, "GSI1": 5 * gsi}


def test_updates_change_the_mutable_attributes_unless_they_say_and_mutable_overrides_the_name():
    cost = ticket_costs({"updates": 1})  # `state` is guessed mutable from its name
    assert units(cost, "update")["GSI1"] == 2.0 and "guessed from the name" in cost.kinds[0].note
    never = {**TICKET["attributes"], "state": {"type": "string", "values": ["NEW", "DONE"], "mutable": False}}
    cost = ticket_costs({"updates": 1}, attributes=never)
    assert units(cost, "update")["GSI1"] == 0.0


def test_deletes_write_every_entry_expiries_are_free_transactions_double_the_table():
    cost = ticket_costs({"deletes": 2, "expiries": 7})
    assert units(cost, "delete") == {"table": 2.0, "GSI1": 1.0}
    assert units(cost, "expiry") == {"table": 0.0, "GSI1": 0.0}
    assert cost.units_per_second == {"table": 4.0, "GSI1": 2.0}
    transactional = ticket_costs({"inserts": 1}, transactional=True)
    assert units(transactional, "insert") == {"table": 4.0, "GSI1": 1.0}


def test_a_failed_condition_still_costs_the_table_the_existing_item():
    # "Only if higher": 10 updates/s of `state` (GSI1's key), 70% failing their condition.
    cost = ticket_costs({"updates": 10, "changes": ["state"], "failing": {"updates": 0.7}})
    # The 3/s that succeed re-key the GSI1 entry: 2 WCU on the table (1,500 B), 2 entries of 1 WCU on GSI1.
    assert units(cost, "update") == {"table": 2.0, "GSI1": 2.0}
    # The 7/s that fail: the existing 1,500 B item, 2 WCU, on the table only.
    assert units(cost, "update (condition fails)") == {"table": 2.0, "GSI1": 0.0}
    assert cost.units_per_second == pytest.approx({"table": 3 * 2 + 7 * 2, "GSI1": 3 * 2})
    # Counting only the successes would say 6 WCU/s on the table: understated 20 / 6 = 3.3 times.
    assert ticket_costs({"updates": 3, "changes": ["state"]}).units_per_second["table"] == 6


def test_a_failed_conditional_insert_writes_no_index_entry():
    # Reservations that find the seat taken: 90% of 20 inserts/s fail against the existing item.
    cost = ticket_costs({"inserts": 20, "failing": {"inserts": 0.9}})
    assert cost.units_per_second["table"] == pytest.approx(2 * 2 + 18 * 2)
    assert cost.units_per_second["GSI1"] == pytest.approx(2 * 1)


def test_batch_writes_cost_what_the_items_cost_one_by_one():
    # 50 inserts/s of 1,500 B in BatchWriteItem requests of 25: each item is rounded up on its own,
    # 2 WCU, not 25 x 1,500 B = 37,500 B -> 37 WCU per request.
    batched = ticket_costs({"inserts": 50, "deletes": 5, "batch": 25})
    assert batched.units_per_second == ticket_costs({"inserts": 50, "deletes": 5}).units_per_second
    assert batched.units_per_second == {"table": 55 * 2, "GSI1": 55 * 1}
    assert "BatchWriteItem requests of 25" in batched.kinds[0].note


def test_an_append_only_log_costs_one_write_per_index():
    log = {"attributes": {"logId": "string", "level": {"type": "string", "values": ["INFO", "ERROR"]},
                          "source": "string", "at": "timestamp", "message": "string"},
           "key": {"pk": "LOG#{logId}", "sk": "LOG"}, "item_bytes": 300, "writes_per_second": 50}
    patterns = {"by_level": {"entity": "Log", "where": {"level": "="}, "order_by": "at", "returns": ["message"]},
                "by_source": {"entity": "Log", "where": {"source": "="}, "order_by": "at", "returns": ["message"]}}
    cost = estimate(design(blueprint({"Log": log}, patterns))).writes[0]
    # Inserts only (`writes_per_second`): 300 bytes -> 1 WCU on the table and on each GSI: 50 x 3 = 150 WCU/s.
    assert units(cost, "insert") == {"table": 1.0, "GSI1": 1.0, "GSI2": 1.0}
    assert sum(cost.units_per_second.values()) == 150.0


def test_a_sparse_index_counts_only_the_items_that_carry_its_key():
    escalated = {**TICKET["attributes"], "escalatedTo": {"type": "string", "present": 0.05}}
    patterns = {"escalated": {"entity": "Ticket", "where": {"escalatedTo": "="}, "order_by": "at",
                              "returns": ["id"]}}
    bp = blueprint({"Ticket": {**TICKET, "attributes": escalated, "writes_per_second": 100, "item_count": 1_000_000}},
                   patterns)
    report = estimate(design(bp))
    # 1 WCU per GSI entry, but only 5% of the tickets carry `escalatedTo`: 100 x 0.05 = 5 WCU/s on GSI1.
    assert report.writes[0].units_per_second == {"table": 200.0, "GSI1": 5.0}
    assert report.load("GSI1").write_units_per_second == 5.0


def test_query_items_come_from_item_count_over_the_partitions_addressed():
    customer = {"attributes": {"customerId": "string"}, "key": {"pk": "CUSTOMER#{customerId}", "sk": "PROFILE"},
                "item_count": 200_000}
    contact = {"attributes": {"customerId": "string", "at": "timestamp", "note": "string"},
               "key": {"pk": "CUSTOMER#{customerId}", "sk": "CONTACT#{at}"}, "item_bytes": 800,
               "item_count": 8_000_000}
    bp = blueprint({"Customer": customer, "Contact": contact},
                   {"contacts": {"entity": "Contact", "where": {"customerId": "="}, "rps": 10},
                    "last": {"entity": "Contact", "where": {"customerId": "="}, "order": "desc", "limit": 3}})
    report = estimate(design(bp))
    contacts = report.read("contacts")
    # 8,000,000 contacts over 200,000 customers (one Customer per customerId) = 40 per call; 40 x 800 bytes =
    # 32,000 bytes -> 8 units of 4 KB, rounded once for the request, halved (eventually consistent): 4 RCU.
    assert (contacts.items_per_call, contacts.units_per_call, contacts.units_per_second) == (40.0, 4.0, 40.0)
    assert "8,000,000 items over 200,000 customerId values (one Customer each)" in contacts.basis
    assert report.read("last").items_per_call == 3.0  # the limit, under the 40 available


def test_an_unbounded_query_reads_every_page_of_the_collection():
    customer = {"attributes": {"customerId": "string", "industry": {"type": "string", "values": ["A", "B", "C"]},
                               "name": "string"},
                "key": {"pk": "CUSTOMER#{customerId}", "sk": "PROFILE"}, "item_bytes": 1200, "item_count": 200_000}
    bp = blueprint({"Customer": customer}, {"by_industry": {"entity": "Customer", "where": {"industry": "="},
                                                             "rps": 5}})
    read = estimate(design(bp)).read("by_industry")
    # 200,000 / 3 = 66,666.7 customers per industry of 1,185-byte GSI1 entries: 79,000,000 bytes. The generated
    # client reads every page of at most 1 MB: ceil(79,000,000 / 1,048,576) = 76 Query requests; 75 full pages of
    # 256 units and a last of 79,000,000 - 75 x 1,048,576 = 356,800 bytes, 88 units: 19,288 units, halved.
    assert read.bytes_per_item == 1185 and math.ceil(200_000 / 3 * 1185) == 79_000_000
    assert [(r.operation, r.count) for r in read.requests] == [("Query", 76)]
    assert (read.units_per_call, read.units_per_second) == ((75 * 256 + 88) / 2, 5 * (75 * 256 + 88) / 2)
    assert read.basis == ("200,000 items over 3 industry values; 75.3 MB a request: 76 pages of at most 1 MB, the "
                          "client reads them all")


def test_suggested_bounds_and_monthly_cost():
    item = {**entity(1000, writes=10), "key": {"pk": "ITEM#{id}", "sk": "ITEM"}}
    bp = blueprint({"Item": item}, {"one": {"entity": "Item", "where": {"id": "="}, "rps": 100}}, region="us-east-1")
    designed = design(bp)
    report = estimate(designed)
    table = report.load("table")
    # Reads: 100/s x 0.5 = 50 RCU/s; at 70% the minimum is ceil(50 / 0.7) = 72, the peak (x3) ceil(150 / 0.7) = 215.
    assert (table.read_units_per_second, table.suggested_read) == (50.0, (72, 215))
    # Writes: 10 WCU/s -> ceil(10 / 0.7) = 15 and ceil(30 / 0.7) = 43.
    assert table.suggested_write == (15, 43)
    cost = monthly_cost(designed, report)
    # On-demand (this table's billing): 2,628,000 s x (50 x $0.125 + 10 x $0.625) per million = $16.43 + $16.43.
    assert (cost.amount("on-demand read requests"), cost.amount("on-demand write requests")) == (16.43, 16.43)
    # Provisioned at the minimums, for comparison: 730 h x 72 x $0.00013 + 730 h x 15 x $0.00065 = $6.83 + $7.12.
    provisioned = (cost.line("provisioned read capacity"), cost.line("provisioned write capacity"))
    assert [line.monthly for line in provisioned] == [6.83, 7.12] and not any(line.billed for line in provisioned)
    assert cost.dates is not None and (cost.dates.effective, cost.dates.checked) == ("2024-11-01", "2026-11-30")
    assert {line.region for line in cost.lines} == {"us-east-1"}


def test_capacity_command_text_and_json(run_cli):
    code, out, _ = run_cli("capacity")
    assert code == 0 and "Suggested read min-max" in out
    assert "Monthly cost (us-east-1 prices, USD, effective 2024-11-01, checked 2026-11-30" in out
    code, out, _ = run_cli("capacity", "--format", "json", "--env", "prod")
    [crm, _orders] = json.loads(out)
    recent = next(r for r in crm["reads"] if r["pattern"] == "recent_contacts")
    # 3 contacts x 800 bytes = 2,400 bytes -> one unit, eventually consistent: 0.5 RCU; 500 calls/s.
    assert recent["units_per_call"] == 0.5 and recent["rps"] == 500
    assert crm["cost"]["prices"] == {"effective": "2024-11-01", "checked": "2026-11-30",
                                     "file": "modules/tablewright/capacity/prices.json"}
    assert all(line["region"] == "us-east-1" for line in crm["cost"]["lines"])


def test_explain_shows_per_pattern_figures(run_cli):
    _code, out, _ = run_cli("explain", "--format", "json", "--env", "prod")
    crm = json.loads(out)[0]
    recent = next(p for p in crm["patterns"] if p["name"] == "recent_contacts")
    assert recent["capacity"] == {
        "items_per_call": 3, "read_units_per_call": 0.5, "read_units_per_second": 250.0,
        "items_basis": "the limit, of about 40.0 (8,000,000 items over 200,000 customerId values (one Customer each) "
                       "(a range condition reads up to all of it))",
        "requests_per_call": [{"operation": "Query", "count": 1, "why": "one page"}]}


HOT_EVENT = {"attributes": {"tenantId": {"type": "string", "cardinality": 10, "hot_key_share": 0.5},
                            "at": "timestamp", "body": "string"},
             "key": {"pk": "TENANT#{tenantId}", "sk": "EVENT#{at}", "shards": 5}, "item_bytes": 900,
             "writes_per_second": 3000}
RECENT = {"recent": {"entity": "Event", "where": {"tenantId": "="}, "order": "desc", "limit": 10, "rps": 100}}


def test_a_sharded_read_with_a_limit_reads_the_limit_from_every_shard():
    read = estimate(design(blueprint({"Event": HOT_EVENT}, RECENT))).read("recent")
    # The cookbook sends `Limit: 10` to each of the 5 shards' Query: each reads 10 items x 900 bytes = 9,000
    # bytes -> ceil(9,000 / 4,096) = 3 units, so 5 x 3 = 15 units strongly consistent, halved: 7.5 RCU per call,
    # 750 RCU/s at 100 calls/s (not 5 x ceil(2 x 900 / 4,096) / 2 = 2.5, the limit split across the shards).
    assert (read.requests_per_call, read.items_per_call) == (5, 50.0)
    assert (read.units_per_call, read.units_per_second) == (7.5, 750.0)
    assert read.basis == "the limit on each of 5 shard requests"


def test_a_sharded_read_reads_at_most_its_shares_of_the_collection():
    # 1,000 events over 10 tenants = 100 per tenant, 20 per shard: under the limit of 30, each shard's request
    # reads its 20 (18,000 bytes -> 5 units); 5 x 5 / 2 = 12.5 RCU per call.
    counted = {**HOT_EVENT, "item_count": 1000}
    limit30 = {"recent": {**RECENT["recent"], "limit": 30}}
    read = estimate(design(blueprint({"Event": counted}, limit30))).read("recent")
    assert (read.items_per_call, read.units_per_call) == (100.0, 12.5)
    assert read.basis.startswith("the limit on each of 5 shard requests, of about 20.0 per shard")
    # Without a limit the collection is split across the shards: the same 20 per shard.
    unlimited = {"recent": {k: v for k, v in RECENT["recent"].items() if k != "limit"}}
    read = estimate(design(blueprint({"Event": counted}, unlimited))).read("recent")
    assert (read.items_per_call, read.units_per_call) == (100.0, 12.5)
    # A limit of 10 under the 20 per shard: 10 per shard, 3 units each: 7.5 RCU per call.
    read = estimate(design(blueprint({"Event": counted}, RECENT))).read("recent")
    assert (read.items_per_call, read.units_per_call) == (50.0, 7.5)


def test_a_sharded_read_reads_every_page_of_each_shard():
    # 100,000 events per tenant, 20,000 per shard x 900 bytes = 18,000,000 bytes a shard: 18 pages each (17 of 256
    # units, the last 18,000,000 - 17 x 1,048,576 = 174,208 bytes: 43 units), 5 shards, halved.
    counted = {**HOT_EVENT, "item_count": 1_000_000}
    unlimited = {"recent": {k: v for k, v in RECENT["recent"].items() if k != "limit"}}
    read = estimate(design(blueprint({"Event": counted}, unlimited))).read("recent")
    assert read.units_per_call == 5 * (17 * 256 + 43) / 2
    assert read.items_per_call == 100_000
    assert [(r.operation, r.count) for r in read.requests] == [("Query", 5 * 18)]



def test_a_follow_up_fetches_only_the_items_a_sharded_call_returns():
    kind = {**entity(5000), "attributes": {"id": "string", "at": "timestamp", "body": "string", "kindOf": "string"}}
    bp = blueprint({"Item": kind}, {"by_kind": {"entity": "Item", "where": {"kindOf": "="}, "limit": 3,
                                                "returns": ["body"]}},
                   indexes={"GSI1": {"projection": "keys_only", "shards": 5}})
    read = estimate(design(bp)).read("by_kind")
    # Each of the 5 shards' queries reads up to 3 small keys-only entries (one unit, halved): 5 x 0.5. The call
    # keeps 3 of the 15 and fetches those 3 from the table, 5,000 bytes each: 3 x ceil(5,000 / 4,096) / 2 = 3.0.
    assert (read.items_per_call, read.units_per_call) == (15.0, 2.5)
    assert (read.fetched_items, read.table_units_per_call, read.requests_per_call) == (3.0, 3.0, 6)


def test_a_collection_of_several_entities_weighs_entry_sizes_by_item_count():
    order = {"attributes": {"orderId": "string", "note": "string"}, "key": {"pk": "ORDER#{orderId}", "sk": "ORDER"},
             "item_bytes": 2000, "item_count": 1000}
    line = {"attributes": {"orderId": "string", "sku": "string"}, "key": {"pk": "ORDER#{orderId}", "sk": "ITEM#{sku}"},
            "item_bytes": 400, "item_count": 9000}
    patterns = {"order_with_items": {"entity": ["Order", "OrderItem"], "where": {"orderId": "="}}}
    read = estimate(design(blueprint({"Order": order, "OrderItem": line}, patterns))).read("order_with_items")
    # 10,000 items over 1,000 orders = 10 per call. Average entry (2,000 x 1,000 + 400 x 9,000) / 10,000 = 560
    # bytes (not the plain mean, 1,200): 5,600 bytes -> 2 units, halved: 1.0 RCU (the mean would say 1.5).
    assert (read.items_per_call, read.bytes_per_item, read.units_per_call) == (10.0, 560, 1.0)
    # Without every entity's count (10 items declared), the plain mean: 10 x 1,200 = 12,000 bytes -> 3 units: 1.5.
    uncounted = {k: v for k, v in line.items() if k != "item_count"}
    patterns["order_with_items"]["items"] = 10
    read = estimate(design(blueprint({"Order": order, "OrderItem": uncounted}, patterns))).read("order_with_items")
    assert (read.bytes_per_item, read.units_per_call) == (1200, 1.5)
