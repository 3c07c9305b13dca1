"""What the lint rules infer about attributes: how many values they take, whether they change."""

from __future__ import annotations

import re
from dataclasses import dataclass

from tablewright.blueprint.language import AttributeSpec
from tablewright.blueprint.templates import KeyTemplate

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


# Names that say every item has its own value (an id, a key, an address): assumed spread over many values.
IDENTIFIER_LIKE = re.compile(r"^(id|uuid|guid|email|sku|arn|key|token|hash|handle|username)$"
                             r"|(Id|ID|Ids|Uuid|UUID|Guid|Email|Sku|SKU|Arn|Key|Token|Hash|Number)$|_id$")
SPREAD_FROM = 100  # declared cardinality at which values are taken as evenly spread
MAX_HOT_KEYS = 5  # the busiest key values followed one by one (the rest are taken as spread)


@dataclass(frozen=True)
class Component:
    """How one placeholder of a partition key shares its traffic among its values."""

    placeholder: str
    shares: tuple[tuple[str, float], ...] | None  # (value, share), busiest first; None: spread over many
    reason: str
    declare: str = ""  # the line that replaces an assumption ("" when the distribution is declared)


def identifier_like(name: str) -> bool:
    return bool(IDENTIFIER_LIKE.search(name))


def _dominated(name: str, spec: AttributeSpec | None, count: int, why: str, dominant: float) -> Component:
    placeholder = "{" + name + "}"
    if count <= 1:
        return Component(placeholder, (("the only value", 1.0),), why)
    rest = (1 - dominant) / (count - 1)
    shares = (("the busiest value", dominant),) + ((("the next", rest),) if rest > 0 else ())
    declare = (f"`weights:` on {name} (e.g. `weights: {{{spec.values[0]}: 90, ...}}`)" if spec and spec.values
               else f"`weights:` (its values and their traffic) on {name}" if spec and spec.type == "string"
               else f"`hot_key_share:` on {name}")
    return Component(placeholder, shares, f"{why}, none weighted: the busiest assumed to take {dominant:.0%} "
                     "(`traffic.dominant_share`)", declare)


def component(name: str, spec: AttributeSpec, bucket: str | None, dominant: float) -> Component:
    """The distribution of one key placeholder: declared, or judged at its worst with the line to declare."""
    placeholder = "{" + name + (f":{bucket}" if bucket else "") + "}"
    if bucket is not None:
        return Component(placeholder, ((f"the current {bucket}", 1.0),), f"the current {bucket} takes every new write")
    if spec.weights:
        total = sum(spec.weights.values())
        ranked = sorted(((value, weight / total) for value, weight in spec.weights.items()),
                        key=lambda pair: (-pair[1], pair[0]))
        return Component(placeholder, tuple(ranked[:MAX_HOT_KEYS]), "declared weights")
    if spec.hot_key_share is not None:
        return Component(placeholder, (("the busiest value", spec.hot_key_share),),
                         f"declared hot_key_share {spec.hot_key_share:g}")
    if spec.cardinality is not None and spec.cardinality >= SPREAD_FROM:
        return Component(placeholder, (("one value", 1 / spec.cardinality),),
                         f"declared cardinality {spec.cardinality:,}, assumed even",
                         f"`hot_key_share:` on {name} if one value is busier")
    if spec.type in ("date", "timestamp") or DATE_LIKE.search(name):
        return Component(placeholder, (("the current value", 1.0),),
                         f"a {spec.type if spec.type != 'string' else 'date'}: the current value takes every new write")
    count, why = distinct_values(name, spec)
    if count is not None:
        return _dominated(name, spec, count, why, dominant)
    if identifier_like(name) or spec.type == "binary":
        return Component(placeholder, None, "an identifier: many values, assumed spread")
    return Component(placeholder, (("one value", 1.0),),
                     "cardinality unknown and not an identifier, so judged at its worst: one value takes all its "
                     "traffic", f"`cardinality:` (and `hot_key_share:`) or `weights:` on {name}")


def key_components(template: KeyTemplate, specs: dict[str, AttributeSpec], dominant: float) -> list[Component]:
    return [component(s.attribute, specs[s.attribute], s.bucket, dominant) for s in template.segments if s.attribute]


def counted_items(template: KeyTemplate, items: int, entity: str, dominant: float) -> list[Component]:
    """A key naming a single item of an entity that declares few items (`item_count` under SPREAD_FROM) takes
    as many values as there are items, however its attributes are named."""
    name = "+".join(template.attributes)
    return [_dominated(name, None, items, f"{items:,} {entity} item(s) (`item_count`), one per key value",
                       dominant)]


def hot_values(components: list[Component]) -> tuple[tuple[str, float], ...] | None:
    """The busiest key values of a template (each a `#`-joined label and its share of the template's traffic),
    busiest first; None when a component spreads its values (no key value stands out)."""
    keys: list[tuple[str, float]] = [("", 1.0)]
    for part in components:
        if part.shares is None:
            return None
        keys = [(f"{label}#{value}" if label else value, share * other)
                for label, share in keys for value, other in part.shares]
        keys = sorted(keys, key=lambda pair: (-pair[1], pair[0]))[:MAX_HOT_KEYS]
    return tuple(keys)


def hottest_share(template: KeyTemplate, specs: dict[str, AttributeSpec], dominant: float) -> float | None:
    """Share of the traffic the busiest partition-key value receives, or None when it is spread."""
    found = hot_values(key_components(template, specs, dominant))
    return None if found is None else found[0][1]
