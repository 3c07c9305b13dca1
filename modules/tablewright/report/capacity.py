"""`capacity`: per-pattern reads, per-entity writes, per-index totals, suggested bounds, the monthly cost
line by line; and the Infracost usage file (`--format infracost`)."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

import yaml

from tablewright.blueprint.language import Blueprint
from tablewright.blueprint.traffic import SECONDS_PER_MONTH
from tablewright.capacity.cost import GIB, CostLine, CostReport
from tablewright.capacity.job_costs import JobCost, job_costs
from tablewright.capacity.loads import MIN_SUGGESTED_MAXIMUM, CapacityReport
from tablewright.constructs.naming import logical_id
from tablewright.constructs.resources import AppautoscalingTarget, DynamodbTable
from tablewright.design.design import TABLE
from tablewright.errors import ErrorCode, TablewrightError
from tablewright.report.tables import text_table
from tablewright.stacks.stack import Stack

READ_HEADERS = ("Pattern", "Index", "Items/call", "Bytes/item", "Requests/call", "RCU/call", "RCU/s")
WRITE_HEADERS = ("Entity", "Kind", "Writes/s", "Item bytes", "Requests/write", "WCU/write by index", "WCU/s")
LOAD_HEADERS = ("Index", "RCU/s", "WCU/s", "Suggested read min-max", "Suggested write min-max")
COST_HEADERS = ("Item", "Quantity", "Price", "Per month", "Note")
JOB_HEADERS = ("Job", "Schedule", "RCU/run", "RCU/s in window", "On demand run/month", "Provisioned run/month")
INFRACOST_VERSION = "0.1"  # the usage file version Infracost reads (internal/usage/usage_file.go)


def read_rows(report: CapacityReport, jobs: Sequence[str] = ()) -> list[list[str]]:
    """`jobs`: the patterns that run on a schedule (their runs averaged over the day; each run under Jobs)."""
    return [
        [r.pattern, r.index, f"{r.items_per_call:,.4g}", f"{r.bytes_per_item:,}", str(r.requests_per_call),
         f"{r.units_per_call + r.table_units_per_call:g}",
         f"{r.units_per_second + r.table_units_per_second:,.1f}" + (" (a job)" if r.pattern in jobs else "")]
        for r in report.reads
    ]


def write_rows(report: CapacityReport) -> list[list[str]]:
    return [
        [w.entity, kind.kind, f"{kind.rate:g}", f"{w.item_bytes:,}",
         " + ".join(f"{request.count:g} {request.operation}" for request in kind.requests) or "none",
         ", ".join(f"{index} {units:.4g}" for index, units in sorted(kind.units.items())),
         f"{sum(kind.units.values()) * kind.rate:,.1f}"]
        for w in report.writes for kind in w.kinds
    ]


def assumption_lines(report: CapacityReport) -> list[str]:
    """Where each figure comes from: items per read, what updates change."""
    lines = [f"- {r.pattern}: {r.items_per_call:,.4g} items per call: {r.basis}" for r in report.reads if r.basis]
    lines += [f"- {w.entity} updates {kind.note.removeprefix('changes ')}" for w in report.writes
              for kind in w.kinds if kind.kind == "update" and kind.note]
    lines += [f"- {w.entity} {kind.kind}: {kind.note}" for w in report.writes for kind in w.kinds
              if kind.kind not in ("update", "expiry") and kind.note]
    lines += [f"- {w.entity} {kind.kind}: the client sends {request.describe()} first, {kind.read_units:g} RCU each "
              f"on the table ({kind.rate * kind.read_units:,.1f} RCU/s)" for w in report.writes for kind in w.kinds
              if kind.read_units for request in kind.requests[:1]]
    return lines


def _dollars(value: float | None) -> str:
    return "not priced" if value is None else f"${value:,.2f}"


def job_rows(jobs: Sequence[JobCost]) -> list[list[str]]:
    return [[job.pattern, f"{_when(job)} {job.schedule.start} UTC, {job.schedule.seconds // 60:,} min",
             f"{job.units_per_run:,.0f}", f"{job.units_per_second:,.1f}",
             f"{_dollars(job.on_demand_per_run)} / {_dollars(job.per_month(job.on_demand_per_run))}",
             f"{_dollars(job.provisioned_per_run)} / {_dollars(job.per_month(job.provisioned_per_run))}"]
            for job in jobs]


def _when(job: JobCost) -> str:
    schedule = job.schedule
    return {"day": "every day", "week": f"every {schedule.on}", "month": f"every month on the {schedule.on}",
            "once": f"once, {schedule.on}"}[schedule.every]


def _jobs(blueprint: Blueprint) -> list[str]:
    return [name for name, pattern in blueprint.access_patterns.items() if pattern.schedule]


def job_lines(stack: Stack) -> list[str]:
    """Each job's reads and price per run and per month (the throughput lines of the bill hold them already)."""
    jobs = job_costs(stack.design, stack.capacity)
    if not jobs:
        return []
    return ["", "Jobs (`schedule`: each run's reads spread over its window, nothing outside it; a month has 730 / 24 "
            "daily runs, 730 / 168 weekly, one monthly or one-time; provisioned: the capacity at the target "
            "utilization for the window; already in the throughput lines)", text_table(JOB_HEADERS, job_rows(jobs))]


def load_rows(report: CapacityReport) -> list[list[str]]:
    return [
        [load.index, f"{load.read_units_per_second:,.1f}", f"{load.write_units_per_second:,.1f}",
         f"{load.suggested_read[0]:,}-{load.suggested_read[1]:,}",
         f"{load.suggested_write[0]:,}-{load.suggested_write[1]:,}"]
        for load in report.loads
    ]


def _plain(value: float) -> str:
    """A price without exponent and with at least cents: 0.000000125 stays 0.000000125, 0.2 is 0.20."""
    text = f"{value:.10f}".rstrip("0")
    whole, _, decimals = text.partition(".")
    return f"{whole}.{decimals.ljust(2, '0')}"


def _quantity(line: CostLine) -> str:
    shown = f"{line.quantity:,.0f}" if line.quantity >= 100 or line.quantity == int(line.quantity) else \
        f"{line.quantity:,.2f}"
    return f"{shown} {line.unit}"


def _price(line: CostLine) -> str:
    if line.price is None:
        return "not priced"
    return f"${_plain(line.price)} ({line.region})"


def _monthly(line: CostLine) -> str:
    if line.monthly is None:
        return "not priced"
    shown = f"${line.monthly:,.2f}"
    return shown if line.billed else f"({shown})"


def price_line(cost: CostReport) -> str:
    """Where the figures come from, in one phrase."""
    if cost.dates is None:
        return f"not priced in {cost.region}" if cost.region else "not priced: no `region`"
    return (f"{cost.region} prices, USD, effective {cost.dates.effective}, checked {cost.dates.checked}, "
            f"from {cost.dates.file}")


def cost_rows(cost: CostReport) -> list[list[str]]:
    return [[line.item, _quantity(line), _price(line), _monthly(line), line.note] for line in cost.lines]


def cost_lines(cost: CostReport) -> list[str]:
    unpriced = f"; not priced: {', '.join(cost.unpriced)}" if cost.unpriced else ""
    lines = [f"Monthly cost ({price_line(cost)}; provisioned at the suggested autoscaling minimums, within the "
             "configured bounds; "
             "figures in parentheses are not billed)", text_table(COST_HEADERS, cost_rows(cost)),
             f"Total per month in {cost.region or 'no region'}: ${cost.total:,.2f} ({cost.billing}, "
             f"{cost.table_class}){unpriced}"]
    if cost.ceiling is not None:
        lines.append(f"On-demand ceiling in {cost.region}: at most ${cost.ceiling:,.2f} a month for throughput "
                     "(every max_throughput reached all month)")
    return lines + [f"Note: {note}" for note in cost.notes]


def maximum_lines(stack: Stack) -> list[str]:
    """On-demand tables: the maxima in force and the suggested ones."""
    blueprint, report = stack.design.blueprint, stack.capacity
    if blueprint.table.billing != "on_demand":
        return []
    maxima = report.on_demand_maxima
    lines = []
    for load in report.loads:
        current = maxima.get(load.index)
        shown = ("none (no cost guard)" if current is None or max(current) < 0
                 else ", ".join(f"{direction} {units:,}" if units > 0 else f"{direction} none"
                                for direction, units in zip(("read", "write"), current, strict=True)))
        read, write = load.suggested_maximum
        lines.append(f"  {load.index}: max_throughput {shown}; suggested read {read:,}, write {write:,}")
    return ["On-demand maximum (request units per second; suggested: the peak at the target utilization, at "
            f"least {MIN_SUGGESTED_MAXIMUM})", *lines]


def quota_lines(stack: Stack) -> list[str]:
    """Suggested maxima above the table-level quota (lint's TW308 and TW313 say so too, lint/quotas.py)."""
    quota = stack.design.blueprint.simulation.table_quota
    over = [f"{load.index} {direction} {peak:,}" for load in stack.capacity.loads
            for direction, peak in (("read", load.suggested_read[1]), ("write", load.suggested_write[1]))
            if peak > quota]
    if not over:
        return []
    return ["", f"Above the table-level throughput quota of {quota:,} units/s (`simulation.table_quota`): "
            f"{', '.join(over)}: request a quota increase to at least these figures, split the workload across "
            "tables, or queue the peak"]


def _profile_words(blueprint: Blueprint) -> str:
    traffic = blueprint.traffic
    curve = "the declared daily curve" if traffic.daily else f"peak factor {traffic.peak_factor:g}"
    shaped = sum(1 for p in blueprint.access_patterns.values() if p.traffic) + sum(
        1 for e in blueprint.entities.values() if e.traffic)
    events = len(traffic.events) + sum(len(p.traffic.events) for p in blueprint.access_patterns.values() if p.traffic) \
        + sum(len(e.traffic.events) for e in blueprint.entities.values() if e.traffic)
    return curve + (f"; {shaped} pattern(s) or entities with their own" if shaped else "") + (
        f"; {events} event(s), priced for their duration" if events else "")


def render_text(stacks: Sequence[Stack]) -> str:
    parts = []
    for stack in stacks:
        blueprint, report = stack.design.blueprint, stack.capacity
        parts += [
            f"{blueprint.blueprint}: table {blueprint.table.name} "
            f"({blueprint.table.billing}, {blueprint.table.table_class}); "
            f"rates are averages; peaks from the traffic profiles ({_profile_words(blueprint)})",
            "", "Reads", text_table(READ_HEADERS, read_rows(report, _jobs(blueprint))),
            "", "Writes", text_table(WRITE_HEADERS, write_rows(report)),
            "", "Per index", text_table(LOAD_HEADERS, load_rows(report)), *quota_lines(stack), *job_lines(stack),
            "", "Where the figures come from", *assumption_lines(report),
            *(["", *maximum_lines(stack)] if maximum_lines(stack) else []),
            "", *cost_lines(stack.cost), "",
        ]
    return "\n".join(parts)


def cost_data(cost: CostReport) -> dict[str, Any]:
    return {
        "region": cost.region,
        "billing": cost.billing,
        "table_class": cost.table_class,
        "currency": "USD",
        "prices": asdict(cost.dates) if cost.dates else None,
        "lines": [{**asdict(line), "monthly": line.monthly} for line in cost.lines],
        "total": cost.total,
        "unpriced": list(cost.unpriced),
        "ceiling": cost.ceiling,
        "notes": list(cost.notes),
    }


def render_json(stacks: Sequence[Stack]) -> str:
    data = []
    for stack in stacks:
        report = stack.capacity
        data.append({
            "blueprint": stack.design.blueprint.blueprint,
            "stack": stack.name,
            "reads": [asdict(read) for read in report.reads],
            "writes": [asdict(write) for write in report.writes],
            "loads": [asdict(load) for load in report.loads],
            "on_demand_maxima": {target: {"read": read, "write": write}
                                 for target, (read, write) in report.on_demand_maxima.items()},
            "cost": cost_data(stack.cost),
            "jobs": [{**asdict(job), "schedule": job.schedule.model_dump(), "units_per_second": job.units_per_second,
                      "on_demand_per_month": job.per_month(job.on_demand_per_run),
                      "provisioned_per_month": job.per_month(job.provisioned_per_run)}
                     for job in job_costs(stack.design, report)],
        })
    return json.dumps(data, indent=2, sort_keys=True) + "\n"


# --- Infracost ---------------------------------------------------------------------------------------


def infracost_usage(stack: Stack) -> dict[str, dict[str, int]]:
    """The usage of one stack's resources, keyed by Terraform address, in Infracost's usage keys (whole
    numbers: Infracost reads them as Int64). On demand: the month's request units (table and GSIs, billed
    alike); provisioned: the table's autoscaling targets at the capacity priced by `capacity` (the suggested
    minimums within the configured bounds; Infracost's `capacity` key). Storage and point-in-time recovery in
    GB, rounded up."""
    blueprint, report, cost = stack.design.blueprint, stack.capacity, stack.cost
    base = logical_id(blueprint.blueprint)
    table: dict[str, int] = {
        "storage_gb": math.ceil(cost.stored_bytes / GIB),
        "pitr_backup_storage_gb": math.ceil(cost.table_bytes / GIB) if blueprint.table.point_in_time_recovery else 0,
    }
    usage = {f"{DynamodbTable.terraform_type}.{base}": table}
    if blueprint.table.billing == "on_demand":
        table["monthly_read_request_units"] = round(
            sum(load.read_units_per_second for load in report.loads) * SECONDS_PER_MONTH)
        table["monthly_write_request_units"] = round(
            sum(load.write_units_per_second for load in report.loads) * SECONDS_PER_MONTH)
    else:
        for priced in cost.provisioned:
            if priced.index == TABLE:
                address = f"{AppautoscalingTarget.terraform_type}.{logical_id(base, priced.direction)}"
                usage[address] = {"capacity": priced.units}
    return usage


def render_infracost(stacks: Sequence[Stack]) -> str:
    """An Infracost usage file (version 0.1) for the stacks, which must be one Terraform project: stacks of
    one blueprint share their addresses, so pass `--env` to pick one."""
    resources: dict[str, dict[str, int]] = {}
    owner: dict[str, str] = {}
    for stack in stacks:
        for address, values in infracost_usage(stack).items():
            if address in owner:
                raise TablewrightError(
                    f"stacks {owner[address]} and {stack.name} both have {address}: an Infracost usage file describes "
                    "one Terraform project (one stack)", code=ErrorCode.USAGE,
                    hint="pass `--env NAME` to write the usage file of one environment, or `--out-dir DIR` for one "
                         "file per stack")
            owner[address] = stack.name
            resources[address] = dict(sorted(values.items()))
    header = [
        "# Infracost usage file, written by `tablewright capacity --format infracost` (Tablewright) from the",
        f"# declared rates and sizes of: {', '.join(stack.name for stack in stacks)}.",
        "# Infracost prices the Standard table class only and no GSI capacity of provisioned tables;",
        "# `tablewright capacity` prices both, and PITR, Contributor Insights and the alarms.",
        *(f"# {stack.name}: storage_gb and pitr_backup_storage_gb leave out {', '.join(stack.cost.uncounted)} "
          "(no item_count)." for stack in stacks if stack.cost.uncounted),
        f"version: {INFRACOST_VERSION}",
    ]
    body = yaml.safe_dump({"resource_usage": dict(sorted(resources.items()))}, sort_keys=True,
                          default_flow_style=False)
    return "\n".join(header) + "\n" + body
