"""Observed consumed capacity and throttles per table, GSI and direction, against the blueprint's declared rates.

Declared: the traffic model's flows (`modules/tablewright/capacity/traffic.py`) on the target, on a normal day: their
average and their busiest minute (the daily curve or peak factor). Observed: the consumed units over the window the
metrics cover (a missing datapoint is 0), and the busiest period's units per second (with periods longer than a
minute, the busiest minute was at least that). A difference beyond the tolerance names the blueprint lines that
declare the rates, each pattern's and entity's with the value that would match, attributed per source over every
table and GSI measured and, among entities no target tells apart, by the keys Contributor Insights counted
(`fit.py`, `attribution.py`), and the peak factor the busiest minute then needs: declaring them all and
calibrating again on the same metrics reports every target as declared.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from tablewright.calibrate.attribution import Attribution, attributions
from tablewright.calibrate.fit import Source, busiest_minute, fit_scales, fitted_peak_factor, scaled, source_of
from tablewright.calibrate.insights import RuleReport
from tablewright.calibrate.metrics import Direction, Metrics, Series
from tablewright.capacity.traffic import Flow
from tablewright.design.design import TABLE
from tablewright.errors import BlueprintError, ErrorCode, SourceLocation
from tablewright.simulate.engine import MINUTES, SHAPES
from tablewright.stacks.stack import Stack

DIRECTIONS: tuple[Direction, Direction] = ("read", "write")


NOT_MEASURED = "consumed not measured"  # throttle events of a table or GSI whose consumed units were not passed


@dataclass(frozen=True)
class Change:
    """One blueprint line, and the value that would declare what was observed."""

    location: SourceLocation
    field: str  # e.g. `access_patterns.byCustomer.rps`
    current: float
    suggested: float
    stack: str = ""  # the stack whose traffic asks for it
    owner: str = ""  # that stack's blueprint file: a line in another (a base it extends) is not its own to write

    @property
    def own(self) -> bool:
        """Whether the line is in the blueprint file of the stack that asks for the change (not in a base)."""
        return not self.owner or Path(self.owner).resolve() == Path(self.location.file).resolve()


@dataclass(frozen=True)
class Comparison:
    stack: str
    target: str  # "table" or a GSI
    direction: Direction
    declared_average: float  # units per second
    observed_average: float
    declared_busiest: float  # the busiest minute's units per second
    observed_busiest: float  # the busiest period's
    period: int  # seconds per datapoint
    throttled_requests: float
    throttled_at: tuple[int, ...]  # epoch seconds of the periods with throttles
    verdict: str  # "under-declared", "peak under-declared", "over-declared", "as declared"
    changes: tuple[Change, ...]
    attribution: Attribution | None = None  # the entities' shares of the target, by Contributor Insights keys

    @property
    def fails(self) -> bool:
        return self.verdict in ("under-declared", "peak under-declared") or self.throttled_requests > 0


def _declared(flows: list[Flow]) -> tuple[float, float]:
    if not flows:
        return 0.0, 0.0
    units = SHAPES.summed([(flow, 1.0) for flow in flows])
    return sum(flow.units for flow in flows), float(units.reshape(MINUTES, 60).mean(axis=1).max())


def _rates(stack: Stack, source: Source) -> dict[tuple[str, ...], float]:
    """The declared rates (path -> value) a source's scale multiplies: a pattern's `rps` (a job's schedule is not
    a rate), an entity's writes that consume capacity (TTL expiries are free)."""
    blueprint = stack.design.blueprint
    direction, name = source
    if direction == "read":
        pattern = blueprint.access_patterns[name]
        return {} if getattr(pattern, "schedule", None) is not None else {("access_patterns", name, "rps"): pattern.rps}
    spec = blueprint.entities[name]
    if spec.writes is None:
        return {("entities", name, "writes_per_second"): spec.writes_per_second}
    return {("entities", name, "writes", kind): getattr(spec.writes, kind)
            for kind in ("inserts", "updates", "deletes") if getattr(spec.writes, kind)}


def _rate_changes(stack: Stack, scales: dict[Source, float]) -> list[tuple[Source, Change]]:
    """Each declared rate times its source's fitted scale, where that changes it (at 2 decimals)."""
    found = []
    for source, scale in sorted(scales.items()):
        for path, rate in sorted(_rates(stack, source).items()):
            suggested = round(rate * scale, 2)
            if suggested != rate:
                found.append((source, Change(stack.source.source.locate(path), ".".join(path), rate, suggested,
                                             stack.name, str(stack.source.path))))
    return found


def _peak_change(stack: Stack, factor: float) -> Change:
    current = stack.design.blueprint.traffic.peak_factor or 1.0
    return Change(stack.source.source.locate(("traffic", "peak_factor")), "traffic.peak_factor", current,
                  max(current, round(factor, 2)), stack.name, str(stack.source.path))


def _verdict(declared: tuple[float, float], observed: tuple[float, float], tolerance: float) -> str:
    if observed[0] > declared[0] * (1 + tolerance):
        return "under-declared"
    if observed[1] > declared[1] * (1 + tolerance):
        return "peak under-declared"
    if observed[0] < declared[0] * (1 - tolerance):
        return "over-declared"
    return "as declared"


def _window(series: Sequence[Series]) -> tuple[int, int]:
    """The seconds the metrics cover: from the first datapoint to the end of the last one's period."""
    stamps = [(moment, s.period) for s in series for moment in s.points]
    if not stamps:
        return 0, 0
    return min(moment for moment, _ in stamps), max(moment + period for moment, period in stamps)


def _targets(stack: Stack) -> list[str]:
    return [TABLE, *(index.name for index in stack.design.global_indexes)]


def stack_of(series: Series, stacks: Sequence[Stack]) -> Stack:
    """The stack whose table (and GSI) the series measures: another table's is an error."""
    for stack in stacks:
        if stack.design.blueprint.table.name == series.table:
            if series.index is None or series.index in _targets(stack)[1:]:
                return stack
            raise BlueprintError(f"`{series.table}` has no GSI `{series.index}` in {stack.source.path}",
                                 location=series.where, code=ErrorCode.CALIBRATE_INPUT,
                                 hint=f"its GSIs: {', '.join(_targets(stack)[1:]) or 'none'}; pass metrics of "
                                      "this design (`calibrate --print-queries`)")
    tables = ", ".join(sorted(stack.design.blueprint.table.name for stack in stacks))
    raise BlueprintError(f"`{series.table}` is not a table of the blueprints named (they deploy {tables})",
                         location=series.where, code=ErrorCode.CALIBRATE_INPUT,
                         hint="name the blueprint (and `--env`) of that table, or leave out its metrics")


def _comparison(stack: Stack, target: str, direction: Direction, of: list[Series], window: tuple[int, int],
                tolerance: float) -> Comparison | None:
    """The target's direction against what the metrics say of it; None when they hold neither its consumed units
    nor its throttles. Throttles without consumed units are reported as they are (`NOT_MEASURED`)."""
    consumed = next((s for s in of if s.kind == "consumed"), None)
    throttled = next((s for s in of if s.kind == "throttled"), None)
    first = consumed or throttled
    if first is None:
        return None
    model = stack.capacity.traffic
    flows = [model.flows[i] for i in model.on(target, direction)]
    declared = _declared(flows)
    observed = (0.0, 0.0)
    verdict = NOT_MEASURED
    if consumed is not None:
        values = np.array(list(consumed.points.values()) or [0.0])
        observed = (float(values.sum()) / max(1, window[1] - window[0]), float(values.max()) / consumed.period)
        verdict = _verdict(declared, observed, tolerance)
    throttles = throttled.points if throttled else {}
    return Comparison(
        stack.name, target, direction, round(declared[0], 2), round(observed[0], 2), round(declared[1], 2),
        round(observed[1], 2), first.period, round(sum(throttles.values()), 1),
        tuple(sorted(moment for moment, count in throttles.items() if count > 0)), verdict, ())


def stack_scales(stack: Stack, items: Sequence[Comparison]) -> dict[Source, float]:
    """Each pattern's and entity's fitted scale (`fit.py`) in the directions some target's average is off in, from
    the stack's comparisons: the rates `--write` declares."""
    measured = [item for item in items if item.stack == stack.name and item.verdict != NOT_MEASURED]
    off = sorted({item.direction for item in measured if item.verdict in ("under-declared", "over-declared")})
    observed = {(item.target, item.direction): item.observed_average for item in measured}
    shares = {item.target: dict(item.attribution.shares) for item in measured if item.attribution is not None}
    return fit_scales(stack.capacity.traffic.flows, observed, off, lambda source: not _rates(stack, source), shares)


def _stack_changes(stack: Stack, items: list[Comparison], tolerance: float) -> list[Comparison]:
    """The comparisons with the changes that declare what they observed, found for the stack as a whole
    (`fit.py`): the rates of each direction a target's average is off in, then the peak factor any target's
    busiest minute needs with those rates. Each change is named once, beside the first target it explains."""
    model = stack.capacity.traffic
    scales = stack_scales(stack, items)
    now = scaled(model.flows, scales)
    measured = [n for n, item in enumerate(items) if item.verdict != NOT_MEASURED]
    named: dict[int, list[Change]] = {}
    reaches = {(source_of(f), f.target) for f in model.flows}
    for source, change in _rate_changes(stack, scales):
        on = [n for n in measured if items[n].direction == source[0] and (source, items[n].target) in reaches]
        failing = [n for n in on if items[n].verdict != "as declared"]
        named.setdefault((failing or on or measured)[0], []).append(change)
    peaks: dict[int, float] = {}  # comparison -> the peak factor its busiest minute needs, with the fitted rates
    for n in measured:
        flows = [f for f in now if f.target == items[n].target and f.direction == items[n].direction]
        busiest = items[n].observed_busiest
        if flows and busiest > busiest_minute((f, f.profile) for f in flows) * (1 + tolerance):
            factor = fitted_peak_factor(stack.design.blueprint, flows, busiest)
            if factor is not None:
                peaks[n] = factor
    if peaks:
        most = max(peaks, key=lambda n: (peaks[n], -n))  # the highest; of equal ones, the first target
        named.setdefault(most, []).append(_peak_change(stack, peaks[most]))
    return [replace(item, changes=tuple(named.get(n, ()))) for n, item in enumerate(items)]


def compare(stacks: Sequence[Stack], metrics: Metrics, tolerance: float,
            reports: Sequence[RuleReport] = ()) -> list[Comparison]:
    """Every stack's table and GSIs, each direction, that the metrics measure; the accessed-keys `reports`
    (Contributor Insights) split a target's units among its entities (`attribution.py`)."""
    mine: dict[str, list[Series]] = {}
    for series in metrics.series:
        mine.setdefault(stack_of(series, stacks).name, []).append(series)
    found = []
    for stack in stacks:
        measured = [s for s in mine.get(stack.name, []) if s.kind in ("consumed", "throttled")]
        if not measured:
            continue
        window = _window(measured)
        shared = attributions(stack, reports)
        items = []
        for target in stack.capacity.traffic.targets:
            for direction in DIRECTIONS:
                of = [s for s in measured if (s.index or TABLE) == target and s.direction == direction]
                item = _comparison(stack, target, direction, of, window, tolerance)
                if item is not None:
                    items.append(replace(item, attribution=shared.get(target)))
        found += _stack_changes(stack, items, tolerance)
    return found
