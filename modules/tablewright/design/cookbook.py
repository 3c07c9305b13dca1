"""The exact boto3 requests of each query plan, with `{parameter}` placeholders.

Application developers copy these; verification binds the placeholders and sends the very same
requests, so the cookbook is tested by construction.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from tablewright.design.design import ENTITY_ATTRIBUTE, NOW, TABLE, QueryPlan

_PLACEHOLDER = re.compile(r"\{([A-Za-z0-9_.:]+)\}")


def name_placeholder(attribute: str) -> str:
    """`#status` for an attribute; an adopted key attribute such as `user-id`, which a placeholder cannot
    spell, gets `#x` and its UTF-8 in hex (unique, like the name)."""
    return f"#{attribute}" if re.fullmatch(r"\w+", attribute, re.ASCII) else f"#x{attribute.encode().hex()}"


def _names(attributes: tuple[str, ...]) -> dict[str, str]:
    return {name_placeholder(attribute): attribute for attribute in attributes}


def _projection(attributes: tuple[str, ...]) -> str:
    return ", ".join(name_placeholder(attribute) for attribute in attributes)


def read_attributes(plan: QueryPlan) -> tuple[str, ...]:
    """What the main request reads: projected returns (a keys-only pattern, `returns: []`: the table's key
    attributes), plus the table keys when a follow-up needs them, the sort key when a fan-out merges by
    it, and the entity when a collection mixes several."""
    if not plan.returns:
        return plan.table_keys.names + ((ENTITY_ATTRIBUTE,) if len(plan.entities) > 1 else ())
    extra: tuple[str, ...] = plan.table_keys.names if plan.follow_up else ()
    if plan.fan_out is not None and plan.keys.sk is not None:
        extra += (plan.keys.sk,)
    if len(plan.entities) > 1:
        extra += (ENTITY_ATTRIBUTE,)
    return tuple(dict.fromkeys(plan.projected + extra))


def request(plan: QueryPlan, table_name: str) -> dict[str, Any]:
    """The low-level boto3 request (`client.query|get_item|scan(**request)`)."""
    key_values = dict(plan.values)
    attributes = () if plan.count else read_attributes(plan)
    if plan.operation == "GetItem":
        body: dict[str, Any] = {
            "TableName": table_name,
            "Key": {name: {"S": key_values[placeholder]}
                    for name, placeholder in zip(plan.keys.names, (":pk", ":sk"), strict=False)},
        }
        if attributes:
            body["ProjectionExpression"] = _projection(attributes)
            body["ExpressionAttributeNames"] = _names(attributes)
        if plan.consistent:
            body["ConsistentRead"] = True
        return _batch_get(body) if plan.batch else body
    body = {"TableName": table_name}
    names: dict[str, str] = {}
    values: dict[str, Any] = {}
    if plan.index != TABLE:
        body["IndexName"] = plan.index
    if plan.operation == "Query":
        body["KeyConditionExpression"] = plan.key_condition
        names["#pk"] = plan.keys.pk
        if plan.keys.sk is not None and "#sk" in plan.key_condition:
            names["#sk"] = plan.keys.sk
        values.update({placeholder: {"S": template} for placeholder, template in plan.values})
    filters = [plan.filter_expression] if plan.filter_expression else []
    if plan.filter_expression:
        names.update(_names(tuple(re.findall(r"#(\w+)", plan.filter_expression))))
        values.update(dict(plan.filter_values))
    if plan.hides_expired:
        # Items without the attribute never expire; an item expired at `_now` is hidden.
        expiring = name_placeholder(plan.hides_expired)
        filters.append(f"(attribute_not_exists({expiring}) OR {expiring} > :now)")
        names[expiring] = plan.hides_expired
        values[":now"] = {"N": f"{{{NOW}}}"}
    if filters:
        body["FilterExpression"] = " AND ".join(filters)
    if plan.count:
        body["Select"] = "COUNT"  # no ProjectionExpression: with one, Select may only be SPECIFIC_ATTRIBUTES
    if attributes:
        body["ProjectionExpression"] = _projection(attributes)
        names.update(_names(attributes))
    body["ExpressionAttributeNames"] = names
    if values:
        body["ExpressionAttributeValues"] = values
    if plan.operation == "Query":
        body["ScanIndexForward"] = plan.scan_index_forward
    if plan.limit is not None and not plan.filter_expression:
        body["Limit"] = plan.limit
    if plan.consistent:
        body["ConsistentRead"] = True
    return body


def _batch_get(get_item: dict[str, Any]) -> dict[str, Any]:
    """The GetItem as a BatchGetItem (`client.batch_get_item(**request)`): `Keys` holds one key per item read,
    each as the GetItem's; keys DynamoDB returns under `UnprocessedKeys` are sent again."""
    read = {name: value for name, value in get_item.items() if name not in ("TableName", "Key")}
    return {"RequestItems": {get_item["TableName"]: {"Keys": [get_item["Key"]], **read}}}


def next_page_request(plan: QueryPlan) -> dict[str, Any] | None:
    """What the request adds for the page after one that returned a LastEvaluatedKey: that key, as it came, as
    ExclusiveStartKey (the page then starts after the previous page's last item, never on it)."""
    if plan.operation == "GetItem":
        return None
    return {"ExclusiveStartKey": "{LastEvaluatedKey of the previous page}"}


def follow_up_request(plan: QueryPlan, table_name: str) -> dict[str, Any] | None:
    """The BatchGetItem that fetches attributes the index lacks (Keys filled from the query's items)."""
    if plan.follow_up is None:
        return None
    attributes = plan.follow_up.attributes
    return {
        "RequestItems": {
            table_name: {
                "Keys": [{name: {"S": f"{{{name} of each item}}"} for name in plan.table_keys.names}],
                "ProjectionExpression": _projection(attributes),
                "ExpressionAttributeNames": _names(attributes),
            }
        }
    }


def bind(template: Any, parameters: Mapping[str, str]) -> Any:
    """Replace every `{parameter}` in string values of a request with its encoded value."""
    if isinstance(template, str):
        return _PLACEHOLDER.sub(lambda m: parameters[m.group(1)], template)
    if isinstance(template, dict):
        return {key: bind(value, parameters) for key, value in template.items()}
    if isinstance(template, list):
        return [bind(value, parameters) for value in template]
    return template
