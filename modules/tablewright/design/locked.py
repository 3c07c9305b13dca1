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
from tablewright.blueprint.language import AttributeSpec, Blueprint, Migration
from tablewright.blueprint.lock import TABLE_KEYS, LockedEntity, LockedIndex, LockedKey, LockedProjection, StackLock
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


def attribute_renames(blueprint: Blueprint, entity: str) -> dict[str, str]:
    """The entity's renamed attributes, old name -> new (`renamed_from`)."""
    return {spec.renamed_from: name for name, spec in blueprint.entities[entity].attributes.items()
            if spec.renamed_from is not None}


def all_attribute_renames(blueprint: Blueprint) -> dict[str, dict[str, str]]:
    """Every entity's renamed attributes (entity -> old name -> new), those with any."""
    renames = {entity: attribute_renames(blueprint, entity) for entity in blueprint.entities}
    return {entity: names for entity, names in renames.items() if names}


def retained_keys(blueprint: Blueprint, lock: StackLock | None) -> dict[str, tuple[str, str | None]]:
    """The table keys (pk, sk) of the lock's entities that leave the blueprint (not renamed) and of those it retains
    already: their items stay in the table until a `delete` or `expire` removal is verified (a record of `migrate
    verify`), so no later entity may take their keys."""
    if lock is None:
        return {}
    names = current_names(blueprint, lock)
    retained = {entity: (key.pk, key.sk) for entity, key in lock.retained.items()}
    retained.update({entity: (locked.keys[TABLE_KEYS].pk, locked.keys[TABLE_KEYS].sk)
                     for entity, locked in lock.entities.items() if names[entity] not in blueprint.entities})
    verified = {text for record in lock.migrated for text in record.declarations}
    return {entity: keys for entity, keys in sorted(retained.items()) if entity not in blueprint.entities
            and not {f"entity {entity} removed (delete)", f"entity {entity} removed (expire)"} & verified}


def _shape(blueprint: Blueprint, lock: StackLock, index: str, entity: str, keys: KeyNames, current: str) -> Shape:
    """The locked shape of `entity` (as the lock names it) on `index`, for the blueprint's entity `current`. A
    renamed attribute keeps its place in the keys: its values, and so the keys items carry, are the same."""
    locked = lock.entities[entity].keys[index]
    attributes = blueprint.entities[current].attributes
    renames = attribute_renames(blueprint, current)
    try:
        pk, sk = parse_template(locked.pk), parse_template(locked.sk) if locked.sk else KeyTemplate(())
    except Invalid as error:
        raise _lock_error(entity, index, error.message) from None
    pk, sk = pk.renamed(renames), sk.renamed(renames)
    shard_by = tuple(renames.get(name, name) for name in locked.shard_by)
    missing = sorted(set(pk.attributes + sk.attributes + shard_by) - set(attributes))
    if missing:
        raise _lock_error(current, index, f"its locked keys {locked.pk} / {locked.sk} use `{missing[0]}`, which "
                                          f"`{current}` no longer has")
    if locked.shards:
        return Shape(pk.sharded(locked.shards), sk, keys, shard_by)
    return Shape(pk, sk, keys)


def _lock_error(entity: str, index: str, problem: str) -> DesignError:
    return DesignError(f"{entity} on locked index {index}: {problem}", path=("entities", entity),
                       code=ErrorCode.LOCK_INVALID,
                       hint="if you renamed the attribute, declare it on the new one (`renamed_from: <old name>`): "
                            "the index keeps its keys and `tablewright migrate run` renames the stored attribute; "
                            "else keep the attribute")


def locked_key(shape: Shape) -> LockedKey:
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
        entities[entity] = LockedEntity(keys={index: locked_key(shape) for index, shape in sorted(shapes.items())},
                                        encodings={a: key_encoding(specs[a]) for a in in_keys},
                                        attributes={a: stored_type(spec) for a, spec in sorted(specs.items())},
                                        moving=design.moving.get(entity))
    keys = design.table_keys
    retained = {entity: LockedKey(pk=pk, sk=sk) for entity, (pk, sk) in design.retained.items()}
    return StackLock(table=blueprint.table.name, partition_key=keys.pk, sort_key=keys.sk, indexes=indexes,
                     entities=entities, retained=retained)


def stored_type(spec: AttributeSpec) -> str:
    """How an attribute is stored, as the lock records it: `string`, `timestamp:epoch_seconds`, `?` when optional."""
    stored = f"timestamp:{spec.timestamp_format}" if spec.type == "timestamp" else spec.type
    return stored + ("?" if spec.is_optional else "")


Attributes = dict[str, dict[str, str]]  # entity -> attribute -> stored type


def attribute_facts(lock: StackLock) -> Attributes | None:
    """Every entity's stored attributes; None when the lock predates them (an entity without the record)."""
    if any(locked.attributes is None for locked in lock.entities.values()):
        return None
    return {entity: dict(locked.attributes or {}) for entity, locked in lock.entities.items()}


# The table tag that carries `design_digest`: a generated client compares it with its own (`check_design()`).
DESIGN_TAG = "tablewright:design"


def design_digest(design: TableDesign) -> str:
    """16 hex digits that change whenever items would be written or read differently: the lock's keys,
    indexes and projections (not the table's name, so every environment of one design shares it) and how
    every attribute is stored."""
    # The entities' stored attributes are in `stored` already (the lock records them since; leaving them out keeps
    # every digest, and so every deployed client, as it was).
    lock = lock_of(design).model_dump(mode="json", exclude={"table": True, "migrated": True, "retained": True,
                                                            "entities": {"__all__": {"attributes", "moving"}}})
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


def retained_facts(lock: StackLock) -> Keys:
    """The retained entities' table keys, as `key_facts` gives an entity's."""
    table = _attributes(lock.partition_key, lock.sort_key)
    return {(entity, TABLE_KEYS): KeyFacts(" / ".join(t for t in (key.pk, key.sk) if t), None, (), table, "")
            for entity, key in lock.retained.items()}


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
    lines += [f"{entity} retained: its items ({key.pk} / {key.sk}) stay in the table"
              for entity, key in sorted(new.retained.items()) if entity not in old.retained]
    old_keys, new_keys = key_facts(old), key_facts(new)
    for entity, index in sorted(old_keys.keys() | new_keys.keys()):
        was, now = old_keys.get((entity, index)), new_keys.get((entity, index))
        if was != now:
            lines.append(f"{entity} on {index}: {was.text if was else '(not on it)'} -> "
                         f"{now.text if now else '(not on it)'}")
    old_attributes, new_attributes = attribute_facts(old), attribute_facts(new)
    if old_attributes is None or new_attributes is None:
        return lines
    for entity in sorted(old_attributes.keys() & new_attributes.keys()):
        was_stored, now_stored = old_attributes[entity], new_attributes[entity]
        for name in sorted(was_stored.keys() | now_stored.keys()):
            if was_stored.get(name) != now_stored.get(name):
                lines.append(f"{entity}.{name}: {was_stored.get(name, '(not stored)')} -> "
                             f"{now_stored.get(name, '(not stored)')}")
    return lines


def recorded_migrations(old: StackLock | None, new: StackLock | None) -> list[str]:
    """The migration records a change adds to the lock (`migrate verify` writes them): shown to reviewers, since
    they lift the block on removing the migrations' declarations."""
    before = old.migrated if old else []
    return [f"migrated: {', '.join(record.declarations) or 'nothing declared'} verified {record.verified} on "
            f"{record.table}{' at ' + record.endpoint if record.endpoint else ''} ({record.items:,} items) recorded"
            for record in (new.migrated if new else []) if record not in before]


def as_recorded(lock: StackLock, recorded: StackLock | None) -> StackLock:
    """`lock` as a lock written before attributes were recorded would hold it (`synth --locked` against such a lock
    compares keys and indexes only; `synth` records the attributes)."""
    if recorded is None or attribute_facts(recorded) is not None:
        return lock
    entities = {name: entity.model_copy(update={"attributes": None}) for name, entity in lock.entities.items()}
    return lock.model_copy(update={"entities": entities})


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
