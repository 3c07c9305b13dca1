"""The traffic a design receives, as the capacity estimate, the simulator and lint see it: flows of units onto each
table and GSI, and the busiest partition-key values those flows land on.

A flow is one pattern's reads or one entity's writes on one target (the table, local indexes included, or a
GSI), in capacity units per second on average, shaped over the day by its profile. An entity's writes are those
that consume capacity (`entity_writes`): TTL expiries are free, so neither its average nor an event's `rate`
counts them, and an entity whose only writes are events has a flow of no average. A hot key is one value of a
partition-key template (`STATUS#ONLINE`), with the share of each flow that lands on it: the value's share of
the template's traffic (declared, or judged at its worst), divided by the shards that spread it. A single item
(a key whose partition holds one item) is not spread by sharding: every write of it lands on the same key.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Literal

from tablewright.blueprint.traffic import OCCURRENCES_PER_MONTH, Profile, entity_profile, pattern_profile
from tablewright.blueprint.traits import SPREAD_FROM, Component, counted_items, hot_values, key_components
from tablewright.capacity.estimate import ReadCost, WriteCost, insert_units
from tablewright.capacity.jobs import job_profile
from tablewright.design.design import TABLE, Shape, TableDesign
from tablewright.design.serve import may_share

Direction = Literal["read", "write"]
PARTITION_UNITS = {"read": 3000, "write": 1000}  # per partition, so per key value (Developer Guide, see engine)


@dataclass(frozen=True)
class Flow:
    source: str  # the pattern (reads) or entity (writes)
    direction: Direction
    target: str  # "table" or a GSI
    requests: float  # calls of the pattern (or writes of the entity) per second, on average over a normal day
    per_request: float  # units one of them takes on this target
    profile: Profile
    entity: str  # the entity written (writes) or read first (reads)
    before_write: bool = False  # reads the client makes before it writes (`source` is then the entity)

    @property
    def pattern(self) -> str | None:
        """The access pattern whose calls the flow is (None: an entity's writes, or the reads they make)."""
        return self.source if self.direction == "read" and not self.before_write else None

    @property
    def units(self) -> float:
        return self.requests * self.per_request

    @property
    def peak(self) -> float:
        return self.per_request * self.profile.peak(self.requests)


@dataclass(frozen=True)
class HotKey:
    """One busy value of a partition-key template on a target, and the share of each flow that lands on it."""

    target: str
    template: str
    value: str  # the value, in words (`the busiest value`, `ONLINE`)
    rank: int  # 0 for the busiest value of its template
    entities: tuple[str, ...]
    terms: tuple[tuple[int, float], ...]  # (index into TrafficModel.flows, share of that flow's units)
    shards: int  # the shards spreading it (1: none, or a single item, which sharding cannot spread)
    single_item: bool
    components: tuple[Component, ...] = ()

    @property
    def label(self) -> str:
        return f"{self.template} = {self.value}"


@dataclass(frozen=True)
class TrafficModel:
    flows: tuple[Flow, ...]
    hot_keys: tuple[HotKey, ...]
    targets: tuple[str, ...] = field(default=(TABLE,))

    def on(self, target: str, direction: Direction) -> list[int]:
        return [i for i, flow in enumerate(self.flows) if flow.target == target and flow.direction == direction]

    def key_peak(self, key: HotKey, direction: Direction) -> float:
        """The key's busiest moment in one direction: each flow's peak times its share (flows that peak at
        different times are added as if they coincided: the conservative reading)."""
        return sum(self.flows[i].peak * share for i, share in key.terms if self.flows[i].direction == direction)

    def key_average(self, key: HotKey, direction: Direction) -> float:
        return sum(self.flows[i].units * share for i, share in key.terms if self.flows[i].direction == direction)

    @cached_property
    def event_weights(self) -> dict[str, tuple[float, float]]:
        """Each event (by where it is declared) -> (its share of the event day's extra units, occurrences a month)."""
        extra: dict[str, tuple[float, float]] = {}
        volumes: dict[tuple[int, float, int], float] = {}  # (profile, requests, surge) -> one occurrence's extra
        for flow in self.flows:
            for number, surge in enumerate(flow.profile.surges):
                key = (id(flow.profile), flow.requests, number)
                if key not in volumes:
                    volumes[key] = flow.profile.event_volume(flow.requests, surge)
                units = flow.per_request * volumes[key]
                before = extra.get(surge.where, (0.0, OCCURRENCES_PER_MONTH[surge.every]))
                extra[surge.where] = (before[0] + units, before[1])
        total = sum(units for units, _ in extra.values()) or 1.0
        return {where: (units / total, per_month) for where, (units, per_month) in extra.items()}

    def with_flows(self, flows: dict[int, Flow]) -> TrafficModel:
        return replace(self, flows=tuple(flows.get(i, flow) for i, flow in enumerate(self.flows)))


def _target(design: TableDesign, index: str) -> str:
    return TABLE if index == TABLE or design.index_is_local(index) else index


def flows(design: TableDesign, reads: Sequence[ReadCost], writes: Sequence[WriteCost]) -> list[Flow]:
    """Each pattern's reads and each entity's writes on each target, shaped by its daily profile."""
    blueprint = design.blueprint
    found = []
    for read in reads:
        schedule = blueprint.access_patterns[read.pattern].schedule
        # a job's reads fall in its window only (capacity/jobs.py)
        profile = pattern_profile(blueprint, read.pattern) if schedule is None else job_profile(read.pattern, schedule)
        entity = design.plan(read.pattern).entities[0]
        surges = any(surge.rate for surge in profile.surges)
        if read.units_per_call and (read.rps or surges):
            found.append(Flow(read.pattern, "read", _target(design, read.index), read.rps, read.units_per_call,
                              profile, entity))
        if read.table_units_per_call and (read.rps or surges):
            found.append(Flow(read.pattern, "read", TABLE, read.rps, read.table_units_per_call, profile, entity))
    for write in writes:
        profile = entity_profile(blueprint, write.entity)
        rate, per_target = entity_writes(design, write, profile)
        for target, units in sorted(per_target.items()):
            if units:
                found.append(Flow(write.entity, "write", target, rate, units, profile, write.entity))
        if rate and (before := sum(kind.rate * kind.read_units for kind in write.kinds)):
            # the GetItem the client sends before an update that changes part of an index key or the table key
            # (capacity/requests.py), per write of the entity, so that an event's `rate` scales it as it does them
            found.append(Flow(write.entity, "read", TABLE, rate, before / rate, profile, write.entity, True))
    return found


def entity_writes(design: TableDesign, write: WriteCost, profile: Profile) -> tuple[float, dict[str, float]]:
    """(writes per second on average, units one write takes on each target): the writes an entity's flows count,
    its curve scales and an event's `rate` gives. Only writes that consume capacity count (inserts, updates,
    deletes, failed conditions, in their declared mix): TTL expiries are free and never dilute an event's rate.
    An entity that declares none of them and has an event with a `rate` writes inserts during it."""
    charged = sum(kind.rate for kind in write.kinds if any(kind.units.values()))
    if charged:
        units = write.units_per_second
    elif any(surge.rate for surge in profile.surges):
        units = insert_units(design, write.entity)
    else:
        return 0.0, {}
    per_target: dict[str, float] = {}
    for index, value in units.items():
        per_target[_target(design, index)] = per_target.get(_target(design, index), 0.0) + value
    return charged, {target: value / (charged or 1.0) for target, value in per_target.items()}


def partition_families(design: TableDesign, members: dict[str, Shape]) -> list[list[str]]:
    """Entities whose partition keys can take the same values share partitions (item collections): the
    families of the given members (entity -> its shape on one index), each sorted."""
    families: list[list[str]] = []
    for entity in sorted(members):
        joined = [f for f in families if any(
            may_share(design.blueprint, entity, members[entity].pk, other, members[other].pk) for other in f)]
        merged = [entity] + [e for f in joined for e in f]
        families = [f for f in families if f not in joined] + [sorted(merged)]
    return families


def single_item(design: TableDesign, entity: str, shape: Shape) -> bool:
    """Whether each partition-key value of the shape holds one item of the entity: its partition key names
    every attribute of the entity's primary key, and the shard number (if any) comes from those too."""
    table = design.shapes[entity][TABLE]
    primary = set(table.pk.attributes + table.sk.attributes)
    return primary <= set(shape.pk.attributes) and set(shape.shard_by) <= primary


def _spread(shape: Shape, alone: bool) -> int:
    return 1 if alone else shape.shards


def _components(design: TableDesign, entity: str, shape: Shape, dominant: float) -> list[Component]:
    spec = design.blueprint.entities[entity]
    parts = key_components(shape.pk, spec.attributes, dominant)
    few = spec.item_count is not None and 0 < spec.item_count < SPREAD_FROM
    if hot_values(parts) is None and few and single_item(design, entity, shape):
        return counted_items(shape.pk, spec.item_count or 1, entity, dominant)
    return parts


def hot_keys(design: TableDesign, all_flows: list[Flow]) -> list[HotKey]:
    dominant = design.blueprint.traffic.dominant_share
    found = []
    for index in [TABLE] + [i.name for i in design.global_indexes]:
        members = {e: shapes[index] for e, shapes in design.shapes.items() if index in shapes}
        for family in partition_families(design, members):
            parts = {e: _components(design, e, members[e], dominant) for e in family}
            values = {e: found_values for e in family if (found_values := hot_values(parts[e])) is not None}
            if not values:
                continue
            template = " / ".join(dict.fromkeys(members[e].pk.text for e in family))
            lead = sorted(values)[0]
            for rank in range(max(len(v) for v in values.values())):
                terms, alone = [], {e: single_item(design, e, members[e]) for e in values}
                for i, flow in enumerate(all_flows):
                    if flow.target != index or flow.entity not in values or rank >= len(values[flow.entity]):
                        continue
                    share = values[flow.entity][rank][1] / _spread(members[flow.entity], alone[flow.entity])
                    terms.append((i, share))
                if not terms:
                    continue
                label = values[lead][rank][0] if rank < len(values[lead]) else f"value {rank + 1}"
                shards = max(_spread(members[e], alone[e]) for e in values)
                found.append(HotKey(index, template, label, rank, tuple(family), tuple(terms), shards,
                                    all(alone.values()), tuple(c for e in family for c in parts[e])))
    return found


def traffic_model(design: TableDesign, reads: Sequence[ReadCost], writes: Sequence[WriteCost]) -> TrafficModel:
    """The declared traffic of a design: built once per estimate (the capacity report holds it), read by the
    loads, the simulator, lint, calibrate, explain and the review."""
    found = flows(design, reads, writes)
    targets = (TABLE, *(index.name for index in design.global_indexes))
    return TrafficModel(tuple(found), tuple(hot_keys(design, found)), targets)
