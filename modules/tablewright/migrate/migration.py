"""A migration between two designs of one stack: which items it touches, how (`items.Rewriter`), and what it costs.

The changes are the review's data changes (`review.data.data_changes`), so `migrate` runs exactly what the review
lists. A change that is not declared, or a collision, stops it: the blueprint must say what happens first.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from tablewright.blueprint.language import Blueprint
from tablewright.blueprint.lock import StackLock
from tablewright.capacity.estimate import entry_bytes, key_attributes, presence, write_units
from tablewright.design.design import ENTITY_ATTRIBUTE, TABLE, TableDesign
from tablewright.design.evolution import declaration, rename_declaration, with_renamed_attributes
from tablewright.design.locked import Keys, all_attribute_renames, key_facts, lock_of
from tablewright.errors import ErrorCode, TablewrightError
from tablewright.migrate.items import EntityMove, Rewriter
from tablewright.review.data import DataChange, lock_data_changes
from tablewright.stacks.stack import Stack

MIGRATION_ERROR = ErrorCode.MIGRATION


@dataclass(frozen=True)
class Migration:
    stack: str
    table: str  # the physical table
    identity: str  # 16 hex digits of both designs: the control items' migration id
    changes: tuple[DataChange, ...]  # the breaking and backfilling data changes it carries out
    rewriter: Rewriter
    old: Stack
    new: Stack
    keys: tuple[Keys, Keys]  # `key_facts` of the earlier and the later design's locks

    @property
    def entities(self) -> tuple[str, ...]:
        """The `_entity` values of the items it touches."""
        return tuple(sorted(self.rewriter.moves))

    @property
    def declarations(self) -> list[str]:
        """The blueprint's declarations this migration carries out (what `migrate verify` records)."""
        found: set[str | None] = set()
        for change in self.changes:
            if change.attribute is not None and change.attribute.change == "rename" and change.attribute.former:
                found.add(rename_declaration(change.entity, change.attribute.former, change.attribute.attribute))
            if change.declared is not None:
                found.add(declaration(change.declared))
        return sorted(text for text in found if text is not None)


def _refused(stack: str, changes: list[DataChange]) -> None:
    blocked = [change for change in changes if change.breaking and not change.is_declared]
    if blocked:
        shown = "; ".join(change.subject for change in blocked[:3]) + ("; ..." if len(blocked) > 3 else "")
        raise TablewrightError(f"{stack}: {len(blocked)} data change(s) are blocked: {shown}",
                               code=MIGRATION_ERROR,
                               hint="declare each as `tablewright review` says (or give the entity keys of its own), "
                                    "then run `migrate` again")


def _moves(blueprint: Blueprint, changes: list[DataChange], identities: dict[str, tuple[str, ...]]
           ) -> dict[str, EntityMove]:
    """Each earlier entity whose items need work, by the `_entity` they carry (`identities`: the attributes each
    one's earlier table key is made of)."""
    renamed = {change.former: change.entity for change in changes if change.kind == "rename" and change.former}
    touched = {change.former or change.entity for change in changes if change.kind == "rename"}
    touched |= {change.entity for change in changes if change.kind in ("keys", "join")}
    removed: dict[str, list[str]] = {}
    defaults: dict[str, dict[str, object]] = {}
    converted: dict[str, list[str]] = {}
    for change in changes:
        attribute = change.attribute
        if attribute is None or not attribute.is_declared:
            continue
        touched.add(next((old for old, new in renamed.items() if new == attribute.entity), attribute.entity))
        declared = attribute.declared
        if attribute.change == "removal" and declared is not None and declared.removal == "delete":
            removed.setdefault(attribute.entity, []).append(attribute.attribute)
        if declared is not None and declared.default is not None:
            defaults.setdefault(attribute.entity, {})[attribute.attribute] = declared.default
        if declared is not None and declared.convert:
            converted.setdefault(attribute.entity, []).append(attribute.attribute)
    moves = {}
    attribute_renames = all_attribute_renames(blueprint)
    for former in sorted(touched):
        entity = renamed.get(former, former)
        if entity not in blueprint.entities:
            continue
        renames = attribute_renames.get(entity, {})
        identity = tuple(renames.get(name, name) for name in identities.get(former, ()))
        moves[former] = EntityMove(former, entity, renames, tuple(removed.get(entity, ())), defaults.get(entity, {}),
                                   tuple(converted.get(entity, ())), identity=identity)
    for change in changes:
        fate = change.declared.removal if change.kind == "removal" and change.declared else None
        if fate in ("delete", "expire"):
            ttl = blueprint.table.ttl_attribute if fate == "expire" else None
            moves[change.entity] = EntityMove(change.entity, change.entity, delete=fate == "delete",
                                              expire_attribute=ttl)
    return moves


def _identities(design: TableDesign) -> dict[str, tuple[str, ...]]:
    """Per entity, the attributes its table key is made of: what tells its items apart."""
    return {entity: tuple(sorted(key_attributes(shapes[TABLE]))) for entity, shapes in design.shapes.items()}


def _merging(new: Stack, moves: dict[str, EntityMove]) -> None:
    """A move whose later table key is not made of every attribute that told its items apart would put several
    items under one key: refused (one would overwrite or delete the others)."""
    for move in moves.values():
        if move.delete or move.expire_attribute or move.entity not in new.design.shapes:
            continue
        later = key_attributes(new.design.shapes[move.entity][TABLE])
        lost = sorted(set(move.identity) - later)
        if lost:
            shape = new.design.shapes[move.entity][TABLE]
            raise TablewrightError(
                f"{new.name}: {move.entity}'s new table key ({shape.pk.text} / {shape.sk.text}) is not made of "
                f"`{lost[0]}`, which told its items apart: items that differ only in it would share one key, and "
                "moving them would lose all but one", code=MIGRATION_ERROR,
                hint=f"keep `{lost[0]}` in {move.entity}'s table key, or move the items to a new entity")


def _identity(before: StackLock, after: StackLock, moves: dict[str, EntityMove]) -> str:
    def design(lock: StackLock) -> dict[str, Any]:  # the design, not what is left to migrate
        return lock.model_dump(mode="json", exclude={"table": True, "entities": {"__all__": {"moving"}}})
    text = json.dumps([design(before), design(after),
                       {name: repr(move) for name, move in sorted(moves.items())}], sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def migration(old: Stack, new: Stack) -> Migration:
    """The migration from `old` to `new` (one stack, two designs). Raises TablewrightError when a data change is
    not declared, or nothing needs migrating."""
    before, after = lock_of(old.design), lock_of(new.design)
    changes = lock_data_changes(before, after, new.design.blueprint)
    _refused(new.name, changes)
    moves = _moves(new.design.blueprint, changes, _identities(old.design))
    _merging(new, moves)
    if not moves:
        raise TablewrightError(f"{new.name}: no item needs migrating between these designs",
                               code=MIGRATION_ERROR,
                               hint="pass the design the table holds now as --against (a git ref such as "
                                    "origin/main, or a blueprint file)")
    kept = tuple(change for change in changes if change.kind != "collision")
    return Migration(new.name, new.design.blueprint.table.name, _identity(before, after, moves), kept,
                     Rewriter(new.design, moves), old, new, (key_facts(before), key_facts(after)))


@dataclass(frozen=True)
class EntityWork:
    former: str
    entity: str
    items: int | None  # declared `item_count` (or counted); None when neither
    units_per_item: float  # write units one item's rewrite consumes on average (table and indexes)
    units_by_target: dict[str, float]  # of them, on the table and on each global index


def _changed(move: EntityMove) -> set[str]:
    """The attributes a rewrite sets or removes (besides keys)."""
    changed = {*move.renames, *move.renames.values(), *move.removed, *move.defaults, *move.converted}
    return changed | ({ENTITY_ATTRIBUTE} if move.former != move.entity else set())


# Write units, by the rules the capacity estimate applies to updates (Developer Guide, "Capacity unit consumption
# for write operations": https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/read-write-operations.html):
# the item's units on the table (a moved item: a delete and a put in a transaction, 2 x 2); on each global index,
# its entry's units once when the entry is new (a backfilled index) or only its projected attributes change, twice
# when its keys change (a delete and a put), none when neither; a deleted item: its units on the table and each
# index it is in.
def unit_targets(plan: Migration, move: EntityMove) -> dict[str, float]:
    old, new = plan.old.design, plan.new.design
    if move.delete or move.entity not in new.shapes:
        return {index: float(write_units(entry_bytes(old, move.former, index)))
                for index in old.shapes.get(move.former, {}) if index == TABLE or not old.index_is_local(index)}
    before = with_renamed_attributes(plan.keys[0], {move.entity: dict(move.renames)}, {move.former: move.entity})
    after = plan.keys[1]
    changed = _changed(move) | ({move.expire_attribute} if move.expire_attribute else set())
    units: dict[str, float] = {}
    for index in new.shapes[move.entity]:
        size = write_units(entry_bytes(new, move.entity, index))
        was, now = before.get((move.former, index)), after.get((move.entity, index))
        if index == TABLE:
            units[index] = float(size * (4 if was != now else 1))
        elif not new.index_is_local(index):
            projection = new.index(index).projection
            projected = projection.type == "ALL" or bool(set(projection.attributes) & changed)
            entries = 1 if was is None else 2 if was != now else 1 if projected else 0
            units[index] = size * entries * presence(new, move.entity, index)
    return units


def entity_work(plan: Migration, counts: dict[str, int] | None = None) -> list[EntityWork]:
    """Per migrated entity: how many items, and the write units each takes (from its declared size)."""
    works = []
    for former, move in sorted(plan.rewriter.moves.items()):
        count = (counts or {}).get(former)
        if count is None and former in plan.old.design.blueprint.entities:
            count = plan.old.design.blueprint.entities[former].item_count
        targets = unit_targets(plan, move)
        works.append(EntityWork(former, move.entity, count, sum(targets.values()), targets))
    return works
