"""What a change means for items already in the table, read from the key templates before and after.

Terraform sees `PK`, `SK`, `GSI1PK`... and nothing of what is written into them. A changed key
template (or a changed encoding of a value inside a key) leaves every item written before under the
old key: a data migration, which the review and the gate block unless the blueprint declares it
under `migrations:`. An entity that joins an index finds only the items written from then on until
the old ones are backfilled: a note with the steps, never blocked.

The keys come from the design lock of each side (`key_facts`), so the review (two designs) and the
gate (the `tablewright` output of a plan's prior and planned state) compare the same thing.
"""

from __future__ import annotations

from dataclasses import dataclass

from modules.blueprint.model import Migration, MigrationKey
from modules.blueprint.templates import parse_template
from modules.design.locked import KeyFacts
from modules.design.model import TABLE
from modules.review.classify import Change

Keys = dict[tuple[str, str], KeyFacts]  # (entity, "table" or index) -> its keys there


@dataclass(frozen=True)
class DataChange:
    entity: str
    index: str  # "table" or an index name
    before: KeyFacts | None  # None: the entity was not on this index
    after: KeyFacts
    steps: tuple[str, ...]
    declared: Migration | None = None  # the blueprint's `migrations:` entry that carries it out

    @property
    def breaking(self) -> bool:
        return self.before is not None


def _matches(key: MigrationKey, facts: KeyFacts) -> bool:
    return (f"{parse_template(key.pk).text} / {parse_template(key.sk).text}", key.shards) == (facts.templates,
                                                                                             facts.shards)


def _declared(entity: str, index: str, before: KeyFacts, after: KeyFacts,
              migrations: list[Migration]) -> Migration | None:
    return next((migration for migration in migrations
                 if (migration.entity, migration.index) == (entity, index)
                 and _matches(migration.from_, before) and _matches(migration.to, after)), None)


def _rekey_steps(entity: str, index: str, migration: Migration | None) -> tuple[str, ...]:
    where = "the table" if index == TABLE else index
    if migration is not None and migration.strategy == "backfill":
        return (
            f"In the maintenance window, pause the writers of {entity}.",
            f"Rewrite every {entity} item under its new key on {where} (on the table: delete the old item and put "
            "the new one in one transaction).",
            "Deploy readers and writers that use the new keys (this blueprint's query cookbook), resume writes.",
            "Verify: `python main.py verify`, and compare item counts before and after.",
        )
    return (
        f"Dual write: deploy writers that keep every {entity} item under both the old and the new key on {where} "
        "(on the table, two items written in one transaction; on an index, prefer a new index name so both keys "
        "exist side by side), so nothing written from now on is missed.",
        f"Backfill: scan the table (a parallel Scan on `_entity = {entity}`, or an export to S3) and write each old "
        "item under its new key, conditionally (`attribute_not_exists`), so dual-written items win.",
        "Verify: `python main.py verify`, and compare the item counts under both keys until they agree.",
        "Cut over: deploy readers that use the new keys (this blueprint's query cookbook).",
        "Contract: stop writing the old keys and delete the items (or index) under them, in the maintenance window.",
    )


def _join_steps(entity: str, index: str) -> tuple[str, ...]:
    return (
        f"Items written before this change carry no {index} keys, so {index} misses them until they are backfilled.",
        f"Deploy writers that write the {index} key attributes on every {entity} put and update.",
        f"Backfill: scan the table and add the {index} key attributes to each existing {entity} item with a "
        "conditional UpdateItem (only where they are missing).",
        f"Verify: `python main.py verify`, then compare the index's item count with the {entity} count.",
        f"Cut over: deploy readers that query {index} once the backfill is done.",
    )


def data_changes(before: Keys, after: Keys, migrations: list[Migration]) -> list[DataChange]:
    """Entities that existed before whose keys change on any index, or that join a secondary index whose
    key attributes their items do not carry yet."""
    entities = {entity for entity, _ in before}
    changes = []
    for entity, index in sorted(after, key=lambda key: (key[0], key[1] != TABLE, key[1])):
        old, new = before.get((entity, index)), after[(entity, index)]
        if entity not in entities or old == new:
            continue
        if old is None:
            carried = any(facts == new for (other, _), facts in before.items() if other == entity)
            if index != TABLE and not carried:  # a successor index on the same attributes needs no backfill
                changes.append(DataChange(entity, index, None, new, _join_steps(entity, index)))
            continue
        declared = _declared(entity, index, old, new, migrations)
        changes.append(DataChange(entity, index, old, new, _rekey_steps(entity, index, declared), declared))
    return changes


def migration_changes(changes: list[DataChange], address: str) -> list[Change]:
    """Key migrations as classified changes: blocked unless the blueprint declares them (then window)."""
    classified = []
    for change in changes:
        if not change.breaking:
            continue
        where = "the table" if change.index == TABLE else change.index
        before = change.before.templates if change.before else ""
        subject = f"{change.entity} keys on {where}: {before} -> {change.after.templates}"
        if change.declared is not None:
            classified.append(Change(address, "update", "data", subject, "window",
                                     f"declared migration ({change.declared.strategy}): {change.declared.reason}"))
        else:
            classified.append(Change(address, "update", "data", subject, "blocked",
                                     "a data migration: items already written keep the old keys and the new queries "
                                     "no longer find them (Terraform shows nothing). Declare it under `migrations:` "
                                     "(entity, index, from, to, strategy, reason) to run it in the window"))
    return classified
