"""`capacity`: per-pattern reads, per-entity writes, per-index totals, suggested bounds, monthly cost."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict

from modules.capacity.model import PRICES, CapacityReport
from modules.report.tables import text_table
from modules.stack import Stack

READ_HEADERS = ("Pattern", "Index", "Items/call", "Bytes/item", "Requests/call", "RCU/call", "RCU/s")
WRITE_HEADERS = ("Entity", "Kind", "Writes/s", "Item bytes", "WCU/write by index", "WCU/s")
LOAD_HEADERS = ("Index", "RCU/s", "WCU/s", "Suggested read min-max", "Suggested write min-max")


def read_rows(report: CapacityReport) -> list[list[str]]:
    return [
        [r.pattern, r.index, f"{r.items_per_call:,.4g}", f"{r.bytes_per_item:,}", str(r.requests_per_call),
         f"{r.units_per_call + r.table_units_per_call:g}", f"{r.units_per_second + r.table_units_per_second:,.1f}"]
        for r in report.reads
    ]


def write_rows(report: CapacityReport) -> list[list[str]]:
    return [
        [w.entity, kind.kind, f"{kind.rate:g}", f"{w.item_bytes:,}",
         ", ".join(f"{index} {units:.4g}" for index, units in sorted(kind.units.items())),
         f"{sum(kind.units.values()) * kind.rate:,.1f}"]
        for w in report.writes for kind in w.kinds
    ]


def assumption_lines(report: CapacityReport) -> list[str]:
    """Where each figure comes from: items per read, what updates change."""
    lines = [f"- {r.pattern}: {r.items_per_call:,.4g} items per call: {r.basis}" for r in report.reads if r.basis]
    lines += [f"- {w.entity} updates {kind.note.removeprefix('changes ')}" for w in report.writes
              for kind in w.kinds if kind.kind == "update" and kind.note]
    return lines


def load_rows(report: CapacityReport) -> list[list[str]]:
    return [
        [load.index, f"{load.read_units_per_second:,.1f}", f"{load.write_units_per_second:,.1f}",
         f"{load.suggested_read[0]:,}-{load.suggested_read[1]:,}",
         f"{load.suggested_write[0]:,}-{load.suggested_write[1]:,}"]
        for load in report.loads
    ]


def cost_lines(report: CapacityReport) -> list[str]:
    cost = report.cost
    lines = [
        f"Monthly cost ({cost.region}, prices of {cost.price_date}): provisioned ${cost.provisioned:,.2f} "
        f"(autoscaled to the suggested minimums), on-demand ${cost.on_demand:,.2f}, storage ${cost.storage:,.2f}",
    ]
    return lines + ([f"Note: {cost.note}"] if cost.note else [])


def render_text(stacks: Sequence[Stack]) -> str:
    parts = []
    for stack in stacks:
        bp, report = stack.design.blueprint, stack.capacity
        parts += [
            f"{bp.blueprint}: table {bp.table.name} ({bp.table.billing}); "
            f"rates are averages, peaks x{bp.traffic.peak_factor:g}",
            "", "Reads", text_table(READ_HEADERS, read_rows(report)),
            "", "Writes", text_table(WRITE_HEADERS, write_rows(report)),
            "", "Per index", text_table(LOAD_HEADERS, load_rows(report)),
            "", "Where the figures come from", *assumption_lines(report),
            "", *cost_lines(report), "",
        ]
    return "\n".join(parts)


def render_json(stacks: Sequence[Stack]) -> str:
    data = []
    for stack in stacks:
        entry = asdict(stack.capacity)
        entry["blueprint"] = stack.design.blueprint.blueprint
        entry["prices"] = {"source": PRICES["source"], "date": PRICES["date"], "currency": PRICES["currency"]}
        data.append(entry)
    return json.dumps(data, indent=2, sort_keys=True) + "\n"
