"""Jobs on a weekday, a day of the month or a date (`schedule: {every: week, on: SUN, ...}`): nothing on a normal day,
the run an event of its own on its day, priced as often as it recurs, and a scheduled minimum offered on that day.
Hand arithmetic from the rules tests/capacity/test_jobs.py cites (a Scan's pages of 1 MB, each rounded up to 4 KB,
halved when eventually consistent; 730 / 168 weekly runs a month)."""

from __future__ import annotations

import numpy as np
import pytest

from tablewright.blueprint.traffic import SECONDS_PER_MONTH
from tablewright.capacity.job_costs import job_costs
from tablewright.design.design import TABLE
from tablewright.lint.engine import lint_design
from tablewright.simulate.stack import simulate_stack
from tests.support.simulate_support import stack_of

SHOP = """\
blueprint: shop
version: 1.0.0
region: us-east-1
table: {{name: shop_main, billing: {billing}}}
entities:
  Order:
    attributes: {{orderId: string, total: number}}
    key: {{pk: "ORDER#{{orderId}}", sk: ORDER}}
    item_bytes: 2048
    item_count: 10000000
    writes_per_second: 1
access_patterns:
  order: {{entity: Order, where: {{orderId: "="}}, rps: 0.001}}
  weekly_export:
    entity: Order
    where: {{total: ">"}}
    scan: allowed
    reason: the weekly finance export
    schedule: {{every: week, on: SUN, start: "03:00", duration: 30m}}
"""

# 10,000,000 x 2,048 B = 20,480,000,000 B: 19,531 full pages of 1 MB (256 units each) and a last page of
# 20,480,000,000 - 19,531 x 1,048,576 = 262,144 B (64 units): 5,000,000 units, halved: 2,500,000 RCU a run.
UNITS_PER_RUN = (19_531 * 256 + 64) / 2
WEEKLY_RUNS = 730 / 168


def _shop(write_blueprint, billing: str = "on_demand", capacity: str = ""):
    return stack_of(write_blueprint, SHOP.format(billing=billing + capacity))


def test_a_weekly_job_reads_nothing_on_a_normal_day_and_its_run_on_its_day(write_blueprint):
    stack = _shop(write_blueprint)
    assert stack.design.blueprint.access_patterns["weekly_export"].rps == 0  # no calls on a normal day
    assert stack.capacity.read("weekly_export").units_per_call == UNITS_PER_RUN == 2_500_000
    result = simulate_stack(stack.design, stack.capacity)
    run = result.declared.day.run(TABLE, "read")
    assert run is not None
    window = slice(3 * 3600, 3 * 3600 + 1800)
    # the simulated day holds every declared event, the job's run among them: 2,500,000 / 1,800 = 1,388.9 RCU/s
    assert run.demand[window] - 0.001 * 0.5 == pytest.approx(np.full(1800, UNITS_PER_RUN / 1800), abs=0.01)
    # the month: the order reads every second (0.001 x 0.5 RCU) and the job's 2,500,000 RCU 730 / 168 times
    load = stack.capacity.load(TABLE)
    assert load.month_read * SECONDS_PER_MONTH == pytest.approx(0.001 * 0.5 * SECONDS_PER_MONTH
                                                                + UNITS_PER_RUN * WEEKLY_RUNS)


def test_a_weekly_job_is_priced_per_run_and_as_often_as_it_runs(write_blueprint):
    stack = _shop(write_blueprint)
    (job,) = job_costs(stack.design, stack.capacity)
    # on demand: 2,500,000 x $0.125 / 1,000,000 = $0.3125 a run; 730 / 168 = 4.345 runs: $1.36 a month
    assert (job.units_per_run, job.runs_per_month) == (UNITS_PER_RUN, WEEKLY_RUNS)
    assert job.on_demand_per_run == pytest.approx(2_500_000 * 0.125 / 1e6)
    assert job.per_month(job.on_demand_per_run) == pytest.approx(0.3125 * 730 / 168)


def test_a_throttled_weekly_job_gets_a_scheduled_minimum_on_its_weekday(write_blueprint):
    # provisioned at 10-400 RCU: the run's 1,388.9 RCU/s throttle; the minimum its peak needs at 70%:
    # ceil(1,388.9 / 0.7) = 1,985 (the order reads add 0.0005 RCU/s), from 15 minutes before, on Sundays.
    capacity = ", capacity: {read: {min: 10, max: 4000}, write: {min: 5, max: 10}}"
    stack = _shop(write_blueprint, "provisioned", capacity)
    (finding,) = [f for f in lint_design(stack.design, stack.capacity) if f.code == "TW105"]
    assert "throttled during weekly_export" in finding.message
    # the job's pattern name as a scheduled minimum's name (lowercase letters, digits and `-`): weekly-export
    assert ('`{name: weekly-export, days: [SUN], start: "02:45", end: "03:30", min: 1985}` to '
            '`table.capacity.read.scheduled`') in finding.fix
    assert "removes the throttling" in finding.fix.split("; or ")[0]


def test_the_offered_scheduled_minimum_loads_and_removes_the_throttling(write_blueprint):
    # the fix as lint writes it, pasted into the blueprint: a valid `scheduled` entry, and the day simulated with it
    # throttles nothing during the run
    entry = '{name: weekly-export, days: [SUN], start: "02:45", end: "03:30", min: 1985}'
    capacity = (", capacity: {read: {min: 10, max: 4000, scheduled: [" + entry + "]}, "
                "write: {min: 5, max: 10}}")
    stack = _shop(write_blueprint, "provisioned", capacity)
    assert not [f for f in lint_design(stack.design, stack.capacity) if f.code == "TW105"]
    run = simulate_stack(stack.design, stack.capacity).declared.day.run(TABLE, "read")
    assert run is not None and float(run.demand.max()) > 1388  # the run is in the simulated day
    assert sum(run.flow_throttled.values()) < 1
