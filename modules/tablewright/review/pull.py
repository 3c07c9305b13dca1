"""`review --changed-since GITREF`: every blueprint a pull request affects, reviewed against its version at
the merge base, for one comment; with the raw summary of each stack's real plan when the pipeline has one
(`--plan STACK=PLAN.json`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tablewright.blueprint.changed import Affected, affected
from tablewright.blueprint.gitref import ChangedFiles, changed_files, revision_spec
from tablewright.errors import ErrorCode, PlanError, TablewrightError
from tablewright.review.classified import Change
from tablewright.review.gate import plan_tables
from tablewright.review.review import Review, StackReview, build_review, verdict

# Terraform's own symbols for the actions of `resource_changes` (as `terraform plan` prints them).
PLAN_SYMBOLS: dict[tuple[str, ...], tuple[str, str]] = {
    ("create",): ("+", "create"),
    ("update",): ("~", "update"),
    ("delete",): ("-", "destroy"),
    ("delete", "create"): ("-/+", "replace"),
    ("create", "delete"): ("+/-", "replace"),
    ("forget",): (".", "forget"),
}
MAX_ADDRESS = 200  # characters of an address shown; plans are untrusted input


@dataclass(frozen=True)
class PlannedChange:
    symbol: str  # `+`, `~`, `-`, `-/+`, `+/-`, or `?` for an action Tablewright does not know
    action: str  # create, update, destroy, replace, forget, or Terraform's actions joined by `+`
    address: str
    replace_paths: tuple[str, ...] = ()


@dataclass(frozen=True)
class PlanSummary:
    """Terraform's own view of a plan: each managed resource it changes, and its `Plan:` line's counts."""

    stack: str
    changes: tuple[PlannedChange, ...]

    def count(self, kind: str) -> int:
        """`add`, `change` or `destroy`, as `terraform plan` counts them (a replacement adds and destroys)."""
        counted = {"add": ("create", "replace"), "change": ("update",), "destroy": ("destroy", "replace")}[kind]
        return sum(change.action in counted for change in self.changes)

    @property
    def headline(self) -> str:
        if not self.changes:
            return "No changes."
        return (f"Plan: {self.count('add')} to add, {self.count('change')} to change, "
                f"{self.count('destroy')} to destroy.")


def printable(text: str, limit: int = MAX_ADDRESS) -> str:
    """A plan value fit for one line of a comment: control characters (line breaks) replaced, length capped."""
    cleaned = "".join("?" if ord(char) < 0x20 or ord(char) == 0x7F else char for char in text)
    return cleaned if len(cleaned) <= limit else cleaned[: limit - 3] + "..."


def summarize_plan(stack: str, plan: Mapping[str, Any]) -> PlanSummary:
    """The managed resources `terraform show -json` says change (the plan was checked by `read_plan`)."""
    found = []
    for entry in plan.get("resource_changes") or []:
        if entry.get("mode") != "managed":
            continue
        actions = tuple(entry["change"]["actions"])
        if actions in (("no-op",), ("read",)):
            continue
        symbol, action = PLAN_SYMBOLS.get(actions, ("?", "+".join(actions)))
        paths = tuple(".".join(str(step) for step in path) for path in entry["change"].get("replace_paths") or []
                      if isinstance(path, list))
        found.append(PlannedChange(symbol, printable(action), printable(entry["address"]),
                                   tuple(printable(path) for path in paths)))
    return PlanSummary(stack, tuple(sorted(found, key=lambda change: change.address)))


def check_plan_of(stack: str, plan: Mapping[str, Any], review: StackReview) -> None:
    """A plan summarised under a stack must manage that stack's table (as the gate checks), or the comment would
    show another stack's changes under its name."""
    if review.head is None:
        return  # the stack goes with this change: its plan deletes what it had
    table = review.head.source.blueprint.table.name
    names = sorted(set().union(*plan_tables(dict(plan)).values()))
    if table not in names:
        raise PlanError(f"--plan {stack}=...: the plan manages {', '.join(names) or 'no DynamoDB table'}, not the "
                        f"table of {stack} ({table})", code=ErrorCode.FOREIGN_PLAN,
                        hint=f"pass `terraform show -json` of the plan of {stack}")


@dataclass
class BlueprintReview:
    blueprint: str  # as given, relative to the working directory
    reasons: tuple[str, ...]
    review: Review


@dataclass
class PullReview:
    since: str  # the revision as given
    merge_base: str
    blueprints: list[BlueprintReview]
    unaffected: int  # blueprints considered and left out: nothing they are made of changed
    plans: dict[str, PlanSummary] = field(default_factory=dict)

    @property
    def stacks(self) -> list[StackReview]:
        return [stack for entry in self.blueprints for stack in entry.review.stacks]

    @property
    def changes(self) -> list[Change]:
        """The changes of every blueprint's review, in order."""
        return [change for entry in self.blueprints for change in entry.review.changes]

    @property
    def verdict(self) -> str:
        return verdict(self.changes)


def review_affected(changes: ChangedFiles, chosen: Sequence[Affected], environment: str | None,
                    acknowledged: frozenset[str]) -> list[BlueprintReview]:
    """Each affected blueprint against itself at the merge base (a new one against nothing)."""
    return [BlueprintReview(str(entry.path), entry.reasons, build_review(
                revision_spec(changes, entry.path), str(entry.path), environment, acknowledged))
            for entry in chosen]


def build_pull_review(since: str, blueprints: Sequence[Path], environment: str | None = None,
                      acknowledged: frozenset[str] = frozenset(), always: Sequence[Path] = (),
                      plans: Mapping[str, Mapping[str, Any]] | None = None) -> PullReview:
    """Review every blueprint of `blueprints` that changed since `since` (see modules/tablewright/blueprint/changed.py);
    `plans` by stack name add Terraform's own summary of each."""
    changes = changed_files(since)
    chosen = affected(blueprints, changes, always)
    result = PullReview(since, changes.merge_base, review_affected(changes, chosen, environment, acknowledged),
                        len(dict.fromkeys(blueprints)) - len(chosen))
    known = {stack.stack for stack in result.stacks}
    for stack, plan in sorted((plans or {}).items()):
        if stack not in known:
            raise TablewrightError(f"--plan {stack}=...: no stack `{stack}` in this review",
                                   hint=f"name one of the reviewed stacks ({', '.join(sorted(known)) or 'none'}), "
                                        "or leave the plan out", code=ErrorCode.PLAN_ARGUMENT)
        check_plan_of(stack, plan, next(review for review in result.stacks if review.stack == stack))
        result.plans[stack] = summarize_plan(stack, plan)
    return result
