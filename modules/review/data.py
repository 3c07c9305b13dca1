"""What a change means for items already in the table, read from the two designs.

Terraform sees `PK`, `SK`, `GSI1PK`... and nothing of what is written into them. A changed key
template leaves every item written before under the old key, and a new index finds only the items
that carry its key attributes: both need a data migration: new index or table, dual write, backfill,
verify, cut over.
"""

from __future__ import annotations

from dataclasses import dataclass

from modules.design.model import TABLE, Shape, TableDesign


@dataclass(frozen=True)
class DataChange:
    entity: str
    index: str  # "table" or an index name
    before: str | None  # key templates, "pk / sk"; None: the entity was not on this index
    after: str
    steps: tuple[str, ...]

    @property
    def breaking(self) -> bool:
        return self.before is not None


def _table_migration(entity: str, table: str) -> tuple[str, ...]:
    return (
        f"Create a new table (e.g. `{table}_v2`, a new blueprint version) whose {entity} key is the new template; "
        "the old table stays as it is.",
        f"Dual write: the application writes every {entity} change to both tables (asynchronously, through a queue, "
        "with retries), so nothing written from now on is missed.",
        f"Backfill: scan the old table (parallel scan, or export to S3) and write each {entity} item under its new "
        "key, conditionally (`attribute_not_exists(PK)`) so dual-written items win.",
        "Verify: `python main.py verify` against the new design, and compare samples of both tables until they agree.",
        "Cut over: switch reads to the new table by configuration, watch errors and latency, stop the dual writes, "
        "keep the old table read-only for a retention period, then delete it in a maintenance window.",
    )


def _index_migration(entity: str, index: str, breaking: bool) -> tuple[str, ...]:
    start = ("Keep the old index until nothing reads it: add the new keys as a new index (a new name) rather than "
             "rebuilding this one, and move the patterns to it." if breaking else
             "The index is built from the items that carry its key attributes: items written before this change "
             f"have no {index} keys.")
    return (
        start,
        f"Dual write: the application writes the new {index} key attributes on every {entity} put and update.",
        f"Backfill: scan the table and add the {index} key attributes to each existing {entity} item with a "
        "conditional UpdateItem (only where they are missing).",
        f"Verify: `python main.py verify`, then compare the index's item count with the {entity} count.",
        "Cut over: point the access patterns at the index once the backfill is done"
        + ("; delete the old index in a later change, in the maintenance window." if breaking else "."),
    )


def _describe(shape: Shape) -> str:
    sharding = f" ({shape.shards} shards by {', '.join(shape.shard_by)})" if shape.shards > 1 else ""
    return f"{shape}{sharding}"


def data_changes(before: TableDesign, after: TableDesign) -> list[DataChange]:
    """Entities that existed before whose keys change on any index, or that join a secondary index."""
    changes = []
    for entity in sorted(before.shapes.keys() & after.shapes.keys()):
        old_shapes, new_shapes = before.shapes[entity], after.shapes[entity]
        for index in sorted(new_shapes, key=lambda name: (name != TABLE, name)):
            new, old = new_shapes[index], old_shapes.get(index)
            if old is None and index != TABLE:
                changes.append(DataChange(entity, index, None, _describe(new), _index_migration(entity, index, False)))
            elif old is not None and (old.pk, old.sk, old.shard_by) != (new.pk, new.sk, new.shard_by):
                steps = (_table_migration(entity, after.blueprint.table.name) if index == TABLE
                         else _index_migration(entity, index, True))
                changes.append(DataChange(entity, index, _describe(old), _describe(new), steps))
    return changes
