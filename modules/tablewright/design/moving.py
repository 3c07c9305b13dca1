"""The keys an entity's old items still carry while a declared migration moves them.

A rename (`renamed_from` under `migrations:`) or a key migration gives the entity new keys at once, but the items
written before keep their old keys (and, renamed, their old name in `_entity`) until `tablewright migrate run` moves
them. Until `migrate verify` records the migration in the lock, the lock keeps those old keys beside the new ones
(`moving`), so the generated clients can read both shapes and an application can deploy before the backfill ends.
"""

from __future__ import annotations

from collections.abc import Mapping

from tablewright.blueprint.language import Blueprint
from tablewright.blueprint.lock import LockedKey, MovingKeys, StackLock
from tablewright.blueprint.templates import KeyTemplate, parse_template
from tablewright.design.design import KeyNames, QueryPlan, Shape, TableDesign
from tablewright.design.evolution import declaration
from tablewright.design.locked import attribute_renames, current_names, locked_key
from tablewright.design.queries import query_plan
from tablewright.design.serve import Refusal, serve


def _renamed(key: LockedKey, renames: Mapping[str, str]) -> LockedKey:
    """`key` with renamed attributes under their new names: the text items carry is the same."""
    def text(template: str) -> str:
        return parse_template(template).renamed(renames).text
    return key.model_copy(update={"pk": text(key.pk), "sk": text(key.sk) if key.sk else None,
                                  "shard_by": [renames.get(name, name) for name in key.shard_by]})


def pending_moves(blueprint: Blueprint, lock: StackLock, entity: str) -> list[str]:
    """The declarations of the renames and key migrations of `entity` no lock record of `migrate verify` holds."""
    verified = {text for record in lock.migrated for text in record.declarations}
    return sorted({text for m in blueprint.migrations if m.entity == entity and m.kind in ("keys", "rename")
                   if (text := declaration(m)) is not None} - verified)


def moving_keys(blueprint: Blueprint, lock: StackLock | None,
                shapes: Mapping[str, Mapping[str, Shape]]) -> dict[str, MovingKeys]:
    """Each entity of the design (`shapes`: entity -> index -> its shape) whose items a pending rename or key
    migration moves: the keys its old items carry, from the lock (kept there from the change that moved them)."""
    if lock is None:
        return {}
    formers = {new: old for old, new in current_names(blueprint, lock).items()}
    found = {}
    for entity, indexes in sorted(shapes.items()):
        pending = pending_moves(blueprint, lock, entity)
        locked = lock.entities.get(formers.get(entity, entity))
        if not pending or locked is None:
            continue
        renamed = {m.renamed_from for m in blueprint.migrations if m.entity == entity and m.kind == "rename"}
        if locked.moving is not None and locked.moving.entity in {entity, *renamed}:  # else not this entity's
            found[entity] = locked.moving.model_copy(update={"declarations": pending})
            continue
        renames = attribute_renames(blueprint, entity)
        old = {index: _renamed(key, renames) for index, key in sorted(locked.keys.items())}
        new = {index: locked_key(shape) for index, shape in indexes.items()}
        former = formers.get(entity, entity)
        if former != entity or any(new.get(index) != key for index, key in old.items()):
            found[entity] = MovingKeys(entity=former, keys=old, declarations=pending)
    return found


def moved_shape(key: LockedKey, names: KeyNames) -> Shape:
    """An old key of `moving` as a shape, written to the key attributes `names` (those of the index now)."""
    pk = parse_template(key.pk)
    sk = parse_template(key.sk) if key.sk else KeyTemplate(())
    if key.shards:
        return Shape(pk.sharded(key.shards), sk, names, tuple(key.shard_by))
    return Shape(pk, sk, names)


def can_meet(one: KeyTemplate, other: KeyTemplate) -> bool:
    """Whether two partition keys can render the same text: as many segments, each pair equal literals or one of
    them a value (a value never holds the separator '#')."""
    return len(one.segments) == len(other.segments) and all(
        a.literal is None or b.literal is None or a.literal == b.literal
        for a, b in zip(one.segments, other.segments, strict=True))


def moved_plan(design: TableDesign, plan: QueryPlan, moving: Mapping[str, MovingKeys]) -> QueryPlan | None:
    """The pattern's plan on the keys old items carry while a migration moves one of its entities (`moving`); None
    when there is none to send: no entity's keys move on its index, an entity was not on the index before (its old
    items wait for the backfill), or the old keys cannot be read with the pattern's values alone."""
    if plan.operation == "Scan":  # reads every item, in either shape
        return None
    members = {entity: shapes[plan.index] for entity, shapes in design.shapes.items() if plan.index in shapes}
    before = dict(members)
    for entity in plan.entities:
        if entity in moving:
            key = moving[entity].keys.get(plan.index)
            if key is None:
                return None
            before[entity] = moved_shape(key, members[entity].keys)
            attributes = design.blueprint.entities[entity].attributes
            if not set(before[entity].pk.attributes + before[entity].sk.attributes + before[entity].shard_by) \
                    <= set(attributes):
                return None
    if before == members:
        return None
    served = serve(design.blueprint, design.blueprint.access_patterns[plan.pattern], plan.index, before)
    if isinstance(served, Refusal):
        return None
    projections = {index.name: index.projection for index in design.indexes}
    old = query_plan(design.blueprint, plan.pattern, (plan.index, served), projections, {plan.index: before},
                     plan.until_ready)
    moved = [before[entity] for entity in plan.entities if entity in moving]
    return old if _readable(plan, old, moved, [members[entity] for entity in plan.entities]) else None


def _computed(plan: QueryPlan) -> set[str]:
    """The derived values a read computes once (a time bucket, a shard), not one per request of its fan-out."""
    fanned = plan.fan_out
    per_request = {"_shard"} if fanned and fanned.kind == "shards" else \
        {f"{fanned.attribute}:{fanned.bucket}"} if fanned else set()
    return {p.name for p in plan.parameters if p.role == "derived"} - per_request


def _readable(new: QueryPlan, old: QueryPlan, moved: list[Shape], current: list[Shape]) -> bool:
    """Whether the old plan can be sent beside the new one: the same operation, values the new read has, and (a
    Query) partitions the new read never addresses, so no item is read twice."""
    given = {p.attribute for p in new.parameters if p.role not in ("derived", "clock")}
    if old.operation != new.operation or not {p.attribute for p in old.parameters
                                              if p.role not in ("derived", "clock")} <= given:
        return False
    if not _computed(old) <= _computed(new):
        return False
    if "_shard" in _computed(old) and (old.shape.shards, old.shape.shard_by) != (new.shape.shards,
                                                                                 new.shape.shard_by):
        return False
    if old.fan_out is not None and old.fan_out.kind == "buckets" and old.fan_out != new.fan_out:
        return False
    if old.operation != "Query":
        return True
    return not any(can_meet(shape.pk, other.pk) for shape in moved for other in current)
