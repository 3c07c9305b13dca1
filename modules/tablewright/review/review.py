"""`review --base OLD --head NEW`: synthesize both sides offline, classify the Terraform changes per
stack, and add what Terraform cannot see: data migrations, lint findings, capacity and cost."""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Any

from tablewright.alternatives.alternatives import IndexChoice, stack_choices
from tablewright.blueprint.gitref import as_given, exists, is_git_spec, load_spec
from tablewright.blueprint.language import MaintenanceWindow
from tablewright.blueprint.load import LoadedBlueprint, with_base_locks
from tablewright.capacity.cost import CostReport
from tablewright.design.design import TABLE
from tablewright.design.evolution import declarations, declared_entities
from tablewright.design.locked import (
    all_attribute_renames,
    attribute_facts,
    key_facts,
    lock_changes,
    lock_of,
    recorded_migrations,
)
from tablewright.errors import ErrorCode, TablewrightError
from tablewright.lint.engine import LintResult
from tablewright.lint.limits import maxima_below_peak
from tablewright.lint.versions import breaking_changes
from tablewright.monitoring.window import describe
from tablewright.review.application import PatternChange, pattern_changes
from tablewright.review.changes import from_configs, stack_settings
from tablewright.review.classified import Change, acknowledge, counts, gsi_builds
from tablewright.review.classify import classify, production_change, settings_changes
from tablewright.review.data import (
    DataChange,
    contracted,
    lock_data_changes,
    migration_changes,
    unmatched_migrations,
    unmatched_renames,
)
from tablewright.review.index_contract import dropped_indexes, index_contract
from tablewright.simulate.stack import DaySummary
from tablewright.stacks.stack import Stack, build_stacks
from tablewright.synth.synth import synthesize


@dataclass
class StackReview:
    stack: str
    production: bool
    changes: list[Change]
    window: MaintenanceWindow | None = None
    data: list[DataChange] = field(default_factory=list)
    lock_diff: list[str] = field(default_factory=list)  # what changes in the design lock
    warnings: list[str] = field(default_factory=list)
    lint: LintResult | None = None
    cost_before: CostReport | None = None
    cost_after: CostReport | None = None
    simulated_before: DaySummary | None = None  # a day of the declared traffic, simulated, on each side
    simulated_after: DaySummary | None = None
    head: Stack | None = None  # the stack after the change: its design charts
    application: list[PatternChange] = field(default_factory=list)  # the requests the application sends
    new: bool = False  # the stack did not exist before (its patterns are all new)
    tables: tuple[str, ...] = ()  # its table's physical name before and after (once when the same)

    @cached_property
    def alternatives(self) -> list[IndexChoice]:
        """The head's alternatives to each GSI (the JSON review's design), computed on first use."""
        head = self.head
        return [] if head is None else stack_choices(head)


@dataclass
class Review:
    base: str  # NEW_BLUEPRINT when the blueprint did not exist before
    head: str
    stacks: list[StackReview]

    @property
    def changes(self) -> list[Change]:
        return [change for stack in self.stacks for change in stack.changes]

    @property
    def verdict(self) -> str:
        return verdict(self.changes)


def verdict(changes: list[Change]) -> str:
    """blocked (cannot go ahead), window (only inside the maintenance window) or safe (any time)."""
    found = counts(changes)
    if found["blocked"]:
        return "blocked"
    return "window" if found["window"] else "safe"


def gsi_warning(changes: list[Change]) -> list[str]:
    indexes = gsi_builds(changes)
    if len(indexes) <= 1:
        return []
    return [f"{len(indexes)} GSIs created, deleted or rebuilt in one change ({', '.join(indexes)}): DynamoDB "
            "runs them one UpdateTable at a time, each waiting for the previous one to finish (a new index "
            "backfills every item), so the apply can take hours. Split the change into one pull request per index."]


def _maximum_subject(target: str, table: str) -> str:
    """The subject classify gives the change of an on-demand maximum (the table's, or a GSI's)."""
    return f"table {table}: on-demand maximum" if target == TABLE else f"GSI {target} on-demand maximum"


def below_peak(changes: list[Change], stack: Stack, production: bool) -> list[Change]:
    """In production, a new on-demand maximum below the blueprint's declared peak (lint TW313) throttles the traffic
    the blueprint expects: that change waits for the window instead of going out at any time."""
    if not production:
        return changes
    low = {_maximum_subject(found.target, stack.design.blueprint.table.name): found
           for found in maxima_below_peak(stack.design, stack.capacity)}
    return [replace(change, cls="window", reason=f"{change.reason}; production: {low[change.subject].direction} "
                                                 f"below the declared peak {low[change.subject].peak:,} (lint "
                                                 "TW313), so traffic the blueprint expects is throttled")
            if change.cls == "safe" and change.subject in low else change for change in changes]


def introduced_throttling(before: DaySummary | None, after: DaySummary | None) -> list[str]:
    """A warning when the head throttles requests the base did not, under each side's declared traffic."""
    if after is None or after.throttled_requests <= (before.throttled_requests if before else 0.0) * 1.01:
        return []
    was = f"{before.throttled_requests:,.0f}" if before else "none (a new stack)"
    return [f"this change throttles requests under the declared traffic: {after.throttled_requests:,.0f} a "
            f"simulated day in {after.throttled_seconds:,} s (before: {was}); `tablewright simulate` shows which "
            "table, index and key, and `lint` the fixes"]


def _side_error(error: TablewrightError, spec: str, side: str, scratch: Path) -> TablewrightError:
    if error.code == ErrorCode.GITREF:
        return error  # about the revision itself, already named by its option
    where = f"{side} ({spec})" if is_git_spec(spec) else side
    return as_given(error, spec, scratch).prefixed(f"in the {where} blueprint: ")


def _load_side(spec: str, side: str, scratch: Path, environment: str | None,
               option: str | None = None) -> list[LoadedBlueprint]:
    try:
        loaded = load_spec(spec, scratch, option or f"--{side}")
    except TablewrightError as error:
        raise _side_error(error, spec, side, scratch) from None
    return [s for s in loaded if environment is None or s.environment == environment]


def _build_side(loaded: list[LoadedBlueprint], spec: str, side: str, scratch: Path) -> dict[str, Stack]:
    try:
        return {stack.name: stack for stack in build_stacks(loaded)}
    except TablewrightError as error:
        raise _side_error(error, spec, side, scratch) from None


def _configs(stacks: list[Stack], out: Path) -> dict[str, dict[str, Any]]:
    if not stacks:
        return {}
    return {stack.name: json.loads(path.read_text())
            for stack, path in zip(stacks, synthesize(stacks, out), strict=True)}


def review_stack(name: str, old: Stack | None, new: Stack | None, old_config: dict[str, Any],
                 new_config: dict[str, Any], search: Path, acknowledged: frozenset[str] = frozenset()) -> StackReview:
    current = new or old
    assert current is not None  # the stack is on one side at least
    # The stricter side judges: a pull request cannot lower the bar it is judged by.
    was, now = (bool(side.source.blueprint.production) if side else False for side in (old, new))
    production = was or now
    changes = (production_change(was, now) + settings_changes(stack_settings(old_config), stack_settings(new_config))
               if old is not None and new is not None else [])
    resources = from_configs(old_config, new_config)
    changes = acknowledge(changes + classify(resources, production), acknowledged)
    # The window in force is the base's: the gate judges the change by it, not by the one it brings.
    in_force = (old or current).source.blueprint.maintenance_window
    result = StackReview(name, production, changes, in_force, warnings=gsi_warning(changes),
                         tables=tuple(dict.fromkeys(side.source.blueprint.table.name for side in (old, new) if side)))
    if old is not None and new is not None and new.source.blueprint.maintenance_window != in_force:
        head_window = new.source.blueprint.maintenance_window
        result.warnings.append(f"the maintenance window changes to {describe(head_window) if head_window else 'none'}"
                               ": this change is still applied in the window in force before it "
                               f"({describe(in_force) if in_force else 'none'}); the new one applies from the next "
                               "change on")
    if new is not None:
        result.changes = below_peak(result.changes, new, production)
        extra = breaking_changes(old.source, old.design, new.source, new.design, search) if old is not None else []
        result.lint = new.with_findings(extra).lint
        result.cost_after = new.cost
        result.simulated_after = new.simulated_day
        result.head = new
        result.application = pattern_changes(old.design if old is not None else None, new.design)
        result.new = old is None
    if old is not None:
        result.cost_before = old.cost
        result.simulated_before = old.simulated_day
    result.warnings += introduced_throttling(result.simulated_before, result.simulated_after)
    if old is not None and new is not None:
        before, after = lock_of(old.design), lock_of(new.design)
        migrations = new.design.blueprint.migrations
        result.data = lock_data_changes(before, after, new.design.blueprint)
        result.warnings += unmatched_migrations(result.data, migrations)
        earlier = {change.entity: change.former for change in result.data if change.kind == "rename" and change.former}
        result.warnings += unmatched_renames(attribute_facts(before), all_attribute_renames(new.design.blueprint),
                                             earlier)
        old_blueprint, new_blueprint = old.design.blueprint, new.design.blueprint
        contract = contracted(declarations(old_blueprint), declarations(new_blueprint), new.source.lock, "blueprint",
                              production)
        contract += index_contract(dropped_indexes(resources), key_facts(before),
                                   {**declared_entities(old_blueprint), **declared_entities(new_blueprint)},
                                   new.source.lock, production)
        result.changes = acknowledge(migration_changes(result.data, "blueprint") + contract + result.changes,
                                     acknowledged)
        result.lock_diff = lock_changes(before, after) + recorded_migrations(old.source.lock, new.source.lock)
    return result


NEW_BLUEPRINT = "(new blueprint)"


def stack_pairs(base: str, head: str, environment: str | None, option: str = "--against") -> list[tuple[Stack, Stack]]:
    """The stacks both versions have (by name), earlier and later: what `migrate` migrates between."""
    with tempfile.TemporaryDirectory(prefix="tablewright-migrate-") as scratch:
        root = Path(scratch)
        old_loaded = _load_side(base, option, root / "base", environment, option)
        new_loaded = with_base_locks(_load_side(head, "head", root / "head", environment), old_loaded)
        old = _build_side(old_loaded, base, "base", root / "base")
        new = _build_side(new_loaded, head, "head", root / "head")
    return [(old[name], new[name]) for name in sorted(old.keys() & new.keys())]


def build_review(base: str | None, head: str, environment: str | None = None,
                 acknowledged: frozenset[str] = frozenset()) -> Review:
    """Review `head` against `base` (each a path or GITREF:path); `base` None: a new blueprint, every
    resource created."""
    with tempfile.TemporaryDirectory(prefix="tablewright-review-") as scratch:
        root = Path(scratch)
        old_loaded = [] if base is None else _load_side(base, "base", root / "base", environment)
        new_loaded = with_base_locks(_load_side(head, "head", root / "head", environment), old_loaded)
        old = _build_side(old_loaded, base, "base", root / "base") if base is not None else {}
        new = _build_side(new_loaded, head, "head", root / "head")
        if not old and not new:
            raise TablewrightError(f"neither {base or NEW_BLUEPRINT} nor {head} has an environment `{environment}`",
                                   code=ErrorCode.UNKNOWN_ENVIRONMENT,
                                   hint="pass an environment one of them declares, or leave out --env")
        old_configs = _configs(list(old.values()), root / "base.out")
        new_configs = _configs(list(new.values()), root / "head.out")
        search = Path(head).parent if exists(head) else Path.cwd()
        stacks = [review_stack(name, old.get(name), new.get(name), old_configs.get(name, {}),
                               new_configs.get(name, {}), search, acknowledged)
                  for name in sorted(old.keys() | new.keys())]
    return Review(base or NEW_BLUEPRINT, head, stacks)
