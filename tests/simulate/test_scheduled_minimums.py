"""Scheduled minimums shaped by the event (issue 39, item 5): a once-a-year sale gets one-time `at(...)` actions on
the table and on the GSI, each at the level its own simulated peak needs; a weekly or monthly event gets the cron of
its day; lint, `simulate` and `capacity` print one monthly price for them (capacity/schedule.py's rule)."""

from __future__ import annotations

import json
import math

import pytest

from tablewright.blueprint.load import load_blueprint
from tablewright.capacity.cost import monthly_cost
from tablewright.design.design import TABLE
from tablewright.lint.engine import lint_design
from tablewright.simulate.stack import simulate_stack
from tablewright.stacks.stack import build_stack

# us-east-1 standard, the bundled price file: a WCU-hour
WCU_HOUR = 0.00065

SALE = """\
blueprint: shop
version: 1.0.0
region: us-east-1
table:
  name: shop
  billing: provisioned
  capacity: {{read: {{min: 5, max: 100}}, write: {{min: 5, max: 40000}}}}
{indexes}traffic: {{peak_factor: 1}}
entities:
  Order:
    attributes: {{orderId: string, customerId: string, body: string}}
    key: {{pk: "ORDER#{{orderId}}", sk: "ORDER"}}
    item_bytes: 9500
    writes: {{inserts: 10}}
    item_count: 1000
    traffic:
      events: [{{name: black-friday, start: "18:00", duration: 10m, rate: 1000, {when}}}]
access_patterns:
  order_by_id: {{entity: Order, where: {{orderId: "="}}, rps: 1}}
  orders_of_customer: {{entity: Order, where: {{customerId: "="}}, returns: [orderId], rps: 1, limit: 10}}
"""
ONCE = 'on: "2027-11-26"'
# An order item of 9,500 bytes (its body, mostly) is ceil(9,500 / 1,024) = 10 WCU a write on the table; GSI1
# projects its keys and orderId only: 1 WCU. The sale's 1,000 writes/s are 10,000 WCU/s on the table and 1,000
# on GSI1 (a tenth); at the 70% target: ceil(10,000 / 0.7) = 14,286 and ceil(1,000 / 0.7) = 1,429.
TABLE_MIN, GSI_MIN = math.ceil(10_000 / 0.7), math.ceil(1_000 / 0.7)
OWN_GSI = ("indexes:\n  GSI1:\n    capacity:\n      read: {{min: 5, max: 100}}\n"
           "      write: {{min: 5, max: 40000{gsi}}}\n")


def _stack(write_blueprint, text: str, name: str = "shop.yaml"):
    return build_stack(load_blueprint(write_blueprint(text, name)))


def _tw105(stack):
    return [f for f in lint_design(stack.design, stack.capacity) if f.code == "TW105"]


def _applied(table: str, gsi: str) -> str:
    return SALE.format(indexes=OWN_GSI.format(gsi=gsi), when=ONCE).replace(
        "write: {min: 5, max: 40000}}", "write: {min: 5, max: 40000" + table + "}}", 1)


def _entry(level: int, date: str = "2027-11-26") -> str:
    return f'{{name: black-friday, date: "{date}", start: "17:45", end: "18:10", min: {level}}}'


def test_a_once_a_year_sale_gets_one_time_minimums_on_each_target_at_its_own_level(write_blueprint):
    stack = _stack(write_blueprint, SALE.format(indexes="", when=ONCE))
    # TABLE_MIN = ceil(10,000 / 0.7) = 14,286 and GSI_MIN = ceil(1,000 / 0.7) = 1,429 (the figures the fix names)
    findings = _tw105(stack)
    assert {f.path for f in findings} == {("table",), ("indexes", "GSI1")}
    for finding in findings:
        assert f"add `{_entry(TABLE_MIN)}` to `table.capacity.write.scheduled`" in finding.fix
        assert f"`{_entry(GSI_MIN)}` to `indexes.GSI1.capacity.write.scheduled`" in finding.fix
        # GSI1 shares the table's capacity: it must get its own, or the table's minimum raises it to 14,286
        assert "give `indexes.GSI1` its own `capacity: {read: {min: 5, max: 100}, write: {min: 5, max: 40000}}`" \
            in finding.fix
        assert "removes the throttling" in finding.fix.split("; or ")[0]
        # (14,286 - 5) x 25 min / 60 x 1 run + (1,429 - 5) x 25 / 60 x 1, at $0.00065 a WCU-hour
        monthly = (14_281 + 1_424) * 25 / 60 * 1 * WCU_HOUR
        assert f"the scheduled minimums cost ${monthly:,.2f} a month at most" in finding.fix
        assert "$4.25" in finding.fix and "cron(" not in finding.fix


def test_the_fix_applied_throttles_nothing_and_lint_simulate_capacity_print_one_price(write_blueprint, run_cli):
    text = _applied(f", scheduled: [{_entry(TABLE_MIN)}]", f", scheduled: [{_entry(GSI_MIN)}]")
    stack = _stack(write_blueprint, text)
    assert not _tw105(stack)
    result = simulate_stack(stack.design, stack.capacity)
    assert result.declared.day.run(TABLE, "write").throttled_units == 0
    assert result.declared.day.run("GSI1", "write").throttled_units == 0
    monthly = round((14_281 + 1_424) * 25 / 60 * WCU_HOUR, 2)  # 6,543.75 WCU-hours: $4.25
    line = monthly_cost(stack.design, stack.capacity).line("scheduled write minimums")
    assert line.quantity == pytest.approx((14_281 + 1_424) * 25 / 60) and line.monthly == monthly
    path = write_blueprint(text, "cli.yaml")
    code, out, _ = run_cli("simulate", path)
    assert code in (0, 1) and f"scheduled minimums: ${monthly:,.2f} a month at most" in " ".join(out.split())
    _, out, _ = run_cli("simulate", path, "--format", "json")
    assert json.loads(out)["stacks"][0]["scheduled_minimums_usd"] == monthly
    code, out, _ = run_cli("capacity", path, "--format", "json")
    [document] = json.loads(out)
    [row] = [row for row in document["cost"]["lines"] if row["item"] == "scheduled write minimums"]
    assert row["monthly"] == monthly and row["billed"]


def test_a_one_time_minimum_runs_on_the_event_day_only_in_the_simulated_month(write_blueprint):
    """A date's minimum runs on the events' day only, not in the normal day the month counts 730 / 24 times (a daily
    one does); `capacity` prices it once a month, the daily one 730 / 24 times."""
    once = _stack(write_blueprint, _applied(f", scheduled: [{_entry(TABLE_MIN)}]", ""), "once.yaml")
    daily = _stack(write_blueprint, _applied(
        f', scheduled: [{{name: black-friday, start: "17:45", end: "18:10", min: {TABLE_MIN}}}]', ""), "daily.yaml")
    normal_once = simulate_stack(once.design, once.capacity).declared.normal.run(TABLE, "write")
    normal_daily = simulate_stack(daily.design, daily.capacity).declared.normal.run(TABLE, "write")
    assert normal_once.capacity[17 * 60 + 50] < TABLE_MIN <= normal_daily.capacity[17 * 60 + 50]
    cost_once = monthly_cost(once.design, once.capacity).line("scheduled write minimums").monthly
    cost_daily = monthly_cost(daily.design, daily.capacity).line("scheduled write minimums").monthly
    assert cost_once == round(14_281 * 25 / 60 * WCU_HOUR, 2)  # $3.87, once
    assert cost_daily == round(14_281 * 25 / 60 * 730 / 24 * WCU_HOUR, 2)  # 730 / 24 runs a month: $117.64


@pytest.mark.parametrize(("when", "entry"), [
    ('every: week, on: FRI', "days: [FRI], "),
    ("every: month, on: 1", "day_of_month: 1, "),
    ("every: day", ""),
    ("every: once", 'date: "<yyyy-mm-dd of the event>", '),
])
def test_the_scheduled_minimum_follows_the_events_recurrence(write_blueprint, when, entry):
    [finding, *_] = _tw105(_stack(write_blueprint, SALE.format(indexes="", when=when)))
    assert f'{{name: black-friday, {entry}start: "17:45", end: "18:10", min: {TABLE_MIN}}}' in finding.fix


def _synth(write_blueprint, tmp_path, text: str) -> dict:
    from tablewright.synth.synth import synthesize

    [written] = synthesize([_stack(write_blueprint, text)], tmp_path / "out")
    actions: dict = json.loads(written.read_text())["resource"]["aws_appautoscaling_scheduled_action"]
    return actions


WINDOWS = [
    (f", scheduled: [{_entry(TABLE_MIN)}]", "at(2027-11-26T17:45:00)", "at(2027-11-26T18:10:00)"),
    # past midnight: restored the next day (the next date, weekday, day of the month)
    (f', scheduled: [{{name: late, date: "2027-12-31", start: "23:30", end: "00:30", min: {TABLE_MIN}}}]',
     "at(2027-12-31T23:30:00)", "at(2028-01-01T00:30:00)"),
    (f', scheduled: [{{name: late, day_of_month: 27, start: "23:30", end: "00:30", min: {TABLE_MIN}}}]',
     "cron(30 23 27 * ? *)", "cron(30 0 28 * ? *)"),
    (f', scheduled: [{{name: late, days: [SUN], start: "23:30", end: "00:30", min: {TABLE_MIN}}}]',
     "cron(30 23 ? * SUN *)", "cron(30 0 ? * MON *)"),
]


@pytest.mark.parametrize(("scheduled", "raised", "restored"), WINDOWS)
def test_scheduled_actions_run_on_the_date_or_day_they_name(write_blueprint, tmp_path, scheduled, raised, restored):
    actions = _synth(write_blueprint, tmp_path, _applied(scheduled, ""))
    [raise_] = [a for name, a in actions.items() if name.endswith("_raise")]
    [restore] = [a for name, a in actions.items() if name.endswith("_restore")]
    assert raise_["schedule"] == raised and restore["schedule"] == restored
    assert raise_["scalable_target_action"]["min_capacity"] == TABLE_MIN
    assert restore["scalable_target_action"]["min_capacity"] == 5


@pytest.mark.terraform
def test_terraform_validate_accepts_one_time_scheduled_actions(write_blueprint, tmp_path):
    from tablewright.synth.synth import synthesize
    from tests.support.terraform_support import terraform_environment, validate

    text = _applied(f", scheduled: [{_entry(TABLE_MIN)}]", f", scheduled: [{_entry(GSI_MIN)}]")
    [written] = synthesize([_stack(write_blueprint, text)], tmp_path / "out")
    validate(written.parent, terraform_environment(tmp_path))


@pytest.mark.parametrize(("scheduled", "error"), [
    ('{name: x, date: "2027-02-30", start: "17:45", end: "18:10", min: 10}', "is not a calendar date"),
    ('{name: x, date: "2027-02-03", days: [FRI], start: "17:45", end: "18:10", min: 10}',
     "`days` and `date` both say when it runs"),
    ('{name: x, day_of_month: 28, start: "23:30", end: "00:30", min: 10}', "which February lacks"),
])
def test_bad_scheduled_dates_are_refused(write_blueprint, run_cli, scheduled, error):
    code, _, err = run_cli("lint", write_blueprint(_applied(f", scheduled: [{scheduled}]", "")))
    assert code == 2 and error in err and "Traceback" not in err


@pytest.mark.parametrize(("when", "error"), [
    ("every: week, on: 1", "does not name a day of an `every: week` event"),
    ('on: "2027-02-30"', "does not name a day of an `every: once` event"),
    ("every: day, on: FRI", "does not name a day of an `every: day` event"),
])
def test_an_event_day_that_does_not_fit_its_recurrence_is_refused(write_blueprint, run_cli, when, error):
    code, _, err = run_cli("lint", write_blueprint(SALE.format(indexes="", when=when)))
    assert code == 2 and error in err and "Traceback" not in err


def test_a_weekly_event_is_priced_alike_by_lint_and_capacity(write_blueprint):
    """Every Friday: 730 / 168 runs a month for each minimum, the same figure in the fix and in `capacity`."""
    [finding, *_] = _tw105(_stack(write_blueprint, SALE.format(indexes="", when="every: week, on: FRI")))
    monthly = round((14_281 + 1_424) * 25 / 60 * 730 / 168 * WCU_HOUR, 2)
    assert monthly == 18.48 and f"the scheduled minimums cost ${monthly:,.2f} a month at most" in finding.fix
    weekly = '{{name: black-friday, days: [FRI], start: "17:45", end: "18:10", min: {}}}'
    applied = _stack(write_blueprint, _applied(f", scheduled: [{weekly.format(TABLE_MIN)}]",
                                               f", scheduled: [{weekly.format(GSI_MIN)}]"), "weekly.yaml")
    assert monthly_cost(applied.design, applied.capacity).line("scheduled write minimums").monthly == monthly
    assert not _tw105(applied)


@pytest.mark.parametrize(("when", "entry"), [
    ('on: "2027-01-01"', 'date: "2026-12-31", '),  # 15 minutes before 00:05 on New Year's Day: the evening before
    ("every: week, on: MON", "days: [SUN], "),
    ("every: month, on: 15", "day_of_month: 14, "),
])
def test_a_lead_before_midnight_raises_the_minimum_the_day_before(write_blueprint, when, entry):
    text = SALE.format(indexes="", when=when).replace('start: "18:00"', 'start: "00:05"')
    [finding, *_] = _tw105(_stack(write_blueprint, text))
    assert f'{{name: black-friday, {entry}start: "23:50", end: "00:15", min: {TABLE_MIN}}}' in finding.fix


def test_a_monthly_event_on_the_first_just_after_midnight_is_raised_at_midnight(write_blueprint):
    text = SALE.format(indexes="", when="every: month, on: 1").replace('start: "18:00"', 'start: "00:05"')
    [finding, *_] = _tw105(_stack(write_blueprint, text))
    assert f'{{name: black-friday, day_of_month: 1, start: "00:00", end: "00:15", min: {TABLE_MIN}}}' in finding.fix
