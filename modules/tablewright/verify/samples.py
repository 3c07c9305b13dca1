"""Deterministic sample items: several partitions per entity, several items per partition, values
spread so every range condition has items on both sides of its bounds.

Values of an attribute come from one pool shared by every entity (`customerId-03` is the same
customer for Customer, Contact and Ticket), so item collections and cross-entity keys line up.
Attributes that form a GSI partition key draw from a small pool, so GSI partitions hold several
items too. A sort-key component that a pattern binds by `=` before a range or an order (`chapter` in
`CHAPTER#{chapter}#LESSON#{lesson}`) draws from a pool of two, so several items share every prefix;
the components after it spread over strata (numbers across magnitudes, times across the window), so
every prefix holds values that sort differently as text and as values when the encoding is wrong.
Optional attributes are left out of some items (at least three with, one without), so sparse
indexes hold fewer items than the table. The blueprint's `examples:` are added as given.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from tablewright.blueprint.encoding import example_value, parse_value
from tablewright.blueprint.language import AttributeSpec, Blueprint
from tablewright.capacity.size import item_size
from tablewright.design.design import TABLE, KeyNames, TableDesign
from tablewright.design.items import build_item
from tablewright.errors import BlueprintError, ErrorCode

EPOCH = datetime(2024, 1, 1, tzinfo=UTC)
WINDOW_SECONDS = 60 * 24 * 3600
SMALL_POOL = 3
PREFIX_POOL = 2  # values of a sort-key component bound by `=` before a range: several items per prefix
STRATA = 4  # the items behind one prefix spread over this many strata of a range
MIN_CARRIERS = 3  # items that carry an optional attribute, however rare it is
BUCKET_WINDOW = {"hour": 3 * 3600, "day": 3 * 86400, "week": 21 * 86400, "month": 90 * 86400}


@dataclass(frozen=True)
class Sample:
    entity: str
    values: dict[str, Any]
    item: dict[str, dict[str, Any]]


def pool_value(name: str, spec: AttributeSpec, position: int) -> Any:
    """The `position`-th value of an attribute's shared pool."""
    if spec.is_document:  # stored and returned, never part of a key or a condition
        return example_value(spec)
    if spec.values:
        return spec.values[position % len(spec.values)]
    if spec.type == "number":
        return (position + 1) * 7
    if spec.type == "timestamp":
        return _quantize(spec, EPOCH + timedelta(days=position, hours=position))
    if spec.type == "date":
        return EPOCH.date() + timedelta(days=position)
    if spec.type == "boolean":
        return position % 2 == 0
    return f"{name}-{position + 1:02d}"


def magnitude(digits: int, stratum: tuple[int, int]) -> int:
    """Digits of a number drawn from stratum k of n: the first has 1 digit, the last `digits`."""
    k, n = stratum
    return 1 + round(k * (digits - 1) / (n - 1)) if n > 1 else digits


def spread_value(
    name: str, spec: AttributeSpec, rng: random.Random, window: int = WINDOW_SECONDS,
    stratum: tuple[int, int] | None = None,
) -> Any:
    """A value drawn across the attribute's range (numbers across magnitudes, times across `window`).

    With a `stratum` (k of n), from the k-th of n slices of the range, so n items span all of it.
    """
    if spec.is_document:
        return example_value(spec)
    k, n = stratum or (0, 1)
    if spec.values:
        return rng.choice(spec.values)
    if spec.type == "number":
        digits = min(spec.width or 5, 5)
        size = magnitude(digits, stratum) if stratum else rng.randint(1, digits)
        return rng.randrange(10 ** (size - 1) if stratum else 1, 10 ** size)
    if spec.type == "timestamp":
        return _quantize(spec, EPOCH + timedelta(seconds=rng.randrange(window * k // n, window * (k + 1) // n)))
    if spec.type == "date":
        days = max(n, window // 86400)
        return EPOCH.date() + timedelta(days=rng.randrange(days * k // n, days * (k + 1) // n))
    if spec.type == "boolean":
        return rng.random() < 0.5
    return f"{name}-{rng.randrange(10 ** 6):06d}"


def _quantize(spec: AttributeSpec, moment: datetime) -> datetime:
    """Drop precision the attribute's encoding does not keep, so equal keys mean equal values."""
    fmt = spec.timestamp_format
    if fmt in ("iso8601", "epoch_seconds", "epoch_millis") or "%S" in fmt or "%f" in fmt:
        return moment
    if "%M" in fmt:
        return moment.replace(second=0)
    if "%H" in fmt or "%I" in fmt:
        return moment.replace(minute=0, second=0)
    return moment.replace(hour=0, minute=0, second=0)


def _gsi_partition_attributes(design: TableDesign, entity: str) -> set[str]:
    return {a for index, shape in design.shapes[entity].items() if index != TABLE for a in shape.pk.attributes}


def prefix_attributes(design: TableDesign, entity: str) -> set[str]:
    """Sort-key components of `entity` that a Query binds by `=` with more of the sort key after them
    (on the table or any index): the prefixes several items must share."""
    found: set[str] = set()
    for plan in design.plans:
        if plan.operation != "Query" or entity not in plan.entities or plan.index not in design.shapes[entity]:
            continue
        where = design.blueprint.access_patterns[plan.pattern].where
        components = design.shapes[entity][plan.index].sk.attributes
        bound = [a for a in components if where.get(a) == "="]
        if len(bound) < len(components):
            found.update(bound)
    return found


def _entity_values(design: TableDesign, entity: str, rng: random.Random) -> list[dict[str, Any]]:
    spec = design.blueprint.entities[entity]
    base = design.shapes[entity][TABLE]
    partition = [s.attribute for s in base.pk.segments if s.attribute and not s.bucket]
    # A time-bucketed attribute spreads over a few buckets, so partitions hold several items each.
    bucketed = {s.attribute: BUCKET_WINDOW[s.bucket] for s in base.pk.segments if s.bucket}
    within = [a for a in base.sk.attributes if a not in partition]
    prefixes = prefix_attributes(design, entity) - set(partition)
    if within and set(within) <= prefixes:
        # Pooling every component of the table's sort key would leave two items per partition: those
        # components keep their per-position values, which partitions share, so prefixes repeat anyway.
        prefixes -= set(within)
    small = _gsi_partition_attributes(design, entity) - set(partition) - set(within)
    # Single-item partitions: twice as many when a pooled prefix splits every index partition further.
    partitions, per_partition = (4, 8) if within else (12 * (PREFIX_POOL if prefixes else 1), 1)
    rows = []
    for p in range(partitions):
        for j in range(per_partition):
            row = p * per_partition + j
            stratum = ((row // PREFIX_POOL) % STRATA, STRATA)  # every prefix gets every stratum
            values: dict[str, Any] = {}
            for name, attribute in spec.attributes.items():
                if name in partition:
                    values[name] = pool_value(name, attribute, p)
                elif name in prefixes:
                    values[name] = pool_value(name, attribute, row % PREFIX_POOL)
                elif name in within and attribute.type == "string" and not attribute.values:
                    values[name] = pool_value(name, attribute, j)
                elif name in small:
                    values[name] = pool_value(name, attribute, rng.randrange(SMALL_POOL))
                elif name in bucketed:
                    values[name] = spread_value(name, attribute, rng, bucketed[name])
                else:
                    values[name] = spread_value(name, attribute, rng, stratum=stratum)
            rows.append(values)
    return rows


def carriers(count: int, presence: float, rng: random.Random) -> set[int]:
    """Which of `count` items carry an optional attribute: about `presence` of them, but at least
    `MIN_CARRIERS` (a pattern on a sparse index needs items to read) and, with two items or more,
    never all (the index is checked both ways)."""
    wanted = min(max(MIN_CARRIERS, round(count * presence)), max(1, count - 1), count)
    return set(rng.sample(range(count), wanted))


def _leave_out_optional(
    design: TableDesign, entity: str, rows: Sequence[dict[str, Any]], seed: int
) -> list[dict[str, Any]]:
    """The rows without each optional attribute in the items chosen not to carry it."""
    kept = [dict(row) for row in rows]
    for name, spec in sorted(design.blueprint.entities[entity].attributes.items()):
        if not spec.is_optional:
            continue
        chosen = carriers(len(kept), spec.presence, random.Random(f"{seed}:{entity}:{name}"))
        for position, row in enumerate(kept):
            if position not in chosen:
                row.pop(name, None)
    return kept


def _pad_to_size(design: TableDesign, entity: str, sample: Sample, key_attributes: set[str]) -> Sample:
    """Lengthen one free text attribute so the item reaches the entity's declared average size."""
    target = design.blueprint.entities[entity].item_bytes
    specs = design.blueprint.entities[entity].attributes
    free = sorted(
        (name for name, spec in specs.items()
         if spec.type == "string" and not spec.values and name not in key_attributes
         and sample.values.get(name) is not None),
        key=lambda name: specs[name].is_optional,  # an attribute every item has, first
    )
    size = item_size(sample.item)
    if not target or not free or size >= target:
        return sample
    values = dict(sample.values)
    values[free[0]] = values[free[0]] + "." * (target - size)
    return Sample(entity, values, build_item(design, entity, values))


def _examples(design: TableDesign, entity: str) -> list[dict[str, Any]]:
    spec = design.blueprint.entities[entity]
    rows = []
    for example in spec.examples:
        rows.append({name: parse_value(spec.attributes[name], raw) for name, raw in example.items()})
    return rows


def _example_samples(design: TableDesign, entity: str) -> list[Sample]:
    samples = []
    for position, values in enumerate(_examples(design, entity)):
        try:
            samples.append(Sample(entity, values, build_item(design, entity, values)))
        except (KeyError, ValueError) as error:
            raise BlueprintError(
                f"example cannot be written: {_why(error)}", code=ErrorCode.VALUE_NOT_ALLOWED,
                path=("entities", entity, "examples", position),
                hint="give every key attribute a value without '#'",
            ) from None
    return samples


def generate_samples(design: TableDesign, seed: int = 7) -> list[Sample]:
    """Sample items for every entity, deterministic for a given seed; unique primary keys."""
    blueprint: Blueprint = design.blueprint
    samples: list[Sample] = []
    seen: set[tuple[str, str]] = set()
    for entity in sorted(blueprint.entities):
        rng = random.Random(f"{seed}:{entity}")
        key_attributes = {a for shape in design.shapes[entity].values()
                          for a in shape.pk.attributes + shape.sk.attributes}
        for sample in _example_samples(design, entity):
            key = sample_key(design, sample)
            if key not in seen:
                seen.add(key)
                samples.append(sample)
        rows = []
        for values in _entity_values(design, entity, rng):
            key = sample_key(design, Sample(entity, values, build_item(design, entity, values)))
            if key not in seen:  # the table key holds no optional attribute: leaving them out keeps it
                seen.add(key)
                rows.append(values)
        for values in _leave_out_optional(design, entity, rows, seed):
            samples.append(_pad_to_size(design, entity, Sample(entity, values, build_item(design, entity, values)),
                                        key_attributes))
    return samples


def _why(error: Exception) -> str:
    return f"missing key attribute `{error.args[0]}`" if isinstance(error, KeyError) else str(error)


def sample_key(design: TableDesign, sample: Sample) -> tuple[str, str]:
    """The item's primary key (partition, sort; sort "" without a sort key)."""
    key = index_key(sample, design.table_keys)
    assert key is not None  # every item carries the table's key
    return key


def index_key(sample: Sample, keys: KeyNames) -> tuple[str, str] | None:
    """The item's (partition, sort) key on an index, or None when the item is not in it (sparse)."""
    return keys.of(sample.item)


def carries_keys(design: TableDesign, sample: Sample, index: str) -> bool:
    """Whether the sample's values hold every attribute of its entity's key on `index` (the item
    belongs on that index), judged from the values, not from the item written."""
    shape = design.shapes[sample.entity].get(index)
    if shape is None:
        return False
    needed = shape.pk.attributes + shape.sk.attributes + shape.shard_by
    return all(sample.values.get(a) is not None for a in needed)
