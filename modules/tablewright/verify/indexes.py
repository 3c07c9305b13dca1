"""Index membership: every secondary index holds exactly the items that carry its key attributes.

An entity writes an index's keys only when the item has every attribute they are made of, so an
index keyed by an optional attribute is sparse: it holds the items that carry it and no others. The
check reads the table keys of every entry of the index (a Scan of keys, paginated) and compares them
with the samples whose values hold the attributes, judged from the values, not from the items
written, so an item that wrote index keys it should not have is caught.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tablewright.design.design import KeyNames, TableDesign
from tablewright.verify.samples import Sample, carries_keys, sample_key


@dataclass(frozen=True)
class IndexResult:
    index: str
    sparse: tuple[str, ...]  # the optional key attributes that leave items out (none: not sparse)
    expected: int
    found: int
    failure: str | None = None

    @property
    def passed(self) -> bool:
        return self.failure is None


def optional_key_attributes(design: TableDesign, index: str) -> tuple[str, ...]:
    """The optional attributes in any member entity's key on `index`: what makes the index sparse."""
    found: set[str] = set()
    for entity, shapes in design.shapes.items():
        shape = shapes.get(index)
        if shape is None:
            continue
        specs = design.blueprint.entities[entity].attributes
        found.update(a for a in shape.pk.attributes + shape.sk.attributes + shape.shard_by if specs[a].is_optional)
    return tuple(sorted(found))


def keys_on_index(client: Any, table: str, index: str, table_keys: KeyNames) -> list[tuple[str, str]]:
    """The table key (partition, sort) of every entry of `index`: a Scan reading keys only."""
    names = dict(zip(("#pk", "#sk"), table_keys.names, strict=False))
    body: dict[str, Any] = {
        "TableName": table, "IndexName": index, "ProjectionExpression": ", ".join(names),
        "ExpressionAttributeNames": names,
    }
    keys: list[tuple[str, str]] = []
    while True:
        answer = client.scan(**body)
        keys += [key for item in answer["Items"] if (key := table_keys.of(item)) is not None]
        if "LastEvaluatedKey" not in answer:
            return keys
        body["ExclusiveStartKey"] = answer["LastEvaluatedKey"]


def _missing_attributes(design: TableDesign, sample: Sample, index: str) -> list[str]:
    shape = design.shapes[sample.entity].get(index)
    if shape is None:
        return []
    return [a for a in dict.fromkeys(shape.pk.attributes + shape.sk.attributes + shape.shard_by)
            if sample.values.get(a) is None]


def _intruder(design: TableDesign, index: str, sample: Sample | None) -> str:
    """Words for an entry the index should not hold."""
    if sample is None:
        return "an item verify did not write"
    lacking = _missing_attributes(design, sample, index)
    if lacking:
        return f"a {sample.entity} item without {', '.join(lacking)}"
    return f"a {sample.entity} item, an entity with no key on {index}"


def compare_membership(
    design: TableDesign, index: str, samples: Sequence[Sample], held: Sequence[tuple[str, str]]
) -> IndexResult:
    """The index's entries (`held`, table keys) against the samples that carry its key attributes."""
    members = [s for s in samples if carries_keys(design, s, index)]
    wanted, found = Counter(sample_key(design, s) for s in members), Counter(held)
    extra, missing = sorted((found - wanted).elements()), sorted((wanted - found).elements())
    failure = None
    if extra or missing:
        what = f"{index} holds {len(held)} items, expected {len(members)} (the items that carry its key attributes)"
        by_key = {sample_key(design, s): s for s in samples}
        if extra:
            failure = f"{what}; {_intruder(design, index, by_key.get(extra[0]))} is in it: {' / '.join(extra[0])}"
        else:
            entity = by_key[missing[0]].entity
            failure = f"{what}; a {entity} item that carries them is missing: {' / '.join(missing[0])}"
    return IndexResult(index, optional_key_attributes(design, index), len(members), len(held), failure)


def verify_index(client: Any, design: TableDesign, index: str, table: str, samples: Sequence[Sample]) -> IndexResult:
    return compare_membership(design, index, samples, keys_on_index(client, table, index, design.table_keys))
