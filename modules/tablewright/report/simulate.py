"""`simulate`: throttling, capacity over the day and a month's cost of the declared traffic, per stack.

JSON follows schema/simulate.schema.json (version 1); Markdown draws the worst table or index's demand
against its capacity as a Mermaid `xychart-beta` chart.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from tablewright.blueprint.language import SECONDS_PER_DAY
from tablewright.blueprint.prices import ClassPrices
from tablewright.capacity.schedule import monthly_usd, priced_text, scheduled_raises
from tablewright.design.design import TABLE
from tablewright.report.markdown import sanitize
from tablewright.report.tables import text_table
from tablewright.simulate.engine import Run
from tablewright.simulate.stack import ModeRun, StackSimulation
from tablewright.stacks.stack import Stack

SCHEMA_VERSION = 1
SERIES_MINUTES = 5  # one point of `series` per 5 minutes (288 a day)
CHART_POINTS = 48  # half hours


@dataclass(frozen=True)
class Simulated:
    """One stack's simulation as the renderers need it: computed stack by stack, the day's arrays dropped (a
    fleet's would not fit in memory)."""

    name: str
    document: dict[str, Any]  # the stack's entry in the JSON
    chart: list[str]  # the Mermaid chart of its worst table or index
    worst: str  # that table or index, in words
    summary: list[str]  # the billing modes side by side, the break-even and the recommendation
    notes: list[str]  # the hot keys that throttled


def simulated(stacks: Iterable[Stack]) -> list[Simulated]:
    found = []
    for stack in stacks:
        result = stack.simulate()
        worst = _worst(result)
        notes = [f"hot key {row['key']} ({run.target} {run.direction}): {row['throttled_requests']:,.0f} requests "
                 f"throttled in {row['throttled_seconds']:,} s"
                 for run in result.declared.day.runs for row in _key_rows(result, run)]
        found.append(Simulated(stack.name, stack_document(stack, result), chart(result),
                               f"{worst.target} ({worst.direction}s)", _summary(result, stack), notes))
    return found


def _requests(result: StackSimulation, run: Run) -> float:
    return sum(units / result.model.flows[i].per_request for i, units in run.flow_throttled.items())


def _key_rows(result: StackSimulation, run: Run) -> list[dict[str, Any]]:
    rows = []
    for number, units in sorted(run.key_throttled.items()):
        key = result.model.hot_keys[number]
        flows = [(result.model.flows[i], share) for i, share in key.terms
                 if result.model.flows[i].direction == run.direction]
        requests = sum(f.requests * s for f, s in flows)
        per_request = (sum(f.per_request * f.requests * s for f, s in flows) / requests if requests
                       else sum(f.per_request * s for f, s in flows) / (sum(s for _, s in flows) or 1))  # events only
        rows.append({"key": key.label, "rank": key.rank, "throttled_requests": round(units / (per_request or 1), 1),
                     "throttled_seconds": run.key_seconds.get(number, 0)})
    return rows


def _throttled_seconds(mode: ModeRun) -> int:
    union = np.zeros(SECONDS_PER_DAY, dtype=bool)
    for run in mode.day.runs:
        union |= run.throttled > 1e-9
    return int(union.sum())


def _minutes(values: np.ndarray, size: int, how: str = "mean") -> list[float]:
    shaped = values.reshape(-1, size)
    return [round(float(v), 1) for v in (shaped.max(axis=1) if how == "max" else shaped.mean(axis=1))]


def _series(run: Run) -> dict[str, Any]:
    seconds = SERIES_MINUTES * 60
    return {"target": run.target, "direction": run.direction, "minutes": SERIES_MINUTES,
            "demand": _minutes(run.demand, seconds), "served": _minutes(run.served, seconds),
            "capacity": _minutes(run.capacity, SERIES_MINUTES, "max")}


def _mode(result: StackSimulation, mode: ModeRun) -> dict[str, Any]:
    return {"billing": mode.billing, "cost_usd": mode.monthly_usd,
            "throttled_requests": round(result.throttled_requests(mode), 1),
            "throttled_seconds": _throttled_seconds(mode),
            "utilization": None if mode.utilization is None else round(mode.utilization, 4)}


def _beyond_quota(result: StackSimulation, quota: int | None) -> str:
    """The busiest table or GSI when it asks more than the table-level quota serves, whatever its capacity."""
    if quota is None:
        return ""
    run = max(result.declared.day.runs, key=lambda r: float(r.demand.max()))
    peak = float(run.demand.max())
    if peak <= quota:
        return ""
    where = "the table" if run.target == TABLE else run.target
    return (f"; {where} asks {peak:,.0f} {run.direction} units/s, above the {quota:,} table-level quota "
            "(simulation.table_quota): request a quota increase, split the workload across tables, or put the "
            "surge through a queue")


def recommendation(result: StackSimulation, quota: int | None = None) -> str:
    """`quota`: the table-level quota, to say when no capacity can serve the busiest second."""
    declared, other = result.declared, result.other
    names = {"provisioned": "provisioned", "on_demand": "on demand"}
    mine, theirs = result.throttled_requests(declared), result.throttled_requests(other)
    costs = declared.monthly_usd, other.monthly_usd
    if mine and not theirs:
        return f"switch to {names[other.billing]}: it serves the declared traffic without throttling"
    if mine and theirs:
        return ("both modes throttle: fix the hot keys lint reports, or raise the capacity the throttled tables and "
                "indexes may reach" + _beyond_quota(result, quota))
    if costs[0] is None or costs[1] is None:
        return f"keep {names[declared.billing]} (no prices to compare)"
    if theirs or costs[0] <= costs[1]:
        return f"keep {names[declared.billing]}" + (f": {names[other.billing]} would cost ${costs[1]:,.2f}" if
                                                     not theirs else f": {names[other.billing]} would throttle")
    return (f"switch to {names[other.billing]}: ${costs[1]:,.2f} a month against ${costs[0]:,.2f}, without "
            "throttling")


def _assumptions(stack: Stack) -> list[str]:
    simulation = stack.design.blueprint.simulation
    return [f"history: {simulation.history} (simulation.history)",
            f"new provisioned capacity serves {simulation.update_seconds} s after its alarm "
            "(simulation.update_seconds)",
            f"per-table quota {simulation.table_quota:,} units per second and direction (simulation.table_quota)",
            "a scheduled minimum on a date, weekdays or a day of the month runs on the events' day, a daily one on "
            "every day",
            "the day simulated is a normal day with every declared event in it; the month prices the normal day "
            "30.4 times and each event as often as it recurs"]


def stack_document(stack: Stack, result: StackSimulation) -> dict[str, Any]:
    declared = result.declared
    targets = []
    for run in declared.day.runs:
        if not run.demand.any():
            continue
        targets.append({"target": run.target, "direction": run.direction,
                        "throttled_requests": round(_requests(result, run), 1),
                        "throttled_seconds": run.throttled_seconds,
                        "backpressure_units": round(run.backpressure, 1),
                        "peak_demand": round(float(run.demand.max()), 1),
                        "capacity_min": round(float(run.capacity.min()), 1),
                        "capacity_max": round(float(run.capacity.max()), 1),
                        "hot_keys": _key_rows(result, run)})
    return {
        "stack": stack.name, "billing": declared.billing, "region": stack.design.blueprint.region,
        "throttled_requests": round(result.throttled_requests(), 1), "throttled_seconds": _throttled_seconds(declared),
        "cost_usd": declared.monthly_usd, "scheduled_minimums_usd": _scheduled_usd(stack), "targets": targets,
        "modes": [_mode(result, declared), _mode(result, result.other)],
        "break_even_utilization": result.break_even and {d: round(v, 4) for d, v in result.break_even.items()},
        "recommendation": recommendation(result, stack.design.blueprint.simulation.table_quota),
        "assumptions": _assumptions(stack),
        "series": [_series(run) for run in declared.day.runs if run.demand.any()],
    }


def render_json(items: Sequence[Simulated]) -> str:
    return json.dumps({"schema_version": SCHEMA_VERSION, "stacks": [i.document for i in items]}, indent=2,
                      sort_keys=True) + "\n"


def _money(value: float | None) -> str:
    return "not priced" if value is None else f"${value:,.2f}"


def _rows(item: Simulated) -> list[list[str]]:
    return [[target["target"], target["direction"], f"{target['peak_demand']:,.0f}",
             f"{target['capacity_min']:,.0f}-{target['capacity_max']:,.0f}", f"{target['throttled_requests']:,.0f}",
             f"{target['throttled_seconds']:,}"] for target in item.document["targets"]]


HEADERS = ["target", "direction", "peak units/s", "capacity units/s", "throttled requests", "throttled s"]


def _summary(result: StackSimulation, stack: Stack) -> list[str]:
    words = {"provisioned": "provisioned", "on_demand": "on demand"}
    lines = [f"{words[m.billing]}: {_money(m.monthly_usd)} a month, {result.throttled_requests(m):,.0f} throttled "
             f"requests a day" + (f", {m.utilization:.0%} utilization" if m.utilization is not None else "")
             for m in (result.declared, result.other)]
    if result.break_even:
        lines.append(f"break-even: provisioned costs less above {result.break_even['read']:.0%} (reads) and "
                     f"{result.break_even['write']:.0%} (writes) average utilization of what it provisions")
    quota = stack.design.blueprint.simulation.table_quota
    return [*lines, *_scheduled(stack), f"recommendation: {recommendation(result, quota)}"]


def _scheduled(stack: Stack) -> list[str]:
    """The scheduled minimums' price, by the rule lint and `capacity` use (the simulated month follows them minute
    by minute, so it may cost less)."""
    raises = scheduled_raises(stack.design)
    if not raises:
        return []
    return [f"scheduled minimums: {priced_text(raises, _prices(stack))}"]


def _prices(stack: Stack) -> ClassPrices | None:
    blueprint = stack.design.blueprint
    return stack.capacity.prices.table_class(blueprint.region, blueprint.table.table_class)


def _scheduled_usd(stack: Stack) -> float | None:
    """What the scheduled minimums cost a month at most (None: none declared, or no prices)."""
    raises, prices = scheduled_raises(stack.design), _prices(stack)
    return monthly_usd(raises, prices) if raises and prices is not None else None


def render_text(items: Sequence[Simulated]) -> str:
    parts = []
    for item in items:
        parts += [f"{item.name}: a day of the declared traffic ({item.document['billing'].replace('_', ' ')})", "",
                  text_table(HEADERS, _rows(item)), *(f"  {note}" for note in item.notes), "", *item.summary, "",
                  "assumptions: " + "; ".join(item.document["assumptions"]), ""]
    return "\n".join(parts) + "\n"


def _worst(result: StackSimulation) -> Run:
    runs = result.declared.day.runs
    return max(runs, key=lambda run: (_requests(result, run), float(run.demand.max()), run.target == "table"))


def chart(result: StackSimulation) -> list[str]:
    """Demand (the busiest second of each half hour) against capacity for the worst table or index."""
    run = _worst(result)
    size = SECONDS_PER_DAY // CHART_POINTS
    demand = _minutes(run.demand, size, "max")
    capacity = _minutes(run.capacity, size // 60, "max")
    top = max([*demand, *capacity, 1.0]) * 1.1
    hours = ", ".join(f'"{i // 2:02d}:{30 * (i % 2):02d}"' for i in range(CHART_POINTS))
    return ["xychart-beta", f'  title "{run.target} {run.direction}s: demand and capacity (units/s)"',
            f"  x-axis [{hours}]", f'  y-axis "units per second" 0 --> {top:.0f}',
            f"  line [{', '.join(f'{v:.1f}' for v in demand)}]", f"  line [{', '.join(f'{v:.1f}' for v in capacity)}]"]


def render_markdown(items: Sequence[Simulated]) -> str:
    parts = []
    for item in items:
        table = ["| " + " | ".join(HEADERS) + " |", "|" + "---|" * len(HEADERS)]
        table += ["| " + " | ".join(row) + " |" for row in _rows(item)]
        parts += [f"### {item.name}", "", *table, "", *(f"- {note}" for note in item.notes), "",
                  f"Demand (the first line: the busiest second of each half hour) and capacity of {item.worst}:", "",
                  "```mermaid", *item.chart, "```", "", *(f"- {line}" for line in item.summary), "",
                  "Assumptions: " + "; ".join(item.document["assumptions"]) + ".", ""]
    return sanitize("\n".join(parts))
