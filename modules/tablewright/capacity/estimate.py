"""Capacity and cost from the blueprint's declared rates, sizes and counts (DynamoDB Developer Guide).

Reads: the total size of the items a request reads (index entries on an index), rounded up to 4 KB
per request, halved when eventually consistent; a request returns at most 1 MB a page, and the client reads
the pages until it has `limit` items (all without one), each page rounded on its own; fan-out reads
round per request; follow-up BatchGetItem items round one by one. How many items a Query reads comes
from the data: `item_count` over the number of distinct partitions its `=` conditions address.

Writes, per kind: an insert writes the item (1 WCU per KB) and its entry on every index the item is
in (sparse: only the share of items that carry the index's key attributes); an update writes the item
and, per index, two entries when it changes a key attribute of that index, one when it changes a
projected attribute, none otherwise; on the table a changed key is a delete and a put in a
transaction; a delete writes the item and every entry; a TTL expiry is free. Transactions double
the table's writes. A write whose condition fails costs the table the existing item's size; a
BatchWriteItem costs what its items would cost one by one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

from tablewright.blueprint.encoding import example_value
from tablewright.blueprint.language import AttributeSpec
from tablewright.blueprint.traits import mutable
from tablewright.capacity.requests import (
    BATCH_GET_BYTES,
    Request,
    batch_get_requests,
    chance,
    read_requests,
    write_requests,
)
from tablewright.capacity.size import WRITE_UNIT_BYTES, batch_read_units, item_size, read_units
from tablewright.design.design import TABLE, QueryPlan, Shape, TableDesign
from tablewright.design.items import build_item

STORAGE_OVERHEAD_BYTES = 100  # per item, in the table and in every index (Developer Guide)


PAGE_BYTES = 2**20  # a Query or Scan returns at most 1 MB per request
ASSUMED_ITEMS = 10  # items a Query reads when neither `limit`, `items` nor the data say


@dataclass(frozen=True)
class ReadCost:
    pattern: str
    index: str
    items_per_call: float
    bytes_per_item: int
    requests: tuple[Request, ...]  # what the generated client sends per call (capacity/requests.py)
    units_per_call: float
    table_units_per_call: float  # follow-up or local-index fetches, charged to the table
    rps: float
    basis: str = ""  # where items_per_call comes from, in words
    fetched_items: float = 0.0  # items a follow-up BatchGetItem (or a local index) fetches from the table per call

    @property
    def requests_per_call(self) -> int:
        return math.ceil(sum(request.count for request in self.requests))

    @property
    def units_per_second(self) -> float:
        return self.units_per_call * self.rps

    @property
    def table_units_per_second(self) -> float:
        return self.table_units_per_call * self.rps


@dataclass(frozen=True)
class WriteKind:
    """One kind of write (insert, update, delete, expiry) of an entity, and what one such write costs."""

    kind: str
    rate: float  # per second
    units: dict[str, float]  # index ("table" included) -> WCU per write, weighted by the share of items on it
    note: str = ""
    requests: tuple[Request, ...] = ()  # what the generated client sends per write (capacity/requests.py)
    read_units: float = 0.0  # RCU on the table per write: what the client reads before it writes


@dataclass(frozen=True)
class WriteCost:
    entity: str
    item_bytes: int
    kinds: tuple[WriteKind, ...]

    @property
    def writes_per_second(self) -> float:
        return sum(kind.rate for kind in self.kinds)

    @property
    def units_per_second(self) -> dict[str, float]:
        totals: dict[str, float] = {}
        for kind in self.kinds:
            for index, units in kind.units.items():
                totals[index] = totals.get(index, 0.0) + units * kind.rate
        return totals


def write_units(size: int) -> int:
    return max(1, math.ceil(size / WRITE_UNIT_BYTES))


def _typical(spec: AttributeSpec) -> Any:
    if spec.type == "string" and not spec.values:
        return "x" * (spec.bytes or min(spec.max_length or 16, 16))
    if spec.type == "binary" and spec.bytes:
        return b"\x00" * spec.bytes
    return example_value(spec)


def _declared_size(name: str, spec: AttributeSpec) -> int | None:
    """An attribute's bytes (name and value) as `bytes:` declares them (DynamoDB: the name's UTF-8 length plus
    the value's), or None."""
    return len(name.encode("utf-8")) + spec.bytes if spec.bytes else None


def representative_item(design: TableDesign, entity: str) -> dict[str, dict[str, Any]]:
    """An item of typical values (shared: read it, do not change it)."""
    memo = _memo(design)
    if ("item", entity) not in memo:
        specs = design.blueprint.entities[entity].attributes
        memo["item", entity] = build_item(design, entity, {name: _typical(spec) for name, spec in specs.items()})
    item: dict[str, dict[str, Any]] = memo["item", entity]
    return item


# Every size figure starts from an entity's representative item and its attributes' sizes, about 60 times per
# table: computed once per design. Keyed by identity (a design holds dicts, so it has no hash); the memo holds
# the designs it remembers, so an id is not reused while it is in the memo.
_MEMO_SIZE = 64
_MEMO: dict[int, tuple[TableDesign, dict[tuple[str, str], Any]]] = {}


def _memo(design: TableDesign) -> dict[tuple[str, str], Any]:
    found = _MEMO.get(id(design))
    if found is None:
        if len(_MEMO) >= _MEMO_SIZE:
            del _MEMO[next(iter(_MEMO))]  # the oldest
        found = _MEMO[id(design)] = (design, {})
    return found[1]


def item_bytes(design: TableDesign, entity: str) -> int:
    """The declared `item_bytes`, else the representative item's size with each attribute's declared `bytes`."""
    declared = design.blueprint.entities[entity].item_bytes
    if declared:
        return declared
    sample = representative_item(design, entity)
    specs = design.blueprint.entities[entity].attributes
    return sum(item_size({name: value}) if (size := _declared_size(name, specs[name]) if name in specs else None)
               is None else size for name, value in sample.items())


def entry_bytes(design: TableDesign, entity: str, index: str) -> int:
    """Size of the entity's entry on an index: keys plus projected attributes, scaled to the item size."""
    if index == TABLE:
        return item_bytes(design, entity)
    projection = design.index(index).projection
    return projected_bytes(design, entity, index, None if projection.type == "ALL" else projection.attributes)


def attribute_bytes(design: TableDesign, entity: str) -> dict[str, float]:
    """Bytes each attribute (name and value) takes in an average item.

    Attributes that declare `bytes:` take exactly that (and their name). Representative values give the
    others' sizes; when the declared `item_bytes` is larger, the extra goes to the free-text attributes
    outside every key that declare no size (the payload), or to every attribute without one if there is
    no such attribute, in proportion to their size.
    """
    memo = _memo(design)
    if ("sizes", entity) not in memo:
        memo["sizes", entity] = _attribute_bytes(design, entity)
    sizes: dict[str, float] = memo["sizes", entity]
    return sizes


def _attribute_bytes(design: TableDesign, entity: str) -> dict[str, float]:
    sample = representative_item(design, entity)
    specs = design.blueprint.entities[entity].attributes
    sizes = {name: float(_declared_size(name, specs[name]) or item_size({name: value}))
             for name, value in sample.items() if name in specs}
    others = sum(item_size({name: value}) for name, value in sample.items() if name not in specs)  # the keys
    extra = max(0, item_bytes(design, entity) - others - sum(sizes.values()))
    in_keys = {a for shape in design.shapes[entity].values() for a in shape.pk.attributes + shape.sk.attributes}
    undeclared = [a for a in sizes if not specs[a].bytes]
    payload = [a for a in undeclared if specs[a].type == "string" and not specs[a].values and a not in in_keys]
    receivers = payload or undeclared
    weight = sum(sizes[a] for a in receivers) or 1
    for name in receivers:
        sizes[name] += extra * sizes[name] / weight
    return sizes


def projected_bytes(design: TableDesign, entity: str, index: str, attributes: tuple[str, ...] | None) -> int:
    """Entry size on an index projecting `attributes` (None: ALL): its keys, the table's keys, the attributes."""
    if attributes is None:
        return item_bytes(design, entity)
    sample = representative_item(design, entity)
    shape = design.shapes[entity][index]
    key_attributes = set(design.table_keys.names + shape.keys.names)
    keys = item_size({name: sample[name] for name in key_attributes if name in sample})
    sizes = attribute_bytes(design, entity)
    return keys + math.ceil(sum(size for name, size in sizes.items() if name in attributes))


def presence(design: TableDesign, entity: str, index: str) -> float:
    """Share of the entity's items on `index`: those that carry every attribute of its key (sparse)."""
    specs = design.blueprint.entities[entity].attributes
    shape = design.shapes[entity][index]
    return math.prod(specs[a].presence for a in set(shape.pk.attributes + shape.sk.attributes))


def key_attributes(shape: Shape) -> set[str]:
    """Every attribute a change of which changes the key: template placeholders and shard inputs."""
    return set(shape.pk.attributes + shape.sk.attributes + shape.shard_by)


def changed_attributes(design: TableDesign, entity: str) -> tuple[tuple[str, ...], str]:
    """The attributes an update changes (`writes.changes`, else the mutable ones) and how we know."""
    spec = design.blueprint.entities[entity]
    declared = spec.write_rates.changes
    if declared is not None:
        said = [name if share == 1 else f"{name} ({share:.0%} of updates)" for name, share in declared.items()]
        return tuple(declared), f"changes {', '.join(said) or 'nothing in keys or indexes'}"
    found = sorted(a for a, attribute in spec.attributes.items() if mutable(a, attribute))
    guessed = [a for a in found if spec.attributes[a].mutable is None]
    note = f"changes {', '.join(found)}" if found else "changes no declared-mutable attribute"
    if guessed:
        note += f" ({', '.join(guessed)} guessed from the name: declare `mutable:` or `writes.changes`)"
    return tuple(found), note


def change_shares(design: TableDesign, entity: str, changes: tuple[str, ...]) -> dict[str, float]:
    """The share of updates that change each attribute of `changes`: declared (`writes.changes: {cell: 0.05}`),
    else every update changes it."""
    shares = design.blueprint.entities[entity].write_rates.changes or {}
    return {attribute: shares.get(attribute, 1.0) for attribute in changes}


def _update_units(design: TableDesign, entity: str, changes: tuple[str, ...], transaction: int) -> dict[str, float]:
    """WCU one update takes on the table and each index, on average over the updates: an update that changes an
    index's key attribute writes its entry twice (a delete of the old entry and a put of the new), one that changes
    only projected attributes once, others not at all; one that changes the table key moves the item, and every
    entry with it. An attribute a share of updates changes counts for that share: p x 2 + (1 - p) x 1 entries on an
    index that projects everything. (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/
    GSI.html#GSI.ThroughputConsiderations.Writes)"""
    units: dict[str, float] = {}
    shares = change_shares(design, entity, changes)
    moved = chance(shares, key_attributes(design.shapes[entity][TABLE]))  # a new item: every entry moves
    for index, shape in sorted(design.shapes[entity].items()):
        size = write_units(entry_bytes(design, entity, index))
        rekeyed = 1 - (1 - moved) * (1 - chance(shares, key_attributes(shape)))
        if index == TABLE:
            # A changed table key is a delete and a put, done together in a transaction (2 x 2).
            units[index] = float(size * (4 * moved + transaction * (1 - moved)))
            continue
        projection = design.index(index).projection
        keys = key_attributes(shape) | key_attributes(design.shapes[entity][TABLE])  # not re-keyed: none changed
        projected = 1.0 if projection.type == "ALL" else chance(shares, set(projection.attributes) - keys)
        entries = 2 * rekeyed + (1 - rekeyed) * projected
        units[index] = size * entries * presence(design, entity, index)
    return units


def insert_units(design: TableDesign, entity: str) -> dict[str, float]:
    """WCU one insert (or delete) takes on the table and on each index: one write of the item (twice in a
    transaction) and of each of its index entries (on a sparse index, the share of items on it)."""
    transaction = 2 if design.blueprint.entities[entity].transactional else 1
    every: dict[str, float] = {}
    for index in sorted(design.shapes[entity]):
        size = write_units(entry_bytes(design, entity, index))
        every[index] = float(size * transaction) if index == TABLE else size * presence(design, entity, index)
    return every


def write_cost(design: TableDesign, entity: str) -> WriteCost:
    spec = design.blueprint.entities[entity]
    rates = spec.write_rates
    transaction = 2 if spec.transactional else 1
    every = insert_units(design, entity)  # one write of the item and of each of its index entries
    changes, note = changed_attributes(design, entity)
    # BatchWriteItem rounds each item up to 1 KB as its own PutItem or DeleteItem would
    # (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/read-write-operations.html).
    batched = f"in BatchWriteItem requests of {rates.batch}, each item charged on its own" if rates.batch else ""
    updates, failing = _update_units(design, entity, changes, transaction), rates.failing
    kinds = [*_attempts(design, entity, WriteKind("insert", rates.inserts, every, batched), failing.get("inserts")),
             *_attempts(design, entity, WriteKind("update", rates.updates, updates, note), failing.get("updates")),
             *_attempts(design, entity, WriteKind("delete", rates.deletes, every, batched), failing.get("deletes")),
             WriteKind("expiry", rates.expiries, dict.fromkeys(every, 0.0), "TTL deletes are free")]
    size = item_bytes(design, entity)
    return WriteCost(entity, size, tuple(_sent(design, entity, kind, changes, size) for kind in kinds if kind.rate))


def _sent(design: TableDesign, entity: str, kind: WriteKind, changes: tuple[str, ...], size: int) -> WriteKind:
    """The kind with the requests the client sends for it and the read units of those that read."""
    passes = frozenset(design.blueprint.entities[entity].write_rates.passes)
    sent = write_requests(design, entity, kind.kind, change_shares(design, entity, changes), size, passes)
    return replace(kind, requests=sent.requests, read_units=sent.read_units)


def _attempts(design: TableDesign, entity: str, kind: WriteKind, failing: float | None) -> tuple[WriteKind, ...]:
    """A kind of write split by its condition: the share that succeeds costs what `kind` says; the share that
    fails still costs the table the existing item's size, at least 1 WCU, and writes no index entry
    (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/WorkingWithItems.html
    #WorkingWithItems.ConditionalUpdate)."""
    if not failing:
        return (kind,)
    failed = {index: float(write_units(item_bytes(design, entity))) if index == TABLE else 0.0 for index in kind.units}
    return (WriteKind(kind.kind, kind.rate * (1 - failing), kind.units, kind.note),
            WriteKind(f"{kind.kind} (condition fails)", kind.rate * failing, failed,
                      "the existing item's size on the table, no index entry"))


def _table_bytes(design: TableDesign) -> int:
    return sum((spec.item_count or 0) * item_bytes(design, name) for name, spec in design.blueprint.entities.items())


def attribute_cardinality(design: TableDesign, attribute: str) -> tuple[int | None, str]:
    """How many values an attribute takes, for sizing item collections: declared, enumerated, or the
    item count of an entity keyed by that attribute alone (one Customer per `customerId`)."""
    blueprint = design.blueprint
    specs = [entity.attributes[attribute] for entity in blueprint.entities.values() if attribute in entity.attributes]
    for spec in specs:
        if spec.cardinality is not None:
            return spec.cardinality, f"{spec.cardinality:,} {attribute} values (declared)"
        if spec.values:
            return len(spec.values), f"{len(spec.values)} {attribute} values"
        if spec.type == "boolean":
            return 2, f"2 {attribute} values"
    for name, entity in sorted(blueprint.entities.items()):
        table = design.shapes[name][TABLE]
        if entity.item_count and set(table.pk.attributes + table.sk.attributes) == {attribute}:
            return entity.item_count, f"{entity.item_count:,} {attribute} values (one {name} each)"
    return None, f"the number of {attribute} values is unknown (declare `cardinality:` or an entity's item_count)"


def collection(design: TableDesign, plan: QueryPlan) -> tuple[float | None, str]:
    """Expected items under the key condition of a Query: the items on the index over the number of
    partitions (and sort-key prefixes) its `=` conditions address. None when the data does not say."""
    pattern = design.blueprint.access_patterns[plan.pattern]
    counts = []
    for entity in plan.entities:
        count = design.blueprint.entities[entity].item_count
        if count is None:
            return None, f"{entity} declares no item_count"
        counts.append(count * (presence(design, entity, plan.index) if plan.index != TABLE else 1.0))
    distinct, reasons = 1, []
    for attribute in pattern.equalities:
        values, why = attribute_cardinality(design, attribute)
        if values is None:
            return None, why
        distinct *= values
        reasons.append(why)
    total = sum(counts)
    where = " x ".join(reasons) or "one partition"
    ranged = " (a range condition reads up to all of it)" if pattern.range_condition else ""
    return total / distinct, f"{total:,.0f} items over {where}{ranged}"


def read_entry_bytes(design: TableDesign, plan: QueryPlan) -> int:
    """The average entry a read of the plan returns: with several entities, each entity's entry size weighted
    by its items on the index (`item_count` x presence) when every entity declares a count, else their mean."""
    sizes = [entry_bytes(design, entity, plan.index) for entity in plan.entities]
    counts = [design.blueprint.entities[entity].item_count for entity in plan.entities]
    if len(sizes) > 1 and all(count is not None for count in counts):
        weights = [(count or 0) * (presence(design, entity, plan.index) if plan.index != TABLE else 1.0)
                   for entity, count in zip(plan.entities, counts, strict=True)]
        if sum(weights) > 0:
            return math.ceil(sum(s * w for s, w in zip(sizes, weights, strict=True)) / sum(weights))
    return math.ceil(sum(sizes) / len(sizes))


def query_read(design: TableDesign, plan: QueryPlan, requests: int) -> tuple[float, float, str]:
    """(items, read units, basis) of one call of a Query sent as `requests` requests (one per shard).

    Every request carries the pattern's `Limit` (the cookbook sends the same request to every shard), so
    each reads up to the limit of its own shard's items: the smaller of the limit and the shard's share of
    the collection. Without a limit the collection is split across the shards. A request returns at most 1 MB a
    page and the client reads on, page by page, until it has them (`query_pages`): each page is rounded up to
    4 KB on its own."""
    items, units, basis, _ = query_pages(design, plan, requests)
    return items, units, basis


def paged_units(total_bytes: int, consistent: bool) -> tuple[int, float]:
    """(pages, read units) of reading `total_bytes` through a Query or Scan: at most 1 MB a page, each page rounded
    up to 4 KB on its own (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Query.Pagination.html)."""
    pages = max(1, math.ceil(total_bytes / PAGE_BYTES))
    last = total_bytes - (pages - 1) * PAGE_BYTES
    return pages, (pages - 1) * read_units(PAGE_BYTES, consistent) + read_units(last, consistent)


def query_pages(design: TableDesign, plan: QueryPlan, requests: int) -> tuple[float, float, str, int]:
    """`query_read`, and the pages each request reads."""
    pattern = design.blueprint.access_patterns[plan.pattern]
    size = read_entry_bytes(design, plan)
    per_request, basis = _items_per_request(design, plan, pattern.items, pattern.limit, requests)
    read = math.ceil(per_request * size)
    pages, units = paged_units(read, plan.consistent)
    if pages > 1:
        basis += f"; {read / 2**20:,.1f} MB a request: {pages} pages of at most 1 MB, the client reads them all"
    return requests * per_request, requests * units, basis, pages


def read_cost(design: TableDesign, plan: QueryPlan) -> ReadCost:
    pattern = design.blueprint.access_patterns[plan.pattern]
    consistent = plan.consistent
    size = read_entry_bytes(design, plan)
    table_units = 0.0
    if plan.operation == "Scan":
        total = _table_bytes(design)
        count = sum(spec.item_count or 0 for spec in design.blueprint.entities.values())
        pages, units = paged_units(total, consistent)
        return ReadCost(plan.pattern, plan.index, count, size, read_requests(plan, pages), units, 0.0, pattern.rps,
                        "the whole table (item_count)")
    requests = plan.fan_out.shards if plan.fan_out and plan.fan_out.kind == "shards" else 1
    pages = 1
    if plan.batch:  # each item read as its own GetItem: https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/read-write-operations.html#read-operation-consumption
        items, basis = float(plan.batch), f"{plan.batch} items by key (BatchGetItem), each rounded up on its own"
        units = batch_read_units([size] * plan.batch, consistent)
        if plan.batch * size > BATCH_GET_BYTES:
            basis += (f"; {plan.batch} x {size:,} B is more than a response holds (16 MB): "
                      f"{batch_get_requests(plan.batch, size)} requests")
    elif plan.operation == "GetItem":
        items, basis = 1.0, "one item"
        units = read_units(size, consistent)
    else:
        items, units, basis, pages = query_pages(design, plan, requests)
        if plan.count and pattern.limit is not None and requests > 1:
            requests, items, units, basis = _count_stops(pattern.limit, requests, items, units, basis)
    fetched = 0.0
    if plan.follow_up is not None:
        # The follow-up BatchGetItem fetches the items the call returns: at most `limit` of those read.
        fetched = items if pattern.limit is None else min(items, float(pattern.limit))
    elif plan.index != TABLE and design.index(plan.index).local and design.index(plan.index).projection.lacks(
            plan.returns):
        fetched = items  # a local index fetches every item it reads from the table
    if fetched:
        table_units = math.ceil(fetched) * read_units(item_bytes(design, plan.entities[0]), consistent)
    fetched_bytes = item_bytes(design, plan.entities[0]) if plan.follow_up else size  # the follow-up's items
    sent = read_requests(plan, pages, fetched, fetched_bytes, requests)
    return ReadCost(plan.pattern, plan.index, round(items, 2), size, sent, units, table_units, pattern.rps, basis,
                    round(fetched, 2))


def _count_stops(limit: int, shards: int, items: float, units: float, basis: str) -> tuple[int, float, float, str]:
    """A count over shards stops once it has counted `limit` (the clients read the shards in turn): only the shards
    it needs are read, each charged as a full shard's request (the last one reads fewer: a bound)."""
    per_shard = items / shards
    needed = min(shards, max(1, math.ceil(limit / per_shard))) if per_shard else shards
    if needed == shards:
        return shards, items, units, basis
    return (needed, items * needed / shards, units * needed / shards,
            basis + f"; the count stops at its limit of {limit}: {needed} of {shards} shards read")


def _items_per_request(design: TableDesign, plan: QueryPlan, declared: int | None, limit: int | None,
                       requests: int) -> tuple[float, str]:
    """Items each of a call's `requests` requests reads (one per shard), and where the figure comes from."""
    sharded = f" over {requests} shard requests" if requests > 1 else ""
    if declared is not None:
        return declared / requests, f"declared (`items`){sharded}"
    size, why = collection(design, plan)
    filtered = bool(design.blueprint.access_patterns[plan.pattern].filter)
    if limit is not None and not filtered:
        each = f"the limit on each of {requests} shard requests" if requests > 1 else "the limit"
        if size is None:
            return float(limit), each
        share = f"of about {size / requests:,.1f} per shard" if requests > 1 else f"of about {size:,.1f}"
        return min(float(limit), size / requests), f"{each}, {share} ({why})"
    if size is None:
        return ASSUMED_ITEMS / requests, f"assumed: {why}{sharded}"
    return size / requests, why + sharded + ("; a filter reads them all before filtering" if filtered else "")
