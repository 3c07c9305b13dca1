"""Read units `verify` reports: every request of a fan-out (a shard, a time bucket) is rounded up to
4 KB on its own, an empty one still costs the minimum, and the figures agree with `explain`."""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime, timedelta

import pytest

from tablewright.blueprint.load import load_blueprint
from tablewright.capacity.loads import estimate
from tablewright.capacity.size import item_size
from tablewright.design.designer import design
from tablewright.design.items import build_item
from tablewright.verify.oracle import Probe, encode_parameters
from tablewright.verify.runner import model_capacity, partitions_addressed, requests_sent
from tablewright.verify.samples import Sample, index_key
from tests.conftest import TEST_BLUEPRINTS

FEATURES = TEST_BLUEPRINTS / "features.yaml"


@pytest.fixture(scope="module")
def features():
    return design(load_blueprint(FEATURES).blueprint)


def probe(table, pattern: str, values: dict) -> tuple[Probe, list[str]]:
    plan = table.plan(pattern)
    specs = table.blueprint.entities[plan.entities[0]].attributes
    found = Probe(values, encode_parameters(specs, plan, values))
    return found, partitions_addressed(plan, found, specs)


def event(table, number: int, payload: int) -> Sample:
    values = {"kind": "A", "eventId": f"e{number:03d}-" + "x" * payload, "at": datetime(2024, 1, 1, tzinfo=UTC)}
    return Sample("Event", values, build_item(table, "Event", values))


def test_a_sharded_read_is_one_request_per_shard_each_rounded_on_its_own(features):
    plan = features.plan("events_by_kind")
    _, partitions = probe(features, "events_by_kind", {"kind": "A"})
    assert partitions == [f"EVENT#A#{shard}" for shard in range(5)]
    # Three events of 2-4 KB (the id sits in the sort key too): two in one shard (2 units), one in another
    # (1 unit), three empty shards.
    events = [event(features, n, 1300) for n in range(40)]
    assert all(2048 < item_size(sample.item) < 4096 for sample in events)
    by_shard: dict[str, list[Sample]] = {}
    for sample in events:
        by_shard.setdefault(index_key(sample, plan.keys)[0], []).append(sample)
    crowded = next(group for group in by_shard.values() if len(group) >= 2)[:2]
    alone = next(group for group in by_shard.values() if group[0] not in crowded)[:1]
    read = crowded + alone
    # Eventually consistent: (2 + 1 + 3 x 1 minimum) units / 2.
    assert model_capacity(features, plan, read, partitions) == 3.0
    # The same items as one request (no fan-out) would round their total once.
    total = sum(item_size(sample.item) for sample in read)
    assert model_capacity(features, plan, read) == math.ceil(total / 4096) / 2 < 3.0
    # Nothing read still costs every shard's minimum.
    assert model_capacity(features, plan, [], partitions) == 2.5


def test_a_read_over_time_buckets_stops_at_its_limit(features):
    plan = features.plan("readings")  # one request per day, newest first, limit 10
    start, end = datetime(2024, 1, 1, tzinfo=UTC), datetime(2024, 1, 3, 12, tzinfo=UTC)
    _, partitions = probe(features, "readings", {"sensorId": "s", "at.from": start, "at.to": end})
    assert partitions == ["SENSOR#s#2024-01-03", "SENSOR#s#2024-01-02", "SENSOR#s#2024-01-01"]

    def readings(day: int, count: int) -> list[Sample]:
        made = []
        for n in range(count):
            values = {"sensorId": "s", "at": start + timedelta(days=day, minutes=n), "value": n}
            made.append(Sample("Reading", values, build_item(features, "Reading", values)))
        return made

    assert requests_sent(plan, partitions, readings(2, 10)) == partitions[:1]
    assert requests_sent(plan, partitions, readings(2, 4) + readings(1, 6)) == partitions[:2]
    assert requests_sent(plan, partitions, readings(0, 3)) == partitions  # an empty day is a request too
    assert model_capacity(features, plan, readings(0, 3), partitions) == 1.5


def test_verify_agrees_with_explain_on_fanned_out_reads(verified_features):
    report = estimate(design(load_blueprint(FEATURES).blueprint))
    by_pattern = {r.pattern: r for r in verified_features.results}
    for pattern, shards in [("events_by_kind", 5), ("orders_by_status", 4)]:
        assert by_pattern[pattern].read_requests == shards
        # Small items: every shard's request costs the 0.5 minimum, as explain says (`Query x5`: 2.5).
        assert by_pattern[pattern].capacity == report.read(pattern).units_per_call == shards * 0.5
    assert by_pattern["event"].capacity == 0.5 and by_pattern["event"].read_requests == 1
    readings = by_pattern["readings"]
    assert readings.read_requests >= 2 and readings.capacity == readings.read_requests * 0.5


def test_the_json_report_has_the_requests_of_the_call(run_cli):
    code, out, _ = run_cli("verify", FEATURES, "--format", "json")
    assert code == 0
    [report] = json.loads(out)
    by_pattern = {p["pattern"]: p for p in report["patterns"]}
    assert by_pattern["events_by_kind"]["operations_per_call"] == "5"
    assert by_pattern["events_by_kind"]["capacity_per_call"]["read_units"] == 2.5
    assert by_pattern["events_by_kind"]["capacity_per_call"]["requests"] == 5
    assert by_pattern["big_orders"]["capacity_per_call"]["requests"] == 1


def test_a_sharded_read_with_a_limit_costs_the_limit_on_every_shard_as_explain_says():
    """The runner sends `Limit` to every shard's Query: each reads up to the limit of its own items, and the
    model's figure for those items is explain's (5 shards x ceil(10 x ~900 B / 4 KB) = 5 x 3 units, halved)."""
    from tablewright.verify.oracle import expected
    from tablewright.verify.runner import samples_read
    from tests.support.design_helpers import designed

    event_ = {"attributes": {"tenantId": {"type": "string", "cardinality": 10}, "at": "timestamp",
                             "body": "string"},
              "key": {"pk": "TENANT#{tenantId}", "sk": "EVENT#{at}", "shards": 5}, "item_bytes": 900}
    table = designed({"Event": event_}, {"recent": {"entity": "Event", "where": {"tenantId": "="},
                                                     "order": "desc", "limit": 10}})
    plan = table.plan("recent")
    found, partitions = probe(table, "recent", {"tenantId": "t"})
    start = datetime(2024, 1, 1, tzinfo=UTC)
    samples = []
    for n in range(200):
        values = {"tenantId": "t", "at": start + timedelta(minutes=n), "body": "x" * 850}
        samples.append(Sample("Event", values, build_item(table, "Event", values)))
    assert all(8192 / 10 < item_size(s.item) <= 12288 / 10 for s in samples)  # 10 of them: 3 units of 4 KB
    want = expected(table, plan, samples, found)
    assert len(want.samples) == 10  # the call returns 10 items ...
    read = samples_read(plan, want, partitions)
    by_shard = {p: sum(1 for s in read if index_key(s, plan.keys)[0] == p) for p in partitions}
    assert set(by_shard.values()) == {10}  # ... but each of the 5 shards' requests read 10
    assert model_capacity(table, plan, read, partitions) == 7.5
    assert estimate(table).read("recent").units_per_call == 7.5
