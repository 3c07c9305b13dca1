"""An entity's event `rate` in the one traffic model (modules/tablewright/capacity/traffic.py, `entity_writes`): the
writes per second that consume capacity (inserts, updates, deletes, in their declared mix), TTL expiries never
counted nor mixed in; an entity whose only writes are an event is simulated, linted and costed. Each figure is
hand arithmetic from the simulator's documented rules (modules/tablewright/simulate/engine.py): a provisioned
table keeps up to 300 s of unused capacity (full at midnight) and spends it above what is provisioned; autoscaling
never goes above `max`; an on-demand table serves its warm throughput at once, at most the per-table quota
(`simulation.table_quota`, AWS's default 40,000 units)."""

from __future__ import annotations

import pytest

from tablewright.blueprint.traffic import SECONDS_PER_MONTH
from tablewright.design.design import TABLE
from tablewright.lint.engine import lint_design as lint
from tablewright.report.simulate import stack_document
from tablewright.simulate.stack import simulate_stack
from tests.support.simulate_support import stack_of

LEDGER = """\
blueprint: ledger
version: 1.0.0
region: us-east-1
table:
  name: ledger
  ttl_attribute: expiresAt
  billing: provisioned
  capacity: {{read: {{min: 5, max: 5}}, write: {{min: {write}, max: {write}}}}}
traffic: {{peak_factor: 1}}
entities:
  Entry:
    attributes: {{entryId: string, expiresAt: {{type: number, expiry: true}}}}
    key: {{pk: "ENTRY#{{entryId}}", sk: "ENTRY"}}
    {writes}
    item_count: 1000
    traffic:
      events: [{{name: {event}, start: "03:00", duration: 10m, rate: {rate}}}]
access_patterns:
  entry_by_id: {{entity: Entry, where: {{entryId: "="}}, rps: 1}}
"""

BACKFILL = """\
blueprint: archive
version: 1.0.0
region: us-east-1
terraform: {{aws_provider: ">= 6.13"}}
table:
  name: archive
  ttl_attribute: expiresAt
  warm_throughput: {{read: 12000, write: 60000}}
  {maximum}
traffic: {{peak_factor: 1}}
entities:
  Record:
    attributes: {{recordId: string, expiresAt: {{type: number, expiry: true}}}}
    key: {{pk: "RECORD#{{recordId}}", sk: "RECORD"}}
    writes: {{inserts: 100, expiries: 100}}
    item_count: 1000
    traffic:
      events: [{{name: backfill, start: "02:00", duration: 1h, rate: 60000, every: week}}]
access_patterns:
  record_by_id: {{entity: Record, where: {{recordId: "="}}, rps: 1}}
"""


def _write_row(stack, result) -> dict:
    return next(row for row in stack_document(stack, result)["targets"]
                if row["target"] == TABLE and row["direction"] == "write")


@pytest.mark.parametrize("writes", ["writes_per_second: 0", "writes: {expiries: 50}"])
def test_an_entity_whose_only_writes_are_an_event_is_simulated_linted_and_costed(write_blueprint, writes):
    """`writes_per_second: 0` (or only free TTL expiries: the event's writes are then inserts, the simple form's
    kind), an event of 300 writes/s for 10 minutes, items under 1 KB (1 WCU each), on a table provisioned at
    min = max = 100 WCU: autoscaling cannot add any, so only burst capacity helps.

    Nothing is written before 03:00, so the bank is full: 300 s x 100 WCU = 30,000 units. The event asks
    300 - 100 = 200 units a second more than provisioned: the bank covers 30,000 / 200 = 150 s, and the other
    600 - 150 = 450 s throttle 200 a second: 450 x 200 = 90,000 units, 90,000 writes of 1 WCU.
    Capacity: the busiest second is the event's 300 WCU; a month averages 300 x 600 s (the event is priced once)
    over 2,628,000 s. Before the fix the entity had no flow: no write row, no finding, nothing costed."""
    text = LEDGER.format(write=100, writes=writes, event="import", rate=300)
    stack = stack_of(write_blueprint, text)
    result = simulate_stack(stack.design, stack.capacity)
    run = result.declared.day.run(TABLE, "write")
    assert run is not None
    assert run.throttled_units == pytest.approx(90_000)
    assert run.throttled_seconds == 450
    assert result.throttled_requests() == pytest.approx(90_000)
    row = _write_row(stack, result)
    assert (row["throttled_requests"], row["throttled_seconds"], row["peak_demand"]) == (90_000, 450, 300)
    [finding] = [f for f in lint(stack.design, stack.capacity) if f.code == "TW105"]
    assert "writes throttled during import: 90,000 units over 450 s" in finding.message
    load = stack.capacity.load(TABLE)
    assert load.peak_write == pytest.approx(300)
    assert load.month_write == pytest.approx(300 * 600 / SECONDS_PER_MONTH)


def test_expiries_never_dilute_an_events_rate(write_blueprint):
    """`inserts: 10, expiries: 10` and an event of 1,000 writes/s for 10 minutes on min = max = 500 WCU, 1 WCU an
    insert: the event is 1,000 inserts a second, 1,000 WCU (TTL deletes go on beside it, free).

    The steady 10 WCU leave the bank full: 300 s x 500 = 150,000 units. The event asks 1,000 - 500 = 500 a
    second more: the bank covers 150,000 / 500 = 300 s, the other 600 - 300 = 300 s throttle 500 a second:
    150,000 units, 150,000 writes. Split across the expiries too (the old rule), the event was 500 inserts a
    second, exactly the capacity: nothing throttled and no TW105."""
    text = LEDGER.format(write=500, writes="writes: {inserts: 10, expiries: 10}", event="import", rate=1000)
    stack = stack_of(write_blueprint, text)
    result = simulate_stack(stack.design, stack.capacity)
    run = result.declared.day.run(TABLE, "write")
    assert run is not None
    assert float(run.demand.max()) == pytest.approx(1000)
    assert run.throttled_units == pytest.approx(150_000)
    assert run.throttled_seconds == 300
    assert result.throttled_requests() == pytest.approx(150_000)
    [finding] = [f for f in lint(stack.design, stack.capacity) if f.code == "TW105"]
    assert "150,000 units over 300 s" in finding.message
    [flow] = [f for f in stack.capacity.traffic.flows if f.direction == "write"]
    assert (flow.requests, flow.per_request) == (10, 1.0)  # the expiries are neither counted nor averaged in


def test_a_weekly_backfill_beside_expiries_runs_at_its_rate_past_the_table_quota(write_blueprint):
    """`inserts: 100, expiries: 100` and a weekly backfill of 60,000 writes/s for an hour, on demand, warm at
    60,000 WRU: the table serves its warm throughput at once, at most the per-table quota of 40,000, so
    60,000 - 40,000 = 20,000 a second throttle for 3,600 s: 72,000,000 units, 72,000,000 writes of 1 WCU.
    Capacity and cost: the peak is 60,000 WRU; a month bills 100 x 2,628,000 = 262,800,000 write request units
    plus each occurrence's extra (60,000 - 100) x 3,600 = 215,640,000, 730 / 168 times: 937,007,143, so
    1,199,807,143 in all. Halved (the old rule: 30,000 a second), it stayed under the quota: nothing throttled,
    the peak 30,000, the month's extra half."""
    stack = stack_of(write_blueprint, BACKFILL.format(maximum=""))
    result = simulate_stack(stack.design, stack.capacity)
    run = result.declared.day.run(TABLE, "write")
    assert run is not None
    assert float(run.demand.max()) == pytest.approx(60_000)
    assert run.throttled_units == pytest.approx(72_000_000)
    assert run.throttled_seconds == 3_600
    assert result.throttled_requests() == pytest.approx(72_000_000)
    [finding] = [f for f in lint(stack.design, stack.capacity) if f.code == "TW105"]
    assert "writes throttled during backfill: 72,000,000 units over 3,600 s" in finding.message
    load = stack.capacity.load(TABLE)
    assert load.peak_write == pytest.approx(60_000)
    month = 100 * SECONDS_PER_MONTH + (60_000 - 100) * 3_600 * (730 / 168)  # write request units in a month
    assert load.month_write * SECONDS_PER_MONTH == pytest.approx(month)
    [line] = [line for line in stack.cost.lines if line.item == "on-demand write requests"]
    assert line.billed and line.quantity == pytest.approx(month)


def test_a_weekly_backfill_beside_expiries_is_over_an_on_demand_maximum_of_40000(write_blueprint):
    """The same backfill under `max_throughput: {write: 40000}`: its busiest second, 60,000 WRU, is over the
    maximum (TW313). Halved to 30,000 it was under it, and nothing was flagged."""
    stack = stack_of(write_blueprint, BACKFILL.format(maximum="max_throughput: {write: 40000}"))
    [finding] = [f for f in lint(stack.design, stack.capacity) if f.code == "TW313"]
    assert "on-demand write maximum 40,000 request units/s is below the estimated peak 60,000" in finding.message


HOT_LOG = """\
blueprint: logs
version: 1.0.0
region: us-east-1
table:
  name: logs
  billing: provisioned
  capacity: {read: {min: 5, max: 5}, write: {min: 5000, max: 5000}}
traffic: {peak_factor: 1}
entities:
  Log:
    attributes: {logId: string, source: {type: string, hot_key_share: 1.0}}
    key: {pk: "SOURCE#{source}", sk: "LOG#{logId}"}
    item_bytes: 2000
    writes_per_second: 0
    traffic:
      events: [{name: replay, start: "03:00", duration: 10m, rate: 600}]
access_patterns:
  logs_of_source: {entity: Log, where: {source: "="}, limit: 10, rps: 0}
"""


def test_an_event_only_entity_on_a_hot_key_counts_its_throttled_writes_at_their_size(write_blueprint):
    """600 writes/s of 2,000-byte items (2 WCU each) for 10 minutes, all on one source: 1,200 WCU on one
    partition-key value, whose partition serves 1,000 (the table's 5,000 WCU serve the rest). A sixth of each
    second's writes is turned away: 100 writes, 200 WCU a second, over 600 s: 60,000 writes, 120,000 units.
    Before the fix the entity had no flow (nothing throttled); averaging the key's write size over writes of no
    average left it at 1 WCU and reported 120,000 writes."""
    stack = stack_of(write_blueprint, HOT_LOG)
    result = simulate_stack(stack.design, stack.capacity)
    run = result.declared.day.run(TABLE, "write")
    assert run is not None
    assert sum(run.key_throttled.values()) == pytest.approx(120_000)
    assert result.throttled_requests() == pytest.approx(60_000)
    [row] = _write_row(stack, result)["hot_keys"]
    assert (row["throttled_requests"], row["throttled_seconds"]) == (60_000, 600)
    assert any(f.code == "TW103" for f in lint(stack.design, stack.capacity))


@pytest.mark.parametrize("writes", ["writes_per_second: 0", "writes: {expiries: 50}"])
def test_an_entity_whose_only_writes_are_an_event_has_its_writes_watched(write_blueprint, writes):
    """The alarms watch the operations the application performs: an event's writes are PutItem and UpdateItem like
    any entity's (before, an entity with no steady writes had none, so no system-error or latency alarm read
    them)."""
    from tablewright.monitoring.alarms import operations_used

    stack = stack_of(write_blueprint, LEDGER.format(write=100, writes=writes, event="import", rate=300))
    assert {"PutItem", "UpdateItem"} <= set(operations_used(stack.design))
    quiet = stack_of(write_blueprint, LEDGER.format(write=100, writes=writes, event="import", rate=300).replace(
        "    traffic:\n      events: [{name: import, start: \"03:00\", duration: 10m, rate: 300}]\n", ""), "quiet.yaml")
    assert "PutItem" not in operations_used(quiet.design)
