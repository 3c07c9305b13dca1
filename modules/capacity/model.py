"""Capacity and cost from the blueprint's declared rates and sizes.

Reads: the total size of the items a request reads (index entries on an index), rounded up to
4 KB per request, halved when eventually consistent; fan-out reads round per request; follow-up
BatchGetItem items round one by one. Writes: 1 WCU per KB per item, again on every index the item
appears in; a change of an index key costs two index writes (delete + put); transactions double.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from modules.blueprint.encoding import example_value
from modules.blueprint.model import AttributeSpec
from modules.blueprint.traits import mutable
from modules.capacity.prices import BUILT_IN, Prices
from modules.capacity.size import WRITE_UNIT_BYTES, item_size, read_units
from modules.design.items import build_item
from modules.design.model import TABLE, TABLE_KEYS, QueryPlan, Shape, TableDesign

HOURS_PER_MONTH = 730
SECONDS_PER_MONTH = HOURS_PER_MONTH * 3600
STORAGE_OVERHEAD_BYTES = 100  # per item, in the table and in every index (Developer Guide)


@dataclass(frozen=True)
class ReadCost:
    pattern: str
    index: str
    items_per_call: int
    bytes_per_item: int
    requests_per_call: int
    units_per_call: float
    table_units_per_call: float  # follow-up or local-index fetches, charged to the table
    rps: float

    @property
    def units_per_second(self) -> float:
        return self.units_per_call * self.rps

    @property
    def table_units_per_second(self) -> float:
        return self.table_units_per_call * self.rps


@dataclass(frozen=True)
class WriteCost:
    entity: str
    writes_per_second: float
    item_bytes: int
    units_per_write: dict[str, int]  # index ("table" included) -> WCU per item write

    @property
    def units_per_second(self) -> dict[str, float]:
        return {index: units * self.writes_per_second for index, units in self.units_per_write.items()}


@dataclass(frozen=True)
class IndexLoad:
    index: str
    read_units_per_second: float
    write_units_per_second: float
    suggested_read: tuple[int, int]
    suggested_write: tuple[int, int]


@dataclass(frozen=True)
class CapacityReport:
    reads: tuple[ReadCost, ...]
    writes: tuple[WriteCost, ...]
    loads: tuple[IndexLoad, ...]
    prices: Prices  # what `modules/capacity/cost.py` prices this estimate with

    def read(self, pattern: str) -> ReadCost:
        return next(read for read in self.reads if read.pattern == pattern)

    def load(self, index: str) -> IndexLoad:
        return next(load for load in self.loads if load.index == index)


def write_units(size: int) -> int:
    return max(1, math.ceil(size / WRITE_UNIT_BYTES))


def _typical(spec: AttributeSpec) -> Any:
    if spec.type == "string" and not spec.values:
        return "x" * min(spec.max_length or 16, 16)
    return example_value(spec)


def representative_item(design: TableDesign, entity: str) -> dict[str, dict[str, Any]]:
    specs = design.blueprint.entities[entity].attributes
    return build_item(design, entity, {name: _typical(spec) for name, spec in specs.items()})


def item_bytes(design: TableDesign, entity: str) -> int:
    declared = design.blueprint.entities[entity].item_bytes
    return declared if declared else item_size(representative_item(design, entity))


def entry_bytes(design: TableDesign, entity: str, index: str) -> int:
    """Size of the entity's entry on an index: keys plus projected attributes, scaled to the item size."""
    if index == TABLE:
        return item_bytes(design, entity)
    projection = design.index(index).projection
    return projected_bytes(design, entity, index, None if projection.type == "ALL" else projection.attributes)


def attribute_bytes(design: TableDesign, entity: str) -> dict[str, float]:
    """Bytes each attribute (name and value) takes in an average item.

    Representative values give the base sizes; when the declared `item_bytes` is larger, the extra
    goes to the free-text attributes outside every key (the payload), or to all attributes if the
    entity has none, in proportion to their size.
    """
    sample = representative_item(design, entity)
    specs = design.blueprint.entities[entity].attributes
    sizes = {name: float(item_size({name: value})) for name, value in sample.items() if name in specs}
    extra = max(0, item_bytes(design, entity) - item_size(sample))
    in_keys = {a for shape in design.shapes[entity].values() for a in shape.pk.attributes + shape.sk.attributes}
    payload = [a for a, spec in specs.items() if spec.type == "string" and not spec.values and a not in in_keys]
    receivers = payload or list(sizes)
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
    key_attributes = (TABLE_KEYS.pk, TABLE_KEYS.sk, shape.keys.pk, shape.keys.sk)
    keys = item_size({name: sample[name] for name in key_attributes if name in sample})
    sizes = attribute_bytes(design, entity)
    return keys + math.ceil(sum(size for name, size in sizes.items() if name in attributes))


def _mutable_in(design: TableDesign, entity: str, shape: Shape) -> bool:
    specs = design.blueprint.entities[entity].attributes
    return any(mutable(a, specs[a]) for a in shape.pk.attributes + shape.sk.attributes)


def write_cost(design: TableDesign, entity: str) -> WriteCost:
    spec = design.blueprint.entities[entity]
    transaction = 2 if spec.transactional else 1
    units: dict[str, int] = {}
    for index, shape in sorted(design.shapes[entity].items()):
        size = entry_bytes(design, entity, index)
        if index == TABLE:
            # A changed table key is a delete and a put, done together in a transaction.
            changes = 4 if _mutable_in(design, entity, shape) else 1
            units[index] = write_units(size) * max(changes, transaction)
        else:
            units[index] = write_units(size) * (2 if _mutable_in(design, entity, shape) else 1)
    return WriteCost(entity, spec.writes_per_second, item_bytes(design, entity), units)


def _table_bytes(design: TableDesign) -> int:
    return sum((spec.item_count or 0) * item_bytes(design, name) for name, spec in design.blueprint.entities.items())


def read_cost(design: TableDesign, plan: QueryPlan) -> ReadCost:
    pattern = design.blueprint.access_patterns[plan.pattern]
    consistent = plan.consistent
    sizes = [entry_bytes(design, entity, plan.index) for entity in plan.entities]
    size = math.ceil(sum(sizes) / len(sizes))
    table_units = 0.0
    if plan.operation == "Scan":
        total = _table_bytes(design)
        items = sum(spec.item_count or 0 for spec in design.blueprint.entities.values())
        return ReadCost(plan.pattern, plan.index, items, size, max(1, math.ceil(total / 2**20)),
                        read_units(total, consistent), 0.0, pattern.rps)
    if plan.operation == "GetItem":
        items, requests, units = 1, 1, read_units(size, consistent)
    else:
        items = pattern.expected_items
        requests = plan.fan_out.shards if plan.fan_out and plan.fan_out.kind == "shards" else 1
        per_request = math.ceil(items / requests) * size
        units = requests * read_units(per_request, consistent)
    if plan.follow_up is not None or (plan.index != TABLE and design.index(plan.index).local
                                      and design.index(plan.index).projection.lacks(plan.returns)):
        full = item_bytes(design, plan.entities[0])
        table_units = items * read_units(full, consistent)
        requests += 1 if plan.follow_up else 0
    return ReadCost(plan.pattern, plan.index, items, size, requests, units, table_units, pattern.rps)


def _bounds(average: float, peak_factor: float, target_percent: int) -> tuple[int, int]:
    target = target_percent / 100
    low = max(1, math.ceil(average / target))
    return low, max(low, math.ceil(average * peak_factor / target))


def estimate(design: TableDesign, prices: Prices = BUILT_IN) -> CapacityReport:
    bp = design.blueprint
    reads = tuple(read_cost(design, plan) for plan in design.plans)
    writes = tuple(write_cost(design, entity) for entity in sorted(bp.entities))
    target = bp.table.capacity.target_utilization if bp.table.capacity else 70
    loads = []
    for index in [TABLE] + [i.name for i in design.global_indexes]:
        read = sum(r.units_per_second for r in reads if r.index == index)
        if index == TABLE:
            read += sum(r.table_units_per_second for r in reads)
            read += sum(r.units_per_second for r in reads if design.index_is_local(r.index))
        write = sum(w.units_per_second.get(index, 0.0) for w in writes)
        if index == TABLE:
            write += sum(units for w in writes for i, units in w.units_per_second.items() if design.index_is_local(i))
        loads.append(IndexLoad(index, read, write, _bounds(read, bp.traffic.peak_factor, target),
                               _bounds(write, bp.traffic.peak_factor, target)))
    return CapacityReport(reads, writes, tuple(loads), prices)
