"""The throttle simulator pinned to hand arithmetic from the DynamoDB rules (modules/tablewright/simulate/engine.py
cites each), and lint's fixes shown to work by applying them and simulating again."""

from __future__ import annotations

import json
import subprocess
import sys

import jsonschema
import pytest
import yaml

from tablewright.blueprint.language import Simulation
from tablewright.blueprint.load import load_blueprint
from tablewright.blueprint.traffic import SECONDS_PER_MONTH, Profile, Surge, daily_curve, peak_curve
from tablewright.capacity.cost import monthly_cost
from tablewright.design.design import TABLE
from tablewright.lint.engine import lint_design as lint
from tablewright.simulate.engine import Capacity, key_throttle, simulate_day
from tablewright.simulate.model import Flow, HotKey, TrafficModel
from tablewright.simulate.stack import simulate_stack
from tablewright.stacks.stack import build_stack
from tests.conftest import ROOT

FLAT = peak_curve(1, "00:00")
SCHEMA = json.loads((ROOT / "schema" / "simulate.schema.json").read_text())


def profile(*surges: Surge) -> Profile:
    return Profile(FLAT, surges, "flat")


def surge(start: int, seconds: int, *, rate: float | None = None, factor: float | None = None) -> Surge:
    return Surge("spike", start, seconds, "once", rate, factor, "test")


def write_flow(units: float, shape: Profile | None = None, target: str = TABLE, entity: str = "Item") -> Flow:
    return Flow(entity, "write", target, units, 1.0, shape or profile(), entity)


def fixed(units: int) -> Capacity:
    """Provisioned with min = max: autoscaling cannot move it."""
    return Capacity("provisioned", (units, units))


def day(flows: list[Flow], capacities: dict, keys: tuple[HotKey, ...] = (), simulation: Simulation | None = None,
        targets: tuple[str, ...] = (TABLE,)):
    model = TrafficModel(tuple(flows), keys, targets)
    everywhere = {(t, d): capacities.get((t, d), fixed(1)) for t in targets for d in ("read", "write")}
    return simulate_day(model, everywhere, simulation or Simulation())


def test_a_steady_load_under_capacity_throttles_nothing():
    result = day([write_flow(500)], {(TABLE, "write"): fixed(1000)})
    run = result.run(TABLE, "write")
    assert run.throttled_units == 0 and run.throttled_seconds == 0
    assert run.served.sum() == pytest.approx(500 * 86_400)


def test_one_key_at_1500_wcu_on_a_table_of_10000_throttles_500_a_second_on_that_key():
    key = HotKey(TABLE, "PK#{id}", "the busiest value", 0, ("Item",), ((0, 1.0),), 1, False)
    result = day([write_flow(1500)], {(TABLE, "write"): fixed(10_000)}, (key,))
    run = result.run(TABLE, "write")
    # A key value never gets more than a partition's 1,000 WCU: 500 of each second's 1,500 are throttled.
    assert run.key_throttled[0] == pytest.approx(500 * 86_400)
    assert run.key_seconds[0] == 86_400
    assert run.throttled_units == pytest.approx(500 * 86_400)
    assert key_throttle([(write_flow(1500), 1.0)]) == (pytest.approx(500 * 86_400), 86_400)
    # Reads share the partition: 1,500 WCU and 1,500 RCU use 1.5 + 0.5 = 2 partitions' worth, so half of each
    # is turned away: 750 WCU and 750 RCU a second.
    read = Flow("get", "read", TABLE, 1500, 1.0, profile(), "Item")
    assert key_throttle([(write_flow(1500), 1.0), (read, 1.0)]) == (pytest.approx(1500 * 86_400), 86_400)


@pytest.mark.parametrize(("seconds", "throttled"), [(60, 0.0), (400, 100 * 1000.0)])
def test_burst_capacity_absorbs_a_60_second_spike_and_not_a_400_second_one(seconds, throttled):
    """1,000 WCU provisioned, 500 used: the bank holds 300 s x 1,000 = 300,000 units. A spike to 2,000 needs
    1,000 a second from it: 60 s take 60,000; 400 s would take 400,000, so the last 100 s throttle 1,000/s."""
    spike = profile(surge(6 * 3600, seconds, rate=2000))
    run = day([write_flow(500, spike)], {(TABLE, "write"): fixed(1000)}).run(TABLE, "write")
    assert run.throttled_units == pytest.approx(throttled)
    assert run.throttled_seconds == (0 if not throttled else 100)


def test_target_tracking_throttles_until_the_alarm_fires_and_the_capacity_arrives_then_recovers():
    """70 WCU/s on 100 provisioned (target 70%) steps to 700 at 06:00.

    The burst bank (300 s x 100 = 30,000 units) covers 600 extra units a second for 50 s. The alarm needs 2
    one-minute datapoints above 70% (06:00 and 06:01), and a throttled request consumes nothing, so each
    scale-out asks for what was consumed over 0.7: 100 -> 143 -> 205 -> 293 -> 419 -> 599 -> 856, each serving
    60 s (`simulation.update_seconds`) after its decision, one decision per 2 minutes. From 06:13 856 units
    serve 700 and nothing throttles; the next step sets 700 / 0.7 = 1,000 and the load sits at the target.
    """
    step = profile(surge(6 * 3600, 6 * 3600, factor=10))
    tracking = Capacity("provisioned", (100, 10_000), 0.7)
    run = day([write_flow(70, step)], {(TABLE, "write"): tracking}, simulation=Simulation(update_seconds=60)).run(
        TABLE, "write")
    minute = 6 * 60
    assert list(run.capacity[minute:minute + 16]) == [100, 100, 100, 143, 143, 205, 205, 293, 293, 419, 419, 599,
                                                      599, 856, 856, 1000]
    expected = 10 * 600 + 2 * 60 * 600 + sum(120 * (700 - c) for c in (143, 205, 293, 419, 599))
    assert run.throttled_units == pytest.approx(expected)  # 298,920 units
    start = minute * 60
    assert not run.throttled[:start + 50].any() and run.throttled[start + 50] > 0
    assert not run.throttled[(minute + 13) * 60:].any()


def test_a_new_on_demand_table_stepping_to_10000_wru_throttles_and_with_warm_throughput_it_does_not():
    """A new table serves 4,000 WRU/s, then twice the peak it served 30 minutes before: 4,000 for 06:00-06:30
    (6,000 a second throttled), 8,000 for 06:30-07:00 (2,000 throttled), then 16,000."""
    step = profile(surge(6 * 3600, 6 * 3600, rate=10_000))
    new = Simulation(history="new")
    cold = day([write_flow(100, step)], {(TABLE, "write"): Capacity("on_demand")}, simulation=new)
    assert cold.run(TABLE, "write").throttled_units == pytest.approx(6000 * 1800 + 2000 * 1800)
    warm = day([write_flow(100, step)], {(TABLE, "write"): Capacity("on_demand", warm=12_000)}, simulation=new)
    assert warm.run(TABLE, "write").throttled_units == 0


def test_a_throttled_gsi_back_pressures_the_tables_writes():
    """The GSI is pinned at 100 WCU and gets 200/s: its bank (30,000 units) lasts 300 s, then half of every
    second's writes throttle; the table has room, but the same writes fail there too."""
    flows = [write_flow(200, target="GSI1"), write_flow(200)]
    result = day(flows, {("GSI1", "write"): fixed(100), (TABLE, "write"): fixed(10_000)},
                 targets=(TABLE, "GSI1"))
    gsi, table = result.run("GSI1", "write"), result.run(TABLE, "write")
    assert gsi.throttled_units == pytest.approx(100 * (86_400 - 300))
    assert table.throttled_units == pytest.approx(gsi.throttled_units)
    assert table.backpressure == pytest.approx(gsi.throttled_units)


def test_profiles_average_the_declared_rate_and_peak_where_declared():
    curve = Profile(peak_curve(3, "18:00"), (), "")
    assert curve.integral(0, 86_400) == pytest.approx(86_400) and curve.peak(100) == pytest.approx(300)
    declared = Profile(daily_curve({"00:00": 1, "12:00": 3}), (), "")
    assert declared.integral(0, 86_400) == pytest.approx(86_400) and declared.peak_factor == pytest.approx(1.5)
    sale = profile(surge(18 * 3600, 600, rate=10_000))
    assert sale.event_volume(100, sale.surges[0]) == pytest.approx((10_000 - 100) * 600)
    assert sale.month_average(100) == pytest.approx(100 + (10_000 - 100) * 600 / SECONDS_PER_MONTH)


FLEET = """\
blueprint: fleet
version: 1.0.0
region: us-east-1
table: {{name: fleet}}
entities:
  Device:
    attributes:
      deviceId: string
      status: {{type: string, values: [ONLINE, OFFLINE, UPDATING]}}
    key: {{pk: "DEVICE#{{deviceId}}", sk: "DEVICE"}}
    writes: {{inserts: 2000}}
    item_count: 1000000
access_patterns:
  devices_by_status:
    entity: Device
    where: {{status: "="}}
    limit: 50
    rps: 5
{extra}"""


def _stack(write_blueprint, text: str, name: str = "blueprint.yaml"):
    return build_stack(load_blueprint(write_blueprint(text, name)))


def _set(text: str, setting: str, value: int) -> str:
    data = yaml.safe_load(text)
    node = data
    *path, last = setting.split(".")
    for part in path:
        node = node.setdefault(part, {})
    node[last] = value
    return yaml.safe_dump(data, sort_keys=False)


def _hot(stack, code: str = "TW103"):
    return [f for f in lint(stack.design, stack.capacity) if f.code == code]


def _key_throttles(stack) -> float:
    result = simulate_stack(stack.design, stack.capacity)
    return sum(sum(run.key_throttled.values()) for run in result.declared.day.runs)


def test_a_status_gsi_with_no_weights_is_an_error_whose_offered_fix_simulated_throttles_nothing(write_blueprint):
    """3 statuses, no weights: the busiest is assumed to take 80% of 2,000 writes/s = 1,600 WCU (at the default
    peak factor of 3: 4,800), over a partition's 1,000. The fix shards it: ceil(4,800 / 500) = 10."""
    text = FLEET.format(extra="")
    stack = _stack(write_blueprint, text)
    [finding] = _hot(stack)
    assert "4,800 WCU per key" in finding.message and "assumed to take 80%" in finding.message
    assert "declare `weights:` on status" in finding.message
    assert "shard it into 10: set `indexes.GSI1.shards: 10`" in finding.fix and "removes all" in finding.fix
    assert _key_throttles(stack) > 0
    fixed_stack = _stack(write_blueprint, _set(text, "indexes.GSI1.shards", 10), "fixed.yaml")
    assert not _hot(fixed_stack) and not _hot(fixed_stack, "TW104")
    assert _key_throttles(fixed_stack) == 0


def test_declared_weights_replace_the_assumption(write_blueprint):
    weighted = FLEET.format(extra="").replace("values: [ONLINE, OFFLINE, UPDATING]",
                                              "weights: {ONLINE: 95, OFFLINE: 4, UPDATING: 1}")
    [finding] = _hot(_stack(write_blueprint, weighted))
    assert "= ONLINE" in finding.message and "5,700 WCU per key" in finding.message  # 2,000 x 0.95 x 3


COUNTER = """\
blueprint: sale
version: 1.0.0
region: us-east-1
table: {{name: sale}}
traffic: {{peak_factor: 1}}
entities:
  Stock:
    attributes:
      sku: {{type: string, hot_key_share: 1.0}}
      writer: string
      remaining: number
    key: {{pk: "STOCK#{{sku}}", sk: "STOCK"{shards}}}
    writes: {{updates: 10000, changes: [remaining]}}
access_patterns:
  stock_of_sku:
    entity: Stock
    where: {{sku: "="}}
    rps: 10
"""


@pytest.mark.parametrize("shards", ["", ", shards: 10", ", shards: 50"])
def test_a_single_hot_item_is_an_error_whatever_shards_its_key_declares(write_blueprint, shards):
    stack = _stack(write_blueprint, COUNTER.format(shards=shards))
    [finding] = _hot(stack)
    assert "10,000 WCU per key" in finding.message and "single item" in finding.message
    assert "split the item into 20 counter items" in finding.fix and "removes all" in finding.fix
    assert _key_throttles(stack) > 0


def test_the_offered_counter_split_applied_removes_the_throttling(write_blueprint):
    split = COUNTER.format(shards=', shards: 20, shard_by: [writer]')
    stack = _stack(write_blueprint, split)
    assert not _hot(stack) and _key_throttles(stack) == 0


SALE_EVENT = """\
blueprint: shop
version: 1.0.0
region: us-east-1
table: {name: shop, warm_throughput: {read: 12000, write: 12000}}
terraform: {aws_provider: ">= 6.13"}
traffic: {peak_factor: 1}
entities:
  Order:
    attributes: {orderId: string}
    key: {pk: "ORDER#{orderId}", sk: "ORDER"}
    writes: {inserts: 10}
    item_count: 1000
    traffic:
      events: [{name: flash-sale, start: "18:00", duration: 10m, rate: 10000}]
access_patterns:
  order_by_id: {entity: Order, where: {orderId: "="}, rps: 0}
"""


def test_a_10_minute_event_is_priced_for_10_minutes_and_capacity_and_simulate_agree(write_blueprint):
    """One sale a month: 10 writes/s all month plus (10,000 - 10) x 600 s once, at $0.625 per million WRU."""
    stack = _stack(write_blueprint, SALE_EVENT)
    price = float(stack.capacity.prices.table_class("us-east-1", "standard").on_demand_write_request_unit)
    units = 10 * SECONDS_PER_MONTH + (10_000 - 10) * 600
    line = monthly_cost(stack.design, stack.capacity).line("on-demand write requests")
    assert line.quantity == pytest.approx(units)
    result = simulate_stack(stack.design, stack.capacity)
    assert result.declared.monthly_usd == pytest.approx(units * price, abs=0.01)
    sale = result.declared.monthly_usd - 10 * SECONDS_PER_MONTH * price
    assert sale == pytest.approx(9_990 * 600 * price, abs=0.01)  # $3.75: the sale for its 10 minutes, not a month


def test_capacity_and_simulate_agree_on_steady_traffic(write_blueprint):
    steady = SALE_EVENT.replace("    traffic:\n      events: [{name: flash-sale, start: \"18:00\", duration: 10m, "
                                "rate: 10000}]\n", "")
    for billing in ("on_demand", "provisioned"):
        text = steady if billing == "on_demand" else steady.replace(
            "table: {name: shop, warm_throughput: {read: 12000, write: 12000}}", "table: {name: shop, billing: "
            "provisioned, capacity: {read: {min: 1, max: 100}, write: {min: 1, max: 100}}}")
        stack = _stack(write_blueprint, text, f"{billing}.yaml")
        cost = monthly_cost(stack.design, stack.capacity)
        throughput = sum(line.monthly or 0 for line in cost.billed if "capacity" in line.item or "requests" in
                         line.item)
        assert simulate_stack(stack.design, stack.capacity).declared.monthly_usd == pytest.approx(throughput,
                                                                                                  abs=0.02)


def test_simulate_json_follows_its_schema_and_markdown_draws_the_chart(write_blueprint):
    path = write_blueprint(FLEET.format(extra=""))
    run = subprocess.run([sys.executable, "main.py", "simulate", str(path), "--format", "json"], cwd=ROOT,
                         capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stderr
    document = json.loads(run.stdout)
    jsonschema.validate(document, SCHEMA)
    [stack] = document["stacks"]
    assert stack["throttled_requests"] > 0 and 0 < stack["throttled_seconds"] < 86_400  # around the peak
    assert {(t["target"], t["direction"]) for t in stack["targets"]} >= {("GSI1", "write"), ("table", "write")}
    markdown = subprocess.run([sys.executable, "main.py", "simulate", str(path), "--format", "markdown"], cwd=ROOT,
                              capture_output=True, text=True, check=True).stdout
    assert "```mermaid\nxychart-beta" in markdown and "recommendation:" in markdown


ON_DEMAND_SALE = """\
blueprint: shop
version: 1.0.0
region: us-east-1
table: {name: shop}
traffic: {peak_factor: 1}
entities:
  Order:
    attributes: {orderId: string}
    key: {pk: "ORDER#{orderId}", sk: "ORDER"}
    writes: {inserts: 10}
    item_count: 1000
    traffic:
      events: [{name: flash-sale, start: "18:00", duration: 10m, rate: 10000}]
access_patterns:
  order_by_id: {entity: Order, where: {orderId: "="}, rps: 1}
"""
PROVISIONED = ("table: {name: shop, billing: provisioned, capacity: {read: {min: 5, max: 100}, "
               "write: {min: 5, max: 40000}}}")


def test_an_on_demand_table_that_cannot_serve_its_event_is_warned_with_warm_throughput_proven(write_blueprint):
    """An established table that peaked at 10 writes/s serves 4,000 at once (a new table's throughput, never
    less): 6,000 of the sale's 10,000 a second throttle for its 600 s."""
    [finding] = _hot(_stack(write_blueprint, ON_DEMAND_SALE), "TW105")
    assert finding.severity == "warning" and "3,600,000 units over 600 s" in finding.message
    assert "flash-sale" in finding.message
    assert "set `table.warm_throughput: {read: 12000, write: 10000}`" in finding.fix
    assert "removes the throttling" in finding.fix
    warmed = ON_DEMAND_SALE.replace("table: {name: shop}", "table: {name: shop, warm_throughput: {read: 12000, "
                                    "write: 10000}}\nterraform: {aws_provider: \">= 6.13\"}")
    assert not _hot(_stack(write_blueprint, warmed, "warm.yaml"), "TW105")


def test_a_provisioned_table_gets_a_scheduled_minimum_that_simulated_removes_the_throttling(write_blueprint):
    text = ON_DEMAND_SALE.replace("table: {name: shop}", PROVISIONED)
    [finding] = _hot(_stack(write_blueprint, text), "TW105")
    # 10,000 / 0.7 = 14,285.7: the minimum from 15 minutes before the sale to its end.
    scheduled = ('add `{name: flash-sale, start: "17:45", end: "18:10", min: 14286}` to '
                 '`table.capacity.write.scheduled`')
    assert scheduled in finding.fix and "removes the throttling" in finding.fix.split("raise")[0]
    applied = text.replace("write: {min: 5, max: 40000}}}", "write: {min: 5, max: 40000, scheduled: [{name: "
                           "flash-sale, start: \"17:45\", end: \"18:10\", min: 14286}]}}}")
    stack = _stack(write_blueprint, applied, "applied.yaml")
    assert not _hot(stack, "TW105")
    run = simulate_stack(stack.design, stack.capacity).declared.day.run(TABLE, "write")
    assert run.capacity[17 * 60 + 45] == 14286 and run.throttled_units == 0


def test_no_event_no_day_simulated_by_lint(write_blueprint):
    steady = ON_DEMAND_SALE.replace("    traffic:\n      events: [{name: flash-sale, start: \"18:00\", duration: "
                                    "10m, rate: 10000}]\n", "")
    assert not _hot(_stack(write_blueprint, steady), "TW105")


SCHEDULED = ("write: {min: 140, max: 1000, scheduled: [{name: month-end, start: \"23:30\", end: \"01:00\", min: 900, "
             "days: [FRI, SAT]}]}")


def test_a_scheduled_minimum_synthesizes_two_scheduled_actions(write_blueprint, tmp_path):
    from tests.synth.test_synth import synth_one

    text = (ROOT / "blueprints" / "crm.yaml").read_text().replace("write: {min: 140, max: 1000}", SCHEDULED)
    config = synth_one(write_blueprint(text), tmp_path / "out")
    actions = config["resource"]["aws_appautoscaling_scheduled_action"]
    assert sorted(actions) == ["crm_write_month_end_raise", "crm_write_month_end_restore"]
    raise_, restore = actions["crm_write_month_end_raise"], actions["crm_write_month_end_restore"]
    assert raise_["schedule"] == "cron(30 23 ? * FRI,SAT *)" and restore["schedule"] == "cron(0 1 ? * FRI,SAT *)"
    assert raise_["scalable_target_action"] == {"min_capacity": 900, "max_capacity": 1000}
    assert restore["scalable_target_action"] == {"min_capacity": 140, "max_capacity": 1000}
    assert raise_["resource_id"] == "${aws_appautoscaling_target.crm_write.resource_id}"
    assert raise_["name"] == "prod-crm_main-write-month-end-raise" and raise_["timezone"] == "UTC"


@pytest.mark.terraform
def test_terraform_validate_accepts_scheduled_minimums(write_blueprint, tmp_path):
    from tests.support.terraform_support import terraform_environment, validate
    from tests.synth.test_synth import synth_one

    text = (ROOT / "blueprints" / "crm.yaml").read_text().replace("write: {min: 140, max: 1000}", SCHEDULED)
    synth_one(write_blueprint(text), tmp_path / "out")
    validate(tmp_path / "out" / "stacks" / "crm-prod", terraform_environment(tmp_path))


@pytest.mark.parametrize(("field", "error"), [
    ("min: 5000", "min 5,000 is above max (1,000)"),
    ('start: "01:00"', "`start` and `end` are the same time"),
])
def test_bad_scheduled_minimums_are_refused(write_blueprint, run_cli, field, error):
    text = (ROOT / "blueprints" / "crm.yaml").read_text().replace(
        "write: {min: 140, max: 1000}", SCHEDULED.replace("min: 900", field) if field.startswith("min")
        else SCHEDULED.replace('start: "23:30"', field))
    code, _, err = run_cli("lint", write_blueprint(text))
    assert code == 2 and error in err and "Traceback" not in err


def test_a_review_shows_both_sides_simulated_and_warns_when_a_change_introduces_throttling(write_blueprint):
    from tablewright.review.review import build_review

    base = write_blueprint(FLEET.format(extra="").replace("  devices_by_status:", "  device:\n    entity: Device\n"
                                                           "    where: {deviceId: \"=\"}\n  devices_by_status:")
                           .split("  devices_by_status:")[0], "base.yaml")
    head = write_blueprint(FLEET.format(extra=""), "head.yaml")
    [stack] = build_review(str(base), str(head)).stacks
    assert stack.simulated_before.throttled_requests == 0
    assert stack.simulated_after.throttled_requests > 0
    [warning] = [w for w in stack.warnings if "throttles requests under the declared traffic" in w]
    assert "(before: 0)" in warning
    [same] = build_review(str(head), str(head)).stacks
    assert not [w for w in same.warnings if "throttles requests" in w]


def test_the_review_markdown_shows_the_simulated_day_when_a_side_throttles(write_blueprint):
    from tablewright.report.review import render_markdown
    from tablewright.review.review import build_review

    head = write_blueprint(FLEET.format(extra=""), "head.yaml")
    markdown = render_markdown(build_review(str(head), str(head)))
    assert "Simulated day of the declared traffic: before " in markdown and "throttled requests in" in markdown


def test_a_fix_simulated_on_its_own_target_matches_the_whole_stack_simulated_again(write_blueprint):
    """Lint re-simulates only what a fix changes (and the table's writes after a GSI's): the same figures."""
    from dataclasses import replace

    from tablewright.simulate.model import traffic_model
    from tablewright.simulate.stack import _run_mode, capacities, run_mode

    stack = _stack(write_blueprint, FLEET.format(extra="").replace("table: {name: fleet}", PROVISIONED.replace(
        "shop", "fleet")) + "traffic:\n  events: [{name: sale, start: \"12:00\", duration: 20m, factor: 3}]\n")
    model = traffic_model(stack.design, stack.capacity)
    settings = capacities(stack.design, stack.capacity, "provisioned")
    configured = run_mode(stack.design, stack.capacity, model, "provisioned")
    for target in ("GSI1", TABLE):
        changed = {(target, "write"): replace(settings[target, "write"], bounds=(3000, 40_000))}
        alone = _run_mode(stack.design, stack.capacity, model, "provisioned", changed, configured)
        whole = _run_mode(stack.design, stack.capacity, model, "provisioned", changed, None)
        assert alone.monthly_usd == whole.monthly_usd
        for mine, theirs in zip(alone.day.runs, whole.day.runs, strict=True):
            assert (mine.target, mine.direction) == (theirs.target, theirs.direction)
            assert mine.throttled_units == pytest.approx(theirs.throttled_units)
            assert list(mine.capacity) == list(theirs.capacity)


@pytest.mark.terraform
def test_mermaid_parses_the_simulation_charts(write_blueprint):
    from tablewright.report.simulate import render_markdown, simulated
    from tests.report.test_diagrams import mermaid, parse

    stacks = [_stack(write_blueprint, FLEET.format(extra=""), "fleet.yaml"),
              _stack(write_blueprint, ON_DEMAND_SALE.replace("table: {name: shop}", PROVISIONED), "sale.yaml")]
    charts = mermaid(render_markdown(simulated(stacks)))
    assert len(charts) == 2 and all(chart.startswith("xychart-beta") for chart in charts)
    code, results = parse(charts)
    assert code == 0, results


def _one(write_blueprint, entities: str, patterns: str, name: str = "b.yaml"):
    text = (f"blueprint: scenario\nversion: 1.0.0\nregion: us-east-1\ntable: {{name: scenario}}\n"
            f"entities:\n{entities}access_patterns:\n{patterns}")
    return _stack(write_blueprint, text, name)


def test_an_unknown_non_identifier_key_part_is_not_assumed_spread(write_blueprint):
    """The leaderboard: `gameId` declared 70% hot, `period` a plain string: the event game's current board
    takes 0.7 x 1 of 1,900 score writes/s, x 3 at the peak = 3,990 WCU on one key value."""
    stack = _one(write_blueprint, """\
  Score:
    attributes:
      gameId: {type: string, hot_key_share: 0.7}
      period: string
      playerId: string
      points: {type: number, width: 10}
    key: {pk: "BOARD#{gameId}#{period}", sk: "{points}#{playerId}"}
    writes: {inserts: 1900}
""", """\
  board: {entity: Score, where: {gameId: "=", period: "="}, order: desc, order_by: points, limit: 10, rps: 1}
""")
    [finding] = _hot(stack)
    assert "3,990 WCU per key" in finding.message
    assert "{period}: cardinality unknown and not an identifier, so judged at its worst" in finding.message
    assert "`cardinality:` (and `hot_key_share:`) or `weights:` on period" in finding.message


def test_a_read_hot_key_is_judged_at_its_peak_and_a_top_n_is_cached_not_sharded(write_blueprint):
    """A chat room read at 1,362 RCU/s on average (x 3 at the peak: 4,086, over a partition's 3,000): sharding
    a top-N multiplies its reads (each shard is asked for the same 50), so only the cache is offered."""
    stack = _one(write_blueprint, """\
  Message:
    attributes:
      roomId: {type: string, hot_key_share: 1.0}
      sentAt: timestamp
      body: string
    key: {pk: "ROOM#{roomId}", sk: "{sentAt}"}
    item_bytes: 450
    item_count: 1000000
""", """\
  latest: {entity: Message, where: {roomId: "="}, order: desc, limit: 50, rps: 454}
""")
    [finding] = _hot(stack)
    # 50 messages x 450 B = 22,500 B: 6 x 4 KB, eventually consistent: 3 RCU a call; 454 calls/s = 1,362.
    assert "4,086 RCU per key" in finding.message
    assert "shard it" not in finding.fix
    assert "serve its reads from a cache" in finding.fix and "removes all" in finding.fix
