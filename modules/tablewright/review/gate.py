"""`gate --plan PLAN.json --blueprint B`: the same classification applied to a real plan, and the
decision a pipeline acts on: exit 1 on a blocked change, or on a window change outside the window."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import ValidationError

from tablewright.blueprint.language import MaintenanceWindow
from tablewright.blueprint.load import LoadedBlueprint
from tablewright.constructs.record import STACK_OUTPUT
from tablewright.design.evolution import declaration_entities, declared_entities
from tablewright.design.locked import Attributes, KeyFacts, all_attribute_renames
from tablewright.errors import ErrorCode, PlanError, TablewrightError
from tablewright.monitoring.window import describe, is_open, next_opening
from tablewright.review.changes import UNKNOWN, from_plan
from tablewright.review.classified import ACKNOWLEDGEMENTS, Change, acknowledge, counts
from tablewright.review.classify import classify, production_change
from tablewright.review.data import CONTRACT, DataChange, contracted, data_changes, migration_changes
from tablewright.review.index_contract import dropped_indexes, index_contract
from tablewright.review.review import StackReview, below_peak, gsi_warning, verdict
from tablewright.stacks.stack import build_stack

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
        raise TablewrightError(f"--now {text!r} is not an ISO 8601 time", code=ErrorCode.TIME_ARGUMENT,
                               hint=f"write e.g. {EXAMPLE_NOW}") from None
    if moment.tzinfo is None:
        local = moment.strftime("%Y-%m-%dT%H:%M:%S")
        raise TablewrightError(f"--now {text!r} has no time zone", code=ErrorCode.TIME_ARGUMENT,
                               hint=f"add an offset: {local}Z (UTC) or {local}+08:00")
    if moment.year not in YEARS:
        raise TablewrightError(f"--now {text!r} is not a year the gate can plan for ({YEARS[0]}-{YEARS[-1]})",
                               code=ErrorCode.TIME_ARGUMENT,
                               hint=f"write e.g. {EXAMPLE_NOW}")
    return moment


def plan_tables(plan: dict[str, Any]) -> dict[str, set[str]]:
    """Every DynamoDB table resource the plan manages: its address, and its names before and after (two when
    the plan renames it; UNKNOWN for a name known only after apply)."""
    tables: dict[str, set[str]] = {}
    for entry in plan.get("resource_changes") or []:
        if isinstance(entry, dict) and entry.get("type") == "aws_dynamodb_table" and entry.get("mode") == "managed":
            change = entry.get("change")
            if not isinstance(change, dict):
                change = {}
            names = tables.setdefault(str(entry.get("address")), set())
            unknown = change.get("after_unknown")
            for side in ("before", "after"):
                value = change.get(side)
                if value is None:
                    continue
                name = value.get("name") if isinstance(value, dict) else None
                known = side == "before" or not (unknown is True or (isinstance(unknown, dict) and unknown.get("name")))
                names.add(name if isinstance(name, str) and known else UNKNOWN)
    return tables


def stack_for_plan(stacks: list[LoadedBlueprint], plan: dict[str, Any]) -> LoadedBlueprint:
    """The blueprint stack the plan is for: its table must be the only table resource the plan manages, by
    names known before apply (two when the plan renames it, which the gate blocks)."""
    tables = plan_tables(plan)
    names = set().union(*tables.values())
    matching = [s for s in stacks if s.blueprint.table.name in names]
    known = ", ".join(f"{s.stack_name} ({s.blueprint.table.name})" for s in stacks)
    if len(matching) != 1 or len(tables) != 1 or UNKNOWN in names:
        found = ", ".join(sorted(names)) or "no DynamoDB table"
        where = f" at {len(tables)} addresses ({', '.join(sorted(tables))})" if len(tables) > 1 else ""
        raise PlanError(f"the plan manages {found}{where}, which is not the table of one stack of this blueprint "
                        f"({known})", code=ErrorCode.FOREIGN_PLAN,
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


@dataclass(frozen=True)
class WindowInForce:
    """The maintenance window in force before the plan (None: none, or none the gate can know), and where
    the gate read it."""

    window: MaintenanceWindow | None
    source: str


def window_in_force(plan: dict[str, Any], blueprint: MaintenanceWindow | None) -> WindowInForce:
    """The window the plan is judged by: the one the state it starts from records, never the one the pull
    request brings (a pull request that widens its window would otherwise open it for itself). Without a
    record of it, the blueprint's window is the one in force for a new stack (the plan only creates), or for a
    state written before Tablewright recorded windows when the plan leaves the change calendar as it is."""
    record = _record(plan, "before")
    if record is not None and "maintenance_window" in record:
        recorded = record["maintenance_window"]
        if recorded is False:
            return WindowInForce(None, "the state the plan starts from has none")
        try:
            return WindowInForce(MaintenanceWindow.model_validate(recorded), "recorded in the state the plan "
                                                                              "starts from")
        except ValidationError:
            raise PlanError("has a `tablewright` output whose maintenance window is not valid",
                            hint="plan with the stack synthesized by this version of Tablewright") from None
    changes = from_plan(plan)
    if record is None and changes and all(change.action == "create" for change in changes):
        return WindowInForce(blueprint, "the blueprint's: a new stack, nothing of it deployed yet")
    if any(change.type == "aws_ssm_document" for change in changes):
        return WindowInForce(None, "the plan changes the change calendar and its prior state records no window")
    if blueprint is None:
        return WindowInForce(None, "the blueprint declares none")
    return WindowInForce(blueprint, "the blueprint's, whose change calendar the plan leaves as it is")


def _keys(record: dict[str, Any] | None) -> dict[tuple[str, str], KeyFacts] | None:
    """The keys a `tablewright` record holds (None: no record, or one from before keys were recorded)."""
    if record is None or "keys" not in record:
        return None
    entities = record["keys"]
    try:
        return {(entity, index): KeyFacts(str(facts["templates"]), facts.get("shards"), tuple(facts["shard_by"]),
                                          str(facts["attributes"]), str(facts["encodings"]))
                for entity, indexes in entities.items() for index, facts in indexes.items()}
    except (KeyError, TypeError, AttributeError):
        raise PlanError("has a `tablewright` output this version of Tablewright cannot read",
                        hint="plan with the stack synthesized by this version of Tablewright") from None


def _unchecked_keys(plan: dict[str, Any]) -> list[Change]:
    """The state records the stack's keys, and the plan takes them away (the `tablewright` output removed,
    emptied or unreadable after it): nothing shows whether they change, so the plan is blocked."""
    if _keys(_record(plan, "before")) is None or _keys(_record(plan, "after")) is not None:
        return []
    return [Change(
        address=STACK_OUTPUT, action="update", category="stack", subject="the stack's recorded keys", cls="blocked",
        reason="the state records every entity's keys in the `tablewright` output, and this plan removes or "
        "replaces that record, so no one can see whether items already written keep their keys: plan "
        "with the stack Tablewright synthesizes, its `tablewright` output unchanged"
    )]


def _attributes(record: dict[str, Any] | None) -> Attributes | None:
    """The stored attributes a `tablewright` record holds (None: a record from before they were recorded)."""
    entities = (record or {}).get("attributes")
    if entities is None:
        return None
    try:
        return {str(entity): {str(name): str(stored) for name, stored in attributes.items()}
                for entity, attributes in entities.items()}
    except AttributeError:
        raise PlanError("has a `tablewright` output this version of Tablewright cannot read",
                        hint="plan with the stack synthesized by this version of Tablewright") from None




def key_data(plan: dict[str, Any], loaded: LoadedBlueprint) -> list[DataChange]:
    """Keys that change, entities renamed or removed, and stored attributes that change, between the state the plan
    starts from and the one it plans (from the `tablewright` output), with the declared migration of each."""
    before, after = _keys(_record(plan, "before")), _keys(_record(plan, "after"))
    if before is None or after is None:
        return []
    attributes = (_attributes(_record(plan, "before")), _attributes(_record(plan, "after")))
    return data_changes(before, after, list(loaded.blueprint.migrations), loaded.blueprint.table.ttl_attribute,
                        attributes, all_attribute_renames(loaded.blueprint), _retained(_record(plan, "before")))


def _retained(record: dict[str, Any] | None) -> dict[tuple[str, str], KeyFacts]:
    """The table keys of removed entities whose items stay, as a `tablewright` record holds them."""
    entities = (record or {}).get("retained")
    if not isinstance(entities, dict):
        return {}
    return {(str(entity), "table"): KeyFacts(str(templates), None, (), "", "")
            for entity, templates in entities.items()}


# What each kind of blocked change is, and what lets it through (an acknowledgement: its flag).
_BLOCKED_KINDS: dict[str, str] = {
    "destroy": "would delete items or the table, or leave it unmanaged",
    "unprotect": "turn protection off",
    "foreign": "are not Tablewright's to vouch for (resources it does not write, replicas, policies open to anyone)",
}


def blocked_reason(changes: list[Change]) -> str:
    """Why the gate holds a plan with blocked changes, and the way forward for each kind: the flag that
    acknowledges it, or, for a key migration, declaring it in the blueprint (no flag lifts that)."""
    blocked = [change for change in changes if change.cls == "blocked"]
    parts = []
    for kind, what in _BLOCKED_KINDS.items():
        count = sum(1 for change in blocked if change.unblocked_by == kind)
        if count:
            parts.append(f"{count} {what}: pass {ACKNOWLEDGEMENTS[kind]} only when that is intended (then they wait "
                         "for the window)")
    contracts = sum(1 for change in blocked if change.unblocked_by is None and change.subject.startswith(CONTRACT))
    if contracts:
        parts.append(f"{contracts} contract step(s) before their migration is verified (a declaration removed, or an "
                     "index dropped): run the migration (`tablewright migrate run`), verify it (`tablewright migrate "
                     "verify` records it in the design lock), commit the lock, then contract; no flag lets them "
                     "through")
    migrations = sum(1 for change in blocked if change.unblocked_by is None and change.category == "data"
                     and not change.subject.startswith(CONTRACT))
    if migrations:
        parts.append(f"{migrations} undeclared data migration(s) (items already written keep their old keys, or "
                     "belong to an entity renamed or removed): declare each under `migrations:` in the blueprint "
                     "(README: Design stability), which makes it a window change; no flag lets it through")
    others = sum(1 for change in blocked if change.unblocked_by is None and change.category != "data")
    if others:
        parts.append(f"{others} other(s): change the blueprint so the plan no longer makes them; no flag lets "
                     "them through")
    return f"{len(blocked)} blocked change(s): " + "; ".join(parts)


def decide(changes: list[Change], in_force: WindowInForce, now: datetime) -> Decision:
    found = counts(changes)
    result = verdict(changes)
    window = in_force.window
    open_now = None if window is None else is_open(window, now)
    opens = None if window is None or open_now else next_opening(window, now)

    def decision(passed: bool, reason: str, outcome: Outcome) -> Decision:
        return Decision(passed, result, reason, outcome, now, open_now, opens)

    if result == "blocked":
        return decision(False, blocked_reason(changes), "hold")
    if result == "safe":
        return decision(True, "only safe changes: apply at any time", "apply")
    waiting = found["window"]
    if window is None:
        return decision(False, f"{waiting} window change(s), but no maintenance window is in force "
                               f"({in_force.source})", "hold")
    if opens is None:
        return decision(True, f"{waiting} window change(s), inside the maintenance window ({describe(window)})",
                        "apply")
    in_utc = opens.astimezone(UTC)
    when = opens.isoformat() + ("" if opens.utcoffset() == in_utc.utcoffset() else f" ({in_utc.isoformat()})")
    return decision(False, f"{waiting} window change(s) outside the maintenance window ({describe(window)}); it next "
                           f"opens {when}", "wait")


def _drifted_away(plan: dict[str, Any]) -> list[Change]:
    """Tables Terraform no longer found when it refreshed (`resource_drift`: deleted): looked for in another
    region or account, or deleted behind its back. Either way the plan does not manage the table it had."""
    drift = plan.get("resource_drift")
    lost = []
    for entry in drift if isinstance(drift, list) else []:
        change = entry.get("change") if isinstance(entry, dict) else None
        if (isinstance(change, dict) and entry.get("type") == "aws_dynamodb_table" and entry.get("mode") == "managed"
                and change.get("actions") == ["delete"]):
            address = str(entry.get("address"))
            before = change.get("before")
            name = before.get("name") if isinstance(before, dict) else None
            lost.append(Change(
                address=address, action="delete", category="table", subject=f"table {name}", cls="blocked",
                reason="Terraform no longer finds the table it manages (another region, account or "
                "credentials, or deleted outside Terraform) and drops it from its state: its items "
                "and protection are no longer managed",
                unblocked_by="destroy"
            ))
    return lost


def _recreated(change: Change) -> Change:
    """A table created in a stack that already exists: the table it had has left its state."""
    if change.category != "table" or change.action != "create":
        return change
    return replace(change, cls="blocked", unblocked_by="destroy",
                   reason="the stack already exists (its state records it), yet the plan creates its table: the "
                          "table it had is no longer in its state (a changed region, account or backend), and this "
                          "one starts empty")


def plan_changes(plan: dict[str, Any], loaded: LoadedBlueprint) -> tuple[bool, list[Change]]:
    """The classified changes of a real plan (data migrations from its `tablewright` output included),
    judged by the stricter of the blueprint's production status and the state the plan starts from; returns
    that production status too."""
    production = bool(loaded.blueprint.production)
    before = prior_production(plan)
    strict = production or bool(before)
    try:
        resources = from_plan(plan)
        changes = classify(resources, strict)
    except (KeyError, TypeError, AttributeError, ValueError) as error:
        raise PlanError(f"has values of an unexpected shape ({type(error).__name__}: {error})",
                        hint="pass the output of `terraform show -json PLAN`, unedited") from None
    if _record(plan, "before") is not None:
        changes = [_recreated(change) for change in changes]
    if before is not None:
        changes = production_change(before, production) + changes
    data = migration_changes(key_data(plan, loaded), STACK_OUTPUT) + _unchecked_keys(plan)
    data += contracted((_record(plan, "before") or {}).get("declared"), (_record(plan, "after") or {}).get("declared"),
                       loaded.lock, STACK_OUTPUT, strict)
    data += index_contract(dropped_indexes(resources), _keys(_record(plan, "before")) or {},
                           _declared(plan, loaded), loaded.lock, strict)
    return strict, data + _drifted_away(plan) + changes


def _declared(plan: dict[str, Any], loaded: LoadedBlueprint) -> dict[str, tuple[str, ...]]:
    """The migration declarations in force before or after the plan (its `tablewright` records: the texts) and the
    blueprint's (its models), each with the entities it concerns."""
    lists = [(_record(plan, side) or {}).get("declared") for side in ("before", "after")]
    texts = [text for found in lists if isinstance(found, list) for text in found if isinstance(text, str)]
    return {**{text: declaration_entities(text) for text in texts}, **declared_entities(loaded.blueprint)}



def gate(plan: dict[str, Any], loaded: LoadedBlueprint, now: datetime,
         acknowledged: frozenset[str] = frozenset()) -> tuple[StackReview, Decision]:
    """Judge the plan by the stricter of the blueprint and the state the plan starts from, in the window that
    state has in force."""
    production, changes = plan_changes(plan, loaded)
    changes = acknowledge(below_peak(changes, build_stack(loaded), production), acknowledged)
    in_force = window_in_force(plan, loaded.blueprint.maintenance_window)
    stack = StackReview(loaded.stack_name, production, changes, in_force.window,
                        data=key_data(plan, loaded), warnings=gsi_warning(changes))
    return stack, decide(changes, in_force, now)
