"""The JSON Schema of the blueprint language, generated from the pydantic models.

Two files: `blueprint.schema.json` for service blueprints, and `blueprint-base.schema.json` for
shared bases, in which every field is optional (they are merged into blueprints, not used alone).
Environment overlays are partial too, and accept `null` (which removes an inherited value).
"""

from __future__ import annotations

import copy
import json
from typing import Any

from tablewright.blueprint.language import Blueprint

SCHEMA_URL = "https://json-schema.org/draft/2020-12/schema"
BLUEPRINT_FILE = "blueprint.schema.json"
BASE_FILE = "blueprint-base.schema.json"
_ROOT_KEYS = ("type", "properties", "additionalProperties")


def _partial(node: Any) -> Any:
    """Every field optional and nullable; references point at the partial definitions."""
    if isinstance(node, list):
        return [_partial(item) for item in node]
    if not isinstance(node, dict):
        return node
    result: dict[str, Any] = {}
    for key, value in node.items():
        if key == "required":
            continue
        if key == "$ref" and isinstance(value, str):
            result[key] = value.replace("#/$defs/", "#/$defs/Partial")
        elif key == "properties":
            result[key] = {name: {"anyOf": [_partial(prop), {"type": "null"}]} for name, prop in value.items()}
        else:
            result[key] = _partial(value)
    return result


def _schemas() -> tuple[dict[str, Any], dict[str, Any]]:
    model = Blueprint.model_json_schema()
    definitions = model.pop("$defs")
    partial = {f"Partial{name}": _partial(definition) for name, definition in definitions.items()}
    overlay = _partial({key: copy.deepcopy(model[key]) for key in _ROOT_KEYS})
    overlay["properties"] = {k: v for k, v in overlay["properties"].items() if k not in ("extends", "environments")}
    definitions = {**definitions, **partial, "Overlay": overlay}
    model["properties"]["environments"]["additionalProperties"] = {"$ref": "#/$defs/Overlay"}
    header = {"$schema": SCHEMA_URL}
    blueprint = {
        **header,
        "$id": f"https://tablewright.dev/schema/{BLUEPRINT_FILE}",
        "title": "Tablewright blueprint",
        "description": "A DynamoDB single-table design: entities, keys, access patterns with rates.",
        **{key: model[key] for key in _ROOT_KEYS},
        "required": model["required"],
        "$defs": definitions,
    }
    base_root = _partial({key: copy.deepcopy(model[key]) for key in _ROOT_KEYS})
    base_root["properties"]["environments"] = {"anyOf": [model["properties"]["environments"], {"type": "null"}]}
    base = {
        **header,
        "$id": f"https://tablewright.dev/schema/{BASE_FILE}",
        "title": "Tablewright shared blueprint",
        "description": "Defaults other blueprints `extends`: every field optional; merged, not used alone.",
        **base_root,
        "$defs": definitions,
    }
    return blueprint, base


def schema_texts() -> dict[str, str]:
    """File name -> JSON text, deterministic."""
    blueprint, base = _schemas()
    return {name: json.dumps(schema, indent=2, sort_keys=True) + "\n"
            for name, schema in ((BLUEPRINT_FILE, blueprint), (BASE_FILE, base))}
