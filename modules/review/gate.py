"""`gate --plan PLAN.json --blueprint B`: the same classification applied to a real plan, and the
decision a pipeline acts on: exit 1 on a blocked change, or on a window change outside the window."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from modules.blueprint.load import LoadedBlueprint
from modules.blueprint.model import Migration
from modules.constructs.record import STACK_OUTPUT
from modules.design.locked import KeyFacts
from modules.errors import PlanError, TablewrightError
from modules.review.changes import from_plan
from modules.review.classify import ACKNOWLEDGEMENTS, Change, acknowledge, classify, counts, production_change
from modules.review.data import DataChange, data_changes, migration_changes
from modules.review.review import StackReview, gsi_warning, verdict
from modules.window import describe, is_open, next_opening

Outcome = Literal["apply", "hold", "wait"]


@dataclass(frozen=True)
class Decision:
    passed: bool
    verdict: str
    reason: str
    # apply: now; hold: a blocked change (or window changes without a declared window); wait: window changes,
    # the window is closed (exit 4 with --detailed-exitcode)
    outcome: Outcome = "apply"
    at: datetime | None = None  # when the decision was taken (--now)
    window_open: bool | None = None  # None: the blueprint declares no maintenance window
    next_opening: datetime | None = None  # when a closed window opens next


EXAMPLE_NOW = "2026-12-01T02:30:00+08:00"
YEARS = range(2000, 3000)


def parse_now(text: str | None) -> datetime:
    if text is None:
        return datetime.now(UTC)
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise TablewrightError(f"--now {text!r} is not an ISO 8601 time", hint=f"write e.g. {EXAMPLE_NOW}") from None
    if moment.tzinfo is None:
        local = moment.strftime("%Y-%m-%dT%H:%M:%S")
        raise TablewrightError(f"--now {text!r} has no time zone",
                               hint=f"add an offset: {local}Z (UTC) or {local}+08:00")
    if moment.year not in YEARS:
        raise TablewrightError(f"--now {text!r} is not a year the gate can plan for ({YEARS[0]}-{YEARS[-1]})",
                               hint=f"write e.g. {EXAMPLE_NOW}")
    return moment


def _plan_tables(plan: dict[str, Any]) -> dict[str, set[str]]:
    """Every DynamoDB table resource the plan manages: its address, and its names before and after (two when
    the plan renames it)."""
    tables: dict[str, set[str]] = {}
    for entry in plan.get("resource_changes") or []:
        if isinstance(entry, dict) and entry.get("type") == "aws_dynamodb_table" and entry.get("mode") == "managed":
            change = entry.get("change")
            if not isinstance(change, dict):
                change = {}
            names = tables.setdefault(str(entry.get("address")), set())
            for side in ("before", "after"):
                value = change.get(side)
                if isinstance(value, dict) and isinstance(value.get("name"), str):
                    names.add(value["name"])
    return tables


def stack_for_plan(stacks: list[LoadedBlueprint], plan: dict[str, Any]) -> LoadedBlueprint:
    """The blueprint stack the plan is for: its table must be the only table resource the plan manages (which
    may have had another name before: a rename, which the gate blocks)."""
    tables = _plan_tables(plan)
    names = set().union(*tables.values())
    matching = [s for s in stacks if s.model.table.name in names]
    known = ", ".join(f"{s.stack_name} ({s.model.table.name})" for s in stacks)
    if len(matching) != 1 or len(tables) != 1:
        found = ", ".join(sorted(names)) or "no DynamoDB table"
        raise PlanError(f"the plan manages {found}, which is not the table of one stack of this blueprint "
                        f"({known})", code="E701",
                        hint="pass the plan of this blueprint's stack (and --env for its environment), or the "
                             "blueprint the plan was synthesized from")
    return matching[0]


def _record(plan: dict[str, Any], side: str) -> dict[str, Any] | None:
    """The `tablewright` output before or after the plan (None when the plan does not carry it)."""
    outputs = plan.get("output_changes")
    output = outputs.get(STACK_OUTPUT) if isinstance(outputs, dict) else None
    value = output.get(side) if isinstance(output, dict) else None
    return value if isinstance(value, dict) else None


def prior_production(plan: dict[str, Any]) -> bool | None:
    """Whether the stack was production before this plan, from the `tablewright` output in its state."""
    value = (_record(plan, "before") or {}).get("production")
    return value if isinstance(value, bool) else None


def _keys(record: dict[str, Any] | None) -> dict[tuple[str, str], KeyFacts] | None:
    entities = (record or {}).get("keys")
    if not isinstance(entities, dict):
        return None
    try:
        return {(entity, index): KeyFacts(str(facts["templates"]), facts.get("shards"), tuple(facts["shard_by"]),
                                          str(facts["attributes"]), str(facts["encodings"]))
                for entity, indexes in entities.items() for index, facts in indexes.items()}
    except (KeyError, TypeError, AttributeError):
        raise PlanError("has a `tablewright` output this version of Tablewright cannot read",
                        hint="plan with the stack synthesized by this version of Tablewright") from None


def key_data(plan: dict[str, Any], migrations: list[Migration]) -> list[DataChange]:
    """Keys that change between the state the plan starts from and the one it plans (from the `tablewright`
    output), with the declared migration of each."""
    before, after = _keys(_record(plan, "before")), _keys(_record(plan, "after"))
    if before is None or after is None:
        return []
    return data_changes(before, after, migrations)


def key_migrations(plan: dict[str, Any], migrations: list[Migration]) -> list[Change]:
    """The key changes as data migrations: blocked unless the blueprint declares them, even in a plan with no
    resource changes."""
    return migration_changes(key_data(plan, migrations), STACK_OUTPUT)


def decide(changes: list[Change], loaded: LoadedBlueprint, now: datetime) -> Decision:
    found = counts(changes)
    result = verdict(changes)
    window = loaded.model.maintenance_window
    open_now = None if window is None else is_open(window, now)
    opens = None if window is None or open_now else next_opening(window, now)

    def decision(passed: bool, reason: str, outcome: Outcome) -> Decision:
        return Decision(passed, result, reason, outcome, now, open_now, opens)

    if result == "blocked":
        flags = sorted({ACKNOWLEDGEMENTS[c.unblocked_by] for c in changes if c.cls == "blocked" and c.unblocked_by})
        return decision(False, f"{found['blocked']} blocked change(s) would lose data or protection, or were not "
                               f"written by Tablewright; pass {' / '.join(flags) or 'nothing'} only when that is "
                               "intended (then they wait for the window)", "hold")
    if result == "safe":
        return decision(True, "only safe changes: apply at any time", "apply")
    waiting = found["window"]
    if window is None:
        return decision(False, f"{waiting} window change(s), but the blueprint declares no maintenance_window", "hold")
    if opens is None:
        return decision(True, f"{waiting} window change(s), inside the maintenance window ({describe(window)})",
                        "apply")
    in_utc = opens.astimezone(UTC)
    when = opens.isoformat() + ("" if opens.utcoffset() == in_utc.utcoffset() else f" ({in_utc.isoformat()})")
    return decision(False, f"{waiting} window change(s) outside the maintenance window ({describe(window)}); it next "
                           f"opens {when}", "wait")


def plan_changes(plan: dict[str, Any], production: bool,
                 migrations: list[Migration]) -> tuple[bool, list[Change]]:
    """The classified changes of a real plan (key migrations from its `tablewright` output included),
    judged by the stricter of `production` (the blueprint's) and the state the plan starts from; returns
    that production status too."""
    before = prior_production(plan)
    strict = production or bool(before)
    try:
        changes = classify(from_plan(plan), strict)
    except (KeyError, TypeError, AttributeError, ValueError) as error:
        raise PlanError(f"has values of an unexpected shape ({type(error).__name__}: {error})",
                        hint="pass the output of `terraform show -json PLAN`, unedited") from None
    if before is not None:
        changes = production_change(before, production) + changes
    return strict, key_migrations(plan, migrations) + changes



def gate(plan: dict[str, Any], loaded: LoadedBlueprint, now: datetime,
         acknowledged: frozenset[str] = frozenset()) -> tuple[StackReview, Decision]:
    """Judge the plan by the stricter of the blueprint and the state the plan starts from."""
    production, changes = plan_changes(plan, bool(loaded.model.production), list(loaded.model.migrations))
    changes = acknowledge(changes, acknowledged)
    stack = StackReview(loaded.stack_name, production, changes, loaded.model.maintenance_window,
                        data=key_data(plan, list(loaded.model.migrations)), warnings=gsi_warning(changes))
    return stack, decide(changes, loaded, now)
