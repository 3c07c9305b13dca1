"""Items as an application writes them: attribute values plus every key attribute, rendered through
the same key templates the query plans use. Entities write GSI keys only for GSIs they take part in.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tablewright.blueprint.encoding import bucket_value, encode_key_value, stored_value
from tablewright.blueprint.language import AttributeSpec
from tablewright.blueprint.templates import SHARD, shard_number
from tablewright.design.design import ENTITY_ATTRIBUTE, TABLE, Shape, TableDesign


def placeholder_values(specs: Mapping[str, AttributeSpec], shape: Shape, values: Mapping[str, Any]) -> dict[str, str]:
    """The text of every placeholder of `shape`'s keys for one item's values (KeyError if one is missing)."""
    encoded: dict[str, str] = {}
    for segment in shape.pk.segments + shape.sk.segments:
        if segment.attribute is None:
            continue
        value = values[segment.attribute]
        if value is None:
            raise KeyError(segment.attribute)
        spec = specs[segment.attribute]
        encoded[segment.placeholder] = (
            bucket_value(spec, value, segment.bucket) if segment.bucket else encode_key_value(spec, value)
        )
    if shape.shards > 1:
        encoded[SHARD] = shard_number([encode_key_value(specs[a], values[a]) for a in shape.shard_by], shape.shards)
    return encoded


def build_item(design: TableDesign, entity: str, values: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The low-level (typed) item for `values`, the semantic attribute values of one `entity`."""
    specs = design.blueprint.entities[entity].attributes
    item = {name: stored_value(specs[name], value) for name, value in values.items() if value is not None}
    item[ENTITY_ATTRIBUTE] = {"S": entity}
    for index, shape in sorted(design.shapes[entity].items()):
        try:
            encoded = placeholder_values(specs, shape, values)
        except KeyError:
            if index == TABLE:
                raise
            continue  # sparse: an item without a GSI key attribute stays out of that index
        item[shape.keys.pk] = {"S": shape.pk.render(encoded)}
        if shape.keys.sk is not None:
            item[shape.keys.sk] = {"S": shape.sk.render(encoded)}
    return item
