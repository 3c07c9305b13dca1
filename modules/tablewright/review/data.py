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

from dataclasses import dataclass
from typing import Literal

from tablewright.blueprint.language import Migration, MigrationKey
from tablewright.blueprint.templates import parse_template
from tablewright.design.design import ENTITY_ATTRIBUTE, TABLE, place
from tablewright.design.locked import Departure, KeyFacts, Keys, departures, possible_renames
from tablewright.review.classified import Change

Kind = Literal["keys", "join", "rename", "removal"]
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

    @property
    def breaking(self) -> bool:
        return self.kind != "join"

    @property
    def headline(self) -> str:
        """A few words for the top of the review."""
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
        if self.kind == "rename":
            keys = "" if self.before == self.after else f", keys {_templates(self.before)} -> {_templates(self.after)}"
            return f"{self.former} renamed {self.entity}{keys}"
        if self.kind == "removal":
            return f"{self.entity} removed (its items under {_templates(self.before)})"
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
            f"Rewrite every {entity} item under its new key on {where} (on the table: delete the old item and put "
            "the new one in one transaction).",
            "Deploy readers and writers that use the new keys (this blueprint's query cookbook), resume writes.",
            "Verify: `tablewright verify`, and compare item counts before and after.",
        )
    return (
        f"Dual write: deploy writers that keep every {entity} item under both the old and the new key on {where} "
        "(on the table, two items written in one transaction; on an index, prefer a new index name so both keys "
        "exist side by side), so nothing written from now on is missed.",
        f"Backfill: scan the table (a parallel Scan on `{ENTITY_ATTRIBUTE} = {entity}`, or an export to S3) and write "
        "each old item under its new key, conditionally (`attribute_not_exists`), so dual-written items win.",
        "Verify: `tablewright verify`, and compare the item counts under both keys until they agree.",
        "Cut over: deploy readers that use the new keys (this blueprint's query cookbook).",
        "Contract: stop writing the old keys and delete the items (or index) under them, in the maintenance window.",
    )


def _join_steps(entity: str, index: str) -> tuple[str, ...]:
    return (
        f"Items written before this change carry no {index} keys, so {index} misses them until they are backfilled.",
        f"Deploy writers that write the {index} key attributes on every {entity} put and update.",
        f"Backfill: scan the table and add the {index} key attributes to each existing {entity} item with a "
        "conditional UpdateItem (only where they are missing).",
        f"Verify: `tablewright verify`, then compare the index's item count with the {entity} count.",
        f"Cut over: deploy readers that query {index} once the backfill is done.",
    )


def _rename_steps(former: str, entity: str, moved: list[str], migration: Migration) -> tuple[str, ...]:
    marker = f"`{ENTITY_ATTRIBUTE} = {former}`"
    if not moved:
        return (
            f"Deploy writers that write {entity} items (marked `{ENTITY_ATTRIBUTE} = {entity}`); the keys stay as they "
            "are, so point reads and key queries keep finding the old items.",
            f"Backfill: a parallel Scan on {marker} and an UpdateItem per item setting `{ENTITY_ATTRIBUTE}` to "
            f"`{entity}` (conditional on the old value): until then item collections and scans filtered by the "
            f"marker miss or misread the old items.",
            f"Verify: a Scan on {marker} finds nothing, then `tablewright verify`.",
        )
    keys = "; ".join(moved)
    if migration.strategy == "backfill":
        return (
            f"In the maintenance window, pause the writers of {former}.",
            f"Rewrite every {former} item as a {entity} item ({keys}; `{ENTITY_ATTRIBUTE} = {entity}`): on the table, "
            "delete the old item and put the new one in one transaction.",
            "Deploy readers and writers that use the new name and keys (this blueprint's query cookbook), resume "
            "writes.",
            f"Verify: a Scan on {marker} finds nothing, then `tablewright verify`.",
        )
    return (
        f"Dual write: deploy writers that write each item both as {former} (old keys) and as {entity} ({keys}), in "
        "one transaction, so nothing written from now on is missed.",
        f"Backfill: a parallel Scan on {marker}, writing each old item as {entity} under its new keys, conditionally "
        "(`attribute_not_exists`), so dual-written items win.",
        f"Verify: compare the counts of {former} and {entity} items until they agree, then `tablewright verify`.",
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
                f"Expire: {found}, and an UpdateItem per item setting `{ttl_attribute}` to now: DynamoDB deletes "
                "expired items within a few days, and until then reads still return them.",
                f"Verify: {found} finds nothing once they have expired.")
    return (f"Stop the writers of {entity}.",
            f"Delete: {found}, and a DeleteItem (or BatchWriteItem, 25 at a time) per item.",
            f"Verify: {found} finds nothing.")


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


def data_changes(before: Keys, after: Keys, migrations: list[Migration],
                 ttl_attribute: str | None = None) -> list[DataChange]:
    """Entities that existed before and are renamed, removed, or whose keys change on any index, and those that
    join a secondary index whose key attributes their items do not carry yet."""
    gone = departures(before, after, migrations)
    changes = [change for departure in gone for change in _departure_changes(departure, before, after, ttl_attribute)]
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


def unmatched_migrations(changes: list[DataChange], migrations: list[Migration]) -> list[str]:
    """A warning for each declared migration no change of this pull request carries out (done already, or wrong)."""
    carried = [change.declared for change in changes if change.declared]
    warnings = []
    for migration in migrations:
        if migration in carried:
            continue
        if migration.kind == "keys":
            what, fix = f"of {migration.entity} on {migration.index} matches no key change", "correct its `from`/`to`"
        elif migration.kind == "rename":
            what = f"renaming {migration.renamed_from} to {migration.entity} matches no entity of the design before"
            fix = "correct `renamed_from`"
        else:
            what, fix = f"removing {migration.entity} matches no entity of the design before", "correct `entity`"
        warnings.append(f"the declared migration {what} in this pull request: remove it once the migration is done, "
                        f"or {fix}")
    return warnings


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
        if change.declared is not None:
            classified.append(Change(
                address=address, action="update", category="data", subject=change.subject, cls="window",
                reason=f"declared {change.declared.kind} migration ({change.declared.method}): "
                f"{change.declared.reason}"
            ))
        else:
            classified.append(Change(
                address=address, action="update", category="data", subject=change.subject, cls="blocked",
                reason=_UNDECLARED[change.kind]
            ))
    return classified
