"""`gate --plan PLAN.json --blueprint B`: the same classification applied to a real plan, and the
decision a pipeline acts on: exit 1 on a blocked change, or on a window change outside the window."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from modules.blueprint.load import LoadedBlueprint
from modules.errors import TablewrightError
from modules.review.changes import from_plan
from modules.review.classify import Change, classify, counts
from modules.review.review import StackReview, gsi_warning, verdict
from modules.window import describe, is_open, next_opening


@dataclass(frozen=True)
class Decision:
    passed: bool
    verdict: str
    reason: str


def parse_now(text: str | None) -> datetime:
    if text is None:
        return datetime.now(timezone.utc)
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise TablewrightError(f"--now {text!r} is not an ISO 8601 time", hint="write e.g. 2026-12-01T02:30:00+08:00")
    if moment.tzinfo is None:
        raise TablewrightError(f"--now {text!r} has no time zone",
                               hint=f"add an offset: {text}Z (UTC) or {text}+08:00")
    return moment


def _plan_tables(plan: dict[str, Any]) -> set[str]:
    names = set()
    for entry in plan.get("resource_changes", []):
        if entry.get("type") == "aws_dynamodb_table" and entry.get("mode") == "managed":
            for side in ("before", "after"):
                name = (entry["change"].get(side) or {}).get("name")
                if isinstance(name, str):
                    names.add(name)
    return names


def stack_for_plan(stacks: list[LoadedBlueprint], plan: dict[str, Any]) -> LoadedBlueprint:
    """The blueprint stack the plan is for: the only one, or the one whose table the plan names."""
    if len(stacks) == 1:
        return stacks[0]
    tables = _plan_tables(plan)
    matching = [s for s in stacks if s.model.table.name in tables]
    if len(matching) != 1:
        known = ", ".join(f"{s.environment} ({s.model.table.name})" for s in stacks)
        raise TablewrightError(f"cannot tell which environment the plan is for (its tables: "
                               f"{', '.join(sorted(tables)) or 'none'})", hint=f"pass --env; environments: {known}")
    return matching[0]


def decide(changes: list[Change], loaded: LoadedBlueprint, now: datetime, allow_destroy: bool) -> Decision:
    found = counts(changes)
    result = verdict(changes, allow_destroy)
    if result == "blocked":
        return Decision(False, result, f"{found['blocked']} blocked change(s) would lose data or protection; pass "
                                       "--allow-destroy only when that is intended (then they wait for the window)")
    if result == "safe":
        return Decision(True, result, "only safe changes: apply at any time")
    window = loaded.model.maintenance_window
    waiting = found["window"] + found["blocked"]
    if window is None:
        return Decision(False, result, f"{waiting} window change(s), but the blueprint declares no maintenance_window")
    if is_open(window, now):
        return Decision(True, result, f"{waiting} window change(s), inside the maintenance window ({describe(window)})")
    opens = next_opening(window, now)
    in_utc = opens.astimezone(timezone.utc)
    when = opens.isoformat() + ("" if opens.utcoffset() == in_utc.utcoffset() else f" ({in_utc.isoformat()})")
    return Decision(False, result, f"{waiting} window change(s) outside the maintenance window ({describe(window)}); "
                                   f"it next opens {when}")


def gate(plan: dict[str, Any], loaded: LoadedBlueprint, now: datetime, allow_destroy: bool) -> tuple[StackReview, Decision]:
    production = bool(loaded.model.production)
    changes = classify(from_plan(plan), production)
    stack = StackReview(loaded.stack_name, production, changes, loaded.model.maintenance_window,
                        warnings=gsi_warning(changes))
    return stack, decide(changes, loaded, now, allow_destroy)
