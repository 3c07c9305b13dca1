"""`review --base OLD --head NEW`: synthesize both sides offline, classify the Terraform changes per
stack, and add what Terraform cannot see: data migrations, lint findings, capacity and cost."""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from modules.blueprint.gitref import as_given, is_git_spec, load_spec
from modules.blueprint.model import MaintenanceWindow
from modules.capacity.model import MonthlyCost
from modules.errors import TablewrightError
from modules.lint.engine import LintResult
from modules.lint.versions import breaking_changes
from modules.review.changes import from_configs
from modules.review.classify import Change, acknowledge, classify, counts, gsi_builds, production_change
from modules.review.data import DataChange, data_changes
from modules.stack import Stack, build_stacks
from modules.synth import synthesize


@dataclass(frozen=True)
class Cost:
    billing: str
    monthly: float  # what the billing mode costs: provisioned at the suggested minimums, or on-demand
    storage: float
    detail: MonthlyCost

    @classmethod
    def of(cls, stack: Stack) -> Cost:
        cost = stack.capacity.cost
        billing = stack.design.blueprint.table.billing
        return cls(billing, cost.provisioned if billing == "provisioned" else cost.on_demand, cost.storage, cost)


@dataclass
class StackReview:
    stack: str
    production: bool
    changes: list[Change]
    window: MaintenanceWindow | None = None
    data: list[DataChange] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    lint: LintResult | None = None
    cost_before: Cost | None = None
    cost_after: Cost | None = None
    head: Stack | None = None  # the stack after the change: its design charts


@dataclass
class Review:
    base: str
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


def _load_side(spec: str, side: str, scratch: Path, environment: str | None) -> list[Stack]:
    try:
        stacks = build_stacks(load_spec(spec, scratch, f"--{side}"))
    except TablewrightError as error:
        if error.code == "E601":
            raise  # about the revision itself, already named by its option
        where = f"{side} ({spec})" if is_git_spec(spec) else side
        raise as_given(error, spec, scratch).prefixed(f"in the {where} blueprint: ") from None
    return [s for s in stacks if environment is None or s.source.environment == environment]


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
    was, now = (bool(side.source.model.production) if side else False for side in (old, new))
    production = was or now
    changes = production_change(was, now) if old is not None and new is not None else []
    changes = acknowledge(changes + classify(from_configs(old_config, new_config), production), acknowledged)
    result = StackReview(name, production, changes, current.source.model.maintenance_window,
                         warnings=gsi_warning(changes))
    if new is not None:
        extra = breaking_changes(old.source, new.source, search) if old is not None else []
        result.lint = new.with_findings(extra).lint
        result.cost_after = Cost.of(new)
        result.head = new
    if old is not None:
        result.cost_before = Cost.of(old)
    if old is not None and new is not None:
        result.data = data_changes(old.design, new.design)
    return result


def build_review(base: str, head: str, environment: str | None = None,
                 acknowledged: frozenset[str] = frozenset()) -> Review:
    with tempfile.TemporaryDirectory(prefix="tablewright-review-") as scratch:
        root = Path(scratch)
        old = {s.name: s for s in _load_side(base, "base", root / "base", environment)}
        new = {s.name: s for s in _load_side(head, "head", root / "head", environment)}
        if not old and not new:
            raise TablewrightError(f"neither {base} nor {head} has an environment `{environment}`",
                                   hint="pass an environment one of them declares, or leave out --env")
        old_configs = _configs(list(old.values()), root / "base.out")
        new_configs = _configs(list(new.values()), root / "head.out")
        search = Path(head).parent if Path(head).exists() else Path.cwd()
        stacks = [review_stack(name, old.get(name), new.get(name), old_configs.get(name, {}),
                               new_configs.get(name, {}), search, acknowledged)
                  for name in sorted(old.keys() | new.keys())]
    return Review(base, head, stacks)
