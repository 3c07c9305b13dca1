"""Throttling a table or GSI's capacity cannot avoid under the declared events, found by simulating the day.

Provisioned capacity follows traffic only after its CloudWatch alarms fire (2 minutes above the target) and
UpdateTable takes effect; on demand serves at once up to twice its previous peak. A surge faster than that
throttles however the keys are spread. Each fix offered was simulated: warm throughput (on demand), a
scheduled minimum before the event, a higher minimum, on-demand billing.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import replace

import numpy as np

from tablewright.blueprint.language import SECONDS_PER_DAY
from tablewright.blueprint.traffic import Surge
from tablewright.capacity.traffic import Direction
from tablewright.design.design import TABLE
from tablewright.errors import FieldPath
from tablewright.lint.findings import Context, Issue, rule
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
    return [(f"{text} ({_proof(before, after, cost, base)})", after)]


def _clock(second: int) -> str:
    return f"{second // 3600:02d}:{second % 3600 // 60:02d}"


def _provisioned_fixes(ctx: Context, run: Run, settings: Settings, base: float | None, surges: list[Surge]) -> \
        list[tuple[str, float]]:
    before = _event_over(ctx, run)
    key = (run.target, run.direction)
    current = settings[key]
    peak = float(run.demand.max())
    needed = min(current.bounds[1], math.ceil(round(peak / current.target, 6)))
    source = ".".join(ctx.design.capacity[run.target].source) + f".{run.direction}"
    fixes = []
    if surges:
        schedule = tuple(((s.start - SCHEDULE_LEAD) % SECONDS_PER_DAY, (s.start + s.seconds) % SECONDS_PER_DAY,
                          needed) for s in surges)
        after, cost = _tried(ctx, run, {key: replace(current, schedule=current.schedule + schedule)})
        first = surges[0]
        start = (first.start - SCHEDULE_LEAD) % SECONDS_PER_DAY
        end = (first.start + first.seconds) % SECONDS_PER_DAY
        fixes.append((f"schedule the minimum before {first.name}: add `{{name: {first.name}, start: "
                      f"\"{_clock(start)}\", end: \"{_clock(end)}\", min: {needed}}}` to `{source}.scheduled` "
                      f"({_proof(before, after, cost, base)})", after))
    after, cost = _tried(ctx, run, {key: replace(current, bounds=(needed, max(needed, current.bounds[1])))})
    fixes.append((f"raise `{source}.min` to {needed} ({_proof(before, after, cost, base)})", after))
    if current.bounds[1] < math.ceil(peak / current.target):
        fixes.append((f"raise `{source}.max`: the peak needs {math.ceil(peak / current.target):,} at the target", 1.0))
    other = ctx.memo.get("on_demand") or ctx.memo.setdefault(
        "on_demand", run_mode(ctx.design, ctx.capacity, "on_demand"))
    after, cost = _event_over(ctx, other.day.run(run.target, run.direction)), other.monthly_usd
    fixes.append((f"switch to `billing: on_demand` ({_proof(before, after, cost, base)})", after))
    return fixes


@rule("TW105", "Throttled during a declared event",
      "Apply an offered fix (each simulated): warm throughput before the event (on demand), a scheduled minimum "
      "or a higher minimum (provisioned), or on-demand billing.",
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
            "; or ".join(working) or "no fix tried removes it: lower the event's rate or spread it over time",
            path,
        )
