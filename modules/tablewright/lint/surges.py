"""Throttling a table or GSI's capacity cannot avoid under the declared events, found by simulating the day.

Provisioned capacity follows traffic only after its CloudWatch alarms fire (2 minutes above the target) and
UpdateTable takes effect; on demand serves at once up to twice its previous peak. A surge faster than that
throttles however the keys are spread. Each fix offered was simulated: warm throughput (on demand), a
scheduled minimum before the event, a higher minimum, on-demand billing.
"""

from __future__ import annotations

import datetime
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace

import numpy as np

from tablewright.blueprint.language import SECONDS_PER_DAY, TrafficShape
from tablewright.blueprint.language.tables import WEEKDAYS
from tablewright.blueprint.traffic import Surge
from tablewright.capacity.schedule import ScheduledRaise, priced_text, recurrence_runs
from tablewright.capacity.traffic import Direction
from tablewright.design.design import TABLE
from tablewright.errors import FieldPath
from tablewright.lint.findings import Context, Issue, rule
from tablewright.lint.quotas import beyond_quota, quota_mark
from tablewright.simulate.engine import ON_DEMAND_NEW, Capacity, Run, event_window
from tablewright.simulate.stack import DIRECTIONS, Billing, capacities, has_events, run_mode

SCHEDULE_LEAD = 15 * 60  # seconds a scheduled minimum starts before its event: time for the capacity to arrive
WARM_MINIMUM = {"read": 12_000, "write": 4_000}  # what `warm_throughput` accepts at least
MAX_FINDINGS = 5  # the most throttled tables and indexes reported (each fix tried is a day simulated twice)


def _place(target: str) -> str:
    return "the table" if target == TABLE else target


def _surges(ctx: Context, run: Run) -> list[Surge]:
    """The events of the flows on the run's target and direction that overlap its throttled seconds."""
    throttled = set(int(s) for s in ((run.over if run.over is not None else run.throttled) > 1e-9).nonzero()[0])
    found: dict[str, Surge] = {}
    for flow in ctx.capacity.traffic.flows:
        if flow.target == run.target and flow.direction == run.direction:
            for surge in flow.profile.surges:
                if any((surge.start + i) % SECONDS_PER_DAY in throttled for i in range(0, surge.seconds, 10)):
                    found.setdefault(surge.name, surge)
    return sorted(found.values(), key=lambda s: (s.start, s.name))


Settings = dict[tuple[str, Direction], Capacity]


def _during(ctx: Context, run: Run) -> np.ndarray:
    """The seconds an event of a flow on the run's target and direction is on (once per lint run)."""
    memo = ctx.memo.setdefault("event_seconds", {})
    if (run.target, run.direction) in memo:
        found: np.ndarray = memo[run.target, run.direction]
        return found
    active = memo[run.target, run.direction] = np.zeros(SECONDS_PER_DAY, dtype=bool)
    surges = {surge for flow in ctx.capacity.traffic.flows
              if flow.target == run.target and flow.direction == run.direction for surge in flow.profile.surges}
    for surge in surges:
        for part in event_window(surge.start, surge.seconds):
            active[part] = True
    return active


def _event_over(ctx: Context, run: Run | None) -> float:
    """Units the table's or index's capacity throttles while an event is on (the rest of the day is TW308's and
    TW313's: bounds below the daily peak)."""
    if run is None or run.over is None:
        return 0.0
    return float(run.over[_during(ctx, run)].sum())


def _tried(ctx: Context, run: Run, changed: Settings, billing: Billing | None = None) -> tuple[float, float | None]:
    """(units the target still throttles during its events, monthly throughput cost) with the change."""
    mode = run_mode(ctx.design, ctx.capacity, billing or ctx.design.blueprint.table.billing, changed)
    return _event_over(ctx, mode.day.run(run.target, run.direction)), mode.monthly_usd


def _proof(before: float, after: float, cost: float | None, base: float | None) -> str:
    done = "removes the throttling" if after < 1 else f"leaves {after:,.0f} of {before:,.0f} units throttled"
    delta = "" if cost is None or base is None else f", {'+' if cost >= base else '-'}${abs(cost - base):,.2f} a month"
    return f"simulated: {done}{delta}"


def _on_demand_fixes(ctx: Context, run: Run, settings: Settings, base: float | None) -> list[tuple[str, float]]:
    before = _event_over(ctx, run)
    key = (run.target, run.direction)
    current = settings[key]
    peaks = {d: math.ceil(float(r.demand.max())) for d in DIRECTIONS
             if (r := ctx.simulated.day.run(run.target, d)) is not None}
    warm = {d: max(WARM_MINIMUM[d], peaks.get(d, 0)) for d in DIRECTIONS}
    changed: Settings = {(run.target, d): replace(settings[run.target, d], warm=warm[d]) for d in DIRECTIONS}
    if current.maximum is not None:
        changed[key] = replace(changed[key], maximum=max(current.maximum, peaks[run.direction]))
    after, cost = _tried(ctx, run, changed)
    field = "table" if run.target == TABLE else f"indexes.{run.target}"
    text = (f"set `{field}.warm_throughput: {{read: {warm['read']}, write: {warm['write']}}}` (needs hashicorp/aws "
            ">= 6.13; warm throughput has its own charge)")
    if current.maximum is not None and current.maximum < peaks[run.direction]:
        text += f" and raise `max_throughput` {run.direction} to {peaks[run.direction]}"
    mark = quota_mark(ctx.design.blueprint.simulation, max(warm.values()))
    return [(f"{text} ({_proof(before, after, cost, base)}{mark})", after)]


def _clock(second: int) -> str:
    return f"{second // 3600 % 24:02d}:{second % 3600 // 60:02d}"


def _event_day(ctx: Context, surge: Surge) -> str | int | None:
    """The `on:` of a surge's declaration (`traffic.events[i]`, `entities.<name>.traffic.events[i]`, ...; a job's
    `access_patterns.<name>.schedule`)."""
    if surge.where.endswith(".schedule"):
        pattern = ctx.design.blueprint.access_patterns.get(surge.where.split(".")[1])
        return pattern.schedule.on if pattern is not None and pattern.schedule is not None else None
    owner, number = surge.where.rsplit("[", 1)
    parts = owner.split(".")
    blueprint = ctx.design.blueprint
    shape: TrafficShape | None = blueprint.traffic
    if parts[0] == "entities":
        shape = blueprint.entities[parts[1]].traffic if parts[1] in blueprint.entities else None
    elif parts[0] == "access_patterns":
        shape = blueprint.access_patterns[parts[1]].traffic if parts[1] in blueprint.access_patterns else None
    events = shape.events if shape is not None else []
    index = int(number.rstrip("]"))
    return events[index].on if index < len(events) and events[index].name == surge.name else None


def _day_before(day: str | int, every: str) -> str | int:
    """The day before an event's `on:` (its date, weekday or day of the month, above 1)."""
    if every == "once":
        return (datetime.date.fromisoformat(str(day)) - datetime.timedelta(days=1)).isoformat()
    if every == "week":
        return WEEKDAYS[WEEKDAYS.index(str(day)) - 1]
    return int(day) - 1


def _when(surge: Surge, day: str | int | None, before: bool) -> str:
    """A scheduled minimum's recurrence fields for an event: its date (a one-time `at(...)`), weekday or day of the
    month (`before`: the day before, when the lead starts before midnight); nothing for a daily one. Without `on:`
    the event's day is not known: a placeholder says what goes there."""
    if surge.every == "day":
        return ""
    field = {"once": "date", "week": "days", "month": "day_of_month"}[surge.every]
    if day is None:
        unknown = {"once": '"<yyyy-mm-dd of the event', "week": "[<its weekday", "month": "<its day of the month"}[
            surge.every]
        close = {"once": '>"', "week": ">]", "month": ">"}[surge.every]
        return f"{field}: {unknown}{', the day before' if before else ''}{close}, "
    shown = _day_before(day, surge.every) if before else day
    return f"{field}: " + {"once": f'"{shown}"', "week": f"[{shown}]", "month": f"{shown}"}[surge.every] + ", "


@dataclass(frozen=True)
class _Raise:
    """A scheduled minimum a fix adds on one target and direction, for one event."""

    key: tuple[str, Direction]
    surge: Surge
    start: int  # seconds of the day, whole minutes
    end: int
    level: int  # the minimum: its own peak during the event at the target, within its max
    needed: int  # that peak at the target, whatever the max

    def text(self, ctx: Context) -> str:
        source = ".".join(_own_source(ctx, self.key[0])) + f".{self.key[1]}"
        day = _event_day(ctx, self.surge)
        when = _when(self.surge, day, self.start > self.surge.start)
        return (f"`{{name: {_event_name(self.surge.name)}, {when}start: \"{_clock(self.start)}\", "
                f"end: \"{_clock(self.end)}\", min: {self.level}}}` to `{source}.scheduled`")

    def priced(self, settings: Settings) -> ScheduledRaise:
        return ScheduledRaise(self.key[0], self.key[1], self.surge.name, (self.end - self.start) % SECONDS_PER_DAY,
                              max(0, self.level - settings[self.key].bounds[0]), recurrence_runs(self.surge.every))


def _event_name(name: str) -> str:
    """A scheduled minimum's `name` (lowercase letters, digits and `-`, from a letter) for an event's or a job's name
    (a job is named after its pattern: `weekly_report` -> `weekly-report`)."""
    text = re.sub(r"[^a-z0-9-]+", "-", name.lower()).strip("-")[:63]
    return text if text[:1].isalpha() else f"event-{text}"[:63]


def _own_source(ctx: Context, target: str) -> tuple[str, ...]:
    """Where a target's own capacity is declared: a GSI without one shares the table's, scheduled minimums
    included, so its own goes under `indexes.<name>.capacity`."""
    return ("table", "capacity") if target == TABLE else ("indexes", target, "capacity")


def _separate(ctx: Context, targets: set[str]) -> str:
    """The GSIs sharing the table's capacity that a fix on `targets` must give their own (the table's bounds): a GSI
    without its own capacity takes the table's minimums, scheduled ones included, at the table's level."""
    table = ctx.design.capacity[TABLE]
    sharing = [index.name for index in ctx.design.global_indexes if ctx.design.capacity[index.name] is table
               and (TABLE in targets or index.name in targets)]
    if not sharing:
        return ""
    read, write = table.bounds("read"), table.bounds("write")
    assert read is not None and write is not None  # the fixes' minimums are a provisioned table's
    own = f"`capacity: {{read: {{min: {read[0]}, max: {read[1]}}}, write: {{min: {write[0]}, max: {write[1]}}}}}`"
    names = " and ".join(f"`indexes.{name}`" for name in sharing)
    return (f"give {names} {'its' if len(sharing) == 1 else 'their'} own {own} (the table's bounds: a GSI without "
            "its own capacity is raised with the table, to the table's level), then ")


def _raises(ctx: Context, settings: Settings, surges: list[Surge]) -> list[_Raise]:
    """For each event, every target and direction that throttles while it is on, at the level its own peak during
    the event needs (a GSI that needs a tenth of the table's gets a tenth)."""
    found = []
    for surge in surges:
        window = event_window(surge.start, surge.seconds)
        start = (surge.start - SCHEDULE_LEAD) % SECONDS_PER_DAY
        if surge.every == "month" and start > surge.start and _event_day(ctx, surge) == 1:
            start = 0  # the 1st has no day before in a monthly cron: raised at midnight, less lead
        end = math.ceil((surge.start + surge.seconds) / 60) * 60 % SECONDS_PER_DAY
        if surge.every == "month" and end < start <= surge.start and _event_day(ctx, surge) == 28:
            end = SECONDS_PER_DAY - 60  # no 29th in February to restore on: the minimum ends at 23:59 (simulated so)
        for other in ctx.simulated.day.runs:
            if other.over is None or sum(float(other.over[part].sum()) for part in window) < 1:
                continue
            current = settings[other.target, other.direction]
            if current.billing != "provisioned":
                continue
            peak = max(float(other.demand[part].max()) for part in window)
            needed = math.ceil(round(peak / current.target, 6))
            level = min(current.bounds[1], needed)
            if level > current.bounds[0]:
                found.append(_Raise((other.target, other.direction), surge, start, end, level, needed))
    return sorted(found, key=lambda r: (r.surge.start, r.surge.name, r.key[0] != TABLE, r.key))


def _scheduled_fix(ctx: Context, run: Run, settings: Settings, surges: list[Surge]) -> tuple[str, float] | None:
    """One scheduled minimum per event on every target that needs one, simulated together, priced by the rule
    `capacity` and `simulate` price them by (capacity/schedule.py)."""
    raises = _raises(ctx, settings, surges)
    if not raises:
        return None
    changed: Settings = {}
    for one in raises:
        current = changed.get(one.key, settings[one.key])
        daily = one.surge.every == "day"
        changed[one.key] = replace(current, schedule=(*current.schedule, (one.start, one.end - 1, one.level, daily)))
    after, _ = _tried(ctx, run, changed)
    prices = ctx.capacity.prices.table_class(ctx.design.blueprint.region, ctx.design.blueprint.table.table_class)
    cost = priced_text([one.priced(settings) for one in raises], prices)
    mark = quota_mark(ctx.design.blueprint.simulation, max(one.level for one in raises))
    names = ", ".join(sorted({one.surge.name for one in raises}))
    return (f"schedule the minimums before {names}: {_separate(ctx, {one.key[0] for one in raises})}add "
            + "; ".join(one.text(ctx) for one in raises)
            + f" ({_proof(_event_over(ctx, run), after, None, None)}{mark}; the scheduled minimums cost {cost})",
            after)


def _provisioned_fixes(ctx: Context, run: Run, settings: Settings, base: float | None, surges: list[Surge]) -> \
        list[tuple[str, float]]:
    before = _event_over(ctx, run)
    key = (run.target, run.direction)
    current = settings[key]
    simulation = ctx.design.blueprint.simulation
    peak = float(run.demand.max())
    full = math.ceil(round(peak / current.target, 6))
    needed = min(current.bounds[1], full)
    source = ".".join(_own_source(ctx, run.target)) + f".{run.direction}"
    own = _separate(ctx, {run.target})
    fixes = []
    scheduled = _scheduled_fix(ctx, run, settings, surges) if surges else None
    if scheduled is not None:
        fixes.append(scheduled)
    after, cost = _tried(ctx, run, {key: replace(current, bounds=(needed, max(needed, current.bounds[1])))})
    fixes.append((f"{own}raise `{source}.min` to {needed} ({_proof(before, after, cost, base)}"
                  f"{quota_mark(simulation, needed)})", after))
    if current.bounds[1] < full:
        after, cost = _tried(ctx, run, {key: replace(current, bounds=(current.bounds[0], full))})
        fixes.append((f"{own}raise `{source}.max` to {full:,}: the peak at the target "
                      f"({_proof(before, after, cost, base)}{quota_mark(simulation, full)})", after))
    other = ctx.memo.get("on_demand") or ctx.memo.setdefault(
        "on_demand", run_mode(ctx.design, ctx.capacity, "on_demand"))
    after, cost = _event_over(ctx, other.day.run(run.target, run.direction)), other.monthly_usd
    fixes.append((f"switch to `billing: on_demand` ({_proof(before, after, cost, base)}"
                  f"{quota_mark(simulation, math.ceil(peak))})", after))
    return fixes


def _quota_note(ctx: Context, run: Run, settings: Settings) -> str:
    """What the event needs of the quotas, once per finding: this target's peak (at its target utilization when
    provisioned) against the table-level quota; provisioned, the table's and its GSIs' peaks together against the
    account-level one."""
    simulation = ctx.design.blueprint.simulation
    if settings[run.target, run.direction].billing != "provisioned":
        return beyond_quota(simulation, run.direction, math.ceil(round(float(run.demand.max()), 6)), 0, "the event")

    def needs(one: Run) -> int:
        return math.ceil(round(float(one.demand.max()) / settings[one.target, one.direction].target, 6))

    together = sum(needs(one) for one in ctx.simulated.day.runs if one.direction == run.direction)
    return beyond_quota(simulation, run.direction, needs(run), together, "the event")


@rule("TW105", "Throttled during a declared event",
      "Apply an offered fix (each simulated): warm throughput before the event (on demand), a scheduled minimum "
      "on the event's day on each table and GSI that needs one, or a higher minimum (provisioned), or on-demand "
      "billing. Beyond the table-level quota (`simulation.table_quota`, 40,000 units/s by default) request a quota "
      "increase, split the workload across tables, or put the event through a queue.",
      why="A declared event rises faster than the capacity follows: provisioned autoscaling acts minutes after "
          "its alarms, on demand serves twice its previous peak at once",
      severity="error in production, else warning")
def throttled_during_event(ctx: Context) -> Iterator[Issue]:
    if not has_events(ctx.capacity.traffic):
        return  # without events the day rises too slowly to outrun autoscaling; TW308 checks its bounds
    mode = ctx.simulated
    billing = ctx.design.blueprint.table.billing
    settings = capacities(ctx.design, ctx.capacity, billing)
    over = {(run.target, run.direction): _event_over(ctx, run) for run in mode.day.runs}
    throttled = sorted((run for run in mode.day.runs if over[run.target, run.direction] >= 1),
                       key=lambda r: -over[r.target, r.direction])
    for run in throttled[:MAX_FINDINGS]:
        during = over[run.target, run.direction]
        surges = _surges(ctx, run)
        names = ", ".join(s.name for s in surges) or "the declared traffic"
        seconds = int((run.over[_during(ctx, run)] > 1e-9).sum()) if run.over is not None else 0
        if billing == "on_demand":
            why = (f"on demand serves at once twice its previous peak (at least {ON_DEMAND_NEW[run.direction]:,} "
                   "request units)" + (" and its `max_throughput`" if settings[run.target, run.direction].maximum
                                       else ""))
            fixes = _on_demand_fixes(ctx, run, settings, mode.monthly_usd)
        else:
            why = "target tracking adds capacity only after 2 minutes above its target, then UpdateTable"
            fixes = _provisioned_fixes(ctx, run, settings, mode.monthly_usd, surges)
        working = [text for text, after in fixes if after < during]
        path: FieldPath = ("table",) if run.target == TABLE else ("indexes", run.target)
        yield Issue(
            "error" if ctx.design.blueprint.production else "warning",
            f"{_place(run.target)}: {run.direction}s throttled during {names}: {during:,.0f} units over "
            f"{seconds:,} s of the simulated day (peak {float(run.demand.max()):,.0f} units/s; {why})",
            ("; or ".join(working) or "no fix tried removes it: lower the event's rate or spread it over time")
            + _quota_note(ctx, run, settings),
            path,
        )
