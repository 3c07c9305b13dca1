"""Jobs (`schedule:` on a pattern, modules/tablewright/capacity/jobs.py and job_costs.py): a run's reads spread
evenly over its window, zero elsewhere, neither shaped by the daily curve nor by events; priced per run and per
month; a Scan without a rate or a schedule refused; an export to S3 offered where point-in-time recovery is on.

Every figure is hand arithmetic from the documented rules: a Scan consumes the total size of the items it
evaluates in 4 KB units, half when eventually consistent
(https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/read-write-operations.html#read-operation-consumption);
us-east-1 prices from modules/tablewright/capacity/prices.json: $0.125 per million read request units, $0.00013
per RCU-hour, $0.10 per GB exported; a month is 730 hours (730 / 24 daily runs)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tablewright.blueprint.language import Blueprint
from tablewright.blueprint.load import load_blueprint
from tablewright.blueprint.traffic import SECONDS_PER_MONTH
from tablewright.capacity.job_costs import job_costs
from tablewright.design.design import TABLE
from tablewright.errors import TablewrightError
from tablewright.lint.engine import lint_design
from tablewright.simulate.stack import simulate_stack
from tests.support.simulate_support import stack_of

ARCHIVE = """\
blueprint: archive
version: 1.0.0
region: us-east-1
table: {{name: archive{table}}}
traffic:
  peak_factor: 3
  events: [{{name: sale, start: "02:00", duration: 1h, factor: 5}}]
entities:
  Record:
    attributes: {{recordId: string, note: string}}
    key: {{pk: "RECORD#{{recordId}}", sk: "RECORD"}}
    writes_per_second: 0
    item_count: 10000000
    item_bytes: 2048
access_patterns:
  export_all:
    entity: Record
    scan: allowed
    reason: the nightly export to the warehouse
{job}
"""
NIGHTLY = '    schedule: {every: day, start: "02:00", duration: 30m}'
LATE = '    schedule: {start: "23:30", duration: 1h}'

# 10,000,000 items x 2,048 B = 20,480,000,000 B = 5,000,000 units of 4 KB; eventually consistent: half.
UNITS_PER_RUN = 10_000_000 * 2_048 / 4_096 / 2  # 2,500,000 RCU
DAILY_RUNS = 730 / 24


def _archive(write_blueprint, job: str = NIGHTLY, table: str = ""):
    return stack_of(write_blueprint, ARCHIVE.format(job=job, table=table))


def _read_demand(stack) -> np.ndarray:
    run = simulate_stack(stack.design, stack.capacity).declared.day.run(TABLE, "read")
    assert run is not None
    return run.demand


def test_a_nightly_scan_reads_the_table_in_its_window_only(write_blueprint):
    """A daily 02:00 job of 30 minutes: 2,500,000 RCU a run over 1,800 s, 1,388.9 RCU/s from 02:00:00 to
    02:29:59 and nothing else all day, although the blueprint's curve peaks at 3x and its `sale` event multiplies
    traffic by 5 from 02:00 (a job follows neither). Before: a Scan ran `rps: 1` (its default) all day, shaped
    by both: 2,500,000 RCU every second."""
    stack = _archive(write_blueprint)
    [flow] = [f for f in stack.capacity.traffic.flows if f.source == "export_all"]
    assert (flow.per_request, flow.requests) == (UNITS_PER_RUN, 1 / 86_400)  # one run a day
    assert stack.capacity.read("export_all").units_per_second == pytest.approx(2_500_000 / 86_400)
    demand = _read_demand(stack)
    window = slice(2 * 3600, 2 * 3600 + 1800)
    assert demand[window] == pytest.approx(np.full(1800, UNITS_PER_RUN / 1800))  # 1,388.9 RCU/s
    assert float(demand.sum()) == pytest.approx(UNITS_PER_RUN)  # so zero outside the window
    load = stack.capacity.load(TABLE)
    assert load.peak_read == pytest.approx(2_500_000 / 1_800)
    assert load.read_units_per_second == pytest.approx(2_500_000 / 86_400)  # a day's runs, averaged: 28.9
    assert load.month_read * SECONDS_PER_MONTH == pytest.approx(2_500_000 * DAILY_RUNS)  # 76,041,667 a month


def test_a_window_across_midnight_wraps(write_blueprint):
    """Daily from 23:30 for an hour: 2,500,000 / 3,600 = 694.4 RCU/s from 23:30 to midnight and from midnight to
    00:30, nothing else; still 2,500,000 RCU a day."""
    stack = _archive(write_blueprint, LATE)
    demand = _read_demand(stack)
    rate = UNITS_PER_RUN / 3_600
    assert demand[23 * 3600 + 1800:] == pytest.approx(np.full(1800, rate))
    assert demand[:1800] == pytest.approx(np.full(1800, rate))
    assert float(demand.sum()) == pytest.approx(UNITS_PER_RUN)
    assert stack.capacity.load(TABLE).peak_read == pytest.approx(rate)


def test_each_job_is_priced_per_run_and_per_month_in_both_modes(write_blueprint, run_cli):
    """On demand: 2,500,000 x $0.125 / 1,000,000 = $0.3125 a run, x 730 / 24 = $9.51 a month. Provisioned: the
    window's 1,388.9 RCU/s at the 70% target, 1,984.1 RCU for half an hour: 2,500,000 / 0.7 / 3,600 = 992.06
    RCU-hours x $0.00013 = $0.129 a run, $3.92 a month."""
    stack = _archive(write_blueprint)
    [job] = job_costs(stack.design, stack.capacity)
    assert job.units_per_run == UNITS_PER_RUN
    assert job.on_demand_per_run == pytest.approx(2_500_000 * 0.125 / 1_000_000)
    assert job.per_month(job.on_demand_per_run) == pytest.approx(0.3125 * 730 / 24)
    assert job.capacity_hours == pytest.approx(2_500_000 / 0.7 / 3_600)
    assert job.provisioned_per_run == pytest.approx(2_500_000 / 0.7 / 3_600 * 0.00013)
    assert job.per_month(job.provisioned_per_run) == pytest.approx(2_500_000 / 0.7 / 3_600 * 0.00013 * 730 / 24)
    path = write_blueprint(ARCHIVE.format(job=NIGHTLY, table=""))
    code, out, _ = run_cli("capacity", path)
    assert code == 0
    assert "2.5e+06   28.9 (a job)" in out  # the Reads row: a day's run, averaged over the day
    assert "every day 02:00     2,500,000  1,388.9          $0.31 / $9.51        $0.13 / $3.92" in out
    code, out, _ = run_cli("capacity", "--format", "json", path)
    [data] = json.loads(out)[0]["jobs"]
    assert data["units_per_run"] == UNITS_PER_RUN and data["schedule"]["start"] == "02:00"
    assert data["on_demand_per_month"] == pytest.approx(0.3125 * 730 / 24)


def test_a_query_job_reads_its_calls_per_run(write_blueprint):
    """`calls: 1,000` GetItems of a 2,048-byte item (one 4 KB unit, half eventually consistent) each run:
    1,000 x 0.5 = 500 RCU a run, 500 / 600 s = 0.83 RCU/s for ten minutes from 04:00."""
    job = (NIGHTLY + '\n  record_sweep:\n    entity: Record\n    where: {recordId: "="}\n'
           '    schedule: {start: "04:00", duration: 10m, calls: 1000}')
    stack = _archive(write_blueprint, job)
    sweep = next(job for job in job_costs(stack.design, stack.capacity) if job.pattern == "record_sweep")
    assert sweep.units_per_run == 1_000 * 0.5
    assert sweep.units_per_second == pytest.approx(500 / 600)
    demand = _read_demand(stack)
    assert demand[4 * 3600:4 * 3600 + 600] == pytest.approx(np.full(600, 500 / 600))


def test_an_export_to_s3_is_offered_where_point_in_time_recovery_is_on(write_blueprint):
    """The table is 10,000,000 x (2,048 + 100 bytes of overhead) = 21,480,000,000 B = 20.00 GB (2^30 B each):
    an export costs 20.0048 x $0.10 = $2.00 a run, x 730 / 24 = $60.85 a month, and reads no table capacity;
    the Scan costs $0.31 a run on demand ($9.51 a month), $0.13 provisioned ($3.92). With point-in-time recovery
    off there is no export to offer."""
    stack = _archive(write_blueprint)
    [note] = [f for f in lint_design(stack.design, stack.capacity) if f.code == "TW320"]
    gigabytes = 10_000_000 * (2_048 + 100) / 2**30
    assert f"{gigabytes:,.2f} GB" == "20.00 GB"
    assert f"${gigabytes * 0.10:,.2f} a run" == "$2.00 a run"
    assert f"${gigabytes * 0.10 * 730 / 24:,.2f} a month" == "$60.85 a month"
    assert note.severity == "info" and note.path == ("access_patterns", "export_all", "schedule")
    assert ("2,500,000 RCU a run, 1,388.9 RCU/s for 30 min ($0.31 a run on demand, $0.13 provisioned; "
            "$9.51 / $3.92 a month)") in note.message
    assert "an export to S3 reads no table capacity: 20.00 GB, $2.00 a run, $60.85 a month" in note.message
    off = _archive(write_blueprint, table=", point_in_time_recovery: false")
    assert not [f for f in lint_design(off.design, off.capacity) if f.code == "TW320"]


@pytest.mark.parametrize(("job", "line", "code", "words"), [
    ("", 18, "E201", "`schedule: {every: day, start: \"02:00\", duration: 30m}` for a job, or `rps:`"),
    (NIGHTLY + "\n    rps: 1", 21, "E204", "`rps` does not apply"),
    (NIGHTLY + "\n    traffic: {peak_factor: 2}", 21, "E204", "`traffic` (a curve, events) does not apply"),
    ('    schedule: {start: "02:00", duration: 90s}', 20, "E203", "whole number of minutes"),
    ('    schedule: {start: "02:00", duration: 25h}', 20, "E203", "whole number of minutes"),
    ('    schedule: {every: week, start: "02:00", duration: 1h}', 20, "E201", "runs on one day: say which"),
    ('    schedule: {every: month, on: SUN, start: "02:00", duration: 1h}', 20, "E203",
     "`on: SUN` does not name a day of an `every: month` job"),
    ('    schedule: {on: SUN, start: "02:00", duration: 1h}', 20, "E203", "`every: day` job"),
])
def test_a_scan_says_when_it_runs(write_blueprint, run_cli, job, line, code, words):
    """A Scan without `rps` ran once a second by default: now it must say (a rate, or a job's schedule), and a
    job's window is whole minutes up to a day, with no rate or traffic shape of its own. One located error,
    exit 2, no traceback."""
    path = write_blueprint(ARCHIVE.format(job=job, table=""))
    with pytest.raises(TablewrightError) as raised:
        load_blueprint(path)
    assert raised.value.code == code and words in str(raised.value)
    status, _, err = run_cli("capacity", path)
    assert status == 2 and "Traceback" not in err
    assert f"blueprint.yaml:{line}:" in err and f"[{code}]" in err


def test_a_job_that_is_not_a_scan_says_how_many_calls_a_run_makes(write_blueprint):
    job = (NIGHTLY + '\n  record_sweep:\n    entity: Record\n    where: {recordId: "="}\n'
           '    schedule: {start: "04:00", duration: 10m}')
    with pytest.raises(TablewrightError) as raised:
        load_blueprint(write_blueprint(ARCHIVE.format(job=job, table="")))
    assert raised.value.code == "E201" and "`schedule.calls`" in str(raised.value)


def test_a_job_validated_again_from_its_own_dump_is_the_same(write_blueprint):
    """Rewrites (`alternatives`) validate a dumped blueprint again: a job's derived rate (one run a day) is not a
    declared `rps` clashing with its schedule."""
    blueprint = _archive(write_blueprint).design.blueprint
    again = Blueprint.model_validate(blueprint.model_dump(exclude_unset=True))
    assert again.access_patterns["export_all"] == blueprint.access_patterns["export_all"]
    assert again.access_patterns["export_all"].rps == 1 / 86_400
