"""What the design stage produces: key shapes per index, GSIs with projections, one query plan per pattern."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from tablewright.blueprint.language import Blueprint, KeyAttributes, ScheduledMinimum
from tablewright.blueprint.lock import MovingKeys
from tablewright.blueprint.templates import KeyTemplate

TABLE = "table"
ENTITY_ATTRIBUTE = "_entity"


def place(index: str) -> str:
    """An index as messages name it: `the table`, or the index's name."""
    return "the table" if index == TABLE else index


@dataclass(frozen=True)
class KeyNames:
    """The item attributes holding an index's partition and sort key (`sk` None: it has no sort key)."""

    pk: str
    sk: str | None

    @property
    def names(self) -> tuple[str, ...]:
        return (self.pk,) if self.sk is None else (self.pk, self.sk)

    def of(self, item: Mapping[str, Mapping[str, Any]]) -> tuple[str, str] | None:
        """An item's (partition, sort) key text here (sort "" without a sort key); None when the item
        lacks it (a sparse index)."""
        if any(name not in item for name in self.names):
            return None
        return item[self.pk]["S"], item[self.sk]["S"] if self.sk is not None else ""


DEFAULT_TABLE_KEYS = KeyNames("PK", "SK")
KEY_TYPE_LETTER: dict[str, Literal["S", "N", "B"]] = {"string": "S", "number": "N", "binary": "B"}


def key_names(blueprint: Blueprint, index: str) -> KeyNames:
    """The table's `keys` (default `PK`/`SK`); an index's `keys` (default `GSI1PK`/`GSI1SK`, and a local
    index's partition key is the table's)."""
    table = _declared(blueprint.table.keys) or DEFAULT_TABLE_KEYS
    if index == TABLE:
        return table
    spec = blueprint.indexes.get(index)
    local = spec is not None and spec.type == "local"
    declared = _declared(spec.keys) if spec is not None else None
    if declared is not None:
        return KeyNames(table.pk, declared.sk) if local else declared
    return KeyNames(table.pk if local else f"{index}PK", f"{index}SK")


def _declared(keys: KeyAttributes | None) -> KeyNames | None:
    if keys is None:
        return None
    sort = keys.sort
    return KeyNames(keys.partition.name, sort.name if sort else None)


def key_types(blueprint: Blueprint) -> dict[str, Literal["S", "N", "B"]]:
    """The DynamoDB type of every declared key attribute (attributes the planner names hold strings)."""
    types: dict[str, Literal["S", "N", "B"]] = {}
    for keys in [blueprint.table.keys] + [spec.keys for spec in blueprint.indexes.values()]:
        if keys is None:
            continue
        for attribute in (keys.partition, keys.sort):
            if attribute is not None:
                types[attribute.name] = KEY_TYPE_LETTER[attribute.type]
    return types


@dataclass(frozen=True)
class Shape:
    """An entity's key templates on one index, the attributes they are written to, and (when the
    partition key is sharded) the attributes hashed into the shard number."""

    pk: KeyTemplate
    sk: KeyTemplate
    keys: KeyNames
    shard_by: tuple[str, ...] = ()

    @property
    def shards(self) -> int:
        return self.pk.shards

    def __str__(self) -> str:
        return f"{self.pk.text} / {self.sk.text}" if self.keys.sk is not None else self.pk.text


@dataclass(frozen=True)
class Projection:
    type: Literal["KEYS_ONLY", "INCLUDE", "ALL"]
    attributes: tuple[str, ...] = ()

    def lacks(self, needed: tuple[str, ...]) -> tuple[str, ...]:
        if self.type == "ALL":
            return ()
        return tuple(a for a in needed if a not in self.attributes)

    def __str__(self) -> str:
        return f"INCLUDE ({', '.join(self.attributes)})" if self.type == "INCLUDE" else self.type


@dataclass(frozen=True)
class IndexDesign:
    """A secondary index: which entities take part with which keys, and what it projects.

    `retiring`: kept because it is deployed (locked) but no pattern reads it any more; `successor` names
    the index that took its patterns, `predecessor` the one whose patterns this one took.
    """

    name: str
    keys: KeyNames
    members: tuple[tuple[str, Shape], ...]
    projection: Projection
    patterns: tuple[str, ...]
    reason: str
    local: bool = False
    locked: bool = False
    retiring: bool = False
    successor: str | None = None
    predecessor: str | None = None


@dataclass(frozen=True)
class Parameter:
    """A value the application supplies when it runs a query plan.

    `key` parameters are written as they appear inside keys; `value` parameters (filters) as the
    attribute is stored; `derived` ones (a shard number, a time bucket) are computed from others; the
    `clock` one (`{_now}`) is the current time in epoch seconds, which hides expired items.
    """

    name: str
    attribute: str
    encoding: str
    role: Literal["key", "value", "derived", "clock"] = "key"


@dataclass(frozen=True)
class FanOut:
    """A read that takes one request per shard or per time bucket, merged in sort-key order."""

    kind: Literal["shards", "buckets"]
    shards: int = 0
    attribute: str = ""
    bucket: str = ""

    def describe(self) -> str:
        if self.kind == "shards":
            return f"one request per shard 0..{self.shards - 1}, merged by sort key"
        return f"one request per {self.bucket} from {self.attribute}.from to {self.attribute}.to, in order"


@dataclass(frozen=True)
class FollowUp:
    """A BatchGetItem on the base table for attributes the index does not project."""

    attributes: tuple[str, ...]
    operation: str = "BatchGetItem"


NOW = "_now"  # the `clock` parameter: the current time in epoch seconds


@dataclass(frozen=True)
class QueryPlan:
    """How one access pattern runs: a single GetItem or Query (plus an optional follow-up)."""

    pattern: str
    entities: tuple[str, ...]
    operation: Literal["GetItem", "Query", "Scan"]
    index: str
    keys: KeyNames
    shape: Shape
    key_condition: str
    values: tuple[tuple[str, str], ...]
    parameters: tuple[Parameter, ...]
    filter_expression: str | None
    filter_values: tuple[tuple[str, dict[str, str]], ...]
    hides_expired: str | None  # the TTL attribute of the items past it the request filters out (`{_now}`)
    fan_out: FanOut | None
    scan_index_forward: bool
    limit: int | None
    consistent: bool
    count: bool  # `Select: COUNT`: the answer is how many items match, not the items
    returns: tuple[str, ...]
    projected: tuple[str, ...]
    follow_up: FollowUp | None
    order_attributes: tuple[str, ...]
    summary: str
    notes: tuple[str, ...] = ()
    until_ready: str | None = None  # the index that serves the pattern while `index` is being built
    table_keys: KeyNames = DEFAULT_TABLE_KEYS  # the base table's key attributes (a follow-up reads by them)
    batch: int | None = None  # a GetItem sent as one BatchGetItem of this many keys per call

    @property
    def sent_operation(self) -> Literal["GetItem", "BatchGetItem", "Query", "Scan"]:
        """The API operation the request is: a batch of GetItems is one BatchGetItem."""
        return "BatchGetItem" if self.batch else self.operation

    @property
    def operations_per_call(self) -> int:
        """Requests per call when the answer fits one page (fan-out over buckets counted once)."""
        reads = self.fan_out.shards if self.fan_out and self.fan_out.kind == "shards" else 1
        return reads + (1 if self.follow_up else 0)


DEFAULT_TARGET = 70  # percent: the autoscaling target when the blueprint sets none


@dataclass(frozen=True)
class Scaling:
    """Target tracking of one direction: the utilization it holds and how fast it reacts (cooldowns in
    seconds; None leaves Application Auto Scaling's default)."""

    target: int = DEFAULT_TARGET
    scale_in_cooldown: int | None = None
    scale_out_cooldown: int | None = None
    disable_scale_in: bool = False
    scheduled: tuple[ScheduledMinimum, ...] = ()


@dataclass(frozen=True)
class CapacityPolicy:
    """How the table or one GSI is billed and autoscaled, resolved once from the blueprint (the index's
    `capacity`, else the table's, else on demand): every later stage reads this and nothing else."""

    billing: Literal["provisioned", "on_demand"]
    read: tuple[int, int] | None = None  # (min, max) capacity units, provisioned only
    write: tuple[int, int] | None = None
    target: int = DEFAULT_TARGET  # autoscaling target utilization, percent (a direction may set its own)
    source: tuple[str, ...] = ("table", "capacity")  # the blueprint field it comes from
    read_scaling: Scaling | None = None  # None: `target`, default cooldowns
    write_scaling: Scaling | None = None

    def bounds(self, direction: Literal["read", "write"]) -> tuple[int, int] | None:
        return self.read if direction == "read" else self.write

    def scaling(self, direction: Literal["read", "write"]) -> Scaling:
        own = self.read_scaling if direction == "read" else self.write_scaling
        return own or Scaling(self.target)


@dataclass(frozen=True)
class TableDesign:
    blueprint: Blueprint
    shapes: dict[str, dict[str, Shape]]
    indexes: tuple[IndexDesign, ...]
    plans: tuple[QueryPlan, ...]
    notes: tuple[str, ...] = field(default=())
    # "table" and every global index -> its billing and autoscaling (local indexes share the table's)
    capacity: dict[str, CapacityPolicy] = field(default_factory=dict)
    # entities gone from the blueprint whose items stay in the table -> their table keys (pk, sk), from the lock
    retained: dict[str, tuple[str, str | None]] = field(default_factory=dict)
    # entities whose items a pending rename or key migration moves -> the keys old items carry (design.moving)
    moving: dict[str, MovingKeys] = field(default_factory=dict)

    @property
    def table_keys(self) -> KeyNames:
        return key_names(self.blueprint, TABLE)

    @property
    def key_attributes(self) -> tuple[str, ...]:
        names = [self.table_keys] + [index.keys for index in self.indexes]
        return tuple(dict.fromkeys(attribute for pair in names for attribute in pair.names))

    @property
    def global_indexes(self) -> tuple[IndexDesign, ...]:
        return tuple(index for index in self.indexes if not index.local)

    @property
    def local_indexes(self) -> tuple[IndexDesign, ...]:
        return tuple(index for index in self.indexes if index.local)

    def index(self, name: str) -> IndexDesign:
        return next(index for index in self.indexes if index.name == name)

    def index_is_local(self, name: str) -> bool:
        return name != TABLE and self.index(name).local

    def plan(self, pattern: str) -> QueryPlan:
        return next(plan for plan in self.plans if plan.pattern == pattern)
