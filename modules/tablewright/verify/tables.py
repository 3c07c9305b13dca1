"""The table as the synthesized Terraform declares it, turned into a CreateTable request.

The Terraform is what ships, so verification creates exactly its key schema, attribute definitions
and GSIs (with their projections). Capacity does not change query results, so the emulator's table
is on-demand whatever the blueprint says.
"""

from __future__ import annotations

from typing import Any


def terraform_table(config: dict[str, Any]) -> dict[str, Any]:
    """The single `aws_dynamodb_table` of a synthesized stack."""
    tables: list[dict[str, Any]] = list(config.get("resource", {}).get("aws_dynamodb_table", {}).values())
    if len(tables) != 1:
        raise ValueError(f"expected one aws_dynamodb_table in the stack, found {len(tables)}")
    return tables[0]


def _key_schema(block: dict[str, Any]) -> list[dict[str, str]]:
    schema = [{"AttributeName": block["hash_key"], "KeyType": "HASH"}]
    if block.get("range_key"):
        schema.append({"AttributeName": block["range_key"], "KeyType": "RANGE"})
    return schema


def create_table_request(config: dict[str, Any]) -> dict[str, Any]:
    table = terraform_table(config)
    request: dict[str, Any] = {
        "TableName": table["name"],
        "KeySchema": _key_schema(table),
        "AttributeDefinitions": [
            {"AttributeName": a["name"], "AttributeType": a["type"]} for a in table["attribute"]
        ],
        "BillingMode": "PAY_PER_REQUEST",
    }
    if table.get("tags"):
        request["Tags"] = [{"Key": key, "Value": value} for key, value in sorted(table["tags"].items())]
    indexes = []
    for gsi in table.get("global_secondary_index", []):
        projection: dict[str, Any] = {"ProjectionType": gsi["projection_type"]}
        if gsi.get("non_key_attributes"):
            projection["NonKeyAttributes"] = list(gsi["non_key_attributes"])
        indexes.append({"IndexName": gsi["name"], "KeySchema": _key_schema(gsi), "Projection": projection})
    if indexes:
        request["GlobalSecondaryIndexes"] = indexes
    local = []
    for lsi in table.get("local_secondary_index", []):
        projection = {"ProjectionType": lsi["projection_type"]}
        if lsi.get("non_key_attributes"):
            projection["NonKeyAttributes"] = list(lsi["non_key_attributes"])
        schema = [{"AttributeName": table["hash_key"], "KeyType": "HASH"},
                  {"AttributeName": lsi["range_key"], "KeyType": "RANGE"}]
        local.append({"IndexName": lsi["name"], "KeySchema": schema, "Projection": projection})
    if local:
        request["LocalSecondaryIndexes"] = local
    return request


def index_names(request: dict[str, Any]) -> list[str]:
    """The secondary indexes (global, then local) of a CreateTable request."""
    return [index["IndexName"] for kind in ("GlobalSecondaryIndexes", "LocalSecondaryIndexes")
            for index in request.get(kind, [])]
