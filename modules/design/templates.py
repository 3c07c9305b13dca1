"""Key templates: `CUSTOMER#{customerId}` is a literal segment and an attribute segment joined by `#`.

Attribute values may not contain the separator, so every segment of a template yields exactly one
`#`-separated segment of the key. That is what makes prefixes and ranges over keys predictable.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Mapping

from modules.blueprint.invalid import Invalid

SEPARATOR = "#"
# The character right after the separator: every key that starts with `X#` sorts below `X$`.
AFTER_SEPARATOR = chr(ord(SEPARATOR) + 1)

_LITERAL = re.compile(r"^[A-Za-z0-9_.-]+$")
_PLACEHOLDER = re.compile(r"^\{([A-Za-z][A-Za-z0-9_]*)\}$")


@dataclass(frozen=True)
class Segment:
    literal: str | None = None
    attribute: str | None = None

    @property
    def text(self) -> str:
        return self.literal if self.literal is not None else "{" + str(self.attribute) + "}"


@dataclass(frozen=True)
class KeyTemplate:
    segments: tuple[Segment, ...]

    @property
    def text(self) -> str:
        return SEPARATOR.join(segment.text for segment in self.segments)

    @property
    def attributes(self) -> tuple[str, ...]:
        return tuple(s.attribute for s in self.segments if s.attribute is not None)

    def render(self, encoded: Mapping[str, str]) -> str:
        """The key for one item, given the already encoded value of each attribute."""
        return SEPARATOR.join(
            s.literal if s.literal is not None else encoded[str(s.attribute)] for s in self.segments
        )

    def prefix(self, count: int) -> "KeyTemplate":
        return KeyTemplate(self.segments[:count])

    def __str__(self) -> str:
        return self.text


def parse_template(text: str) -> KeyTemplate:
    """Parse a key template; raises `Invalid` with the fix when it is malformed."""
    if not isinstance(text, str) or not text:
        raise Invalid("a key template cannot be empty", "write literals and {attribute} placeholders, e.g. USER#{userId}")
    segments = []
    for part in text.split(SEPARATOR):
        if part == "":
            raise Invalid(
                f"key template {text!r} has an empty segment",
                "separate segments with a single '#' and do not start or end with '#'",
            )
        match = _PLACEHOLDER.match(part)
        if match:
            segments.append(Segment(attribute=match.group(1)))
        elif _LITERAL.match(part):
            segments.append(Segment(literal=part))
        elif "{" in part or "}" in part:
            raise Invalid(
                f"segment {part!r} of key template {text!r} mixes text and a placeholder",
                "make it two segments, e.g. `V#{version}` instead of `V{version}`",
            )
        else:
            raise Invalid(
                f"segment {part!r} of key template {text!r} has characters keys may not use",
                "literals use letters, digits, '_', '.' and '-' only",
            )
    return KeyTemplate(tuple(segments))


def entity_tag(entity: str) -> str:
    """`OrderItem` -> `ORDER_ITEM`: the literal that opens generated keys of an entity."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", entity).upper()


def may_overlap(left: frozenset[str] | None, right: frozenset[str] | None) -> bool:
    """Whether two segments can render the same text; `None` stands for "any value"."""
    return left is None or right is None or bool(left & right)
