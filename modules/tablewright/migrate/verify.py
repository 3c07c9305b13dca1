"""`migrate verify`: every item of the migrated entities is where the later design reads it, checked by a Scan of the
whole table (strongly consistent): counts per entity and per access pattern, and the first items that are not.
A verified migration is recorded in the design lock beside the blueprint (`migrated`), which lets its declarations
leave the blueprint (the contract step) past the review and the gate."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tablewright.blueprint.lock import DEFAULT_ENVIRONMENT, LockFile, MigratedRecord, lock_path, lock_text, read_lock
from tablewright.design.design import ENTITY_ATTRIBUTE
from tablewright.migrate.control import CONTROL
from tablewright.migrate.migration import Migration

EXAMPLES = 10  # items shown that are not migrated


@dataclass
class Verification:
    stack: str
    table: str
    identity: str
    scanned: int = 0
    entities: dict[str, list[int]] = field(default_factory=dict)  # later entity -> [items, as the design reads them]
    patterns: dict[str, int] = field(default_factory=dict)  # pattern -> items of the migrated entities it can find
    problems: int = 0
    examples: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return self.problems == 0

    @property
    def items(self) -> int:
        return sum(counts[0] for counts in self.entities.values())


def scan(client: Any, plan: Migration, **extra: Any) -> Iterator[dict[str, Any]]:
    """Every item of the table but the migration's control items (told by their partition key), page by page."""
    arguments: dict[str, Any] = {"TableName": plan.table, **extra}
    partition_key = plan.new.design.table_keys.pk
    while True:
        page = client.scan(**arguments)
        for item in page.get("Items", []):
            if not str(item.get(partition_key, {}).get("S", "")).startswith(CONTROL):
                yield item
        if "LastEvaluatedKey" not in page:
            return
        arguments["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def count_items(client: Any, plan: Migration) -> dict[str, int]:
    """How many items each migrated entity has now (a Scan that returns only their marker)."""
    counts = dict.fromkeys(plan.rewriter.moves, 0)
    names = {"#e": ENTITY_ATTRIBUTE, "#k": plan.new.design.table_keys.pk}
    for item in scan(client, plan, ProjectionExpression="#e, #k", ExpressionAttributeNames=names):
        marker = str(item.get(ENTITY_ATTRIBUTE, {}).get("S"))
        if marker in counts:
            counts[marker] += 1
    return counts


def verify_table(client: Any, plan: Migration) -> Verification:
    design = plan.new.design
    later = {move.entity for move in plan.rewriter.moves.values() if not move.delete}
    readers = {query.pattern: query for query in design.plans if set(query.entities) & later}
    result = Verification(plan.stack, plan.table, plan.identity,
                          entities={entity: [0, 0] for entity in sorted(later)},
                          patterns=dict.fromkeys(sorted(readers), 0))
    for item in scan(client, plan, ConsistentRead=True):
        result.scanned += 1
        marker = str(item.get(ENTITY_ATTRIBUTE, {}).get("S"))
        problem = plan.rewriter.problem(item)
        if problem is not None:
            result.problems += 1
            if len(result.examples) < EXAMPLES:
                result.examples.append(problem)
        if marker not in later and marker not in plan.rewriter.moves:
            continue
        entity = plan.rewriter.moves[marker].entity if marker in plan.rewriter.moves else marker
        if entity not in result.entities:
            continue
        result.entities[entity][0] += 1
        result.entities[entity][1] += problem is None and marker == entity
        for pattern, query in readers.items():
            keys = [name for name in (query.keys.pk, query.keys.sk) if name]
            if entity in query.entities and marker == entity and all(name in item for name in keys):
                result.patterns[pattern] += 1
    return result


def record_verified(plan: Migration, blueprint: str, verification: Verification, endpoint: str | None) -> Path | None:
    """Record the verified migration in the lock beside `blueprint` (a file; a git ref has no lock to write): its
    declarations, so that removing them from the blueprint passes, and the table and endpoint (None: AWS) the
    Scan read. The lock's path, or None."""
    path = Path(blueprint)
    if not path.is_file():
        return None
    where = lock_path(path)
    lock = read_lock(where)
    environment = plan.new.source.environment or DEFAULT_ENVIRONMENT
    if lock is None or environment not in lock.environments:
        return None
    entry = lock.environments[environment]
    verified = datetime.now(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")
    record = MigratedRecord(identity=plan.identity, declarations=plan.declarations, items=verification.items,
                            verified=verified, table=plan.table, endpoint=endpoint)
    records = [*(old for old in entry.migrated if old.identity != plan.identity), record][-MAX_RECORDS:]
    done = {text for kept in records for text in kept.declarations}
    entities = {name: locked.model_copy(update={"moving": None}) if locked.moving and set(
        locked.moving.declarations) <= done else locked for name, locked in entry.entities.items()}
    updated = entry.model_copy(update={"migrated": records, "entities": entities})  # old keys no longer read
    new = LockFile(lock_version=lock.lock_version, blueprint=lock.blueprint,
                   environments={**lock.environments, environment: updated})
    staging = where.with_name(f".{where.name}.migrate")
    staging.unlink(missing_ok=True)  # never written through a link left there
    with staging.open("x") as written:
        written.write(lock_text(new.model_dump(mode="json", exclude_defaults=True)))
    staging.replace(where)
    return where


MAX_RECORDS = 20  # the most recent verified migrations a lock keeps per environment
