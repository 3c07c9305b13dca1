"""Small blueprints built in Python for design-stage tests."""

from __future__ import annotations

from typing import Any

from tablewright.blueprint.language import Blueprint
from tablewright.blueprint.references import check_references
from tablewright.design.design import TableDesign
from tablewright.design.designer import design

# A blueprint whose one item is over DynamoDB's 400 KB: lint error TW303, on line 8 (`item_bytes`).
OVERSIZED_ITEM = """\
blueprint: traps
version: 1.0.0
table: {name: traps_main}
entities:
  User:
    attributes: {userId: string}
    key: {pk: "USER#{userId}", sk: PROFILE}
    item_bytes: 500000
"""


def blueprint(entities: dict[str, Any], patterns: dict[str, Any], **extra: Any) -> Blueprint:
    data = {
        "blueprint": "test",
        "version": "1.0.0",
        "table": {"name": "test_table"},
        "entities": entities,
        "access_patterns": patterns,
        **extra,
    }
    model = Blueprint.model_validate(data)
    check_references(model)
    return model


def designed(entities: dict[str, Any], patterns: dict[str, Any], **extra: Any) -> TableDesign:
    return design(blueprint(entities, patterns, **extra))


CUSTOMER = {
    "attributes": {
        "customerId": "string",
        "name": "string",
        "industry": {"type": "string", "values": ["FINANCE", "RETAIL"]},
        "tier": {"type": "string", "values": ["A", "B"]},
        "region": "string",
        "lastTouchAt": "timestamp",
    },
    "key": {"pk": "CUSTOMER#{customerId}", "sk": "PROFILE"},
}
CONTACT = {
    "attributes": {"customerId": "string", "contactAt": "timestamp", "channel": "string", "summary": "string"},
    "key": {"pk": "CUSTOMER#{customerId}", "sk": "CONTACT#{contactAt}#{channel}"},
}
