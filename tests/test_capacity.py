"""Capacity and cost against figures computed by hand, rounding edges included."""

from __future__ import annotations

import json

import pytest

from modules.capacity.cost import monthly_cost
from modules.capacity.model import estimate, write_units
from modules.capacity.size import batch_read_units, item_size, read_units, value_size
from modules.design.plan import design
from tests.design_helpers import blueprint


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


def test_write_cost_per_index_with_key_changes_and_transactions():
    status = {"type": "string", "values": ["NEW", "DONE"], "mutable": True}
    item = {**entity(1500, writes=10), "attributes": {"id": "string", "at": "timestamp", "body": "string",
                                                      "state": status}}
    patterns = {"by_state": {"entity": "Item", "where": {"state": "="}, "returns": ["id"]}}
    costs = estimate(design(blueprint({"Item": item}, patterns))).writes[0]
    # Table: 1,500 bytes -> 2 WCU. GSI1 entry (keys and id) under 1 KB -> 1 WCU, doubled: a state change
    # deletes the old index entry and puts the new one.
    assert costs.units_per_write == {"table": 2, "GSI1": 2}
    assert costs.units_per_second == {"table": 20.0, "GSI1": 20.0}
    transactional = estimate(design(blueprint({"Item": {**item, "transactional": True}}, patterns))).writes[0]
    assert transactional.units_per_write["table"] == 4
    keyed = {**item, "key": {"pk": "ITEM#{id}", "sk": "{state}#{at}"}}
    assert estimate(design(blueprint({"Item": keyed}, {}))).writes[0].units_per_write["table"] == 8


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
                                     "file": "modules/capacity/prices.json"}
    assert all(line["region"] == "us-east-1" for line in crm["cost"]["lines"])


def test_explain_shows_per_pattern_figures(run_cli):
    _code, out, _ = run_cli("explain", "--format", "json", "--env", "prod")
    crm = json.loads(out)[0]
    recent = next(p for p in crm["patterns"] if p["name"] == "recent_contacts")
    assert recent["capacity"] == {"items_per_call": 3, "read_units_per_call": 0.5, "read_units_per_second": 250.0}
