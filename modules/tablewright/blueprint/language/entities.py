"""Entities: the item types a table stores, with their attributes and write rates."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BeforeValidator, Field, WithJsonSchema, field_validator, model_validator

from tablewright.blueprint.invalid import Invalid
from tablewright.blueprint.language.attributes import AttributeSpec, KeySpec
from tablewright.blueprint.language.base import (
    MAX_ATTRIBUTES,
    MAX_EXAMPLES,
    MAX_INDEXES,
    MAX_RATE,
    AttributeName,
    AttributeType,
    IndexName,
    Strict,
)
from tablewright.blueprint.language.traffic import TrafficShape
from tablewright.errors import ErrorCode


def _every_update(value: object) -> object:
    """`changes: [status]` is `changes: {status: 1}`: every update changes each attribute listed."""
    if isinstance(value, list) and all(isinstance(name, str) for name in value):
        return dict.fromkeys(value, 1.0)
    return value


# Attribute -> share of updates that change it; a list of names is read as shares of 1 (its schema: either form).
ChangeShares = Annotated[
    dict[AttributeName, Annotated[float, Field(ge=0, le=1)]], Field(max_length=MAX_ATTRIBUTES),
    BeforeValidator(_every_update),
    WithJsonSchema({"anyOf": [
        {"type": "array", "items": {"type": "string"}, "maxItems": MAX_ATTRIBUTES},
        {"type": "object", "additionalProperties": {"type": "number", "minimum": 0, "maximum": 1},
         "maxProperties": MAX_ATTRIBUTES}]}),
]


class WriteRates(Strict):
    """What the application writes, per second on average. DynamoDB charges each kind differently."""

    inserts: float = Field(default=0, ge=0, le=MAX_RATE, description="New items put.")
    updates: float = Field(default=0, ge=0, le=MAX_RATE, description="Updates of existing items.")
    changes: ChangeShares | None = Field(
        default=None,
        description="The attributes an update changes (default: the entity's mutable attributes), or each with the "
        "share of updates that change it (`{cell: 0.05}`: 5% of updates move the item to another cell). A changed "
        "key attribute re-keys the item: on the table a delete and a put in a transaction, on an index two writes; "
        "a changed projected attribute rewrites the index entry. Capacity counts each for its share of updates.",
        examples=[["status"], {"cell": 0.05, "lastSeenAt": 1}],
    )
    passes: list[AttributeName] = Field(
        default_factory=list, max_length=MAX_ATTRIBUTES,
        description="Attributes every update passes unchanged beside its changes (their current value): the rest of "
        "an index key part of which it changes, so that the generated client rewrites the key without reading the "
        "item first (TW314). They cost nothing: an unchanged value changes no key.",
        examples=[["status"]])
    deletes: float = Field(default=0, ge=0, le=MAX_RATE, description="Items deleted by the application.")
    expiries: float = Field(
        default=0, ge=0, le=MAX_RATE,
        description="Items deleted by TTL: free (no write units, on the table and its indexes).")
    failing: dict[Literal["inserts", "updates", "deletes"], Annotated[float, Field(ge=0, le=1)]] = Field(
        default_factory=dict,
        description="Share of each kind's writes whose condition fails (`updates: 0.7` for \"only if higher\"). "
        "A failed write still costs the table the existing item's size and writes no index entry.",
        examples=[{"updates": 0.7}],
    )
    batch: int | None = Field(
        default=None, ge=2, le=25,
        description="Inserts and deletes go in BatchWriteItem requests of this many items (at most 25). Every "
        "item is still charged on its own: batching saves requests, not write units.")

    @model_validator(mode="after")
    def _batches_are_unconditional(self) -> WriteRates:
        idle = sorted(kind for kind in self.failing if not getattr(self, kind))
        if idle:
            raise Invalid(f"`failing.{idle[0]}` is set, and no {idle[0]} are declared", f"declare `{idle[0]}:` (writes "
                          f"per second), or remove `{idle[0]}` from `failing`", "failing", code=ErrorCode.CONTRADICTION)
        if self.batch is not None and not (self.inserts or self.deletes):
            raise Invalid("`batch` groups inserts and deletes in BatchWriteItem (it cannot update), and none are "
                          "declared", "declare `inserts` or `deletes`, or remove `batch`", "batch",
                          code=ErrorCode.CONTRADICTION)
        failing = sorted(kind for kind in ("inserts", "deletes") if self.failing.get(kind))
        if self.batch is not None and failing:
            raise Invalid(f"`batch` writes the {failing[0]} in BatchWriteItem, which takes no condition, and "
                          f"`failing` says some {failing[0]} fail their condition",
                          f"remove `batch`, or remove `{failing[0]}` from `failing`", "batch",
                          code=ErrorCode.CONTRADICTION)
        return self


class EntitySpec(Strict):
    """An item type stored in the table."""

    if TYPE_CHECKING:
        # What every later stage reads: `_expand_shorthand` turns each `name: type` into a full spec.
        attributes: dict[str, AttributeSpec]
    else:
        # What a blueprint may write (this union is the JSON Schema and the validation errors).
        attributes: dict[AttributeName, AttributeSpec | AttributeType] = Field(
            min_length=1,
            max_length=MAX_ATTRIBUTES,
            description="Attribute name -> type (`string`) or full spec (`{type: string, values: [...]}`).",
        )
    key: KeySpec
    index_keys: dict[IndexName, KeySpec] = Field(
        default_factory=dict,
        max_length=MAX_INDEXES,
        description=(
            "Explicit key templates of this entity on named GSIs. Optional: GSIs are planned from the access "
            "patterns; declare keys here to pin a shape or to build a cross-entity item collection on an index."
        ),
    )
    item_bytes: int | None = Field(default=None, ge=1, le=10**9,
                                   description="Average item size in bytes, for capacity estimates.")
    writes_per_second: float = Field(
        default=0, ge=0, le=MAX_RATE,
        description="Average new items written per second (inserts). Use `writes:` for updates, deletes and expiries.")
    writes: WriteRates | None = Field(
        default=None, description="Write rates by kind: inserts, updates (and what they change), deletes, expiries.")
    item_count: int | None = Field(default=None, ge=0, le=10**15,
                                   description="Expected number of items (storage and scan cost).")
    traffic: TrafficShape | None = Field(
        default=None, description="How this entity's writes arrive, when not as the blueprint's `traffic` says: "
        "its own daily curve or peak factor, and events (`rate`: writes per second).")
    transactional: bool = Field(default=False, description="Items are written in transactions (twice the capacity).")
    examples: list[dict[AttributeName, Any]] = Field(
        default_factory=list,
        max_length=MAX_EXAMPLES,
        description="Items `verify` writes besides its generated samples (timestamps as ISO 8601 text).",
    )
    description: str | None = None

    @property
    def write_rates(self) -> WriteRates:
        """`writes:`, or the simple form: `writes_per_second` inserts."""
        return self.writes or WriteRates(inserts=self.writes_per_second)

    @model_validator(mode="after")
    def _one_write_form(self) -> EntitySpec:
        if self.writes is not None and self.writes_per_second:
            raise Invalid("both `writes_per_second` and `writes` are set",
                          "keep `writes:` (it names inserts, updates, deletes and expiries), or only "
                          "`writes_per_second` for inserts", "writes_per_second",
                          code=ErrorCode.CONTRADICTION)
        if self.transactional and self.writes is not None and self.writes.batch is not None:
            raise Invalid("`transactional: true` and `writes.batch` are both set: BatchWriteItem is not a transaction",
                          "keep one: `transactional` for TransactWriteItems, `writes.batch` for BatchWriteItem",
                          "writes", code=ErrorCode.CONTRADICTION)
        if self.transactional and self.writes is not None and any(self.writes.failing.values()):
            # AWS documents what a failed conditional write consumes, not what a cancelled transaction does.
            raise Invalid("`writes.failing` on a transactional entity: what a cancelled transaction consumes is not "
                          "documented, so Tablewright cannot estimate it",
                          "remove `writes.failing` (capacity then counts only the transactions that succeed), or "
                          "`transactional: true` if the writes are single conditional writes", "writes",
                          code=ErrorCode.CONTRADICTION)
        declared = sum(len(name.encode()) + spec.bytes for name, spec in self.attributes.items() if spec.bytes)
        if self.item_bytes is not None and declared > self.item_bytes:
            raise Invalid(f"the attributes' `bytes` (names included) add up to {declared:,}, more than "
                          f"`item_bytes: {self.item_bytes:,}`",
                          f"raise `item_bytes` to at least {declared:,}, or lower the attributes' `bytes`",
                          "item_bytes", code=ErrorCode.CONTRADICTION)
        return self

    @field_validator("attributes", mode="before")
    @classmethod
    def _expand_shorthand(cls, value: object) -> object:
        # `customerId: string` and `{type: string}` mean the same; later stages always see the full spec.
        if isinstance(value, dict):
            return {name: {"type": spec} if isinstance(spec, str) else spec for name, spec in value.items()}
        return value
