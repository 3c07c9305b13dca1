"""What a scheduled minimum costs a month: the one rule `lint` (its TW105 fix), `simulate` and `capacity` price it by.

A scheduled minimum holds (its minimum - the configured minimum) more capacity units for its window (`start` to
`end`) each time it runs, at the provisioned unit-hour price of its direction; it runs as often as its schedule
says: every day 730 / 24 times a month, on each weekday named in `days` 730 / 168 times, on a `day_of_month` once,
and on a `date` (a one-time `at(...)` action) once, counted in the month it runs, as an `every: once` event is
(blueprint/traffic.py's OCCURRENCES_PER_MONTH). It is what the raise can add at most: traffic that already holds
the capacity above the configured minimum (the event itself) makes part of it free, so `capacity` shows it on its
own line and the simulated month, which follows the capacity minute by minute, can come out lower.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from tablewright.blueprint.language import SECONDS_PER_DAY, ScheduledMinimum, seconds_of_day
from tablewright.blueprint.prices import ClassPrices
from tablewright.blueprint.traffic import OCCURRENCES_PER_MONTH
from tablewright.design.design import TABLE, TableDesign

Direction = Literal["read", "write"]


@dataclass(frozen=True)
class ScheduledRaise:
    """One scheduled minimum of the table or a GSI in one direction, as priced."""

    target: str  # "table" or a GSI
    direction: Direction
    name: str
    seconds: int  # its window, start to end
    units: int  # above the configured minimum
    runs_per_month: float

    @property
    def unit_hours(self) -> float:
        """Capacity-unit-hours a month it adds at most."""
        return self.units * self.seconds / 3600 * self.runs_per_month


def recurrence_runs(recurrence: Literal["once", "day", "week", "month"], weekdays: int = 1) -> float:
    """Runs a month of a schedule that recurs so (`week`: on `weekdays` days of each week)."""
    return OCCURRENCES_PER_MONTH[recurrence] * (weekdays if recurrence == "week" else 1)


def runs_per_month(scheduled: ScheduledMinimum) -> float:
    """How often a scheduled minimum runs in a month (a one-time one: once, in the month it runs)."""
    return recurrence_runs(scheduled.recurrence, len(set(scheduled.days or ())))


def window_seconds(start: str, end: str) -> int:
    """Seconds from `start` to `end` (UTC `HH:MM`), past midnight when `end` comes first."""
    return (seconds_of_day(end) - seconds_of_day(start)) % SECONDS_PER_DAY


def scheduled_raise(target: str, direction: Direction, scheduled: ScheduledMinimum, minimum: int) -> ScheduledRaise:
    """A scheduled minimum over a configured `minimum`, as priced."""
    return ScheduledRaise(target, direction, scheduled.name, window_seconds(scheduled.start, scheduled.end),
                          max(0, scheduled.min - minimum), runs_per_month(scheduled))


def scheduled_raises(design: TableDesign) -> list[ScheduledRaise]:
    """Every scheduled minimum of the provisioned table and GSIs, table first, in the blueprint's order."""
    found = []
    for target in [TABLE, *(index.name for index in design.global_indexes)]:
        policy = design.capacity[target]
        if policy.billing != "provisioned":
            continue
        for direction in ("read", "write"):
            bounds = policy.bounds(direction)
            assert bounds is not None  # a provisioned policy has both
            found += [scheduled_raise(target, direction, s, bounds[0]) for s in policy.scaling(direction).scheduled]
    return found


def unit_price(prices: ClassPrices, direction: Direction) -> float:
    return float(prices.provisioned_rcu_hour if direction == "read" else prices.provisioned_wcu_hour)


def monthly_usd(raises: list[ScheduledRaise], prices: ClassPrices) -> float:
    """What the scheduled minimums cost a month at most (the rule above), to the cent."""
    return round(sum(r.unit_hours * unit_price(prices, r.direction) for r in raises), 2)


def priced_text(raises: list[ScheduledRaise], prices: ClassPrices | None) -> str:
    """`$X a month` with its arithmetic, one term per scheduled minimum (units x hours x runs x price)."""
    if prices is None:
        return "not priced (no prices for the blueprint's region)"
    terms = [f"{r.units:,} units x {r.seconds // 60:,} min x {r.runs_per_month:g} runs a month x "
             f"${unit_price(prices, r.direction):g} a unit-hour" for r in raises if r.units]
    return f"${monthly_usd(raises, prices):,.2f} a month at most" + (f" ({' + '.join(terms)})" if terms else "")
