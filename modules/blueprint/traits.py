"""What the lint rules infer about attributes: how many values they take, whether they change."""

from __future__ import annotations

import math
import re

from modules.blueprint.language import AttributeSpec
from modules.blueprint.templates import KeyTemplate

# Names that usually hold few values or change over an item's life (a status, a type, a flag).
STATUS_LIKE = re.compile(
    r"^(status|state|stage|phase|type|kind|category|region|tier|level|priority)$"
    r"|(Status|State|Stage|Phase|Type|Kind|Category|Region)$|^(is|has)[A-Z]",
)
DATE_LIKE = re.compile(r"(^date$|Date$|Day$)")
# Names that say the value is when the item expires (expiresAt, expiry, expirationTime, ttl, itemTtl).
EXPIRY_LIKE = re.compile(r"[Ee]xpir|^ttl$|T[Tt][Ll]$", re.ASCII)
ASSUMED_FEW_VALUES = 5


def status_like(name: str) -> bool:
    return bool(STATUS_LIKE.search(name))


def mutable(name: str, spec: AttributeSpec) -> bool:
    """Whether the value changes after the write: as declared (`mutable:`), else guessed from a
    status-like name."""
    if spec.mutable is not None:
        return spec.mutable
    return guessed_mutable(name, spec)


def guessed_mutable(name: str, spec: AttributeSpec) -> bool:
    """The guess `mutable:` overrides: a string or boolean with a status-like name."""
    return status_like(name) and spec.type in ("string", "boolean")


def expiry(name: str, spec: AttributeSpec) -> bool:
    """Whether the value is when the item expires: as declared (`expiry:`), else guessed from the name."""
    if spec.expiry is not None:
        return spec.expiry
    return bool(EXPIRY_LIKE.search(name))


def distinct_values(name: str, spec: AttributeSpec) -> tuple[int | None, str]:
    """(how many values, why we think so); None means many (no reason to expect a hot key)."""
    if spec.cardinality is not None:
        return spec.cardinality, "declared cardinality"
    if spec.values:
        return len(spec.values), f"{len(spec.values)} declared values"
    if spec.type == "boolean":
        return 2, "a boolean"
    if spec.type == "date" or DATE_LIKE.search(name):
        return 1, "a date: today's value takes every new write"
    if status_like(name):
        return ASSUMED_FEW_VALUES, f"a {name}-like name, assumed to take about {ASSUMED_FEW_VALUES} values"
    return None, "many values"


def key_cardinality(template: KeyTemplate, specs: dict[str, AttributeSpec]) -> tuple[int | None, list[str]]:
    """Distinct partition-key values of a template (shard numbers excluded) and the reasons."""
    total: int | None = 1
    reasons = []
    for segment in template.segments:
        if segment.attribute is None:
            continue
        count: int | None
        if segment.bucket is not None:
            count, why = 1, f"the current {segment.bucket} takes every new write"
        else:
            count, why = distinct_values(segment.attribute, specs[segment.attribute])
        reasons.append(f"{segment.placeholder}: {why}")
        total = None if total is None or count is None else total * count
    return total, reasons


def hottest_share(template: KeyTemplate, specs: dict[str, AttributeSpec]) -> float | None:
    """Share of the traffic the busiest partition-key value receives, or None when unknown (spread)."""
    shares = []
    for segment in template.segments:
        if segment.attribute is None:
            continue
        spec = specs[segment.attribute]
        if spec.hot_key_share is not None:
            shares.append(spec.hot_key_share)
            continue
        count = 1 if segment.bucket else distinct_values(segment.attribute, spec)[0]
        if count is None:
            return None
        shares.append(1 / count)
    return math.prod(shares) if shares else 1.0
