"""`explain` weighs splitting a shared GSI when one entity's writes throttle it (GSI back-pressure: a GSI short of
write capacity, or at its on-demand maximum, throttles the base-table writes of every item projected into it,
https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/gsi-throttling.html).

Dispatch below, by hand (flat day: `peak_factor: 1`; entries of under 1 KB: 1 WCU each). GSI1 has an on-demand
maximum of 1,000 write units a second and takes:
- Driver's location churn: 1,000 updates/s that change `cell`, GSI1's partition key: a delete and a put on the
  index each, 2,000 WCU/s;
- Trip's records: 500 inserts/s, 500 WCU/s.
2,500 asked of 1,000: 60% of every write throttles, whoever wrote it: Driver 2,000 x 0.6 = 1,200 units/s,
Trip 500 x 0.6 = 300 units/s, over the 86,400 s of the day 103,680,000 and 25,920,000.
Split (Driver on GSI2, with GSI1's settings): Driver 2,000 of 1,000: 1,000 units/s throttle, 86,400,000 a day;
Trip 500 of 1,000 on GSI1: none. The bill is the same: the same 4,000 write and 10 read units a second
(table 1,500 + index 2,500; two patterns of 10 calls reading 0.5 RCU), on two indexes instead of one.
"""

from __future__ import annotations

import dataclasses
import json
import textwrap

import pytest

from tablewright.alternatives.alternatives import index_choices
from tablewright.blueprint.load import load_blueprint
from tablewright.blueprint.traffic import HOURS_PER_MONTH, SECONDS_PER_MONTH
from tablewright.stacks.stack import build_stacks
from tablewright.verify.verify import verify_stacks

SECONDS = 86_400
DISPATCH = """\
    blueprint: dispatch
    version: 1.0.0
    region: us-east-1
    table: {name: dispatch_main, billing: on_demand}
    traffic: {peak_factor: 1}
    entities:
      Driver:
        attributes: {driverId: string, cell: {type: string, cardinality: 10000}, seenAt: timestamp}
        key: {pk: "DRIVER#{driverId}", sk: DRIVER}
        item_bytes: 200
        writes: {updates: 1000, changes: [cell, seenAt]}
      Trip:
        attributes: {tripId: string, cell: {type: string, cardinality: 10000}, startedAt: timestamp}
        key: {pk: "TRIP#{tripId}", sk: TRIP}
        item_bytes: 200
        writes: {inserts: 500}
    access_patterns:
      drivers_in_cell: {entity: Driver, where: {cell: "="}, order: desc, order_by: seenAt, rps: 10}
      trips_in_cell: {entity: Trip, where: {cell: "="}, order: desc, order_by: startedAt, rps: 10}
    indexes:
      GSI1: {max_throughput: {write: 1000}}
"""


def _choice(write_blueprint, text: str = DISPATCH):
    loaded = load_blueprint(write_blueprint(textwrap.dedent(text)))
    stack = build_stacks([loaded])[0]
    [choice] = index_choices(stack.design, stack.capacity, stack.cost)
    return loaded, stack, choice


def test_a_gsi_whose_churn_throttles_its_other_entity_is_offered_a_split(write_blueprint):
    _, stack, choice = _choice(write_blueprint)
    split = choice.split
    assert (split.index, split.entity, split.new_index) == ("GSI1", "Driver", "GSI2")
    asked, most = 1_000 * 2 + 500 * 1, 1_000
    cut = 1 - most / asked  # 0.6
    assert split.before == pytest.approx({"Driver": 2_000 * cut * SECONDS, "Trip": 500 * cut * SECONDS})
    assert split.before == pytest.approx({"Driver": 103_680_000, "Trip": 25_920_000})
    assert split.after == pytest.approx({"Driver": (2_000 - most) * SECONDS, "Trip": 0.0})
    read_price = stack.cost.line("on-demand read requests").price
    write_price = stack.cost.line("on-demand write requests").price
    bill = round(10 * SECONDS_PER_MONTH * read_price, 2) + round(4_000 * SECONDS_PER_MONTH * write_price, 2)
    assert (split.monthly_before, split.monthly_after, split.monthly_delta) == (pytest.approx(bill),
                                                                                pytest.approx(bill), 0.0)


def test_a_provisioned_gsi_is_weighed_with_its_burst_and_the_capacity_the_split_adds(write_blueprint):
    """GSI1 provisioned at most 1,000 WCU (autoscaling starts there: 2,500 / 0.7 is above it). Burst capacity
    keeps 300 s of it, 300,000 units, spent in the first seconds: 1,500 x 86,400 - 300,000 = 129,300,000 units
    throttle, 4/5 Driver's and 1/5 Trip's. Split, Driver on GSI2 (the same bounds) throttles 1,000 x 86,400 -
    300,000; Trip on GSI1 none. The bill prices each index at its average load at the 70% target, within its
    bounds: GSI1 writes stay at the 1,000 maximum (Driver on GSI2), and GSI1 now needs ceil(500 / 0.7) = 715
    WCU; reads: 15 RCU (ceil(10 / 0.7)) become 8 + 8 (ceil(5 / 0.7) each): +715 WCU and +1 RCU a month of 730
    hours (https://aws.amazon.com/dynamodb/pricing/provisioned/)."""
    text = (DISPATCH.replace("table: {name: dispatch_main, billing: on_demand}",
                             "table: {name: dispatch_main, billing: provisioned, capacity: {read: {min: 5, max: 100}, "
                             "write: {min: 5, max: 5000}}}")
            .replace("GSI1: {max_throughput: {write: 1000}}",
                     "GSI1: {capacity: {read: {min: 5, max: 100}, write: {min: 5, max: 1000}}}"))
    _, stack, choice = _choice(write_blueprint, text)
    split, burst = choice.split, 300 * 1_000
    assert split.before == pytest.approx({"Driver": (1_500 * SECONDS - burst) * 0.8,
                                          "Trip": (1_500 * SECONDS - burst) * 0.2})
    assert split.after == pytest.approx({"Driver": 1_000 * SECONDS - burst, "Trip": 0.0})
    wcu_hour = stack.cost.line("provisioned write capacity").price
    rcu_hour = stack.cost.line("provisioned read capacity").price
    assert split.monthly_delta == pytest.approx((715 * wcu_hour + 1 * rcu_hour) * HOURS_PER_MONTH, abs=0.011)


def test_explain_shows_the_split_with_its_figures(write_blueprint, run_cli):
    path = write_blueprint(textwrap.dedent(DISPATCH))
    code, out, _ = run_cli("explain", path)
    assert code == 0
    text = " ".join(out.split())  # the lines as wrapped to the terminal, joined
    line = text[text.index("- split GSI1"):text.index("Sizes")].strip()
    assert line.startswith("- split GSI1: Driver on a GSI of its own, GSI2, keyed DRIVER#{cell} / {seenAt} for "
                           "drivers_in_cell, with GSI1's settings")
    assert "Driver 103,680,000 -> 86,400,000, Trip 25,920,000 -> 0" in line and line.endswith("(+$0.00)")
    code, out, _ = run_cli("explain", path, "--format", "json")
    split = json.loads(out)[0]["alternatives"][0]["split"]
    assert split["throttled_write_units"] == {"before": {"Driver": 103_680_000.0, "Trip": 25_920_000.0},
                                              "after": {"Driver": 86_400_000.0, "Trip": 0.0}}


def test_the_split_blueprint_keeps_the_settings_and_answers_its_patterns(write_blueprint):
    loaded, _, choice = _choice(write_blueprint)
    blueprint = choice.split.blueprint
    assert blueprint.indexes["GSI2"].max_throughput == blueprint.indexes["GSI1"].max_throughput
    [stack] = build_stacks([dataclasses.replace(loaded, blueprint=blueprint)])
    members = {index.name: [entity for entity, _ in index.members] for index in stack.design.global_indexes}
    assert members == {"GSI1": ["Trip"], "GSI2": ["Driver"]}
    [result] = verify_stacks([stack])
    assert result.passed, result.failures


@pytest.mark.parametrize("old, new", [
    ("updates: 1000, changes", "updates: 200, changes"),  # 400 + 500 = 900 of 1,000: nothing throttles
    ('trips_in_cell: {entity: Trip, where: {cell: "="}, order: desc, order_by: startedAt, rps: 10}',
     'trips_in_cell: {entity: Trip, where: {tripId: "="}, rps: 10}'),  # GSI1 holds Driver alone
], ids=["within-the-maximum", "one-entity-on-the-index"])
def test_no_split_when_nothing_throttles_or_nothing_shares(write_blueprint, old, new):
    text = textwrap.dedent(DISPATCH)
    assert old in text
    loaded = load_blueprint(write_blueprint(text.replace(old, new)))
    stack = build_stacks([loaded])[0]
    assert all(choice.split is None for choice in index_choices(stack.design, stack.capacity, stack.cost))
