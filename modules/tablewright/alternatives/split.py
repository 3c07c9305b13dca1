"""Splitting a shared GSI: the entity whose writes throttle it moved to a GSI of its own.

The planner overloads GSIs across entities (the fewest indexes). A GSI that cannot take its writes throttles the
base-table writes of every item projected into it, not only those of the entity that overloads it: DynamoDB
updates a GSI for each table write and, when the GSI lacks write capacity (or reaches its on-demand maximum),
throttles the writes to the base table ("GSI back-pressure",
https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/gsi-throttling.html). So a business entity that
shares an index with an entity's churn throttles with it. Splitting moves the busiest writer to an index of its own,
with the shared index's settings (capacity, maximum, warm throughput), the same keys and the same patterns: both
designs are simulated over the declared day and priced, and the split is weighed by what each entity loses to
throttling on its index and by the bill.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tablewright.blueprint.language import Blueprint, KeySpec
from tablewright.blueprint.lock import StackLock
from tablewright.capacity.loads import CapacityReport
from tablewright.design.design import IndexDesign, Shape, TableDesign
from tablewright.simulate.engine import Day
from tablewright.simulate.stack import run_mode

MIN_THROTTLED = 1e-6  # units a day below which an index is taken as not throttling (float residue)


@dataclass(frozen=True)
class Split:
    """A shared GSI split in two: `entity` moved to `new_index`, the others left on `index`."""

    index: str
    entity: str
    new_index: str
    how: str
    before: dict[str, float]  # entity -> write units throttled on the shared index over the simulated day
    after: dict[str, float]  # the same with the split: on the index each entity is then on
    monthly_before: float | None  # the table's throughput bill, USD a month (None: not priced)
    monthly_after: float | None
    blueprint: Blueprint | None = None

    @property
    def monthly_delta(self) -> float | None:
        if self.monthly_before is None or self.monthly_after is None:
            return None
        return round(self.monthly_after - self.monthly_before, 2)


def unsharded(shape: Shape) -> str:
    """A shape's partition-key template without its shard segment (what `key.pk` declares)."""
    return "#".join(segment.text for segment in shape.pk.segments if segment.shards is None)


def _writers(capacity: CapacityReport, index: str) -> dict[str, float]:
    """Entity -> its peak write units on the index."""
    model = capacity.traffic
    peaks: dict[str, float] = {}
    for i in model.on(index, "write"):
        flow = model.flows[i]
        peaks[flow.entity] = peaks.get(flow.entity, 0.0) + flow.peak
    return peaks


def throttled_on(day: Day, capacity: CapacityReport, targets: dict[str, str]) -> dict[str, float]:
    """Entity -> write units throttled over the day on its GSI (`targets`: entity -> the GSI it writes)."""
    found = dict.fromkeys(targets, 0.0)
    for entity, target in targets.items():
        run = day.run(target, "write")
        for i, units in (run.flow_throttled.items() if run else ()):
            if capacity.traffic.flows[i].entity == entity:
                found[entity] += units
    return found


def mover(design: TableDesign, capacity: CapacityReport, index: IndexDesign) -> str | None:
    """The entity to move off a shared GSI, or None when there is no split to weigh: the GSI takes the writes of
    two or more entities and, simulated in the design's billing mode, throttles them beyond what its hot keys
    do (its capacity, not one key value, turns them away). The busiest writer moves (by name on a tie)."""
    writers = _writers(capacity, index.name)
    if len(writers) < 2:
        return None
    run = run_mode(design, capacity, design.blueprint.table.billing).day.run(index.name, "write")
    if run is None or run.over_capacity <= MIN_THROTTLED:
        return None
    return min(writers, key=lambda entity: (-writers[entity], entity))


def new_index_name(design: TableDesign) -> str:
    """The next `GSI<n>` after every index the design has (its lock's included) or the blueprint configures."""
    names = {index.name for index in design.indexes} | set(design.blueprint.indexes)
    numbers = [int(found.group(1)) for name in names if (found := re.fullmatch(r"GSI(\d+)", name))]
    return f"GSI{max(numbers, default=0) + 1}"


def split_blueprint(design: TableDesign, index: IndexDesign, entity: str, new: str
                    ) -> tuple[Blueprint, str] | str:
    """The blueprint with `entity` keyed on `new` as it is on `index` and its patterns there pinned to `new`;
    `new` takes `index`'s settings. Or why it is not possible."""
    blueprint = design.blueprint
    shape = dict(index.members)[entity]
    pinned = [plan.pattern for plan in design.plans if plan.index == index.name and entity in plan.entities]
    shared = [name for name in pinned if len(design.plan(name).entities) > 1]
    if shared:
        return f"not possible: `{shared[0]}` reads an item collection of several entities on {index.name}"
    spec = blueprint.entities[entity]
    key = KeySpec(pk=unsharded(shape), sk=shape.sk.text if shape.keys.sk else None,
                  shards=shape.shards if shape.shards > 1 else None,
                  shard_by=list(shape.shard_by) if shape.shards > 1 else None)
    keys = {name: spec for name, spec in spec.index_keys.items() if name != index.name} | {new: key}
    entities = {**blueprint.entities, entity: spec.model_copy(update={"index_keys": keys})}
    patterns = {**blueprint.access_patterns, **{name: blueprint.access_patterns[name].model_copy(
        update={"index": new}) for name in pinned}}
    indexes = dict(blueprint.indexes)
    settings = indexes.get(index.name)
    if settings is not None:  # the same capacity, maximum and warm throughput; its own key attributes
        indexes[new] = settings.model_copy(update={"keys": None, "remove": False})
    how = (f"{entity} on a GSI of its own, {new}, keyed {key.pk}" + (f" / {key.sk}" if key.sk else "")
           + (f" for {', '.join(pinned)}" if pinned else "")
           + (f", with {index.name}'s settings" if settings is not None else ""))
    return blueprint.model_copy(update={"entities": entities, "access_patterns": patterns, "indexes": indexes}), how


def lock_without_member(lock: StackLock, index: str, entity: str) -> StackLock:
    """The deployed design with `entity`'s keys on `index` taken away (the split writes them elsewhere)."""
    if entity not in lock.entities:
        return lock
    locked = lock.entities[entity]
    kept = locked.model_copy(update={"keys": {name: key for name, key in locked.keys.items() if name != index}})
    return lock.model_copy(update={"entities": {**lock.entities, entity: kept}})


def weighed(design: TableDesign, capacity: CapacityReport, other: TableDesign, report: CapacityReport,
            split: tuple[IndexDesign, str, str, str], bills: tuple[float | None, float | None],
            blueprint: Blueprint) -> Split:
    """Both designs simulated in the design's billing mode: each entity's write units throttled on its GSI."""
    index, entity, new, how = split
    billing = design.blueprint.table.billing
    members = [name for name, _ in index.members if name in _writers(capacity, index.name)]
    before = throttled_on(run_mode(design, capacity, billing).day, capacity,
                          dict.fromkeys(members, index.name))
    stays = {name: index.name for name in members if name != entity}
    after = throttled_on(run_mode(other, report, billing).day, report, {**stays, entity: new})
    return Split(index.name, entity, new, how, before, after, bills[0], bills[1], blueprint)
