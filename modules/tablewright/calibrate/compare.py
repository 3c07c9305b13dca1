"""Observed consumed capacity and throttles per table, GSI and direction, against the blueprint's declared rates.

Declared: the traffic model's flows (`modules/tablewright/capacity/traffic.py`) on the target, on a normal day: their
average and their busiest minute (the daily curve or peak factor). Observed: the consumed units over the window the
metrics cover (a missing datapoint is 0), and the busiest period's units per second (with periods longer than a
minute, the busiest minute was at least that). A difference beyond the tolerance names the blueprint lines that
declare the rate, with the value that would match.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

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

    @property
    def fails(self) -> bool:
        return self.verdict in ("under-declared", "peak under-declared") or self.throttled_requests > 0


def _declared(flows: list[Flow]) -> tuple[float, float]:
    if not flows:
        return 0.0, 0.0
    units = SHAPES.summed([(flow, 1.0) for flow in flows])
    return sum(flow.units for flow in flows), float(units.reshape(MINUTES, 60).mean(axis=1).max())


def _rate_changes(stack: Stack, flows: list[Flow], ratio: float) -> list[Change]:
    """Each declared rate behind `flows`, scaled by `ratio`."""
    blueprint, source = stack.design.blueprint, stack.source.source
    found: dict[str, Change] = {}
    for flow in flows:
        if flow.direction == "read":
            path: tuple[str, ...] = ("access_patterns", flow.source, "rps")
            rates = {path: blueprint.access_patterns[flow.source].rps}
        else:
            spec = blueprint.entities[flow.source]
            if spec.writes is None:
                rates = {("entities", flow.source, "writes_per_second"): spec.writes_per_second}
            else:
                rates = {("entities", flow.source, "writes", name): getattr(spec.writes, name)
                         for name in ("inserts", "updates", "deletes") if getattr(spec.writes, name)}
        for path, rate in rates.items():
            found[".".join(path)] = Change(source.locate(path), ".".join(path), rate, round(rate * ratio, 2),
                                           stack.name, str(stack.source.path))
    return [found[name] for name in sorted(found)]


def _peak_change(stack: Stack, ratio: float) -> list[Change]:
    factor = stack.design.blueprint.traffic.peak_factor
    if factor is None:  # a daily curve: its busiest points, not one number, would change
        return []
    return [Change(stack.source.source.locate(("traffic", "peak_factor")), "traffic.peak_factor", factor,
                   round(factor * ratio, 2), stack.name, str(stack.source.path))]


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
    changes: list[Change] = []
    if consumed is not None:
        values = np.array(list(consumed.points.values()) or [0.0])
        observed = (float(values.sum()) / max(1, window[1] - window[0]), float(values.max()) / consumed.period)
        verdict = _verdict(declared, observed, tolerance)
        if verdict in ("under-declared", "over-declared") and declared[0] > 0:
            changes = _rate_changes(stack, flows, observed[0] / declared[0])
        elif verdict == "peak under-declared" and declared[1] > 0:
            changes = _peak_change(stack, observed[1] / declared[1])
    throttles = throttled.points if throttled else {}
    return Comparison(
        stack.name, target, direction, round(declared[0], 2), round(observed[0], 2), round(declared[1], 2),
        round(observed[1], 2), first.period, round(sum(throttles.values()), 1),
        tuple(sorted(moment for moment, count in throttles.items() if count > 0)), verdict, tuple(changes))


def compare(stacks: Sequence[Stack], metrics: Metrics, tolerance: float) -> list[Comparison]:
    """Every stack's table and GSIs, each direction, that the metrics measure."""
    mine: dict[str, list[Series]] = {}
    for series in metrics.series:
        mine.setdefault(stack_of(series, stacks).name, []).append(series)
    found = []
    for stack in stacks:
        measured = [s for s in mine.get(stack.name, []) if s.kind in ("consumed", "throttled")]
        if not measured:
            continue
        window = _window(measured)
        for target in stack.capacity.traffic.targets:
            for direction in DIRECTIONS:
                of = [s for s in measured if (s.index or TABLE) == target and s.direction == direction]
                item = _comparison(stack, target, direction, of, window, tolerance)
                if item is not None:
                    found.append(item)
    return found
