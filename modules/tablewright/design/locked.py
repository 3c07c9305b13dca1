"""The design lock, both ways: the locked indexes the planner must keep, and the lock of a design.

A locked global index is a fixed set of shapes: the planner routes patterns to it as it is, never
adds an entity to it and never renames it. A locked index a pattern would need with a larger
projection gets a successor (same key attributes, a new name) unless the blueprint asks to rebuild
it in place. Local indexes are part of the table: they come from the blueprint alone.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

from tablewright.blueprint.encoding import key_encoding
from tablewright.blueprint.invalid import Invalid
from tablewright.blueprint.language import Blueprint, Migration
from tablewright.blueprint.lock import LockedEntity, LockedIndex, LockedKey, LockedProjection, StackLock
from tablewright.blueprint.templates import KeyTemplate, parse_template
from tablewright.design.design import KeyNames, Projection, Shape, TableDesign
from tablewright.errors import DesignError, ErrorCode


@dataclass(frozen=True)
class LockedState:
    """One locked global index as the planner sees it."""

    members: dict[str, Shape]
    keys: KeyNames
    projection: Projection
    retiring: bool


def locked_indexes(blueprint: Blueprint, lock: StackLock | None, declared: set[str],
                   removed: bool = False) -> dict[str, LockedState]:
    """The lock's global indexes the blueprint does not declare, with their shapes: those it keeps, or
    (`removed`) those it removes with `indexes.<name>.remove`."""
    if lock is None:
        return {}
    found = {}
    for name, index in sorted(lock.indexes.items()):
        settings = blueprint.indexes.get(name)
        if index.type != "global" or name in declared or (settings is not None and settings.remove) != removed:
            continue
        keys = KeyNames(index.partition_key, index.sort_key)
        names = current_names(blueprint, lock)
        members = {names[entity]: _shape(blueprint, lock, name, entity, keys, names[entity])
                   for entity, locked in sorted(lock.entities.items())
                   if name in locked.keys and names.get(entity) in blueprint.entities}
        projection = Projection(index.projection.type, tuple(index.projection.attributes))
        found[name] = LockedState(members, keys, projection, index.status == "retiring")
    return found


def current_names(blueprint: Blueprint, lock: StackLock) -> dict[str, str]:
    """Each locked entity's name in the blueprint: its own, or the new name a declared rename gives it (the new
    name must be new to the lock and the old one gone from the blueprint). A renamed entity keeps its place on
    the locked indexes, so a rename builds no index."""
    renames = {m.renamed_from: m.entity for m in blueprint.migrations
               if m.renamed_from in lock.entities and m.renamed_from not in blueprint.entities
               and m.entity in blueprint.entities and m.entity not in lock.entities}
    return {entity: renames.get(entity, entity) for entity in lock.entities}


def _shape(blueprint: Blueprint, lock: StackLock, index: str, entity: str, keys: KeyNames, current: str) -> Shape:
    """The locked shape of `entity` (as the lock names it) on `index`, for the blueprint's entity `current`."""
    locked = lock.entities[entity].keys[index]
    attributes = blueprint.entities[current].attributes
    try:
        pk, sk = parse_template(locked.pk), parse_template(locked.sk) if locked.sk else KeyTemplate(())
    except Invalid as error:
        raise _lock_error(entity, index, error.message) from None
    missing = sorted(set(pk.attributes + sk.attributes + tuple(locked.shard_by)) - set(attributes))
    if missing:
        raise _lock_error(current, index, f"its locked keys {locked.pk} / {locked.sk} use `{missing[0]}`, which "
                                          f"`{current}` no longer has")
    if locked.shards:
        return Shape(pk.sharded(locked.shards), sk, keys, tuple(locked.shard_by))
    return Shape(pk, sk, keys)


def _lock_error(entity: str, index: str, problem: str) -> DesignError:
    return DesignError(f"{entity} on locked index {index}: {problem}", path=("entities", entity),
                       code=ErrorCode.LOCK_INVALID,
                       hint=f"keep the attribute, or retire the index (`indexes: {{{index}: {{remove: true}}}}`: it "
                            "is deleted in the maintenance window)")


def _locked_key(shape: Shape) -> LockedKey:
    unsharded = KeyTemplate(tuple(segment for segment in shape.pk.segments if segment.shards is None))
    sk = shape.sk.text if shape.keys.sk is not None else None
    if shape.shards > 1:
        return LockedKey(pk=unsharded.text, sk=sk, shards=shape.shards, shard_by=list(shape.shard_by))
    return LockedKey(pk=unsharded.text, sk=sk)


def lock_of(design: TableDesign) -> StackLock:
    """What the design deploys: the lock entry of its stack."""
    blueprint = design.blueprint
    indexes = {
        index.name: LockedIndex(
            type="local" if index.local else "global", partition_key=index.keys.pk, sort_key=index.keys.sk,
            projection=LockedProjection(type=index.projection.type, attributes=list(index.projection.attributes)),
            status="retiring" if index.retiring else "active")
        for index in design.indexes
    }
    entities = {}
    for entity, shapes in sorted(design.shapes.items()):
        specs = blueprint.entities[entity].attributes
        in_keys = sorted({a for shape in shapes.values() for a in shape.pk.attributes + shape.sk.attributes})
        entities[entity] = LockedEntity(keys={index: _locked_key(shape) for index, shape in sorted(shapes.items())},
                                        encodings={a: key_encoding(specs[a]) for a in in_keys})
    keys = design.table_keys
    return StackLock(table=blueprint.table.name, partition_key=keys.pk, sort_key=keys.sk, indexes=indexes,
                     entities=entities)


# The table tag that carries `design_digest`: a generated client compares it with its own (`check_design()`).
DESIGN_TAG = "tablewright:design"


def design_digest(design: TableDesign) -> str:
    """16 hex digits that change whenever items would be written or read differently: the lock's keys,
    indexes and projections (not the table's name, so every environment of one design shares it) and how
    every attribute is stored."""
    lock = lock_of(design).model_dump(mode="json", exclude={"table"})
    stored = {entity: {name: [key_encoding(spec), spec.optional]
                       for name, spec in sorted(design.blueprint.entities[entity].attributes.items())}
              for entity in sorted(design.shapes)}
    text = json.dumps({"lock": lock, "attributes": stored}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class KeyFacts:
    """An entity's keys on one index (or the table), as items carry them: what a data migration changes."""

    templates: str  # "pk / sk"
    shards: int | None
    shard_by: tuple[str, ...]
    attributes: str  # the item attributes holding them, "GSI1PK/GSI1SK"
    encodings: str  # how each value inside is written, "at: timestamp:iso8601; id: string"

    @property
    def text(self) -> str:
        shards = f" ({self.shards} shards by {', '.join(self.shard_by)})" if self.shards else ""
        return f"{self.templates}{shards} in {self.attributes}" + (f" [{self.encodings}]" if self.encodings else "")

    def record(self) -> dict[str, object]:
        return {"templates": self.templates, "shards": self.shards, "shard_by": list(self.shard_by),
                "attributes": self.attributes, "encodings": self.encodings}


def key_facts(lock: StackLock) -> dict[tuple[str, str], KeyFacts]:
    """(entity, "table" or index) -> its keys there."""
    attributes = {name: _attributes(index.partition_key, index.sort_key) for name, index in lock.indexes.items()}
    attributes["table"] = _attributes(lock.partition_key, lock.sort_key)
    facts = {}
    for entity, locked in lock.entities.items():
        for index, key in locked.keys.items():
            templates = [parse_template(text) for text in (key.pk, key.sk) if text]
            used = sorted({attribute for template in templates for attribute in template.attributes})
            facts[(entity, index)] = KeyFacts(
                " / ".join(text for text in (key.pk, key.sk) if text), key.shards, tuple(key.shard_by),
                attributes.get(index, "?"),
                "; ".join(f"{a}: {locked.encodings[a]}" for a in used if a in locked.encodings))
    return facts


def _attributes(partition_key: str, sort_key: str | None) -> str:
    return partition_key if sort_key is None else f"{partition_key}/{sort_key}"


def lock_changes(old: StackLock | None, new: StackLock) -> list[str]:
    """What differs between two lock entries, one line each, in a stable order."""
    if old is None:
        return [f"new lock for table {new.table}: {len(new.indexes)} index(es), {len(new.entities)} entities"]
    lines = [f"table {old.table} -> {new.table}"] if old.table != new.table else []
    if (old.partition_key, old.sort_key) != (new.partition_key, new.sort_key):
        lines.append(f"table keys {_attributes(old.partition_key, old.sort_key)} -> "
                     f"{_attributes(new.partition_key, new.sort_key)}")
    for name in sorted(old.indexes.keys() | new.indexes.keys()):
        before, after = old.indexes.get(name), new.indexes.get(name)
        if before is None and after is not None:
            lines.append(f"{name} added: {_index_text(after)}")
        elif after is None and before is not None:
            lines.append(f"{name} removed (was {_index_text(before)})")
        elif before != after and before is not None and after is not None:
            lines.append(f"{name}: {_index_text(before)} -> {_index_text(after)}")
    old_keys, new_keys = key_facts(old), key_facts(new)
    for entity, index in sorted(old_keys.keys() | new_keys.keys()):
        was, now = old_keys.get((entity, index)), new_keys.get((entity, index))
        if was != now:
            lines.append(f"{entity} on {index}: {was.text if was else '(not on it)'} -> "
                         f"{now.text if now else '(not on it)'}")
    return lines


def _index_text(index: LockedIndex) -> str:
    projection = index.projection.type + (f" ({', '.join(index.projection.attributes)})"
                                          if index.projection.type == "INCLUDE" else "")
    return f"{index.type} {_attributes(index.partition_key, index.sort_key)}, {projection}, {index.status}"


Keys = dict[tuple[str, str], KeyFacts]  # (entity, "table" or index) -> its keys there


@dataclass(frozen=True)
class Departure:
    """An entity the earlier design has and the later one does not: renamed (declared), or removed."""

    entity: str  # its name in the earlier design
    renamed_to: str | None  # a declared rename: the name it has now
    declared: Migration | None  # the blueprint's `migrations:` entry for it (rename or removal), if any


def _entities(keys: Keys) -> set[str]:
    return {entity for entity, _ in keys}


def departures(before: Keys, after: Keys, migrations: list[Migration]) -> list[Departure]:
    """Every entity of `before` missing from `after`, with the rename or removal the blueprint declares for it.
    A rename counts only where it matches: its former name is gone and its new name is new."""
    old, new = _entities(before), _entities(after)
    found = []
    for entity in sorted(old - new):
        rename = next((m for m in migrations if m.renamed_from == entity and m.entity in new - old), None)
        removal = next((m for m in migrations if m.removal is not None and m.entity == entity), None)
        found.append(Departure(entity, rename.entity if rename else None, rename or removal))
    return found


def possible_renames(entity: str, before: Keys, after: Keys) -> list[str]:
    """Entities new in `after` that could be `entity` renamed: any new entity, the ones on the same indexes first."""
    new = sorted(_entities(after) - _entities(before))
    indexes = {index for name, index in before if name == entity}
    return sorted(new, key=lambda name: ({index for other, index in after if other == name} != indexes, name))
