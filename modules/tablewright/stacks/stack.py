"""The spine: each stack of each blueprint computed once, by one function, and handed to every command.

A `Stack` is a loaded blueprint (one environment of it), its design, the capacity estimated from the design
(with the traffic model every later stage reads), its monthly cost and the lint findings. Commands and the
review build stacks here and render them (modules/tablewright/report); nothing downstream recomputes any of them.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property

from tablewright.blueprint.load import LoadedBlueprint
from tablewright.capacity.cost import CostReport, monthly_cost
from tablewright.capacity.loads import CapacityReport, estimate
from tablewright.capacity.prices import prices_of
from tablewright.design.design import TableDesign
from tablewright.design.designer import design
from tablewright.errors import BlueprintError, ErrorCode, TablewrightError
from tablewright.lint.engine import LintResult, lint_loaded, relocated
from tablewright.lint.findings import Finding
from tablewright.simulate.stack import DaySummary, StackSimulation, simulate_stack


@dataclass(frozen=True)
class Stack:
    source: LoadedBlueprint
    design: TableDesign
    capacity: CapacityReport
    lint: LintResult
    # An earlier environment of the same design (`design_key`): its estimate, cost and simulation are this one's.
    same_as: Stack | None = field(default=None, repr=False, compare=False)

    @property
    def name(self) -> str:
        return self.source.stack_name

    @cached_property
    def cost(self) -> CostReport:
        """The monthly cost, computed on first use (synth has no use for it)."""
        return self.same_as.cost if self.same_as else monthly_cost(self.design, self.capacity)

    def simulate(self) -> StackSimulation:
        """The declared day in both billing modes, from the capacity report's traffic model (not kept: a day
        holds arrays of every second per table and index; the runs of the last stack are memoized)."""
        return simulate_stack(self.design, self.capacity)

    @cached_property
    def simulated_day(self) -> DaySummary:
        """A day of the declared traffic, simulated on first use, in three figures (the day itself is not kept)."""
        return self.same_as.simulated_day if self.same_as else DaySummary.of(self.simulate())

    def with_findings(self, extra: Sequence[Finding]) -> Stack:
        """The same stack with findings that need more than this blueprint (`lint --against`, the review)."""
        if not extra:
            return self
        return replace(self, lint=lint_loaded(self.source, self.design, self.capacity, extra))


def build_stack(loaded: LoadedBlueprint) -> Stack:
    """Design, estimate and lint one loaded stack (pure; errors are located in its files)."""
    try:
        table = design(loaded.blueprint, loaded.lock)
    except TablewrightError as error:
        raise loaded.locate(error) from None
    capacity = estimate(table, prices_of(loaded.prices, loaded.prices_file))
    return Stack(loaded, table, capacity, lint_loaded(loaded, table, capacity))


def design_key(loaded: LoadedBlueprint) -> str:
    """What a stack's design, estimate, lint, cost and simulation are computed from, without the names that only
    tell environments apart (the table's, the state key's): environments with the same key share them."""
    blueprint = loaded.blueprint.model_dump(mode="json", exclude={"table": {"name"}, "terraform": {"backend": {"key"}}})
    lock = loaded.lock.model_dump(mode="json", exclude={"table"}) if loaded.lock else None
    prices = loaded.prices.model_dump(mode="json") if loaded.prices else None
    return json.dumps([str(loaded.path), blueprint, lock, prices], sort_keys=True)


def _sharing(loaded: LoadedBlueprint, first: Stack) -> Stack:
    """`loaded`'s stack from an earlier environment's of the same design: its own names and locations."""
    return Stack(loaded, replace(first.design, blueprint=loaded.blueprint), first.capacity,
                 relocated(first.lint, loaded), same_as=first.same_as or first)


def build_stacks(blueprints: Iterable[LoadedBlueprint]) -> list[Stack]:
    """Every stack, in order; stack names must be unique across the blueprints given. Environments of one design
    (`design_key`) are designed, estimated and linted once."""
    seen: dict[str, LoadedBlueprint] = {}
    designs: dict[str, Stack] = {}
    stacks = []
    for loaded in blueprints:
        other = seen.setdefault(loaded.stack_name, loaded)
        if other is not loaded:
            raise BlueprintError(
                f"stack `{loaded.stack_name}` is also produced by {other.path}",
                path=("blueprint",),
                hint="stack names must be unique: rename one blueprint",
                code=ErrorCode.NAMING,
            ).located(loaded.source.locate(("blueprint",)))
        key = design_key(loaded)
        stacks.append(_sharing(loaded, designs[key]) if key in designs else build_stack(loaded))
        designs.setdefault(key, stacks[-1])
    return stacks


def lint_errors(stack: Stack, override: str = "--allow-lint-errors") -> TablewrightError | None:
    """`synth` and `verify` refuse a stack with lint errors: the first, as an error with its fix
    (`override`: how the caller lets them through)."""
    errors = [x for x in stack.lint.findings if x.finding.severity == "error"]
    if not errors:
        return None
    first = errors[0]
    more = f" (and {len(errors) - 1} more: `tablewright lint`)" if len(errors) > 1 else ""
    return TablewrightError(f"lint {first.finding.code}: {first.finding.message}{more}", path=first.finding.path,
                            hint=f"{first.finding.fix}; or pass {override}", location=first.location,
                            code=ErrorCode.LINT_ERRORS)
