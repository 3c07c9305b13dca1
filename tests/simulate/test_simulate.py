"""The throttle simulator pinned to hand arithmetic from the DynamoDB rules (modules/tablewright/simulate/engine.py
cites each): a key's partition, burst capacity, target tracking, a new on-demand table, a GSI's back-pressure,
traffic profiles. Lint's fixes simulated: test_simulate_fixes.py; the simulation in the other commands:
test_simulate_commands.py."""

from __future__ import annotations

import pytest

from tablewright.blueprint.language import Simulation
from tablewright.blueprint.traffic import SECONDS_PER_MONTH, Profile, Surge, daily_curve, peak_curve
from tablewright.capacity.traffic import Flow, HotKey, TrafficModel
from tablewright.design.design import TABLE
from tablewright.simulate.engine import Capacity, key_throttle, simulate_day

FLAT = peak_curve(1, "00:00")


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
