"""What the design stage produces: key shapes per index, GSIs with projections, one query plan per pattern."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from modules.blueprint.model import Blueprint
from modules.design.templates import KeyTemplate

TABLE = "table"
ENTITY_ATTRIBUTE = "_entity"


@dataclass(frozen=True)
class KeyNames:
    """The item attributes holding an index's partition and sort key."""

    pk: str
    sk: str


def key_names(index: str) -> KeyNames:
    return KeyNames("PK", "SK") if index == TABLE else KeyNames(f"{index}PK", f"{index}SK")


@dataclass(frozen=True)
class Shape:
    """An entity's key templates on one index."""

    pk: KeyTemplate
    sk: KeyTemplate

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
    """A global secondary index: which entities take part with which keys, and what it projects."""

    name: str
    keys: KeyNames
    members: tuple[tuple[str, Shape], ...]
    projection: Projection
    patterns: tuple[str, ...]
    reason: str


@dataclass(frozen=True)
class Parameter:
    """A value the application supplies when it runs a query plan."""

    name: str
    attribute: str
    encoding: str


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
    operation: Literal["GetItem", "Query"]
    index: str
    keys: KeyNames
    key_condition: str
    values: tuple[tuple[str, str], ...]
    parameters: tuple[Parameter, ...]
    scan_index_forward: bool
    limit: int | None
    consistent: bool
    returns: tuple[str, ...]
    projected: tuple[str, ...]
    follow_up: FollowUp | None
    order_attributes: tuple[str, ...]
    summary: str
    notes: tuple[str, ...] = ()

    @property
    def operations_per_call(self) -> int:
        return 1 + (1 if self.follow_up else 0)


@dataclass(frozen=True)
class TableDesign:
    blueprint: Blueprint
    shapes: dict[str, dict[str, Shape]]
    indexes: tuple[IndexDesign, ...]
    plans: tuple[QueryPlan, ...]
    notes: tuple[str, ...] = field(default=())

    @property
    def key_attributes(self) -> tuple[str, ...]:
        names = [key_names(TABLE)] + [index.keys for index in self.indexes]
        return tuple(attribute for pair in names for attribute in (pair.pk, pair.sk))

    def index(self, name: str) -> IndexDesign:
        return next(index for index in self.indexes if index.name == name)

    def plan(self, pattern: str) -> QueryPlan:
        return next(plan for plan in self.plans if plan.pattern == pattern)
