"""What the design stage produces: key shapes per index, GSIs with projections, one query plan per pattern."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from modules.blueprint.model import Blueprint
from modules.blueprint.templates import KeyTemplate

TABLE = "table"
ENTITY_ATTRIBUTE = "_entity"


@dataclass(frozen=True)
class KeyNames:
    """The item attributes holding an index's partition and sort key."""

    pk: str
    sk: str


TABLE_KEYS = KeyNames("PK", "SK")


def key_names(index: str, local: bool = False) -> KeyNames:
    """`PK`/`SK` for the table, `GSI1PK`/`GSI1SK` for a GSI; a local index keeps the table's `PK`."""
    if index == TABLE:
        return TABLE_KEYS
    return KeyNames(TABLE_KEYS.pk if local else f"{index}PK", f"{index}SK")


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
        return f"{self.pk.text} / {self.sk.text}"


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
    attribute is stored; `derived` ones (a shard number, a time bucket) are computed from others.
    """

    name: str
    attribute: str
    encoding: str
    role: Literal["key", "value", "derived"] = "key"


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
    fan_out: FanOut | None
    scan_index_forward: bool
    limit: int | None
    consistent: bool
    returns: tuple[str, ...]
    projected: tuple[str, ...]
    follow_up: FollowUp | None
    order_attributes: tuple[str, ...]
    summary: str
    notes: tuple[str, ...] = ()
    until_ready: str | None = None  # the index that serves the pattern while `index` is being built

    @property
    def operations_per_call(self) -> int:
        """Requests per call when the answer fits one page (fan-out over buckets counted once)."""
        reads = self.fan_out.shards if self.fan_out and self.fan_out.kind == "shards" else 1
        return reads + (1 if self.follow_up else 0)


DEFAULT_TARGET = 70  # percent: the autoscaling target when the blueprint sets none


@dataclass(frozen=True)
class CapacityPolicy:
    """How the table or one GSI is billed and autoscaled, resolved once from the blueprint (the index's
    `capacity`, else the table's, else on demand): every later stage reads this and nothing else."""

    billing: Literal["provisioned", "on_demand"]
    read: tuple[int, int] | None = None  # (min, max) capacity units, provisioned only
    write: tuple[int, int] | None = None
    target: int = DEFAULT_TARGET  # autoscaling target utilization, percent
    source: str = "table.capacity"  # the blueprint field it comes from

    def bounds(self, direction: Literal["read", "write"]) -> tuple[int, int] | None:
        return self.read if direction == "read" else self.write


@dataclass(frozen=True)
class TableDesign:
    blueprint: Blueprint
    shapes: dict[str, dict[str, Shape]]
    indexes: tuple[IndexDesign, ...]
    plans: tuple[QueryPlan, ...]
    notes: tuple[str, ...] = field(default=())
    # "table" and every global index -> its billing and autoscaling (local indexes share the table's)
    capacity: dict[str, CapacityPolicy] = field(default_factory=dict)

    @property
    def key_attributes(self) -> tuple[str, ...]:
        names = [key_names(TABLE)] + [index.keys for index in self.indexes]
        return tuple(dict.fromkeys(attribute for pair in names for attribute in (pair.pk, pair.sk)))

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
