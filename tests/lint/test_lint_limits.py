"""Lint's limits and costs (TW3xx): DynamoDB's hard limits (20 GSIs, 100 projected attributes, 400 KB items, 10 GB item
collections) and what a design costs (projected attributes, accepted scans, filters, autoscaling and on-demand
maximums below the peak), each rule firing on a blueprint that has the problem and silent on one that does not."""

from __future__ import annotations

import pytest

from tablewright.blueprint.load import load_blueprints
from tablewright.stacks.stack import build_stacks
from tests.support.lint_support import BY_STATUS, GET_USER, USER, codes, findings, order

# --- limits and costs --------------------------------------------------------------------------------


def test_tw301_more_than_20_gsis():
    attributes = {f"a{n}": "string" for n in range(21)} | {"id": "string"}
    thing = {"attributes": attributes, "key": {"pk": "THING#{id}", "sk": "T"}}
    patterns = {f"by_a{n}": {"entity": "Thing", "where": {f"a{n}": "="}, "returns": ["id"]} for n in range(21)}
    assert codes({"Thing": thing}, patterns)["TW301"] == "error"
    del patterns["by_a20"]
    assert "TW301" not in codes({"Thing": thing}, patterns)


def test_tw302_more_than_100_projected_attributes():
    attributes = {f"f{n}": "string" for n in range(101)} | {"id": "string", "kindOf": "string"}
    thing = {"attributes": attributes, "key": {"pk": "THING#{id}", "sk": "T"}}
    pattern = {"by_kind": {"entity": "Thing", "where": {"kindOf": "="}}}
    assert codes({"Thing": thing}, pattern)["TW302"] == "error"
    pattern["by_kind"]["returns"] = ["f1", "f2"]
    assert "TW302" not in codes({"Thing": thing}, pattern)


def test_tw303_item_over_400_kb():
    assert codes({"User": {**USER, "item_bytes": 500_000}}, GET_USER)["TW303"] == "error"
    assert "TW303" not in codes({"User": {**USER, "item_bytes": 400 * 1024}}, GET_USER)


def test_tw304_all_projection_with_its_cost():
    found = [f for f in findings({"Order": order(writes=100, size=3000)}, BY_STATUS, region="us-east-1",
                                 indexes={"GSI1": {"projection": "all"}}) if f.code == "TW304"]
    # An on-demand table (the default) pays per write request unit.
    assert found and "write request units/s more" in found[0].message
    assert "/month on demand in us-east-1" in found[0].message
    assert "TW304" not in codes({"Order": order()}, BY_STATUS)
    # Without prices for the region (or without a region) the finding stays, its cost is not guessed.
    for region, words in ((None, "no prices for a blueprint without `region`"),
                          ("eu-west-1", "no prices for eu-west-1")):
        extra = {"region": region} if region else {}
        [unpriced] = [f for f in findings({"Order": order(writes=100, size=3000)}, BY_STATUS, **extra,
                                          indexes={"GSI1": {"projection": "all"}}) if f.code == "TW304"]
        assert words in unpriced.message and "$" not in unpriced.message


PROVISIONED = {"billing": "provisioned",
               "capacity": {"target_utilization": 70, "read": {"min": 5, "max": 100}, "write": {"min": 5, "max": 100}}}


def _tw304_dollars(index: dict) -> tuple[float, str]:
    [found] = [f for f in findings({"Order": order(writes=100, size=3000)}, BY_STATUS, region="us-east-1",
                                   table={"name": "test_table", **PROVISIONED},
                                   indexes={"GSI1": {"projection": "all", **index}}) if f.code == "TW304"]
    return float(found.message.split("~$")[1].split("/month")[0].replace(",", "")), found.message


def test_tw304_prices_the_index_at_its_own_write_target():
    """The index's resolved policy (its own capacity and target, a direction's own target first), not the
    table's `target_utilization`: half the target, twice the provisioned capacity to pay for."""
    at_table, message = _tw304_dollars({})
    assert "WCU/s more" in message and "provisioned at its 70% write target in us-east-1" in message
    own = {"capacity": {"target_utilization": 35, "read": {"min": 5, "max": 100}, "write": {"min": 5, "max": 100}}}
    at_index, message = _tw304_dollars(own)
    assert "at its 35% write target" in message and at_index == pytest.approx(2 * at_table, rel=0.01)
    writes_only = {"capacity": {"read": {"min": 5, "max": 100},
                                "write": {"min": 5, "max": 100, "target_utilization": 50}}}
    at_write_target, message = _tw304_dollars(writes_only)
    assert "at its 50% write target" in message and at_write_target == pytest.approx(1.4 * at_table, rel=0.01)


def test_tw308_names_the_target_the_suggestion_uses():
    """The index's capacity sets no target, so it inherits the table's (60%); its writes set their own (50%)."""
    table = {"name": "test_table", "billing": "provisioned", "capacity": {
        "target_utilization": 60, "read": {"min": 5, "max": 100}, "write": {"min": 5, "max": 100}}}
    index = {"capacity": {"read": {"min": 1, "max": 2}, "write": {"min": 1, "max": 2, "target_utilization": 50}}}
    found = {f.path[3]: f.message for f in findings({"Order": order(writes=100, size=3000)}, BY_STATUS, table=table,
                                                    indexes={"GSI1": index})
             if f.code == "TW308" and f.path[:3] == ("indexes", "GSI1", "capacity")}
    assert "at 60% target" in found["read"] and "at 50% target" in found["write"], found


def test_tw305_accepted_scan_with_its_cost():
    scan = {"export": {"entity": "User", "where": {"name": "begins_with"}, "scan": "allowed", "reason": "nightly",
                       "rps": 0.001}}
    found = [f for f in findings({"User": {**USER, "item_count": 1_000_000, "item_bytes": 1000}}, scan)
             if f.code == "TW305"]
    assert found and "1,000,000 items" in found[0].message and "accepted because: nightly" in found[0].message
    assert "TW305" not in codes({"User": USER}, GET_USER)


def test_tw306_filter_does_not_reduce_cost():
    pattern = {"named": {"entity": "User", "where": {"userId": "="}, "filter": {"name": "begins_with"}}}
    assert codes({"User": USER}, pattern)["TW306"] == "warning"
    assert "TW306" not in codes({"User": USER}, GET_USER)


def test_tw307_item_collection_limit_with_a_local_index():
    log = {"attributes": {"app": {"type": "string", "values": ["A", "B"]}, "at": "timestamp", "level": "string"},
           "key": {"pk": "APP#{app}", "sk": "{at}"}, "item_count": 50_000_000, "item_bytes": 1000,
           "index_keys": {"LSI1": {"pk": "APP#{app}", "sk": "{level}"}}}
    patterns = {"by_level": {"entity": "Log", "where": {"app": "=", "level": "="}, "index": "LSI1"}}
    assert codes({"Log": log}, patterns, indexes={"LSI1": {"type": "local"}})["TW307"] == "error"
    log["item_count"] = 1000
    assert "TW307" not in codes({"Log": log}, patterns, indexes={"LSI1": {"type": "local"}})


def test_tw308_autoscaling_max_below_the_peak():
    busy = {**USER, "writes_per_second": 500}
    table = {"name": "t_table", "billing": "provisioned",
             "capacity": {"read": {"min": 1, "max": 100}, "write": {"min": 1, "max": 100}}}
    found = [f for f in findings({"User": busy}, GET_USER, table=table) if f.code == "TW308"]
    assert found and "write capacity max 100 is below the estimated peak 2,143" in found[0].message
    table["capacity"]["write"]["max"] = 3000
    assert "TW308" not in codes({"User": busy}, GET_USER, table=table)


ON_DEMAND = """\
blueprint: meters
version: 1.0.0
region: us-east-1
table: {{name: meters, billing: on_demand, max_throughput: {table_max}}}
traffic: {{peak_factor: 2}}
entities:
  Meter:
    attributes: {{meterId: string, reading: number}}
    key: {{pk: "METER#{{meterId}}", sk: LATEST}}
    item_bytes: 1000
    writes_per_second: 40
access_patterns:
  meter: {{entity: Meter, where: {{meterId: "="}}, rps: 100}}
"""


@pytest.mark.parametrize("table_max, fired", [
    # GetItem of 1,000 bytes, eventually consistent: 0.5 read units x 100/s = 50, peak x2 = 100.
    # A put of 1,000 bytes: 1 write unit x 40/s = 40, peak x2 = 80.
    ("{read: 99, write: 80}",
     ["the table: on-demand read maximum 99 request units/s is below the estimated peak 100"]),
    ("{read: 100, write: 79}",
     ["the table: on-demand write maximum 79 request units/s is below the estimated peak 80"]),
    ("{read: 100, write: 80}", []),
    ("suggested", []),
    ("unlimited", []),
])
def test_tw313_an_on_demand_maximum_below_the_peak(table_max, fired, write_blueprint):
    [stack] = build_stacks(load_blueprints(write_blueprint(ON_DEMAND.format(table_max=table_max))))
    found = [f"{f.finding.message}" for f in stack.lint.findings if f.finding.code == "TW313"]
    assert [message.split(" (average")[0] for message in found] == fired
    assert all(f.location is not None and f.location.line == 4 for f in stack.lint.findings
               if f.finding.code == "TW313")
