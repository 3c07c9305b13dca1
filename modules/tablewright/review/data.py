"""What a change means for items already in the table, read from the key templates before and after.

Terraform sees `PK`, `SK`, `GSI1PK`... and nothing of what is written into them. A changed key
template (or a changed encoding of a value inside a key) leaves every item written before under the
old key; a renamed entity leaves every item marked with its old name (`_entity`), under its old keys;
a removed entity leaves its items behind, read by nothing. Each is a data migration, which the review
and the gate block unless the blueprint declares it under `migrations:`. An entity that joins an index
finds only the items written from then on until the old ones are backfilled: a note with the steps,
never blocked.

The keys come from the design lock of each side (`key_facts`), so the review (two designs) and the
gate (the `tablewright` output of a plan's prior and planned state) compare the same thing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from tablewright.blueprint.language import Blueprint, Migration, MigrationKey
from tablewright.blueprint.lock import StackLock
from tablewright.blueprint.templates import parse_template
from tablewright.design.design import ENTITY_ATTRIBUTE, TABLE, place
from tablewright.design.evolution import AttributeChange, attribute_changes, key_collisions, with_renamed_attributes
from tablewright.design.locked import (
    Attributes,
    Departure,
    KeyFacts,
    Keys,
    all_attribute_renames,
    attribute_facts,
    departures,
    key_facts,
    possible_renames,
    retained_facts,
)
from tablewright.review.classified import Change

Kind = Literal["keys", "join", "rename", "removal", "attribute", "collision"]
_FATE = {"delete": "its items deleted", "expire": "its items expired by TTL", "keep": "its items kept, unread"}


@dataclass(frozen=True)
class DataChange:
    entity: str  # a rename: the new name; a removal: the removed entity
    index: str  # "table" or an index name
    before: KeyFacts | None  # None: the entity was not on this index
    after: KeyFacts | None  # None: the entity is removed
    steps: tuple[str, ...]
    declared: Migration | None = None  # the blueprint's `migrations:` entry that carries it out
    kind: Kind = "keys"
    former: str | None = None  # a rename: the entity's name before
    attribute: AttributeChange | None = None  # an attribute's change
    collision: str | None = None  # keys two entities' items would share: what meets what

    @property
    def breaking(self) -> bool:
        return self.kind != "join"

    @property
    def is_declared(self) -> bool:
        """Carried out as the blueprint declares (a window change); a collision never is."""
        if self.attribute is not None:
            return self.attribute.is_declared
        return self.declared is not None and self.kind != "collision"

    @property
    def headline(self) -> str:
        """A few words for the top of the review."""
        if self.attribute is not None:
            return self.attribute.subject
        if self.collision is not None:
            return f"{self.entity} on keys other items hold"
        if self.kind == "rename":
            return f"{self.former} renamed {self.entity}"
        if self.kind == "removal":
            removal = self.declared.removal if self.declared else None
            return f"{self.entity} removed, {_FATE[removal] if removal else 'its items left in the table'}"
        return f"{self.entity} keys on {place(self.index)} change"

    @property
    def subject(self) -> str:
        """One line on what happens to the items already written."""
        where = place(self.index)
        if self.attribute is not None:
            return self.attribute.subject
        if self.collision is not None:
            return self.collision
        if self.kind == "rename":
            keys = "" if self.before == self.after else f", keys {_templates(self.before)} -> {_templates(self.after)}"
            return f"{self.former} renamed {self.entity}{keys}"
        if self.kind == "removal":
            return f"{self.entity} removed (its items under {_templates(self.before)})"
        if self.before is not None and self.after is not None and self.before.templates == self.after.templates:
            return f"{self.entity} keys on {where}: {self.before.text} -> {self.after.text}"  # the encoding changes
        return f"{self.entity} keys on {where}: {_templates(self.before)} -> {_templates(self.after)}"


def _templates(facts: KeyFacts | None) -> str:
    return facts.templates if facts is not None else "(none)"


def _matches(key: MigrationKey | None, facts: KeyFacts) -> bool:
    return key is not None and (f"{parse_template(key.pk).text} / {parse_template(key.sk).text}",
                                key.shards) == (facts.templates, facts.shards)


def _declared(entity: str, index: str, before: KeyFacts, after: KeyFacts,
              migrations: list[Migration]) -> Migration | None:
    return next((migration for migration in migrations
                 if migration.kind == "keys" and (migration.entity, migration.index) == (entity, index)
                 and _matches(migration.from_, before) and _matches(migration.to, after)), None)


def _rekey_steps(entity: str, index: str, migration: Migration | None) -> tuple[str, ...]:
    where = place(index)
    if migration is not None and migration.strategy == "backfill":
        return (
            f"In the maintenance window, pause the writers of {entity}.",
            f"Rewrite every {entity} item under its new key on {where}: `tablewright migrate run` (on the table, a "
            "delete of the old item and a put of the new one in one transaction).",
            "Deploy readers and writers that use the new keys (this blueprint's query cookbook), resume writes.",
            f"Verify: `tablewright migrate verify` (every {entity} item where the new keys read it).",
        )
    return (
        f"Dual write: deploy writers that keep every {entity} item under both the old and the new key on {where} "
        "(on the table, two items written in one transaction; on an index, prefer a new index name so both keys "
        "exist side by side), so nothing written from now on is missed.",
        f"Backfill: `tablewright migrate run` (after `migrate plan`: the items, write units and hours it fits) "
        f"rewrites each old {entity} item under its new key from a parallel Scan, each write conditioned on the "
        "values read, so dual-written items win.",
        f"Verify: `tablewright migrate verify` (every {entity} item where the new keys read it; recorded in the "
        "design lock).",
        "Cut over: deploy readers that use the new keys (this blueprint's query cookbook).",
        "Contract: stop writing the old keys and delete the items (or index) under them, in the maintenance window.",
    )


def _join_steps(entity: str, index: str) -> tuple[str, ...]:
    return (
        f"Items written before this change carry no {index} keys, so {index} misses them until they are backfilled.",
        f"Deploy writers that write the {index} key attributes on every {entity} put and update.",
        f"Backfill: `tablewright migrate run` writes them into every old {entity} item (`migrate plan` first).",
        "Verify: `tablewright migrate verify`.",
        f"Cut over: deploy readers that query {index} once the backfill is done.",
    )


def _rename_steps(former: str, entity: str, moved: list[str], migration: Migration) -> tuple[str, ...]:
    marker = f"`{ENTITY_ATTRIBUTE} = {former}`"
    if not moved:
        return (
            f"Deploy writers that write {entity} items (marked `{ENTITY_ATTRIBUTE} = {entity}`); the keys stay as they "
            "are, so point reads and key queries keep finding the old items.",
            f"Backfill: `tablewright migrate run` sets `{ENTITY_ATTRIBUTE}` to `{entity}` on every item marked "
            f"{marker} (conditioned on the values read): until then item collections and scans filtered by the "
            f"marker miss or misread the old items.",
            f"Verify: `tablewright migrate verify` (no item marked {marker} is left).",
        )
    keys = "; ".join(moved)
    if migration.strategy == "backfill":
        return (
            f"In the maintenance window, pause the writers of {former}.",
            f"Rewrite every {former} item as a {entity} item ({keys}; `{ENTITY_ATTRIBUTE} = {entity}`): `tablewright "
            "migrate run` (on the table, a delete and a put in one transaction).",
            "Deploy readers and writers that use the new name and keys (this blueprint's query cookbook), resume "
            "writes.",
            f"Verify: `tablewright migrate verify` (none left as {former}).",
        )
    return (
        f"Dual write: deploy writers that write each item both as {former} (old keys) and as {entity} ({keys}), in "
        "one transaction, so nothing written from now on is missed.",
        f"Backfill: `tablewright migrate run` moves each item marked {marker} to {entity}'s keys (a put and a "
        "delete in one transaction, conditioned on the values read; an item the new writers wrote already wins).",
        f"Verify: `tablewright migrate verify` (every {entity} item under its new keys, none left as {former}).",
        f"Cut over: deploy readers that use {entity}'s keys (this blueprint's query cookbook).",
        f"Contract: stop writing {former} items and delete them, in the maintenance window.",
    )


# DynamoDB deletes expired items within a few days, and they stay readable until then (Developer Guide, "Using
# time to live (TTL) in DynamoDB": https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/TTL.html).
def _removal_steps(entity: str, migration: Migration | None, ttl_attribute: str | None) -> tuple[str, ...]:
    found = f"a parallel Scan on `{ENTITY_ATTRIBUTE} = {entity}`"
    if migration is None:
        return (
            f"{entity} is gone from the blueprint, but its items stay in the table: no pattern reads them, they are "
            "still stored and billed, and any index key attributes keep them in those indexes.",
            f"Declare what happens to them under `migrations:` (`entity: {entity}`, `removal: delete | keep | expire`, "
            "`reason`); if it was renamed, declare the rename instead (`entity: <new name>`, "
            f"`renamed_from: {entity}`).",
        )
    if migration.removal == "keep":
        return (f"The {entity} items stay in the table, read by no pattern: they are still stored and billed, and "
                "they stay in every index whose key attributes they carry.",
                "Nothing runs: remove this entry once the change is applied.")
    if migration.removal == "expire":
        return (f"Stop the writers of {entity}.",
                f"Expire: `tablewright migrate run` sets `{ttl_attribute}` to now on every {entity} item: DynamoDB "
                "deletes expired items within a few days, and until then reads still return them.",
                f"Verify: {found} finds nothing once they have expired.")
    return (f"Stop the writers of {entity}.",
            f"Delete: `tablewright migrate run` deletes every {entity} item (a DeleteItem each, conditioned on the "
            "values read).",
            f"Verify: `tablewright migrate verify` ({found} finds nothing).")


def _departure_changes(departure: Departure, before: Keys, after: Keys,
                       ttl_attribute: str | None) -> list[DataChange]:
    old = before[(departure.entity, TABLE)]
    migration = departure.declared
    if departure.renamed_to is None:
        steps = _removal_steps(departure.entity, migration, ttl_attribute)
        if migration is None:
            candidates = possible_renames(departure.entity, before, after)
            if candidates:
                steps += (f"(New in this change: {', '.join(candidates)}. If one of them is {departure.entity} "
                          "renamed, its items still carry the old name and keys.)",)
        return [DataChange(departure.entity, TABLE, old, None, steps, migration, "removal")]
    assert migration is not None  # a rename is known only from its declaration
    entity = departure.renamed_to
    indexes = sorted({index for name, index in before if name == departure.entity}
                     | {index for name, index in after if name == entity}, key=lambda index: (index != TABLE, index))
    moved = [f"{place(index)}: {_templates(before.get((departure.entity, index)))} -> "
             f"{_templates(after.get((entity, index)))}" for index in indexes
             if before.get((departure.entity, index)) != after.get((entity, index))]
    return [DataChange(entity, TABLE, old, after.get((entity, TABLE)),
                       _rename_steps(departure.entity, entity, moved, migration), migration, "rename",
                       departure.entity)]


def _collision_changes(before: Keys, after: Keys, gone: list[Departure], retained: Keys | None) -> list[DataChange]:
    return [DataChange(c.entity, TABLE, c.held, c.keys, c.way_through, kind="collision", former=c.other,
                       collision=c.text) for c in key_collisions(before, after, gone, retained)]


def data_changes(before: Keys, after: Keys, migrations: list[Migration], ttl_attribute: str | None = None,
                 attributes: tuple[Attributes | None, Attributes | None] = (None, None),
                 renames: Mapping[str, Mapping[str, str]] | None = None,
                 retained: Keys | None = None) -> list[DataChange]:
    """Entities that existed before and are renamed, removed, or whose keys change on any index, those that join a
    secondary index whose key attributes their items do not carry yet, entities on keys another entity's items
    hold, and changed stored attributes (`attributes` before and after; `renames`: each entity's renamed
    attributes, old name -> new; `retained`: the table keys of entities earlier changes removed, whose items
    stay)."""
    gone = departures(before, after, migrations)
    names = {departure.entity: departure.renamed_to for departure in gone if departure.renamed_to}
    before = with_renamed_attributes(before, renames or {}, names)
    changes = [change for departure in gone for change in _departure_changes(departure, before, after, ttl_attribute)]
    changes += _collision_changes(before, after, gone, retained)
    changes += [DataChange(change.entity, TABLE, None, None, change.steps, change.declared, "attribute",
                           attribute=change)
                for change in attribute_changes(*attributes, names, renames or {}, migrations)]
    renamed = {departure.renamed_to for departure in gone}
    entities = {entity for entity, _ in before}
    for entity, index in sorted(after, key=lambda key: (key[0], key[1] != TABLE, key[1])):
        old, new = before.get((entity, index)), after[(entity, index)]
        if entity not in entities or entity in renamed or old == new:
            continue
        if old is None:
            carried = any(facts == new for (other, _), facts in before.items() if other == entity)
            if index != TABLE and not carried:  # a successor index on the same attributes needs no backfill
                changes.append(DataChange(entity, index, None, new, _join_steps(entity, index), kind="join"))
            continue
        declared = _declared(entity, index, old, new, migrations)
        changes.append(DataChange(entity, index, old, new, _rekey_steps(entity, index, declared), declared))
    return changes


def lock_data_changes(before: StackLock, after: StackLock, blueprint: Blueprint) -> list[DataChange]:
    """`data_changes` between two locks of one stack (`lock_of` its designs; `blueprint`: the later), as the review
    lists them and `migrate` runs them."""
    return data_changes(key_facts(before), key_facts(after), list(blueprint.migrations), blueprint.table.ttl_attribute,
                        (attribute_facts(before), attribute_facts(after)), all_attribute_renames(blueprint),
                        retained_facts(before))


def unmatched_migrations(changes: list[DataChange], migrations: list[Migration]) -> list[str]:
    """A warning for each declared migration no change of this pull request carries out (done already, or wrong)."""
    carried = [change.declared for change in changes if change.declared]
    warnings = []
    for migration in migrations:
        if migration in carried:
            continue
        if migration.kind == "keys":
            what, fix = f"of {migration.entity} on {migration.index} matches no key change", "correct its `from`/`to`"
        elif migration.kind == "attribute":
            what = f"of {migration.entity}.{migration.attribute} ({migration.method}) matches no attribute change"
            fix = "correct `entity` or `attribute`"
        elif migration.kind == "rename":
            what = f"renaming {migration.renamed_from} to {migration.entity} matches no entity of the design before"
            fix = "correct `renamed_from`"
        else:
            what, fix = f"removing {migration.entity} matches no entity of the design before", "correct `entity`"
        warnings.append(f"the declared migration {what} in this pull request: remove it once the migration is done, "
                        f"or {fix}")
    return warnings


def unmatched_renames(before: Attributes | None, renames: Mapping[str, Mapping[str, str]],
                      names: Mapping[str, str]) -> list[str]:
    """A warning for each `renamed_from` that names no attribute the earlier design stores (`names`: each later
    entity's earlier name): it renames nothing, and once removed its declaration would wait for a migration that
    never runs."""
    if before is None:
        return []
    return [f"`{entity}.{new}` is declared `renamed_from: {old}`, but `{old}` is not an attribute the items of "
            f"{names.get(entity, entity)} carry: remove `renamed_from` (or correct it) in this change"
            for entity, pairs in sorted(renames.items()) for old, new in sorted(pairs.items())
            if old not in before.get(names.get(entity, entity), {})]


_UNDECLARED = {
    "keys": "a data migration: items already written keep the old keys and the new queries no longer find them "
            "(Terraform shows nothing). Declare it under `migrations:` (entity, index, from, to, strategy, reason) "
            "to run it in the window",
    "removal": "the items already written stay in the table, read by no pattern (Terraform shows nothing). Declare "
               "under `migrations:` what happens to them (`removal: delete | keep | expire`), or the rename it is "
               "(`renamed_from`)",
}


def migration_changes(changes: list[DataChange], address: str) -> list[Change]:
    """Data migrations as classified changes: blocked unless the blueprint declares them (then window)."""
    classified = []
    for change in changes:
        if not change.breaking:
            continue
        if change.is_declared:
            classified.append(Change(
                address=address, action="update", category="data", subject=change.subject, cls="window",
                reason=_declared_reason(change)))
        else:
            classified.append(Change(
                address=address, action="update", category="data", subject=change.subject, cls="blocked",
                reason=_undeclared_reason(change)))
    return classified


def _declared_reason(change: DataChange) -> str:
    if change.declared is None:  # an attribute rename, declared by `renamed_from`
        return f"declared attribute rename (`renamed_from`): {change.steps[-2]}"
    return f"declared {change.declared.kind} migration ({change.declared.method}): {change.declared.reason}"


def _undeclared_reason(change: DataChange) -> str:
    if change.attribute is not None:
        return f"a data migration: {change.attribute.seen} (Terraform shows nothing). {change.steps[0]}"
    if change.collision is not None:
        return f"two entities' items would share keys, and no declaration lifts it. {change.steps[0]}"
    return _UNDECLARED[change.kind]


CONTRACT = "contract: "  # the subject of a contract step: what leaves the design once a migration is done


def verified_declarations(lock: StackLock | None, production: bool) -> set[str]:
    """The declarations `tablewright migrate verify` recorded in the lock as done on this stack's table (on AWS
    itself for a production stack: a record made against an emulator's endpoint does not count there)."""
    if lock is None:
        return set()
    return {text for record in lock.migrated if record.table == lock.table
            and (record.endpoint is None or not production) for text in record.declarations}


def contracted(before: object, after: object, lock: StackLock | None, address: str,
               production: bool = False) -> list[Change]:
    """Migration declarations that leave the blueprint (`before` and `after`: its declarations, as lists) without a
    lock record of `tablewright migrate verify` on this stack's table (on AWS itself for a production stack, not an
    emulator): blocked, since nothing shows the items were migrated."""
    if not isinstance(before, list) or not isinstance(after, list):
        return []
    verified = verified_declarations(lock, production)
    return [Change(address=address, action="update", category="data", subject=f"{CONTRACT}{declaration}",
                   cls="blocked", reason="the migration's declaration leaves the blueprint, but no `tablewright "
                   "migrate verify` recorded it in the design lock: verify it against the table (its record is "
                   "written into <blueprint>.lock.json; commit it), or keep the declaration until then")
            for declaration in sorted(set(map(str, before)) - set(map(str, after)) - verified)]
