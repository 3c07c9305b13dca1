"""`migrate plan`: the items a migration touches, the write units, the duration and cost at a budget, and the hours
of the declared day in which that budget fits beside the declared traffic without throttling the table or any
global index (from the simulator's declared day: the capacity each target has that hour, minus its busiest second)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from tablewright.migrate.migration import EntityWork, Migration, entity_work

SECONDS_PER_HOUR = 3600


@dataclass(frozen=True)
class Plan:
    stack: str
    table: str
    identity: str
    subjects: tuple[str, ...]  # the data changes it carries out
    works: tuple[EntityWork, ...]
    budget: float  # write units per second
    write_units: float | None  # None: an entity's item count is unknown
    scan_read_units: float  # the Scan over the whole table (eventually consistent)
    seconds: float | None  # at the budget
    cost_usd: float | None  # None: no prices, or unknown counts
    shares: dict[str, float]  # target -> share of the budget it takes
    fitting_hours: tuple[int, ...]  # UTC hours of the declared day (0-23) in which the budget fits
    largest_budget: float  # the largest budget that fits in some hour (inf: no write target to share)
    billing: str


# Scan reads every item of the table, 4 KB per read unit, halved when eventually consistent (Developer Guide,
# "Capacity unit consumption for read operations":
# https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/read-write-operations.html).
def scan_units(table_bytes: int) -> float:
    return math.ceil(max(table_bytes, 0) / 4096) / 2


def shares(works: list[EntityWork]) -> dict[str, float]:
    """The share of each consumed unit that lands on the table and on each global index (weighted by item counts;
    one item each when unknown)."""
    loads: dict[str, float] = {}
    for work in works:
        for target, units in work.units_by_target.items():
            loads[target] = loads.get(target, 0.0) + (work.items if work.items is not None else 1) * units
    total = sum(loads.values()) or 1.0
    return {target: load / total for target, load in sorted(loads.items()) if load}


def hourly_headroom(plan: Migration, by_target: dict[str, float]) -> tuple[float, ...]:
    """Per hour of the declared day, the largest budget that fits: for every target, its capacity's lowest minute
    less its busiest second of declared writes, over its share of the budget (the smallest over the targets)."""
    day = plan.new.simulate().declared.day
    headroom = []
    for hour in range(24):
        seconds = slice(hour * SECONDS_PER_HOUR, (hour + 1) * SECONDS_PER_HOUR)
        minutes = slice(hour * 60, (hour + 1) * 60)
        fits = math.inf
        for target, share in by_target.items():
            run = day.run(target, "write")
            if run is not None and share > 0:
                spare = float(np.min(run.capacity[minutes])) - float(np.max(run.demand[seconds]))
                fits = min(fits, max(spare, 0.0) / share)
        headroom.append(fits)
    return tuple(headroom)


def _cost(plan: Migration, units: float | None, reads: float, seconds: float | None, budget: float) -> float | None:
    blueprint = plan.new.design.blueprint
    prices = plan.new.capacity.prices.table_class(blueprint.region, blueprint.table.table_class)
    if prices is None or units is None or seconds is None:
        return None
    if blueprint.table.billing == "on_demand":
        return units * prices.on_demand_write_request_unit + reads * prices.on_demand_read_request_unit
    hours = math.ceil(seconds / SECONDS_PER_HOUR)  # provisioned: the budget's units added for every hour begun
    return hours * (budget * prices.provisioned_wcu_hour + reads / max(seconds, 1) * prices.provisioned_rcu_hour)


def plan_of(plan: Migration, budget: float, counts: dict[str, int] | None = None) -> Plan:
    works = entity_work(plan, counts)
    known = all(work.items is not None for work in works)
    units = sum((work.items or 0) * work.units_per_item for work in works) if known else None
    reads = scan_units(plan.old.cost.table_bytes)
    seconds = units / budget if units is not None else None
    by_target = shares(works)
    headroom = hourly_headroom(plan, by_target)
    fitting = tuple(hour for hour, fits in enumerate(headroom) if budget <= fits)
    return Plan(plan.stack, plan.table, plan.identity, tuple(change.subject for change in plan.changes),
                tuple(works), budget, units, reads, seconds, _cost(plan, units, reads, seconds, budget), by_target,
                fitting, max(headroom), plan.new.design.blueprint.table.billing)
