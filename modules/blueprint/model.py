"""The blueprint language. These models are the single source of truth: the loader validates with
them, the JSON Schema is generated from them, and every later stage reads them.

Structure and value checks live here; checks that relate one part of a blueprint to another
(a template naming an attribute, a pattern naming an entity) live in `references.py` so that
each error can point at the exact line.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Annotated, Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, field_validator, model_validator

from modules.blueprint import regex
from modules.blueprint.invalid import Invalid

BlueprintName = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9-]{0,62}$")]
EntityName = Annotated[str, StringConstraints(pattern=r"^[A-Z][A-Za-z0-9]{0,63}$")]
AttributeName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z][A-Za-z0-9_]{0,63}$")]
PatternName = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_]{0,63}$")]
# DynamoDB's own rules for index names and attribute names a table already uses (`adopt`); the names
# Tablewright plans itself (`GSI<n>`, `PK`) and entity attributes follow the narrower rules above.
IndexName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_.-]{3,255}$")]
KeyAttributeName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_.-]{1,255}$")]
TableName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_.-]{3,255}$")]
SEMVER = r"^(0|[1-9][0-9]{0,8})\.(0|[1-9][0-9]{0,8})\.(0|[1-9][0-9]{0,8})(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$"
SemVer = Annotated[str, StringConstraints(max_length=64, pattern=SEMVER)]

AttributeType = Literal["string", "number", "timestamp", "date", "boolean", "map", "list", "string_set",
                        "number_set", "binary"]
# The scalar types a key, a key condition or a filter can use; the others are document values.
KEY_TYPES = ("string", "number", "timestamp", "date", "boolean")
Operator = Literal["=", "<", "<=", ">", ">=", "between", "begins_with"]
ContributorInsightsMode = Literal["off", "throttled_keys", "accessed_and_throttled_keys"]
RANGE_OPERATORS = ("<", "<=", ">", ">=", "between", "begins_with")

TIMESTAMP_PRESETS = ("iso8601", "epoch_seconds", "epoch_millis")
_STRFTIME_DIRECTIVES = set("YymdHIMSpbBjf")

# Attribute names the generated items use for keys and bookkeeping; user attributes may not take them.
RESERVED_ATTRIBUTE = re.compile(r"^(PK|SK|GSI[0-9]+(PK|SK)|_.*)$")


# Bounds that keep every figure realistic and every loop small (blueprints are untrusted input).
MAX_RATE = 10_000_000  # requests or writes per second
MAX_CAPACITY = 1_000_000  # capacity units (AWS's default quota is 40,000 per table)
MAX_COOLDOWN = 86_400  # seconds
MAX_ENTITIES = 100
MAX_ATTRIBUTES = 200
MAX_PATTERNS = 1_000
MAX_INDEXES = 25  # 20 global + 5 local: DynamoDB's limits
MAX_EXAMPLES = 100
MAX_NOTIFY_TARGETS = 5  # CloudWatch alarm actions per state and EventBridge targets per rule
# Alarm kinds whose metrics DynamoDB publishes every five minutes (Developer Guide, "DynamoDB metrics and
# dimensions": only the throttle, error, latency, consumed-capacity and request metrics are per minute).
PUBLISHED_EVERY = {"utilization": 300, "online_index_throttles": 300, "account_utilization": 300}
PUBLISHED_METRICS = {"utilization": "Provisioned*CapacityUnits", "online_index_throttles": "OnlineIndexThrottleEvents",
                     "account_utilization": "AccountProvisioned*CapacityUtilization"}
REGION = r"^[a-z]{2}(-[a-z]+)+-[0-9]{1,2}$"
KMS_KEY_ARN = r"^arn:aws[a-z-]*:kms:[a-z]{2}(-[a-z]+)+-[0-9]{1,2}:[0-9]{12}:(key|alias)/[A-Za-z0-9/_-]{1,256}$"
S3_BUCKET = r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$"
Region = Annotated[str, StringConstraints(pattern=REGION)]


class Strict(BaseModel):
    # strict: `limit: true` is not 1, `limit: 2.5` is not 2; allow_inf_nan: every figure is finite.
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, allow_inf_nan=False)


class AttributeSpec(Strict):
    """One attribute of an entity. `customerId: string` is shorthand for `{type: string}`."""

    type: AttributeType = Field(description="Value type. Timestamps and dates are stored in a fixed-width encoding.")
    values: list[Annotated[str, StringConstraints(min_length=1, max_length=1024)]] | None = Field(
        default=None,
        max_length=1000,
        description="The closed set of values a string attribute takes (an enum).",
        examples=[["FINANCE", "HEALTHCARE", "EDUCATION"]],
    )
    width: int | None = Field(
        default=None,
        ge=1,
        le=38,
        description="Number attributes only: digits to zero-pad to inside keys, so that keys sort as the numbers do.",
    )
    format: Annotated[str, StringConstraints(max_length=64)] | None = Field(
        default=None,
        description=(
            "Timestamp attributes only: `iso8601` (default, `2024-03-01T09:30:00Z`), `epoch_seconds`, "
            "`epoch_millis`, or a strftime pattern."
        ),
    )
    pattern: str | None = Field(
        default=None,
        max_length=regex.MAX_PATTERN_LENGTH,
        description="String attributes: a regular expression every whole value matches (declares, e.g., that ids "
        "hold no '#'). RE2 syntax (no look-around or backreferences), at most 256 characters.",
        examples=["^[a-z0-9-]+$"],
    )
    max_length: int | None = Field(default=None, ge=1, le=400 * 1024,
                                   description="Longest value in bytes (checks key size limits).")
    cardinality: int | None = Field(
        default=None, ge=1, le=10**15,
        description="How many distinct values the attribute takes (for hot-partition estimates).",
    )
    hot_key_share: float | None = Field(
        default=None,
        gt=0,
        le=1,
        description="Share of the traffic that goes to the busiest value, e.g. 0.3 for one tenant with 30%.",
    )
    mutable: bool | None = Field(
        default=None,
        description="Whether the value changes after the item is written (a status). Default: guessed from the name "
        "(status, state, type, ... are assumed to change); `false` or `true` overrides the guess.",
    )
    expiry: bool | None = Field(
        default=None,
        description="Whether the value is when the item expires, so that `table.ttl_attribute` may name it (TTL "
        "deletes every item whose value is in the past). Default: guessed from the name (expiresAt, expiry, ttl, "
        "...); `true` or `false` overrides the guess.",
    )
    optional: bool = Field(
        default=False,
        description="Not every item carries it: an index keyed by it is sparse (only the items that carry it).",
    )
    present: float | None = Field(
        default=None, gt=0, lt=1,
        description="Share of the items that carry this (optional) attribute, e.g. 0.05; default 0.5 for "
        "`optional: true`. Sizes sparse indexes.",
        examples=[0.05],
    )
    description: str | None = None

    @model_validator(mode="after")
    def _type_specific_options(self) -> AttributeSpec:
        if self.values is not None:
            if self.type != "string":
                raise Invalid("`values` applies to string attributes only", "remove `values` or set `type: string`",
                              "values")
            if not self.values:
                raise Invalid("`values` must list at least one value", "list the values or remove `values`", "values")
            if len(set(self.values)) != len(self.values):
                raise Invalid("`values` lists a value twice", "remove the duplicate", "values")
            separated = [value for value in self.values if "#" in value]
            if separated:
                raise Invalid(f"the value {separated[0]!r} contains '#', the key separator", "use '-' or '_' instead",
                              "values", code="E203")
        if self.expiry and self.type not in ("number", "timestamp"):
            raise Invalid("`expiry` applies to number and timestamp attributes only", "remove `expiry`", "expiry")
        if self.width is not None and self.type != "number":
            raise Invalid("`width` applies to number attributes only", "remove `width`", "width")
        if self.format is not None:
            if self.type != "timestamp":
                raise Invalid("`format` applies to timestamp attributes only", "remove `format`", "format")
            _check_timestamp_format(self.format)
        if self.pattern is not None:
            if self.type != "string":
                raise Invalid("`pattern` applies to string attributes only", "remove `pattern`", "pattern")
            try:
                regex.check(self.pattern)
            except regex.PatternError as error:
                raise Invalid(f"`pattern` is not a regular expression Tablewright can run: {error}",
                              "write a shorter pattern without look-around, backreferences or large repetitions "
                              "(RE2 syntax), e.g. \"^[^#]+$\"", "pattern", code="E203") from None
        return self

    @property
    def timestamp_format(self) -> str:
        return self.format or "iso8601"

    @property
    def is_optional(self) -> bool:
        return self.optional or self.present is not None

    @property
    def presence(self) -> float:
        """Share of the items that carry the attribute: 1 unless optional (0.5 unless `present` says)."""
        if self.present is not None:
            return self.present
        return 0.5 if self.optional else 1.0

    @property
    def is_document(self) -> bool:
        """A map, list, set or binary value: stored, returned, never part of a key or a condition."""
        return self.type not in KEY_TYPES


def _check_timestamp_format(fmt: str) -> None:
    if fmt in TIMESTAMP_PRESETS:
        return
    if "#" in fmt or len(fmt) > 64:
        raise Invalid(f"timestamp format {fmt!r} {'contains #, the key separator' if '#' in fmt else 'is too long'}",
                      "use e.g. '%Y-%m-%dT%H:%M:%SZ' (no '#': values sit inside keys)", code="E203")
    directives = re.findall(r"%(.)", fmt)
    if not directives:
        raise Invalid(
            f"unknown timestamp format {fmt!r}",
            f"use one of {', '.join(TIMESTAMP_PRESETS)} or a strftime pattern such as '%Y-%m-%dT%H:%M:%SZ'",
        )
    unknown = sorted(set(directives) - _STRFTIME_DIRECTIVES)
    if unknown:
        raise Invalid(
            f"unsupported strftime directive(s) {', '.join('%' + d for d in unknown)} in {fmt!r}",
            "use %Y %m %d %H %M %S (and %y %b %B %j %I %p %f)",
        )


# A key template's text: longer than any key DynamoDB stores (2,048 bytes), with room for placeholder names.
MAX_TEMPLATE_LENGTH = 4096
TemplateText = Annotated[str, StringConstraints(max_length=MAX_TEMPLATE_LENGTH)]


class KeySpec(Strict):
    """Key templates: literals and `{attribute}` placeholders joined by `#`."""

    pk: TemplateText = Field(description="Partition key template.", examples=["CUSTOMER#{customerId}"])
    sk: TemplateText | None = Field(
        default=None,
        description="Sort key template. Use a constant such as `PROFILE` for one item per partition. Required "
        "unless the table (or index) has no sort key (`keys: {pk: ...}` without `sk`).",
        examples=["CONTACT#{contactAt}#{channel}"],
    )
    shards: int | None = Field(
        default=None,
        ge=2,
        le=100,
        description="Write sharding: append a shard number 0..N-1 to the partition key; reads fan out over N.",
    )
    shard_by: list[AttributeName] | None = Field(
        default=None, description="Attributes hashed into the shard number (default: the entity's primary key)."
    )


KeyAttributeType = Literal["string", "number", "binary"]


class KeyAttribute(Strict):
    """A key attribute of an existing table: its name and DynamoDB type (S, N or B)."""

    name: KeyAttributeName
    type: KeyAttributeType = Field(default="string", description="`string` (S), `number` (N) or `binary` (B).")


class KeyAttributes(Strict):
    """The item attributes that hold a table's (or an index's) keys. Default: `PK`/`SK` for the table,
    `<index>PK`/`<index>SK` for a GSI: declare them to describe a table that already exists."""

    pk: KeyAttributeName | KeyAttribute = Field(description="The partition key attribute: a name (a string "
                                                "attribute) or `{name: ..., type: number}`.", examples=["tenantId"])
    sk: KeyAttributeName | KeyAttribute | None = Field(
        default=None, description="The sort key attribute; omit it for a key without a sort key.")

    @property
    def partition(self) -> KeyAttribute:
        return _key_attribute(self.pk)

    @property
    def sort(self) -> KeyAttribute | None:
        return None if self.sk is None else _key_attribute(self.sk)


def _key_attribute(value: str | KeyAttribute) -> KeyAttribute:
    return KeyAttribute(name=value) if isinstance(value, str) else value


class WriteRates(Strict):
    """What the application writes, per second on average. DynamoDB charges each kind differently."""

    inserts: float = Field(default=0, ge=0, le=MAX_RATE, description="New items put.")
    updates: float = Field(default=0, ge=0, le=MAX_RATE, description="Updates of existing items.")
    changes: list[AttributeName] | None = Field(
        default=None,
        description="The attributes an update changes (default: the entity's mutable attributes). A changed key "
        "attribute re-keys the item: on the table a delete and a put in a transaction, on an index two writes.",
    )
    deletes: float = Field(default=0, ge=0, le=MAX_RATE, description="Items deleted by the application.")
    expiries: float = Field(
        default=0, ge=0, le=MAX_RATE,
        description="Items deleted by TTL: free (no write units, on the table and its indexes).")


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
                          "`writes_per_second` for inserts", "writes_per_second")
        return self

    @field_validator("attributes", mode="before")
    @classmethod
    def _expand_shorthand(cls, value: object) -> object:
        # `customerId: string` and `{type: string}` mean the same; later stages always see the full spec.
        if isinstance(value, dict):
            return {name: {"type": spec} if isinstance(spec, str) else spec for name, spec in value.items()}
        return value


class AccessPattern(Strict):
    """A read the application performs, with its expected rate."""

    entity: EntityName | Annotated[list[EntityName], Field(min_length=1)] = Field(
        description="The entity read, or a list of entities read together as one item collection."
    )
    where: dict[AttributeName, Operator] = Field(
        default_factory=dict,
        description="Conditions on attributes: `=` binds key components, at most one range operator.",
        examples=[{"customerId": "=", "contactAt": "between"}],
    )
    order: Literal["asc", "desc"] = Field(default="asc", description="Direction of the sort key.")
    order_by: AttributeName | None = Field(
        default=None, description="The attribute results are ordered by (default: the range attribute, if any)."
    )
    limit: int | None = Field(default=None, ge=1, le=1_000_000, description="Return at most this many items.")
    rps: float = Field(default=1, ge=0, le=MAX_RATE, description="Expected requests per second of this pattern.")
    returns: list[AttributeName] | None = Field(
        default=None,
        description="Attributes the application reads; drives GSI projections. Default: every attribute.",
    )
    index: str | None = Field(
        default=None, description="Pin the pattern to `table` or to a named GSI instead of letting the planner choose."
    )
    consistent: bool = Field(default=False, description="Strongly consistent read (base table only; costs 2x).")
    follow_up: bool = Field(
        default=True,
        description=(
            "Allow a BatchGetItem on the base table when the index does not project every returned attribute."
        ),
    )
    filter: dict[AttributeName, Operator] = Field(
        default_factory=dict,
        description="Conditions applied after the key condition (a FilterExpression): they do not reduce cost.",
    )
    items: int | None = Field(
        default=None,
        ge=0,
        le=10_000_000,
        description="Items one call reads on average (default: `limit`, else 1 for a single item, else 10).",
    )
    scan: Literal["allowed"] | None = Field(
        default=None, description="Accept a full-table Scan when no key can serve the pattern (needs `reason`)."
    )
    reason: str | None = Field(default=None, description="Why a Scan is acceptable for this pattern.")
    description: str | None = None

    @model_validator(mode="after")
    def _one_range(self) -> AccessPattern:
        ranges = [name for name, op in self.where.items() if op in RANGE_OPERATORS]
        if len(ranges) > 1:
            raise Invalid(
                f"more than one range condition ({', '.join(ranges)}); a key condition allows one",
                "keep one range condition and bind the others with `=`, or split the pattern",
                "where",
            )
        if ranges and self.order_by and self.order_by != ranges[0]:
            raise Invalid(
                f"`order_by: {self.order_by}` differs from the range attribute `{ranges[0]}`",
                f"results of a range query come ordered by `{ranges[0]}`; remove `order_by`",
                "order_by",
            )
        if self.returns is not None and len(set(self.returns)) != len(self.returns):
            raise Invalid("`returns` lists an attribute twice", "remove the duplicate", "returns")
        both = sorted(set(self.where) & set(self.filter))
        if both:
            raise Invalid(f"`{both[0]}` appears in both `where` and `filter`", "keep it in one of them", "filter")
        if self.scan is not None and not (self.reason or "").strip():
            raise Invalid("`scan: allowed` needs a `reason`", "say why reading the whole table is acceptable", "scan")
        if self.scan is not None and (self.limit is not None or self.order_by is not None or self.order != "asc"):
            raise Invalid(
                "a Scan returns items in no particular order, so `order`, `order_by` and `limit` do not apply",
                "remove them, or give the pattern a key that serves it",
                "scan",
            )
        return self

    @property
    def conditions(self) -> dict[str, Operator]:
        """Every condition, key and filter alike."""
        return {**self.where, **self.filter}

    @property
    def expected_items(self) -> int:
        if self.items is not None:
            return self.items
        return self.limit if self.limit is not None else 10

    @property
    def entities(self) -> tuple[str, ...]:
        return (self.entity,) if isinstance(self.entity, str) else tuple(self.entity)

    @property
    def equalities(self) -> tuple[str, ...]:
        return tuple(sorted(name for name, op in self.where.items() if op == "="))

    @property
    def range_condition(self) -> tuple[str, str] | None:
        for name, op in self.where.items():
            if op in RANGE_OPERATORS:
                return name, op
        return None

    @property
    def ordering_attribute(self) -> str | None:
        found = self.range_condition
        return found[0] if found else self.order_by


class CapacityRange(Strict):
    min: int = Field(ge=1, le=MAX_CAPACITY, description="Lowest provisioned capacity units the autoscaler may set.")
    max: int = Field(ge=1, le=MAX_CAPACITY, description="Highest provisioned capacity units the autoscaler may set.")
    target_utilization: int | None = Field(
        default=None, ge=20, le=90, description="This direction's autoscaling target (default: the capacity's).")
    scale_in_cooldown: int | None = Field(
        default=None, ge=0, le=MAX_COOLDOWN,
        description="Seconds after a scale-in before the next one (Application Auto Scaling's default when unset).")
    scale_out_cooldown: int | None = Field(
        default=None, ge=0, le=MAX_COOLDOWN,
        description="Seconds after a scale-out before the next one (Application Auto Scaling's default when unset).")
    disable_scale_in: bool = Field(default=False, description="Never lower the capacity automatically.")

    @model_validator(mode="after")
    def _ordered(self) -> CapacityRange:
        if self.max < self.min:
            raise Invalid(f"max ({self.max}) is below min ({self.min})", "make max at least min", "max")
        return self


class Capacity(Strict):
    read: CapacityRange
    write: CapacityRange
    target_utilization: int = Field(
        default=70,
        ge=20,
        le=90,
        description="Autoscaling target, percent of provisioned capacity in use (AWS allows 20-90).",
    )


class Throughput(Strict):
    """Request units per second, read and write (an on-demand maximum); a direction left out has none."""

    read: int | None = Field(default=None, ge=1, le=MAX_RATE,
                             description="Read request units per second (left out: no read maximum).")
    write: int | None = Field(default=None, ge=1, le=MAX_RATE,
                              description="Write request units per second (left out: no write maximum).")

    @model_validator(mode="after")
    def _one_direction_at_least(self) -> Throughput:
        if self.read is None and self.write is None:
            raise Invalid("a maximum names `read`, `write` or both", "write `{read: N, write: N}`, or `unlimited`",
                          code="E201")
        return self


# What `max_throughput` takes besides numbers: `suggested` (from the declared rates) or `unlimited`.
MaxThroughput = Throughput | Literal["suggested", "unlimited"]
MAX_THROUGHPUT_DESCRIPTION = (
    "On-demand billing only: the most request units per second DynamoDB serves (`on_demand_throughput`, a cost "
    "guard; requests above it are throttled and counted in Read/WriteMaxOnDemandThroughputThrottleEvents). "
    "`{read: N, write: N}` (a direction left out has no maximum); `suggested`: the declared peak at the target "
    "utilization (what `capacity` suggests as "
    "the autoscaling maximum), at least 100 per direction; `unlimited`: remove a maximum set before. Unset: no "
    "maximum is written, and one set before stays."
)


class WarmThroughput(Strict):
    """Throughput DynamoDB keeps ready without scaling up first (hashicorp/aws >= 6.13)."""

    read: int = Field(ge=12_000, le=MAX_RATE, description="Read units per second, at least 12,000.")
    write: int = Field(ge=4_000, le=MAX_RATE, description="Write units per second, at least 4,000.")


WARM_THROUGHPUT_DESCRIPTION = (
    "Pre-warmed read and write units per second (`warm_throughput`; needs hashicorp/aws >= 6.13). It can only be "
    "raised on the table: the provider replaces the table to lower it (a GSI's changes in place either way)."
)


class TableSpec(Strict):
    name: TableName
    keys: KeyAttributes | None = Field(
        default=None, description="The table's key attributes when they are not `PK`/`SK` (an adopted table).",
        examples=[{"pk": "tenantId", "sk": {"name": "createdAt", "type": "number"}}])
    billing: Literal["provisioned", "on_demand"] = "on_demand"
    capacity: Capacity | None = Field(default=None, description="Required for provisioned billing.")
    ttl_attribute: KeyAttributeName | None = Field(
        default=None, description="A number or epoch_seconds timestamp attribute holding the expiry time."
    )
    point_in_time_recovery: bool = True
    point_in_time_recovery_days: int | None = Field(
        default=None, ge=1, le=35,
        description="Days of restore points point-in-time recovery keeps, 1-35 (unset: AWS's default, 35).")
    deletion_protection: bool = True
    encryption: Literal["aws_owned", "aws_managed", "customer_managed"] = Field(
        default="aws_owned",
        description="`customer_managed` creates a KMS key with rotation unless `kms_key_arn` names one.",
    )
    kms_key_arn: Annotated[str, StringConstraints(pattern=KMS_KEY_ARN)] | None = Field(
        default=None, description="An existing KMS key (or alias) ARN for `customer_managed` encryption.",
        examples=["arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"])
    stream: Literal["off", "keys_only", "new_image", "old_image", "new_and_old_images"] = "off"
    table_class: Literal["standard", "standard_infrequent_access"] = Field(
        default="standard",
        description="`standard_infrequent_access`: cheaper storage, dearer reads and writes (priced by `capacity`).")
    max_throughput: MaxThroughput | None = Field(default=None, description=MAX_THROUGHPUT_DESCRIPTION,
                                                 examples=[{"read": 4000, "write": 1000}])
    warm_throughput: WarmThroughput | None = Field(default=None, description=WARM_THROUGHPUT_DESCRIPTION)

    @model_validator(mode="after")
    def _consistent(self) -> TableSpec:
        if self.billing == "provisioned" and self.capacity is None:
            raise Invalid(
                "provisioned billing needs `capacity`",
                "add `capacity: {read: {min: 5, max: 100}, write: {min: 5, max: 100}}` or use `billing: on_demand`",
            )
        if self.billing == "on_demand" and self.capacity is not None:
            raise Invalid(
                "`capacity` applies to provisioned billing only",
                "remove `capacity` or set `billing: provisioned`",
                "capacity",
            )
        if self.point_in_time_recovery_days is not None and not self.point_in_time_recovery:
            raise Invalid("`point_in_time_recovery_days` needs `point_in_time_recovery: true`",
                          "remove `point_in_time_recovery_days`, or turn point-in-time recovery on",
                          "point_in_time_recovery_days")
        if self.kms_key_arn is not None and self.encryption != "customer_managed":
            raise Invalid(
                "`kms_key_arn` needs `encryption: customer_managed`", "set `encryption: customer_managed`",
                "kms_key_arn",
            )
        if self.billing == "provisioned" and self.max_throughput is not None:
            raise Invalid(
                "`max_throughput` applies to on-demand billing only; a provisioned table is bounded by its capacity",
                "remove `max_throughput` (the autoscaler stops at `capacity.read.max` / `capacity.write.max`)",
                "max_throughput",
            )
        return self


class IndexSpec(Strict):
    """Settings of one GSI. Everything is optional: GSIs are planned from the access patterns."""

    projection: Literal["keys_only", "all"] | list[KeyAttributeName] | None = Field(
        default=None,
        description="Override the planned projection: `keys_only`, `all`, or the attributes to include.",
    )
    capacity: Capacity | None = Field(default=None, description="Autoscaling bounds (default: the table's).")
    type: Literal["global", "local"] = Field(
        default="global",
        description="`local`: a local secondary index (same partition key as the table, created with it).",
    )
    shards: int | None = Field(
        default=None, ge=2, le=100, description="Write sharding for every entity's partition key on this index."
    )
    shard_by: list[AttributeName] | None = Field(
        default=None, description="Attributes hashed into the shard number (default: each entity's primary key)."
    )
    rebuild: Literal["successor", "in_place"] = Field(
        default="successor",
        description="When the patterns on this (locked) index need a larger projection: `successor` builds a new "
        "index with the same keys beside it and retires this one once nothing reads it; `in_place` rebuilds this "
        "index (queries on it fail until it is ACTIVE again).",
    )
    remove: bool = Field(
        default=False,
        description="Remove this index from the design and its lock (a retiring index nothing reads any more).",
    )
    keys: KeyAttributes | None = Field(
        default=None,
        description="The index's key attributes when they are not `<index>PK`/`<index>SK` (an adopted index; a "
        "local index's `pk` is the table's). Declaring them keeps the index even when no pattern reads it.",
    )
    max_throughput: MaxThroughput | None = Field(
        default=None, description="On-demand maximum of this GSI (see `table.max_throughput`); default: the table's.")
    warm_throughput: WarmThroughput | None = Field(
        default=None, description="Warm throughput of this GSI (see `table.warm_throughput`; hashicorp/aws >= 6.13).")

    @model_validator(mode="after")
    def _local(self) -> IndexSpec:
        if self.type == "local":
            for field in ("capacity", "shards", "max_throughput", "warm_throughput"):
                if getattr(self, field) is not None:
                    raise Invalid(
                        "a local index shares the table's partition key and throughput",
                        f"remove `{field}` from it (set it on the table)",
                        field,
                    )
        return self


Operation = Literal["GetItem", "BatchGetItem", "Query", "Scan", "PutItem", "UpdateItem", "DeleteItem",
                    "TransactWriteItems"]


class MigrationKey(Strict):
    pk: TemplateText = Field(description="Partition key template, as in `key:` (without the shard number).")
    sk: TemplateText = Field(description="Sort key template.")
    shards: int | None = Field(default=None, ge=2, le=100)


class Migration(Strict):
    """A data migration this change carries out, of one of three kinds:

    - keys: an entity's keys change on the table or on an index (`from`, `to`), so items already written must
      be rewritten;
    - rename: the entity was called `renamed_from` before: every item carries the old name in `_entity`, and
      its keys (where they change with the name) must move;
    - removal: the entity is gone from the blueprint (`removal` says what happens to its items).

    Declared, it is a window change with its steps; undeclared, the review and the gate block it."""

    entity: EntityName = Field(description="The entity as this blueprint names it (a removal: as it was named).")
    index: str = Field(default="table", description="`table` or the index whose keys change (keys only).")
    from_: MigrationKey | None = Field(default=None, alias="from",
                                       description="The keys before this change (keys only).")
    to: MigrationKey | None = Field(default=None, description="The keys after this change, as the blueprint now "
                                                              "declares them (keys only).")
    renamed_from: EntityName | None = Field(
        default=None, description="A rename: the entity's name before this change (its keys may change with it).")
    removal: Literal["delete", "keep", "expire"] | None = Field(
        default=None, description="A removal: what happens to the items of the entity this change removes. "
        "`delete`: a job deletes them; `keep`: they stay, read by nothing (and still stored and billed); "
        "`expire`: a job sets the table's TTL attribute on each and DynamoDB deletes them.")
    strategy: Literal["dual_write_backfill", "backfill"] = Field(
        default="dual_write_backfill",
        description="`dual_write_backfill`: write both keys from the deploy on, backfill old items, then cut "
        "over; `backfill`: rewrite old items in a maintenance window while writes are paused.",
    )
    reason: str = Field(min_length=1, max_length=1024, description="Why, and who runs the backfill.")

    @property
    def kind(self) -> Literal["keys", "rename", "removal"]:
        return "removal" if self.removal else "rename" if self.renamed_from else "keys"

    @property
    def method(self) -> str:
        """How it is carried out: a removal's fate of the items, else the strategy."""
        return self.removal or self.strategy

    @model_validator(mode="after")
    def _one_kind(self) -> Migration:
        keyed = [name for name, value in (("from", self.from_), ("to", self.to)) if value is not None]
        if self.removal is not None and self.renamed_from is not None:
            raise Invalid("a migration is a rename or a removal, not both",
                          "write one entry for the removal and, if it is a rename, only `renamed_from`", "removal")
        if self.removal is not None or self.renamed_from is not None:
            what = "a removal" if self.removal is not None else "a rename"
            extra = [*keyed, *(["index"] if "index" in self.model_fields_set else [])]
            extra += ["strategy"] if self.removal is not None and "strategy" in self.model_fields_set else []
            if extra:
                raise Invalid(f"`{extra[0]}` does not apply to {what}", f"remove `{extra[0]}`: {what} covers the "
                              "entity on the table and every index", extra[0])
            if self.renamed_from == self.entity:
                raise Invalid(f"`renamed_from` is the entity's own name `{self.entity}`",
                              "write the name the entity had before this change", "renamed_from")
            return self
        if len(keyed) < 2:
            missing = "to" if keyed == ["from"] else "from"
            raise Invalid(f"a key migration needs `from` and `to` (`{missing}` is missing)",
                          "write both keys, or `renamed_from` (a rename) or `removal` (a removed entity)",
                          missing, code="E201")
        return self


class AlarmRule(Strict):
    """Overrides for one kind of alarm; unset values keep Tablewright's defaults (see the README)."""

    enabled: bool | None = None
    threshold: float | None = Field(default=None, ge=0, le=10**12)
    period: int | None = Field(default=None, ge=60, le=86400, multiple_of=60, description="Seconds, a multiple of 60.")
    evaluation_periods: int | None = Field(default=None, ge=1, le=100)
    datapoints: int | None = Field(default=None, ge=1, le=100, description="Datapoints that must breach (M of N).")

    @model_validator(mode="after")
    def _m_of_n(self) -> AlarmRule:
        if self.datapoints and self.evaluation_periods and self.datapoints > self.evaluation_periods:
            raise Invalid("`datapoints` exceeds `evaluation_periods`", "use M of N with M <= N", "datapoints")
        return self


class LatencyRule(AlarmRule):
    operations: dict[Operation, Annotated[float, Field(gt=0, le=60_000)]] = Field(
        default_factory=dict, description="p99 thresholds in milliseconds per operation, over the default one."
    )


class Alarms(Strict):
    enabled: bool = Field(default=True, description="Create the CloudWatch alarms at all.")
    notify: Literal["create"] | list[str] = Field(
        default="create",
        description="`create`: an encrypted SNS topic in this stack; or the SNS topic ARNs alarms notify.",
        examples=[["arn:aws:sns:eu-west-1:123456789012:oncall"]],
    )
    account_level: bool = Field(
        default=False,
        description="Also alarm on UserErrors and AccountProvisioned*CapacityUtilization (enable in one stack per "
        "account and region).",
    )
    throttles: AlarmRule = Field(default_factory=AlarmRule)
    key_range_throttles: AlarmRule = Field(default_factory=AlarmRule)
    utilization: AlarmRule = Field(default_factory=AlarmRule)
    latency: LatencyRule = Field(default_factory=LatencyRule)
    system_errors: AlarmRule = Field(default_factory=AlarmRule)
    conditional_checks: AlarmRule = Field(default_factory=AlarmRule)
    online_index_throttles: AlarmRule = Field(default_factory=AlarmRule)
    max_throughput_throttles: AlarmRule = Field(default_factory=AlarmRule)
    user_errors: AlarmRule = Field(default_factory=AlarmRule)
    account_utilization: AlarmRule = Field(default_factory=AlarmRule)

    @model_validator(mode="after")
    def _periods(self) -> Alarms:
        for kind, seconds in PUBLISHED_EVERY.items():
            period = getattr(self, kind).period
            if period is not None and period % seconds:
                raise Invalid(
                    f"`{kind}.period: {period}`: DynamoDB publishes {PUBLISHED_METRICS[kind]} every {seconds} "
                    "seconds, so a shorter or unaligned period sees no data in most periods",
                    f"use a multiple of {seconds}", kind, code="E203")
        return self

    @field_validator("notify")
    @classmethod
    def _arns(cls, value: object) -> object:
        if isinstance(value, list):
            if not value:
                raise Invalid("`notify` lists no topic", "list SNS topic ARNs, or write `notify: create`")
            if len(value) > MAX_NOTIFY_TARGETS:
                raise Invalid(f"`notify` lists {len(value)} topics; alarms and rules notify at most "
                              f"{MAX_NOTIFY_TARGETS}", "fan out from one topic (SNS subscriptions)", code="E203")
            for arn in value:
                if not re.fullmatch(r"arn:aws[a-z-]*:sns:[a-z0-9-]+:[0-9]{12}:[A-Za-z0-9_-]{1,256}", arn):
                    raise Invalid(f"{arn!r} is not an SNS topic ARN", "arn:aws:sns:<region>:<account>:<topic>")
        return value


WEEKDAYS = ("MO", "TU", "WE", "TH", "FR", "SA", "SU")


class MaintenanceWindow(Strict):
    """When changes that rebuild indexes or touch the table may be applied."""

    days: Literal["daily"] | Annotated[list[Literal["MO", "TU", "WE", "TH", "FR", "SA", "SU"]],
                                       Field(min_length=1, max_length=7)] = Field(
        default="daily", description="`daily`, or weekdays as MO TU WE TH FR SA SU (at least one).",
        examples=[["SA", "SU"]]
    )
    start: str = Field(description="Local start time, HH:MM (24 h).", examples=["02:00"])
    duration: str = Field(description="How long the window stays open: `2h`, `90m`, `1h30m` (at most 24h).",
                          examples=["2h"])
    timezone: str = Field(description="IANA time zone of `start`.", examples=["Asia/Shanghai"])

    @field_validator("start")
    @classmethod
    def _start(cls, value: str) -> str:
        if not re.fullmatch(r"([01][0-9]|2[0-3]):[0-5][0-9]", value):
            raise Invalid(f"start {value!r} is not a time of day", "write HH:MM on a 24-hour clock, e.g. \"02:00\"")
        return value

    @field_validator("duration")
    @classmethod
    def _duration(cls, value: str) -> str:
        match = re.fullmatch(r"(?:([0-9]+)h)?(?:([0-9]+)m)?", value)
        minutes = int(match.group(1) or 0) * 60 + int(match.group(2) or 0) if match and value else 0
        if not 0 < minutes <= 24 * 60:
            raise Invalid(f"duration {value!r} is not between 1m and 24h", "write e.g. `2h`, `90m` or `1h30m`")
        return value

    @field_validator("timezone")
    @classmethod
    def _timezone(cls, value: str) -> str:
        try:
            if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_+\-/]{0,63}", value):
                raise ValueError(value)
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError, OSError):
            raise Invalid(f"unknown time zone {value!r}",
                          "use an IANA name such as Europe/Berlin or Asia/Shanghai") from None
        return value

    @property
    def minutes(self) -> int:
        match = re.fullmatch(r"(?:([0-9]+)h)?(?:([0-9]+)m)?", self.duration)
        assert match is not None  # `_duration` accepted it
        return int(match.group(1) or 0) * 60 + int(match.group(2) or 0)

    @property
    def weekdays(self) -> tuple[str, ...]:
        return WEEKDAYS if self.days == "daily" else tuple(d for d in WEEKDAYS if d in self.days)


class LintSettings(Strict):
    hot_key_warning: float = Field(
        default=0.5,
        gt=0,
        le=1,
        description="Warn when a key's estimated load exceeds this share of a partition's limit.",
    )
    ignore: dict[str, str] = Field(
        default_factory=dict,
        description="Finding codes to silence, each with the reason (kept in reviews).",
        examples=[{"TW101": "three industries, read by a nightly job only"}],
    )


class Traffic(Strict):
    peak_factor: float = Field(
        default=3.0, ge=1, le=100, description="Peak over average request rate (sizes the autoscaling maximum)."
    )


class Naming(Strict):
    table: str | None = Field(
        default=None,
        description="Physical table name: {table}, {blueprint} and {env} placeholders. Default: `{table}`, or "
        "`{table}-{env}` in an environment.",
        examples=["{env}-{blueprint}-{table}"],
    )


class Backend(Strict):
    type: Literal["local", "s3"] = Field(default="local", description="Where Terraform keeps the state.")
    bucket: Annotated[str, StringConstraints(pattern=S3_BUCKET)] | None = Field(
        default=None, description="S3 bucket (s3 backend).")
    key: str = Field(
        default="tablewright/{blueprint}/{env}/terraform.tfstate",
        max_length=1024,
        description="State object key (s3) with {blueprint}, {env} and {stack} placeholders.",
    )
    region: Region | None = Field(default=None, description="Region of the state bucket (s3).")
    dynamodb_table: TableName | None = Field(default=None, description="Lock table (s3, optional).")

    @model_validator(mode="after")
    def _s3(self) -> Backend:
        if self.type == "s3" and not self.bucket:
            raise Invalid("the s3 backend needs `bucket`", "name the state bucket", "bucket")
        return self


class TerraformSettings(Strict):
    aws_provider: str = Field(
        default="~> 5.100", description="Version constraint for the hashicorp/aws provider.", examples=[">= 6.11"]
    )
    backend: Backend = Field(default_factory=Backend)


Direction = Literal["read", "write"]
# Application Auto Scaling allows any printable text; these characters could start a Terraform expression.
POLICY_NAME = re.compile(r'[ !#%&\'()*+,\-./0-9:;<=>?@A-Z\[\]^_`a-z|~]{1,256}')


class Adopted(Strict):
    """A table that existed before this blueprint (written by `adopt`): the synthesized stack imports it,
    and the scalable targets and target-tracking policies listed here, instead of creating them."""

    scaling: dict[IndexName, dict[Direction, str | None]] = Field(
        default_factory=dict, max_length=MAX_INDEXES + 1,
        description="`table` or an index -> direction -> the name of its live target-tracking policy (imported "
        "under that name), or null when the scalable target has no policy yet. A direction listed here has a live "
        "scalable target, which is imported.",
        examples=[{"table": {"read": "DynamoDBReadCapacityUtilization:table/orders", "write": None}}])

    @field_validator("scaling")
    @classmethod
    def _policy_names(cls, value: dict[str, dict[str, str | None]]) -> dict[str, dict[str, str | None]]:
        for directions in value.values():
            for name in directions.values():
                if name is not None and not POLICY_NAME.fullmatch(name):
                    raise Invalid(f"policy name {name!r} holds characters Tablewright does not write into "
                                  "Terraform", "1-256 printable ASCII characters, none of \" \\ { } $")
        return value

    def policy(self, index: str, direction: Direction) -> str | None:
        return self.scaling.get(index, {}).get(direction)

    def imports_target(self, index: str, direction: Direction) -> bool:
        return direction in self.scaling.get(index, {})
class ChangeRules(Strict):
    """How out-of-band changes to the table are seen (the EventBridge rule on CloudTrail events)."""

    trail: Literal["existing", "create"] = Field(
        default="existing",
        description="EventBridge sees CloudTrail API calls only while a trail logs management events in the "
        "region. `existing`: the account has one (an organization trail, say); Terraform cannot check it. "
        "`create`: this stack creates a single-region trail with its own S3 bucket.",
    )


PRICE_FILE = r"^[A-Za-z0-9_.][A-Za-z0-9_./-]{0,1023}$"


class Pricing(Strict):
    """Where `capacity` and `review` take prices from."""

    file: Annotated[str, StringConstraints(pattern=PRICE_FILE)] | None = Field(
        default=None,
        description="A price file (JSON or YAML, the format of modules/capacity/prices.json), relative to the "
        "blueprint that names it and inside the repository. Default: the built-in prices.",
        examples=["prices/acme-2026.json"],
    )


class Blueprint(Strict):
    extends: str | list[str] | None = Field(
        default=None,
        description="Blueprint(s) this one builds on, relative to this file; merged first, this file wins.",
        examples=["shared/platform-base.yaml"],
    )
    blueprint: BlueprintName = Field(description="Stack name: lowercase letters, digits and dashes.")
    version: SemVer = Field(description="Semantic version of this blueprint.", examples=["1.0.0"])
    description: str | None = Field(default=None, max_length=4096)
    owner: str | None = Field(default=None, max_length=256)
    region: Region | None = Field(
        default=None, examples=["eu-west-1"],
        description="AWS region of the stack: the provider's region, the region of every topic in `alarms.notify`, "
        "and the prices `capacity` uses. Unset: Terraform takes the region from its environment, `alarms.notify` "
        "cannot name topics and `capacity` prices nothing.")
    tags: dict[str, str] = Field(default_factory=dict, description="Tags for every taggable resource.")
    table: TableSpec
    entities: dict[EntityName, EntitySpec] = Field(
        default_factory=dict, max_length=MAX_ENTITIES,
        description="The item types the table stores. Empty only while an adopted table is being described.")
    access_patterns: dict[PatternName, AccessPattern] = Field(default_factory=dict, max_length=MAX_PATTERNS)
    indexes: dict[IndexName, IndexSpec] = Field(default_factory=dict, max_length=MAX_INDEXES)
    lint: LintSettings = Field(default_factory=LintSettings)
    traffic: Traffic = Field(default_factory=Traffic)
    production: bool = Field(default=False, description="This environment serves production traffic.")
    contributor_insights: ContributorInsightsMode | None = Field(
        default=None,
        description="Contributor Insights mode for the table and its GSIs. Default: throttled_keys in production "
        "when the AWS provider constraint allows it (>= 6.11), else accessed_and_throttled_keys.",
    )
    alarms: Alarms = Field(default_factory=Alarms)
    change_rules: ChangeRules = Field(default_factory=ChangeRules)
    pricing: Pricing = Field(default_factory=Pricing)
    maintenance_window: MaintenanceWindow | None = Field(
        default=None, description="When window-class changes (index builds, billing switches) may be applied."
    )
    required_tags: list[str] = Field(
        default_factory=list, max_length=50,
        description="Tag keys every blueprint must set (additive across `extends`).",
    )
    naming: Naming = Field(default_factory=Naming)
    terraform: TerraformSettings = Field(default_factory=TerraformSettings)
    adopted: Adopted | None = Field(
        default=None, description="Set by `adopt`: the table exists already and the stack imports it.")
    migrations: list[Migration] = Field(
        default_factory=list, max_length=50,
        description="Data migrations this change carries out: changed keys, renamed or removed entities (see "
        "`Migration`); remove them once done.",
    )
    environments: dict[str, dict[str, Any]] = Field(
        default_factory=dict,
        description="One stack per environment (`<blueprint>-<env>`): each overlay is merged over the blueprint.",
        examples=[{"dev": {"table": {"billing": "on_demand", "capacity": None}}, "prod": {"production": True}}],
    )

