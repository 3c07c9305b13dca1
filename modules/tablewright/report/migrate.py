"""`migrate plan` and `migrate verify` as text and JSON."""

from __future__ import annotations

import json
import math
from dataclasses import asdict
from typing import Any

from tablewright.migrate.plan import Plan
from tablewright.migrate.verify import Verification


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "unknown (declare `item_count`, or count with --endpoint-url)"
    if seconds < 120:
        return f"{seconds:,.0f} s"
    return f"{seconds / 60:,.0f} min" if seconds < 7200 else f"{seconds / 3600:,.1f} h"


def _hours(hours: tuple[int, ...]) -> str:
    if not hours:
        return "none: at this budget the migration throttles the table or an index at every hour of the declared day"
    ranges: list[list[int]] = []
    for hour in hours:
        if ranges and ranges[-1][1] == hour - 1:
            ranges[-1][1] = hour
        else:
            ranges.append([hour, hour])
    return ", ".join(f"{start:02d}:00-{end + 1:02d}:00" for start, end in ranges) + " UTC"


def _largest(plan: Plan) -> list[str]:
    if plan.fitting_hours or not math.isfinite(plan.largest_budget):
        return []
    if plan.largest_budget < 1:
        return ["No budget fits beside the declared traffic as the capacity stands: raise the write capacity for "
                "the run (a scheduled minimum), or run it at a quiet hour with a small budget and accept throttling"]
    return [f"The largest budget that fits in some hour: --max-wcu {math.floor(plan.largest_budget):,}; or raise "
            "the write capacity (a scheduled minimum) for the run"]


def render_plan_text(plan: Plan) -> str:
    lines = [f"Migration {plan.identity} of {plan.stack} (table {plan.table}):", ""]
    lines += [f"  - {subject}" for subject in plan.subjects]
    lines += ["", "Items to touch:"]
    for work in plan.works:
        name = work.entity if work.former == work.entity else f"{work.former} -> {work.entity}"
        items = f"{work.items:,}" if work.items is not None else "unknown"
        lines.append(f"  {name}: {items} item(s), {work.units_per_item:g} write unit(s) each")
    units = f"{plan.write_units:,.0f}" if plan.write_units is not None else "unknown"
    cost = f"${plan.cost_usd:,.2f}" if plan.cost_usd is not None else "unknown"
    lines += ["", f"Write units: {units}; the Scan reads {plan.scan_read_units:,.0f} read units",
              f"At --max-wcu {plan.budget:g}: {_duration(plan.seconds)}, about {cost} ({plan.billing})",
              "Budget on each target: " + ", ".join(f"{target} {share:.0%}" for target, share in plan.shares.items()),
              f"Hours it fits beside the declared traffic without throttling: {_hours(plan.fitting_hours)}",
              *_largest(plan), "",
              "Run it: tablewright migrate run BLUEPRINT --against REF --max-wcu N [--segments K --segment I]",
              "Then:   tablewright migrate verify BLUEPRINT --against REF (records it in the design lock)"]
    return "\n".join(lines) + "\n"


def render_plan_json(plan: Plan) -> str:
    data = asdict(plan)
    data["largest_budget"] = plan.largest_budget if math.isfinite(plan.largest_budget) else None
    return json.dumps(data, indent=2, sort_keys=True) + "\n"


def _verification_data(verification: Verification) -> dict[str, Any]:
    return {**asdict(verification), "passed": verification.passed, "items": verification.items}


def render_verification(verification: Verification, form: str = "text") -> str:
    if form == "json":
        return json.dumps(_verification_data(verification), indent=2, sort_keys=True) + "\n"
    verdict = "verified" if verification.passed else f"NOT migrated: {verification.problems:,} item(s)"
    lines = [f"Migration {verification.identity} of {verification.stack} (table {verification.table}): {verdict}",
             f"Scanned {verification.scanned:,} item(s).", "", "Entities (items, as the later design reads them):"]
    lines += [f"  {entity}: {items:,}, {ok:,}" for entity, (items, ok) in verification.entities.items()]
    lines += ["", "Access patterns (items of the migrated entities each can find):"]
    lines += [f"  {pattern}: {found:,}" for pattern, found in verification.patterns.items()]
    if verification.examples:
        lines += ["", "First items not migrated:", *(f"  {example}" for example in verification.examples)]
    return "\n".join(lines) + "\n"
