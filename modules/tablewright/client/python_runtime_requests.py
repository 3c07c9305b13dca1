# --- Tablewright's client runtime, its requests: reads in pages, writes that keep every key (the same in every
# generated Python module, after python_runtime.py) ---
# The import below is for the type checker and linter only: a generated module holds both parts in one file and
# drops every line up to the end of it.
import base64  # noqa: I001
import hashlib
import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tablewright.client.python_runtime import BATCH_GET_LIMIT, ENTITY_ATTRIBUTE, ItemNotFound, StaleDesign, _Item
# --- end of the type checker's import ---


def _read_digest(bodies: Sequence[dict[str, Any]]) -> str:
    """What a token belongs to: the read's requests, its values bound (another pattern or other values: another
    read)."""
    return hashlib.sha256(json.dumps(bodies, sort_keys=True, default=repr).encode()).hexdigest()[:16]


def _token(bodies: Sequence[dict[str, Any]], positions: list[Any]) -> str | None:
    """An opaque token for where each request of a read stands: None not begun, False done, else the
    ExclusiveStartKey. None when every request is done."""
    if all(position is False for position in positions):
        return None
    data = {"read": _read_digest(bodies), "at": positions}
    return base64.urlsafe_b64encode(json.dumps(data, sort_keys=True).encode()).decode()


def _is_key(position: Any) -> bool:
    return isinstance(position, dict) and bool(position) and all(
        isinstance(name, str) and isinstance(value, dict) and len(value) == 1
        and next(iter(value)) in ("S", "N") and isinstance(next(iter(value.values())), str)
        for name, value in position.items())


def _positions(token: str | None, bodies: Sequence[dict[str, Any]]) -> list[Any]:
    if token is None:
        return [None] * len(bodies)
    refused = ValueError("not a page token of this read (a token continues the call that returned it, with the "
                         "same arguments)")
    try:
        data = json.loads(base64.urlsafe_b64decode(token.encode()))
    except ValueError:
        raise refused from None
    if not isinstance(data, dict) or data.get("read") != _read_digest(bodies):
        raise refused
    positions = data.get("at")
    if not isinstance(positions, list) or len(positions) != len(bodies) \
            or not all(position is None or position is False or _is_key(position) for position in positions):
        raise refused
    return positions


def _checked_limit(limit: int | None) -> None:
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise ValueError(f"limit {limit!r}: a page holds at least 1 item (None: every item)")


def _key_of(item: _Item, names: Sequence[str]) -> _Item:
    return {name: item[name] for name in names}


def _pages(client: Any, operation: str, body: dict[str, Any], position: Any, wanted: int | None,
           page_keys: Sequence[str]) -> tuple[list[_Item], Any]:
    """Items of one request from `position` until `wanted` have arrived, and where it then stands."""
    call = client.query if operation == "Query" else client.scan
    items: list[_Item] = []
    while True:
        request = dict(body)
        if position is not None:
            request["ExclusiveStartKey"] = position
        if wanted is None:
            request.pop("Limit", None)
        elif "Limit" in body:  # no Limit with a filter: it would count the items before the filter
            request["Limit"] = wanted - len(items)
        answer = call(**request)
        items.extend(answer.get("Items", []))
        position = answer.get("LastEvaluatedKey", False)
        if wanted is not None and len(items) > wanted:  # stopped inside a page: go on after the last item kept
            return items[:wanted], _key_of(items[wanted - 1], page_keys)
        if position is False or (wanted is not None and len(items) == wanted):
            return items, position


def _read_in_order(client: Any, operation: str, bodies: Sequence[dict[str, Any]], limit: int | None,
                   start: str | None, page_keys: Sequence[str]) -> tuple[list[_Item], str | None]:
    """Requests read one after another (one request, or one per time bucket) until `limit` items."""
    _checked_limit(limit)
    positions = _positions(start, bodies)
    items: list[_Item] = []
    for number, body in enumerate(bodies):
        if positions[number] is False:
            continue
        wanted = None if limit is None else limit - len(items)
        if wanted == 0:
            break
        found, positions[number] = _pages(client, operation, body, positions[number], wanted, page_keys)
        items.extend(found)
    return items, _token(bodies, positions)


def _read_merged(client: Any, bodies: Sequence[dict[str, Any]], limit: int | None, start: str | None,
                 page_keys: Sequence[str], sort_key: str | None,
                 descending: bool) -> tuple[list[_Item], str | None]:
    """One request per shard, merged in sort-key order: each shard reads up to `limit` of its items, the
    first `limit` of all are kept, and each shard goes on after the last of its own items kept."""
    _checked_limit(limit)
    positions = _positions(start, bodies)
    candidates: list[tuple[str, int, _Item]] = []  # (sort key, shard, item), shard by shard
    ends = list(positions)
    for number, body in enumerate(bodies):
        if positions[number] is not False:
            found, ends[number] = _pages(client, "Query", body, positions[number], limit, page_keys)
            candidates += [(item[sort_key]["S"] if sort_key else "", number, item) for item in found]
    merged = sorted(candidates, key=lambda entry: entry[0], reverse=descending)  # stable: ties keep shard order
    kept = merged if limit is None else merged[:limit]
    for number in range(len(bodies)):
        fetched = [entry for entry in candidates if entry[1] == number]
        own = [entry for entry in kept if entry[1] == number]
        if positions[number] is False or not fetched or len(own) == len(fetched):
            positions[number] = ends[number]
        elif own:  # a shard's items are fetched in order, so the kept ones are its first
            positions[number] = _key_of(own[-1][2], page_keys)
    return [entry[2] for entry in kept], _token(bodies, positions)


def _count(client: Any, operation: str, bodies: Sequence[dict[str, Any]], limit: int | None) -> int:
    """How many items the requests (`Select: COUNT`) match across every page, at most `limit`."""
    _checked_limit(limit)
    call = client.query if operation == "Query" else client.scan
    total = 0
    for body in bodies:
        request = dict(body)
        if limit is None:
            request.pop("Limit", None)
        while limit is None or total < limit:
            if limit is not None and "Limit" in body:  # no Limit with a filter: it would count before the filter
                request["Limit"] = limit - total
            answer = call(**request)
            total += answer["Count"]
            if "LastEvaluatedKey" not in answer:
                break
            request["ExclusiveStartKey"] = answer["LastEvaluatedKey"]
    return total if limit is None else min(total, limit)


def _fetch(client: Any, table: str, items: list[_Item], table_keys: Sequence[str],
           attributes: Sequence[str]) -> list[_Item]:
    """The attributes an index does not project, read from the table by key."""
    read = list(dict.fromkeys([*attributes, *table_keys]))
    names = {f"#a{number}": name for number, name in enumerate(read)}
    found = _batch_get(client, table, {"ProjectionExpression": ", ".join(names), "ExpressionAttributeNames": names},
                       [_key_of(item, table_keys) for item in items], table_keys)
    by_key = {json.dumps(_key_of(item, table_keys), sort_keys=True): item for item in found}
    return [{**item, **by_key.get(json.dumps(_key_of(item, table_keys), sort_keys=True), {})} for item in items]


def _batch_get(client: Any, table: str, read: Mapping[str, Any], keys: list[_Item],
               table_keys: Sequence[str]) -> list[_Item]:
    """The items of `keys` (each once, in their order, keys without an item left out): BatchGetItem, 100 keys
    each, the unprocessed ones sent again after a pause. `read` is the rest of the request (projection...)."""
    unique = list({json.dumps(key, sort_keys=True): key for key in keys}.values())
    found: dict[str, _Item] = {}
    for first in range(0, len(unique), BATCH_GET_LIMIT):
        pending: dict[str, Any] = {table: {**read, "Keys": unique[first:first + BATCH_GET_LIMIT]}}
        retries = 0
        while pending:
            answer = client.batch_get_item(RequestItems=pending)
            for item in answer["Responses"].get(table, []):
                found[json.dumps(_key_of(item, table_keys), sort_keys=True)] = item
            pending = answer.get("UnprocessedKeys") or {}
            if pending:  # throttled: back off before asking again
                time.sleep(min(1.0, 0.05 * 2 ** retries))
                retries += 1
    return [found[text] for text in (json.dumps(key, sort_keys=True) for key in unique) if text in found]


def _check_design(client: Any, table: str, digest: str, tag: str) -> None:
    arn = client.describe_table(TableName=table)["Table"]["TableArn"]
    tags: dict[str, str] = {}
    request: dict[str, Any] = {"ResourceArn": arn}
    while True:
        answer = client.list_tags_of_resource(**request)
        tags.update({entry["Key"]: entry["Value"] for entry in answer.get("Tags", [])})
        if not answer.get("NextToken"):
            break
        request["NextToken"] = answer["NextToken"]
    live = tags.get(tag)
    if live != digest:
        deployed = f"design {live}" if live else f"no {tag} tag"
        raise StaleDesign(f"table {table} carries {deployed}, this module was generated for design {digest}: "
                          "regenerate it from the blueprint the table was deployed from")


@dataclass(frozen=True)
class _Keys:
    """The key attributes an entity writes for the table or one index."""

    names: tuple[str, ...]  # the item attributes (partition key, sort key)
    attributes: tuple[str, ...]  # the entity attributes they are made of
    build: Callable[[Mapping[str, Any]], dict[str, str]]
    sparse: bool  # an item without one of `attributes` stays out of the index


@dataclass(frozen=True)
class _Entity:
    name: str
    stored: Mapping[str, Callable[[Any], dict[str, Any]]]  # attribute -> its DynamoDB value
    read: Mapping[str, Callable[[Any], Any]]  # attribute -> its value from the DynamoDB value
    table: _Keys
    indexes: tuple[_Keys, ...]


def _typed(keys: Mapping[str, str]) -> _Item:
    return {name: {"S": text} for name, text in keys.items()}


def _carries(keys: _Keys, values: Mapping[str, Any]) -> bool:
    return all(values.get(attribute) is not None for attribute in keys.attributes)


def _item(entity: _Entity, values: Mapping[str, Any]) -> _Item:
    """The item as stored: the attributes given, the entity marker, and the keys of the table and of every
    index the item takes part in."""
    item = {name: entity.stored[name](value) for name, value in values.items() if value is not None}
    item[ENTITY_ATTRIBUTE] = {"S": entity.name}
    item.update(_typed(entity.table.build(values)))
    for keys in entity.indexes:
        if _carries(keys, values):
            item.update(_typed(keys.build(values)))
        elif not keys.sparse:
            missing = [a for a in keys.attributes if values.get(a) is None]
            raise ValueError(f"{entity.name} needs {', '.join(missing)}")
    return item


def _values(entity: _Entity, row: Mapping[str, Any], names: Sequence[str] | None = None) -> dict[str, Any]:
    """An item's attribute values (only `names`, when given)."""
    wanted = entity.read if names is None else names
    return {name: entity.read.get(name, _key_text)(row[name]) for name in wanted if name in row}


def _key_text(value: Any) -> Any:
    """A key attribute's text (`PK`, which a keys-only pattern returns)."""
    return value["S"]


def _returned(entities: Mapping[str, tuple[_Entity, Sequence[str]]], row: Mapping[str, Any]) -> dict[str, Any]:
    """A read's item: the returned attributes of its entity (and the entity, when a read mixes several)."""
    if len(entities) == 1:
        ((entity, names),) = entities.values()
        return _values(entity, row, names)
    name = row[ENTITY_ATTRIBUTE]["S"]
    entity, names = entities[name]
    return {ENTITY_ATTRIBUTE: name, **_values(entity, row, names)}


def _own_item_condition(entity: _Entity) -> dict[str, Any]:
    """Only an absent item or one of this entity: never overwrite or delete another entity's item."""
    return {"ConditionExpression": "attribute_not_exists(#pk) OR #entity = :entity",
            "ExpressionAttributeNames": {"#pk": entity.table.names[0], "#entity": ENTITY_ATTRIBUTE},
            "ExpressionAttributeValues": {":entity": {"S": entity.name}}}


def _put(client: Any, table: str, entity: _Entity, values: Mapping[str, Any]) -> None:
    client.put_item(TableName=table, Item=_item(entity, values), **_own_item_condition(entity))


def _table_key(entity: _Entity, key: Mapping[str, Any]) -> dict[str, Any]:
    """Only the attributes of the table key (a whole item may be passed as the key: its other values may be
    stale)."""
    return {attribute: key[attribute] for attribute in entity.table.attributes if attribute in key}


def _delete(client: Any, table: str, entity: _Entity, key: Mapping[str, Any]) -> None:
    client.delete_item(TableName=table, Key=_typed(entity.table.build(key)), **_own_item_condition(entity))


def _current(client: Any, table: str, entity: _Entity, key: Mapping[str, Any],
             names: Sequence[str] | None) -> dict[str, Any]:
    """The item's values now (only `names`, when given), read strongly consistent."""
    request: dict[str, Any] = {"TableName": table, "Key": _typed(entity.table.build(key)), "ConsistentRead": True}
    if names is not None:
        read = [*names, ENTITY_ATTRIBUTE]
        request["ProjectionExpression"] = ", ".join(f"#a{number}" for number in range(len(read)))
        request["ExpressionAttributeNames"] = {f"#a{number}": name for number, name in enumerate(read)}
    row = client.get_item(**request).get("Item")
    if row is None or row.get(ENTITY_ATTRIBUTE) != {"S": entity.name}:
        raise ItemNotFound(f"no {entity.name} under {dict(key)}")
    return _values(entity, row, names)


class _Expression:
    """The placeholders of one request's expressions: `#n1` for names, `:v1` for values."""

    def __init__(self, entity: _Entity) -> None:
        self.names = {"#entity": ENTITY_ATTRIBUTE}
        self.values: dict[str, Any] = {":entity": {"S": entity.name}}
        self.conditions = ["#entity = :entity"]

    def name(self, attribute: str) -> str:
        placeholder = f"#n{len(self.names)}"
        self.names[placeholder] = attribute
        return placeholder

    def value(self, value: dict[str, Any]) -> str:
        placeholder = f":v{len(self.values)}"
        self.values[placeholder] = value
        return placeholder

    def unchanged(self, entity: _Entity, current: Mapping[str, Any], attributes: Sequence[str]) -> None:
        """Hold only while `attributes` have the values read (`current`): what was read has not changed since."""
        for attribute in attributes:
            if attribute in current:
                stored = entity.stored[attribute](current[attribute])
                self.conditions.append(f"{self.name(attribute)} = {self.value(stored)}")
            else:
                self.conditions.append(f"attribute_not_exists({self.name(attribute)})")

    def condition(self) -> dict[str, Any]:
        return {"ConditionExpression": " AND ".join(self.conditions), "ExpressionAttributeNames": self.names,
                "ExpressionAttributeValues": self.values}


def _failed_condition(error: Exception) -> bool:
    response = getattr(error, "response", None)
    return isinstance(response, dict) and response.get("Error", {}).get("Code") == "ConditionalCheckFailedException"


def _update(client: Any, table: str, entity: _Entity, key: Mapping[str, Any], changes: Mapping[str, Any]) -> None:
    """Change attributes (None removes one). Index keys made of a changed attribute are rewritten (the others
    they need are read first); a changed table key attribute moves the item: a delete and a put in one
    transaction. Either holds only if what was read is unchanged (else DynamoDB refuses: read again)."""
    if not changes:
        return
    key = _table_key(entity, key)
    old_key = _typed(entity.table.build(key))
    if _typed(entity.table.build({**key, **changes})) != old_key:
        current = _current(client, table, entity, key, None)
        guard = _Expression(entity)
        guard.unchanged(entity, current, sorted(entity.read))
        client.transact_write_items(TransactItems=[
            {"Delete": {"TableName": table, "Key": old_key, **guard.condition()}},
            {"Put": {"TableName": table, "Item": _item(entity, {**current, **changes}),
                     "ConditionExpression": "attribute_not_exists(#pk)",
                     "ExpressionAttributeNames": {"#pk": entity.table.names[0]}}}])
        return
    affected = [keys for keys in entity.indexes if set(keys.attributes) & set(changes)]
    needed = sorted({a for keys in affected for a in keys.attributes} - set(changes) - set(key))
    current = _current(client, table, entity, key, needed) if needed else {}
    values = {**key, **current, **changes}
    expression = _Expression(entity)
    sets = [f"{expression.name(a)} = {expression.value(entity.stored[a](v))}"
            for a, v in sorted(changes.items()) if v is not None]
    removes = [expression.name(a) for a, v in sorted(changes.items()) if v is None]
    for keys in affected:  # a local index shares the table's partition key, which stays as it is
        rewritten = [n for n in keys.names if n not in entity.table.names]
        if _carries(keys, values):
            built = keys.build(values)
            sets += [f"{expression.name(n)} = {expression.value({'S': built[n]})}" for n in rewritten]
        elif keys.sparse:
            removes += [expression.name(n) for n in rewritten]
        else:
            raise ValueError(f"{entity.name} needs {', '.join(a for a in keys.attributes if values.get(a) is None)}")
    expression.unchanged(entity, current, needed)
    update = " ".join(part for part in (("SET " + ", ".join(sets)) if sets else "",
                                         ("REMOVE " + ", ".join(removes)) if removes else "") if part)
    try:
        client.update_item(TableName=table, Key=old_key, UpdateExpression=update, **expression.condition())
    except Exception as error:
        if needed or not _failed_condition(error):
            raise
        raise ItemNotFound(f"no {entity.name} under {dict(key)}") from None



# --- generated from the blueprint ---
