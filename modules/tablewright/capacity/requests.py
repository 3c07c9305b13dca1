"""The requests a generated client sends per call of a pattern and per write of an entity: one model, read by the
capacity estimate (its units and Contributor Insights events), the simulator (through the flows) and the capacity
report, and checked against both generated clients by recording what they send (tests/client/test_client_requests.py).

Reads, per call: a GetItem; a BatchGetItem per 100 keys (DynamoDB's limit per request) or per 16 MB returned; a
Query or Scan per shard (a time-bucket fan-out: per bucket the range spans, one when it spans one) and per page;
the follow-up BatchGetItem per 100 items an index query returns. A read with `limit` stops once it has that many
items; without one the client reads every page. Hiding expired items filters a page after its `Limit`: a page whose
expired items are not yet deleted holds fewer, and the client reads the next page for the rest (one request more
per such page; the model counts pages that hold their `limit`).

Writes, per write: an insert is a PutItem and a delete a DeleteItem; an update is an UpdateItem, preceded by a
strongly consistent GetItem when it changes part of an index key and the call lacks the rest (the client reads the
rest to rewrite the key, and conditions the update on what it read; `writes.passes` says the call passes it); an
update that changes the table key moves the item: a strongly consistent GetItem of the whole item, then its delete
and put in one TransactWriteItems. An attribute changed by a share of updates (`writes.changes: {cell: 0.05}`)
counts for that share, each independently. A write whose condition fails was sent all the same. A TTL expiry sends
nothing.

While a migration moves an entity's keys the clients send more (a GetItem falls back to the old key, a Query also
asks the old one): the model does not count those; docs/guides/application-clients.md says so.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from tablewright.capacity.size import read_units
from tablewright.design.design import TABLE, QueryPlan, TableDesign

# BatchGetItem reads at most 100 items and returns at most 16 MB a request
# (https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_BatchGetItem.html).
BATCH_GET_KEYS = 100
BATCH_GET_BYTES = 16 * 2**20


@dataclass(frozen=True)
class Request:
    """One kind of request a call or a write sends, and how many of it."""

    operation: str  # the DynamoDB action: GetItem, BatchGetItem, Query, Scan, PutItem, UpdateItem, ...
    count: float  # per call of the pattern (or per write of the entity)
    why: str = ""

    def describe(self) -> str:
        return f"{self.count:g} {self.operation}" + (f" ({self.why})" if self.why else "")


def batch_get_requests(items: float, item_bytes: int) -> int:
    """BatchGetItem requests for `items` keys of `item_bytes` each: 100 keys and 16 MB a request."""
    return max(1, math.ceil(items / BATCH_GET_KEYS), math.ceil(items * item_bytes / BATCH_GET_BYTES))


def read_requests(plan: QueryPlan, pages: int = 1, fetched: float = 0.0, item_bytes: int = 0,
                  shards: int | None = None) -> tuple[Request, ...]:
    """The requests of one call of `plan` when each of its Query or Scan requests reads `pages` pages and the call
    returns `fetched` items to a follow-up; a batch's (or the follow-up's) items of `item_bytes` each; `shards`: of a
    sharded read, those it reads (a count stops once it has its limit), all when None."""
    if plan.batch:
        return (Request("BatchGetItem", batch_get_requests(plan.batch, item_bytes),
                        f"{plan.batch} keys, at most {BATCH_GET_KEYS} a request"),)
    if plan.operation == "GetItem":
        return (Request("GetItem", 1),)
    why, count = "one page" if pages == 1 else f"{pages} pages of 1 MB", 1
    if plan.fan_out is not None and plan.fan_out.kind == "shards":
        count = plan.fan_out.shards if shards is None else shards
        why += f" of each of {count} shards, merged by sort key" if count == plan.fan_out.shards else \
            f" of {count} of {plan.fan_out.shards} shards: the count stops at its limit"
    elif plan.fan_out is not None:
        bucket = plan.fan_out.bucket
        why += f" of each {bucket} the range spans, in order (a range of one {bucket} counted)"
    found = [Request(plan.operation, count * pages, why)]
    if plan.follow_up is not None and fetched:
        found.append(Request("BatchGetItem", batch_get_requests(math.ceil(fetched), item_bytes),
                             f"the follow-up of {fetched:g} items, at most {BATCH_GET_KEYS} a request"))
    return tuple(found)


@dataclass(frozen=True)
class WriteRequests:
    """What one write of a kind sends, and the read units its reads take (charged to the table)."""

    requests: tuple[Request, ...]
    read_units: float = 0.0
    reads_before: tuple[str, ...] = ()  # the attributes an update reads first (to rewrite a partly changed key)
    partial_reads: float = 0.0  # the share of updates that read them (the rest of the reads: moves)


def _index_key_attributes(design: TableDesign, entity: str) -> dict[str, set[str]]:
    """Each index's key attributes of the entity (template placeholders and shard inputs)."""
    return {index: set(shape.pk.attributes + shape.sk.attributes + shape.shard_by)
            for index, shape in design.shapes[entity].items()}


def chance(shares: Mapping[str, float], attributes: set[str]) -> float:
    """The share of updates that change at least one of `attributes` (each changed independently)."""
    return 1 - math.prod(1 - share for attribute, share in shares.items() if attribute in attributes)


def update_requests(design: TableDesign, entity: str, shares: Mapping[str, float], item_bytes: int,
                    passes: frozenset[str] = frozenset()) -> WriteRequests:
    """An update as the client sends it (`_Entity.update`), of the attributes `shares` names, each changed by that
    share of the updates, with `passes` (attributes every update passes unchanged): a move when the table key
    changes (a GetItem of the whole item, then a TransactWriteItems), else an UpdateItem, with a strongly
    consistent GetItem first when an index key changes only in part (the client reads what the call lacks of it).
    A GetItem is charged on the whole item whatever it projects
    (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/read-write-operations.html)."""
    keys = _index_key_attributes(design, entity)
    table_key = keys.pop(TABLE)
    given = set(shares) | passes
    partial = [attributes for attributes in keys.values()
               if attributes & set(shares) and attributes - given - table_key]
    needed = tuple(sorted({a for attributes in partial for a in attributes} - given - table_key))
    moved = chance(shares, table_key)
    partly = (1 - moved) * chance(shares, {a for attributes in partial for a in attributes})
    reads = moved + partly
    why = [*(["the whole item, to move it"] if moved else []),
           *([f"{', '.join(needed)}, the rest of an index key it changes"] if needed else [])]
    found = [Request("GetItem", reads, "strongly consistent: " + "; or ".join(why))] if reads else []
    found += [Request("TransactWriteItems", moved, "its delete and its put under the new key")] if moved else []
    found += [Request("UpdateItem", 1 - moved)] if moved < 1 else []
    return WriteRequests(tuple(found), reads * read_units(item_bytes, consistent=True), needed, partly)


def write_requests(design: TableDesign, entity: str, kind: str, shares: Mapping[str, float], item_bytes: int,
                   passes: frozenset[str] = frozenset()) -> WriteRequests:
    """What one write of `kind` (insert, update, delete, expiry; a failed condition's too) sends; `shares`: the
    attributes an update changes, and the share of updates that change each; `passes`: those it passes unchanged."""
    base = kind.removesuffix(" (condition fails)")
    if base == "insert":
        return WriteRequests((Request("PutItem", 1),))
    if base == "delete":
        return WriteRequests((Request("DeleteItem", 1),))
    if base == "update":
        return update_requests(design, entity, shares, item_bytes, passes)
    return WriteRequests(())
