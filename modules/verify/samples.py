"""Deterministic sample items: several partitions per entity, several items per partition, values
spread so every range condition has items on both sides of its bounds.

Values of an attribute come from one pool shared by every entity (`customerId-03` is the same
customer for Customer, Contact and Ticket), so item collections and cross-entity keys line up.
Attributes that form a GSI partition key draw from a small pool, so GSI partitions hold several
items too. The blueprint's `examples:` are added as given.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from modules.blueprint.encoding import example_value, parse_value
from modules.blueprint.model import AttributeSpec, Blueprint
from modules.capacity.size import item_size
from modules.design.items import build_item
from modules.design.model import TABLE, KeyNames, TableDesign
from modules.errors import BlueprintError

EPOCH = datetime(2024, 1, 1, tzinfo=UTC)
WINDOW_SECONDS = 60 * 24 * 3600
SMALL_POOL = 3
BUCKET_WINDOW = {"day": 3 * 86400, "month": 90 * 86400}


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


def spread_value(name: str, spec: AttributeSpec, rng: random.Random, window: int = WINDOW_SECONDS) -> Any:
    """A value drawn across the attribute's range (numbers across magnitudes, times across `window`)."""
    if spec.is_document:
        return example_value(spec)
    if spec.values:
        return rng.choice(spec.values)
    if spec.type == "number":
        digits = min(spec.width or 5, 5)
        return rng.randrange(1, 10 ** rng.randint(1, digits))
    if spec.type == "timestamp":
        return _quantize(spec, EPOCH + timedelta(seconds=rng.randrange(window)))
    if spec.type == "date":
        return EPOCH.date() + timedelta(days=rng.randrange(max(1, window // 86400)))
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


def _entity_values(design: TableDesign, entity: str, rng: random.Random) -> list[dict[str, Any]]:
    spec = design.blueprint.entities[entity]
    base = design.shapes[entity][TABLE]
    partition = [s.attribute for s in base.pk.segments if s.attribute and not s.bucket]
    # A time-bucketed attribute spreads over a few buckets, so partitions hold several items each.
    bucketed = {s.attribute: BUCKET_WINDOW[s.bucket] for s in base.pk.segments if s.bucket}
    within = [a for a in base.sk.attributes if a not in partition]
    small = _gsi_partition_attributes(design, entity) - set(partition) - set(within)
    partitions, per_partition = (4, 8) if within else (12, 1)
    rows = []
    for p in range(partitions):
        for j in range(per_partition):
            values: dict[str, Any] = {}
            for name, attribute in spec.attributes.items():
                if name in partition:
                    values[name] = pool_value(name, attribute, p)
                elif name in within and attribute.type == "string" and not attribute.values:
                    values[name] = pool_value(name, attribute, j)
                elif name in small:
                    values[name] = pool_value(name, attribute, rng.randrange(SMALL_POOL))
                elif name in bucketed:
                    values[name] = spread_value(name, attribute, rng, bucketed[name])
                else:
                    values[name] = spread_value(name, attribute, rng)
            rows.append(values)
    return rows


def _pad_to_size(design: TableDesign, entity: str, sample: Sample, key_attributes: set[str]) -> Sample:
    """Lengthen one free text attribute so the item reaches the entity's declared average size."""
    target = design.blueprint.entities[entity].item_bytes
    free = [
        name for name, spec in design.blueprint.entities[entity].attributes.items()
        if spec.type == "string" and not spec.values and name not in key_attributes
    ]
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


def generate_samples(design: TableDesign, seed: int = 7) -> list[Sample]:
    """Sample items for every entity, deterministic for a given seed; unique primary keys."""
    bp: Blueprint = design.blueprint
    samples: list[Sample] = []
    seen: set[tuple[str, str]] = set()
    for entity in sorted(bp.entities):
        rng = random.Random(f"{seed}:{entity}")
        key_attributes = {a for shape in design.shapes[entity].values()
                          for a in shape.pk.attributes + shape.sk.attributes}
        examples = _examples(design, entity)
        for position, values in enumerate(examples + _entity_values(design, entity, rng)):
            try:
                sample = Sample(entity, values, build_item(design, entity, values))
            except (KeyError, ValueError) as error:
                if position >= len(examples):
                    raise
                raise BlueprintError(
                    f"example cannot be written: {_why(error)}",
                    path=("entities", entity, "examples", position),
                    hint="give every key attribute a value without '#'",
                ) from None
            if position >= len(examples):
                sample = _pad_to_size(design, entity, sample, key_attributes)
            key = index_key(sample, design.table_keys)
            if key is not None and key not in seen:
                seen.add(key)
                samples.append(sample)
    return samples


def _why(error: Exception) -> str:
    return f"missing key attribute `{error.args[0]}`" if isinstance(error, KeyError) else str(error)


def index_key(sample: Sample, keys: KeyNames) -> tuple[str, str] | None:
    """The item's (partition, sort) key on an index, or None when the item is not in it (sparse)."""
    return keys.of(sample.item)
