"""Attributes and keys: an entity's attribute specs, key templates and a table's key attribute names."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StringConstraints, model_validator

from tablewright.blueprint import regex
from tablewright.blueprint.invalid import Invalid
from tablewright.blueprint.language.base import KEY_TYPES, AttributeName, AttributeType, KeyAttributeName, Strict
from tablewright.errors import ErrorCode

TIMESTAMP_PRESETS = ("iso8601", "epoch_seconds", "epoch_millis")
# The strftime directives a timestamp format may use, and the parts of a time each writes. Each reads back as a fixed
# number of digits or one of a few fixed words (AM/PM, month names), and a format writes each part once (a format
# with two months has two readings): so a stored value is read in one pass, in time linear in its length, by both
# clients and the engine (tests/hostile/test_timestamp_formats.py).
_STRFTIME_DIRECTIVES: dict[str, tuple[str, ...]] = {
    "Y": ("year",), "y": ("year",), "m": ("month",), "b": ("month",), "B": ("month",), "d": ("day",),
    "j": ("month", "day"), "H": ("hour",), "I": ("hour",), "p": ("AM/PM",), "M": ("minute",), "S": ("second",),
    "f": ("fraction of a second",),
}
# The longest timestamp format: every part once with a separator between fits (`%Y-%m-%d %I:%M:%S.%f %p`, 23
# characters), with room for a short literal; longer text belongs in the key template, not in every stored value.
MAX_TIMESTAMP_FORMAT = 40


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
    format: Annotated[str, StringConstraints(max_length=MAX_TIMESTAMP_FORMAT)] | None = Field(
        default=None,
        description=(
            "Timestamp attributes only: `iso8601` (default, `2024-03-01T09:30:00Z`), `epoch_seconds`, "
            "`epoch_millis`, or a strftime pattern (at most 40 characters, no '#') of %Y %y %m %b %B %d %j %H %I %p "
            "%M %S %f, each part of the time once (one year, one month...), %I with %p."
        ),
        examples=["%Y-%m-%d %H:%M"],
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
    bytes: int | None = Field(
        default=None, ge=1, le=400 * 1024,
        description="Average size of the value in bytes (the name not counted), for item and index entry sizes: a "
        "title of 80 bytes weighs less than a description of 2,000. Without it, text attributes outside the keys "
        "share what `item_bytes` leaves. Not for numbers, booleans, timestamps and dates, whose size follows from "
        "the value; the longest value is `max_length`.",
        examples=[80],
    )
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
    weights: dict[Annotated[str, StringConstraints(min_length=1, max_length=1024)],
                  Annotated[float, Field(ge=0, le=10**9)]] | None = Field(
        default=None,
        max_length=1000,
        description="String attributes: how traffic is shared among the values (relative weights, one per value; "
        "the values when `values` is not given). Without weights or `hot_key_share`, the busiest value of an "
        "enum is assumed to take `traffic.dominant_share`.",
        examples=[{"ONLINE": 95, "OFFLINE": 4, "UPDATING": 1}],
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
    renamed_from: AttributeName | None = Field(
        default=None,
        description="The attribute's name before this change: items already written carry the value under that "
        "name until `tablewright migrate run` renames it (the generated clients read both names meanwhile). "
        "Inside a key the rename changes no stored key, only the placeholder's name.",
        examples=["name"],
    )
    description: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _weights_list_values(cls, data: object) -> object:
        # Weighted values are the attribute's values (sorted: the order of a YAML mapping carries no meaning).
        if isinstance(data, dict) and isinstance(data.get("weights"), dict) and data.get("values") is None \
                and data.get("type") == "string":
            return {**data, "values": sorted(str(value) for value in data["weights"])}
        return data

    @model_validator(mode="after")
    def _type_specific_options(self) -> AttributeSpec:
        if self.values is not None:
            if self.type != "string":
                raise Invalid("`values` applies to string attributes only", "remove `values` or set `type: string`",
                              "values",
                              code=ErrorCode.CONTRADICTION)
            if not self.values:
                raise Invalid("`values` must list at least one value", "list the values or remove `values`", "values",
                              code=ErrorCode.VALUE_NOT_ALLOWED)
            if len(set(self.values)) != len(self.values):
                raise Invalid("`values` lists a value twice", "remove the duplicate", "values",
                              code=ErrorCode.VALUE_NOT_ALLOWED)
            separated = [value for value in self.values if "#" in value]
            if separated:
                raise Invalid(f"the value {separated[0]!r} contains '#', the key separator", "use '-' or '_' instead",
                              "values", code=ErrorCode.VALUE_NOT_ALLOWED)
        if self.weights is not None:
            self._check_weights(self.weights)
        if self.expiry and self.type not in ("number", "timestamp"):
            raise Invalid("`expiry` applies to number and timestamp attributes only", "remove `expiry`", "expiry",
                          code=ErrorCode.CONTRADICTION)
        if self.bytes is not None:
            if self.type in ("number", "boolean", "timestamp", "date"):
                raise Invalid(f"`bytes` does not apply to {self.type} attributes: their size follows from the value",
                              "remove `bytes`", "bytes", code=ErrorCode.CONTRADICTION)
            if self.max_length is not None and self.bytes > self.max_length:
                raise Invalid(f"the average size `bytes: {self.bytes}` exceeds `max_length: {self.max_length}`",
                              "make `bytes` the average and `max_length` the longest value", "bytes",
                              code=ErrorCode.CONTRADICTION)
        if self.width is not None and self.type != "number":
            raise Invalid("`width` applies to number attributes only", "remove `width`", "width",
                          code=ErrorCode.CONTRADICTION)
        if self.format is not None:
            if self.type != "timestamp":
                raise Invalid("`format` applies to timestamp attributes only", "remove `format`", "format",
                              code=ErrorCode.CONTRADICTION)
            _check_timestamp_format(self.format)
        if self.pattern is not None:
            if self.type != "string":
                raise Invalid("`pattern` applies to string attributes only", "remove `pattern`", "pattern",
                              code=ErrorCode.CONTRADICTION)
            try:
                regex.check(self.pattern)
            except regex.PatternError as error:
                raise Invalid(f"`pattern` is not a regular expression Tablewright can run: {error}",
                              "write a shorter pattern without look-around, backreferences or large repetitions "
                              "(RE2 syntax), e.g. \"^[^#]+$\"", "pattern", code=ErrorCode.VALUE_NOT_ALLOWED) from None
        return self

    def _check_weights(self, weights: dict[str, float]) -> None:
        if self.type != "string":
            raise Invalid("`weights` applies to string attributes only", "remove `weights` or set `type: string`",
                          "weights", code=ErrorCode.CONTRADICTION)
        if self.hot_key_share is not None or self.cardinality is not None:
            raise Invalid("`weights` already says how many values there are and how busy the busiest is",
                          "keep `weights` and remove `hot_key_share` and `cardinality`", "weights",
                          code=ErrorCode.CONTRADICTION)
        if not any(weights.values()):
            raise Invalid("every weight is zero", "give the values their relative traffic, e.g. `{A: 90, B: 10}`",
                          "weights", code=ErrorCode.VALUE_NOT_ALLOWED)
        if "#" in "".join(weights):
            raise Invalid("a weighted value contains '#', the key separator", "use '-' or '_' instead", "weights",
                          code=ErrorCode.VALUE_NOT_ALLOWED)
        if self.values is not None and set(self.values) != set(weights):
            missing = sorted(set(self.values) - set(weights)) or sorted(set(weights) - set(self.values))
            raise Invalid(f"`weights` and `values` differ ({missing[0]!r} is in one only)",
                          "weight every value in `values`, and nothing else", "weights",
                          code=ErrorCode.VALUE_NOT_ALLOWED)

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
    if "#" in fmt or len(fmt) > MAX_TIMESTAMP_FORMAT:
        raise Invalid(f"timestamp format {fmt!r} {'contains #, the key separator' if '#' in fmt else 'is too long'}",
                      "use e.g. '%Y-%m-%dT%H:%M:%SZ' (no '#': values sit inside keys)", "format",
                      code=ErrorCode.VALUE_NOT_ALLOWED)
    directives = _directives(fmt)
    if not directives:
        raise Invalid(
            f"unknown timestamp format {fmt!r}",
            f"use one of {', '.join(TIMESTAMP_PRESETS)} or a strftime pattern such as '%Y-%m-%dT%H:%M:%SZ'", "format",
            code=ErrorCode.VALUE_NOT_ALLOWED,
        )
    if "" in directives:
        raise Invalid(f"timestamp format {fmt!r} ends with a lone '%'",
                      "remove it, or write a directive after it such as %S", "format",
                      code=ErrorCode.VALUE_NOT_ALLOWED)
    unknown = sorted(set(directives) - set(_STRFTIME_DIRECTIVES))
    if unknown:
        raise Invalid(
            f"unsupported strftime directive(s) {', '.join('%' + d for d in unknown)} in {fmt!r}",
            "use %Y %m %d %H %M %S (and %y %b %B %j %I %p %f)", "format",
            code=ErrorCode.VALUE_NOT_ALLOWED,
        )
    _check_each_part_once(fmt, directives)


def _directives(fmt: str) -> list[str]:
    """The directives of a strftime pattern in order: the character after each `%` ('' for a lone `%` at the end)."""
    found, at = [], fmt.find("%")
    while at != -1:
        found.append(fmt[at + 1:at + 2])
        at = fmt.find("%", at + 2)
    return found


def _check_each_part_once(fmt: str, directives: list[str]) -> None:
    """A format writes each part of a time once, and the 12-hour clock with AM/PM: every value has one reading."""
    shown = fmt if len(fmt) <= 24 else fmt[:21] + "..."
    repeated = next((d for d in directives if directives.count(d) > 1), None)
    if repeated is not None:
        raise Invalid(f"timestamp format {shown!r} uses %{repeated} {directives.count(repeated)} times: a directive "
                      "may appear once", "write each directive once, e.g. '%Y-%m-%d %H:%M' (a literal that repeats "
                      "belongs in the key template)", "format", code=ErrorCode.VALUE_NOT_ALLOWED)
    writer: dict[str, str] = {}
    for directive in directives:
        for part in _STRFTIME_DIRECTIVES[directive]:
            if part in writer:
                raise Invalid(f"timestamp format {shown!r} writes the {part} twice (%{writer[part]} and "
                              f"%{directive}): a value could hold two different ones",
                              f"keep one of %{writer[part]} and %{directive}", "format",
                              code=ErrorCode.VALUE_NOT_ALLOWED)
            writer[part] = directive
    if ("I" in directives) != ("p" in directives):
        alone = "%I (the 12-hour clock) without %p (AM/PM)" if "I" in directives else "%p (AM/PM) without %I"
        raise Invalid(f"timestamp format {shown!r} has {alone}: the hour has two readings",
                      "write %I with %p, or the 24-hour clock %H alone", "format",
                      code=ErrorCode.VALUE_NOT_ALLOWED)


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
