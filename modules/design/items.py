"""Items as an application writes them: attribute values plus every key attribute, rendered through
the same key templates the query plans use. Entities write GSI keys only for GSIs they take part in.
"""

from __future__ import annotations

from typing import Any, Mapping

from modules.design.encoding import encode_key_value, stored_value
from modules.design.model import ENTITY_ATTRIBUTE, TABLE, TableDesign, key_names


def build_item(design: TableDesign, entity: str, values: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The low-level (typed) item for `values`, the semantic attribute values of one `entity`."""
    specs = design.blueprint.entities[entity].attributes
    item = {name: stored_value(specs[name], value) for name, value in values.items() if value is not None}
    item[ENTITY_ATTRIBUTE] = {"S": entity}
    for index, shape in sorted(design.shapes[entity].items()):
        needed = shape.pk.attributes + shape.sk.attributes
        missing = [attribute for attribute in needed if values.get(attribute) is None]
        if missing and index == TABLE:
            raise KeyError(missing[0])
        if missing:
            continue  # sparse: an item without a GSI key attribute stays out of that index
        encoded = {attribute: encode_key_value(specs[attribute], values[attribute]) for attribute in needed}
        names = key_names(index)
        item[names.pk] = {"S": shape.pk.render(encoded)}
        item[names.sk] = {"S": shape.sk.render(encoded)}
    return item
