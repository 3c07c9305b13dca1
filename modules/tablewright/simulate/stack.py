"""One stack simulated in its billing mode and in the other, priced for a month of its declared traffic."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

import numpy as np

from tablewright.blueprint.language import SECONDS_PER_DAY, seconds_of_day
from tablewright.blueprint.prices import ClassPrices
from tablewright.blueprint.throughput import warm_throughput_setting
from tablewright.blueprint.traffic import HOURS_PER_MONTH
from tablewright.capacity.loads import UNLIMITED, CapacityReport
from tablewright.capacity.traffic import Direction, TrafficModel
from tablewright.design.design import TABLE, TableDesign
from tablewright.simulate.engine import Capacity, Day, simulate_day

Billing = Literal["provisioned", "on_demand"]
DAYS_PER_MONTH = HOURS_PER_MONTH / 24
DIRECTIONS: tuple[Direction, Direction] = ("read", "write")


def capacities(design: TableDesign, capacity: CapacityReport, billing: Billing) -> dict[tuple[str, Direction],
                                                                                         Capacity]:
    """How each target serves each direction in `billing`: as the blueprint configures it when that is its
    mode; otherwise on demand without a maximum, or provisioned within the bounds `capacity` suggests."""
    found = {}
    maxima = capacity.on_demand_maxima if billing == design.blueprint.table.billing else {}
    for target in [TABLE, *(index.name for index in design.global_indexes)]:
        policy, load = design.capacity[target], capacity.load(target)
        warm = warm_throughput_setting(design.blueprint, None if target == TABLE else target)
        for direction in DIRECTIONS:
            scaling = policy.scaling(direction)
            bounds = policy.bounds(direction) if policy.billing == billing == "provisioned" else None
            suggested = load.suggested_read if direction == "read" else load.suggested_write
            maximum = maxima.get(target, (UNLIMITED, UNLIMITED))[0 if direction == "read" else 1]
            schedule = tuple((seconds_of_day(s.start), seconds_of_day(s.end) - 1, s.min, s.recurrence == "day")
                             for s in scaling.scheduled)
            found[target, direction] = Capacity(
                billing, bounds or suggested, scaling.target / 100, scaling.scale_in_cooldown or 0,
                scaling.scale_out_cooldown or 0, scaling.disable_scale_in,
                None if maximum == UNLIMITED else maximum,
                (warm.read if direction == "read" else warm.write) if warm else 0, schedule if bounds else ())
    return found


@dataclass(frozen=True)
class ModeRun:
    """The stack in one billing mode: the declared day (every event in it) and, to price them, the normal day."""

    billing: Billing
    day: Day
    normal: Day
    monthly_usd: float | None  # throughput for a month of the declared traffic; None without prices
    utilization: float | None  # provisioned: consumed over provisioned across the declared day


def _day_cost(day: Day, billing: Billing, prices: ClassPrices) -> float:
    total = 0.0
    for run in day.runs:
        if billing == "on_demand":
            unit = (prices.on_demand_read_request_unit if run.direction == "read"
                    else prices.on_demand_write_request_unit)
            total += float(run.served.sum()) * float(unit)
        else:
            price = prices.provisioned_rcu_hour if run.direction == "read" else prices.provisioned_wcu_hour
            total += float(run.capacity.sum()) / 60 * float(price)
    return total


def without_events(model: TrafficModel) -> TrafficModel:
    """The normal day: every flow's curve, no events."""
    return model.with_flows({i: replace(flow, profile=replace(flow.profile, surges=()))
                             for i, flow in enumerate(model.flows)})


def daily_only(settings: dict[tuple[str, Direction], Capacity]) -> dict[tuple[str, Direction], Capacity]:
    """The settings of the normal day: a scheduled minimum that runs on a date, a weekday or a day of the month
    runs on the events' day only (so a month counts it as often as its events, not every day)."""
    return {key: replace(capacity, schedule=tuple(s for s in capacity.schedule if s[3]))
            if capacity.schedule else capacity for key, capacity in settings.items()}


def has_events(model: TrafficModel) -> bool:
    return any(flow.profile.surges for flow in model.flows)


def _peaks(day: Day) -> dict[tuple[str, Direction], float]:
    return {(run.target, run.direction): float(np.max(run.served)) for run in day.runs}


# The blueprint's own settings are simulated by lint (TW105) and again by `simulate` and the review: the last runs
# (both modes of one stack) are kept, by the identity of their estimate (held here, so an id is not reused while
# kept): an estimate is made from one design, and environments of one design share it (stacks/stack.py), their
# designs differing in names the simulation never reads. A run holds a few arrays of the day per table and index,
# so no more are kept.
_KEPT = 2
_RUNS: dict[tuple[int, str], tuple[TableDesign, CapacityReport, ModeRun]] = {}


def run_mode(design: TableDesign, capacity: CapacityReport, billing: Billing,
             changed: dict[tuple[str, Direction], Capacity] | None = None) -> ModeRun:
    """The stack's day in one billing mode (`changed`: some targets served otherwise, a fix being tried); with
    events, the normal day first (an established on-demand table has served its peak, not the events')."""
    if changed:
        return _run_mode(design, capacity, billing, changed, run_mode(design, capacity, billing))
    key = (id(capacity), billing)
    if key not in _RUNS:
        if len(_RUNS) >= _KEPT:
            del _RUNS[next(iter(_RUNS))]
        _RUNS[key] = (design, capacity, _run_mode(design, capacity, billing, None))
    return _RUNS[key][2]


def _run_mode(design: TableDesign, capacity: CapacityReport, billing: Billing,
              changed: dict[tuple[str, Direction], Capacity] | None, configured: ModeRun | None = None) -> ModeRun:
    """`configured`: the same mode as the blueprint sets it; only what `changed` touches is simulated again (a
    GSI's writes hold back the table's, so the table's writes are simulated again with them)."""
    simulation, model = design.blueprint.simulation, capacity.traffic
    settings = capacities(design, capacity, billing) | (changed or {})
    only: set[tuple[str, Direction]] | None = None
    if configured is not None and changed:
        only = set(changed)
        if any(target != TABLE and direction == "write" for target, direction in changed):
            only.add((TABLE, "write"))
    events = has_events(model)  # without any, the day simulated is the normal day
    # a scheduled minimum on a date, a weekday or a day of the month runs on the events' day only (priced as often as
    # they are); capacity/schedule.py prices each by its own recurrence, on a line of its own
    normal = simulate_day(without_events(model), daily_only(settings), simulation, None,
                          configured.normal if configured else None, only)
    day = (simulate_day(model, settings, simulation, _peaks(normal), configured.day if configured else None, only)
           if events else normal)
    prices = capacity.prices.table_class(design.blueprint.region, design.blueprint.table.table_class)
    monthly = None
    if prices is not None:
        base = _day_cost(normal, billing, prices)
        extra = _day_cost(day, billing, prices) - base
        monthly = base * DAYS_PER_MONTH + sum(extra * share * per_month
                                              for share, per_month in model.event_weights.values())
    utilization = None
    if billing == "provisioned":
        provisioned = sum(float(run.capacity.sum()) * 60 for run in day.runs)
        utilization = sum(float(run.served.sum()) for run in day.runs) / provisioned if provisioned else None
    return ModeRun(billing, day, normal, None if monthly is None else round(monthly, 2), utilization)


@dataclass(frozen=True)
class StackSimulation:
    model: TrafficModel
    declared: ModeRun  # the blueprint's billing mode
    other: ModeRun  # the other mode, for comparison
    break_even: dict[Direction, float] | None  # utilization below which on demand costs less

    def throttled_requests(self, mode: ModeRun | None = None) -> float:
        """Requests (calls of a pattern, writes of an entity) throttled over the declared day: each counted once,
        where it is throttled most (a write held back by a GSI fails on the table too)."""
        worst: dict[tuple[str, str], float] = {}
        for run in (mode or self.declared).day.runs:
            for i, units in run.flow_throttled.items():
                flow = self.model.flows[i]
                key = (flow.direction, flow.source)
                worst[key] = max(worst.get(key, 0.0), units / flow.per_request)
        return sum(worst.values())


def break_even(prices: ClassPrices) -> dict[Direction, float]:
    """The average utilization of provisioned capacity at which it costs what on demand does: a unit-hour's
    price over 3,600 request units'."""
    return {"read": float(prices.provisioned_rcu_hour) / (3600 * float(prices.on_demand_read_request_unit)),
            "write": float(prices.provisioned_wcu_hour) / (3600 * float(prices.on_demand_write_request_unit))}


def simulate_stack(design: TableDesign, capacity: CapacityReport) -> StackSimulation:
    billing: Billing = design.blueprint.table.billing
    other: Billing = "on_demand" if billing == "provisioned" else "provisioned"
    prices = capacity.prices.table_class(design.blueprint.region, design.blueprint.table.table_class)
    return StackSimulation(capacity.traffic, run_mode(design, capacity, billing), run_mode(design, capacity, other),
                           break_even(prices) if prices else None)


@dataclass(frozen=True)
class DaySummary:
    """The declared day in the blueprint's billing mode, in three figures (what a review compares)."""

    throttled_requests: float
    throttled_seconds: int
    monthly_usd: float | None  # throughput for a month of the declared traffic

    @staticmethod
    def of(result: StackSimulation) -> DaySummary:
        seconds = np.zeros(SECONDS_PER_DAY, dtype=bool)
        for run in result.declared.day.runs:
            seconds |= run.throttled > 1e-9
        return DaySummary(round(result.throttled_requests(), 1), int(seconds.sum()), result.declared.monthly_usd)
