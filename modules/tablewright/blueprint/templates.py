"""Key templates: `CUSTOMER#{customerId}` is a literal segment and an attribute segment joined by `#`.

Attribute values may not contain the separator, so every segment of a template yields exactly one
`#`-separated segment of the key. That is what makes prefixes and ranges over keys predictable.

Two derived segments exist: a time bucket of a timestamp or date (`{createdAt:month}`, `{at:week}`,
`{at:day}`, `{at:hour}`) and the shard number the design appends to a sharded partition key (`{_shard}`).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace

from tablewright.blueprint.invalid import Invalid
from tablewright.errors import ErrorCode

SEPARATOR = "#"
# The character right after the separator: every key that starts with `X#` sorts below `X$`.
AFTER_SEPARATOR = chr(ord(SEPARATOR) + 1)
SHARD = "_shard"
BUCKETS = ("month", "week", "day", "hour")

_LITERAL = re.compile(r"^[A-Za-z0-9_.-]+$")
_PLACEHOLDER = re.compile(r"^\{([A-Za-z][A-Za-z0-9_]*)(?::([a-z]+))?\}$")


@dataclass(frozen=True)
class Segment:
    literal: str | None = None
    attribute: str | None = None
    bucket: str | None = None
    shards: int | None = None

    @property
    def placeholder(self) -> str:
        """The name a rendered key's value is looked up by: `attr`, `attr:month` or `_shard`."""
        if self.shards is not None:
            return SHARD
        return f"{self.attribute}:{self.bucket}" if self.bucket else str(self.attribute)

    @property
    def text(self) -> str:
        return self.literal if self.literal is not None else "{" + self.placeholder + "}"


@dataclass(frozen=True)
class KeyTemplate:
    segments: tuple[Segment, ...]

    @property
    def text(self) -> str:
        return SEPARATOR.join(segment.text for segment in self.segments)

    @property
    def attributes(self) -> tuple[str, ...]:
        """Attributes the key is made of (a bucketed attribute included, the shard number not)."""
        return tuple(s.attribute for s in self.segments if s.attribute is not None)

    @property
    def shards(self) -> int:
        return next((s.shards for s in self.segments if s.shards is not None), 1)

    def render(self, encoded: Mapping[str, str]) -> str:
        """The key for one item, given the encoded value of each placeholder."""
        return SEPARATOR.join(s.literal if s.literal is not None else encoded[s.placeholder] for s in self.segments)

    def prefix(self, count: int) -> KeyTemplate:
        return KeyTemplate(self.segments[:count])

    def sharded(self, shards: int) -> KeyTemplate:
        return KeyTemplate((*self.segments, Segment(shards=shards)))

    def renamed(self, names: Mapping[str, str]) -> KeyTemplate:
        """The same key with attributes renamed (old name -> new): it renders the same text for the same values."""
        return KeyTemplate(tuple(replace(s, attribute=names.get(s.attribute, s.attribute)) if s.attribute else s
                                 for s in self.segments))

    def __str__(self) -> str:
        return self.text


def parse_template(text: str) -> KeyTemplate:
    """Parse a key template; raises `Invalid` with the fix when it is malformed."""
    if not isinstance(text, str) or not text:
        raise Invalid("a key template cannot be empty",
                      "write literals and {attribute} placeholders, e.g. USER#{userId}",
                      code=ErrorCode.KEY_TEMPLATE)
    segments = []
    for part in text.split(SEPARATOR):
        if part == "":
            raise Invalid(
                f"key template {text!r} has an empty segment",
                "separate segments with a single '#' and do not start or end with '#'",
                code=ErrorCode.KEY_TEMPLATE,
            )
        match = _PLACEHOLDER.match(part)
        if match:
            bucket = match.group(2)
            if bucket is not None and bucket not in BUCKETS:
                raise Invalid(
                    f"unknown time bucket `{bucket}` in {part!r}",
                    f"write {{{match.group(1)}:month}}, {{{match.group(1)}:week}} (ISO week), "
                    f"{{{match.group(1)}:day}} or {{{match.group(1)}:hour}}",
                    code=ErrorCode.KEY_TEMPLATE,
                )
            segments.append(Segment(attribute=match.group(1), bucket=bucket))
        elif _LITERAL.match(part):
            segments.append(Segment(literal=part))
        elif "{" in part or "}" in part:
            raise Invalid(
                f"segment {part!r} of key template {text!r} mixes text and a placeholder",
                "make it two segments, e.g. `V#{version}` instead of `V{version}`",
                code=ErrorCode.KEY_TEMPLATE,
            )
        else:
            raise Invalid(
                f"segment {part!r} of key template {text!r} has characters keys may not use",
                "literals use letters, digits, '_', '.' and '-' only",
                code=ErrorCode.KEY_TEMPLATE,
            )
    return KeyTemplate(tuple(segments))


def entity_tag(entity: str) -> str:
    """`OrderItem` -> `ORDER_ITEM`: the literal that opens generated keys of an entity."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", entity).upper()


def may_overlap(left: frozenset[str] | None, right: frozenset[str] | None) -> bool:
    """Whether two segments can render the same text; `None` stands for "any value"."""
    return left is None or right is None or bool(left & right)


def shard_number(encoded_values: list[str], shards: int) -> str:
    """The shard an item belongs to: the first 8 hex digits of SHA-256 of its shard-by values
    (key encodings joined by '#'), modulo the shard count, zero-padded to a fixed width."""
    digest = hashlib.sha256(SEPARATOR.join(encoded_values).encode("utf-8")).hexdigest()
    return str(int(digest[:8], 16) % shards).zfill(len(str(shards - 1)))


def shard_values(shards: int) -> list[str]:
    return [str(n).zfill(len(str(shards - 1))) for n in range(shards)]
