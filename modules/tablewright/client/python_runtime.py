# --- Tablewright's client runtime: the same in every generated Python module ---
# Keys and items as blueprint/encoding.py writes them (tests/data/encoding-vectors.json), paging, writes keeping keys.
import base64
import hashlib
import json
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from typing import Any, Generic, Literal, NotRequired, TypedDict, TypeVar, cast  # noqa: F401 (the generated code's)

Number = int | float | Decimal
_Item = dict[str, Any]  # an item as the low-level DynamoDB API writes it: {"name": {"S": "text"}}
_T = TypeVar("_T")

SEPARATOR = "#"
ENTITY_ATTRIBUTE = "_entity"
ISO8601 = "%Y-%m-%dT%H:%M:%SZ"
BATCH_GET_LIMIT = 100  # keys per BatchGetItem request


class StaleDesign(Exception):
    """The live table was deployed from another design than the one this module was generated for."""


class ItemNotFound(Exception):
    """An update found no item of the entity under the key."""


@dataclass(frozen=True)
class Page(Generic[_T]):
    """One page of a pattern's items; `next` continues after its last item (None: there are no more)."""

    items: list[_T]
    next: str | None


def _text(value: str) -> str:
    if SEPARATOR in value:
        raise ValueError(f"value {value!r} contains the key separator {SEPARATOR!r}")
    return value


def _number(value: Number) -> str:
    """A number's decimal text, never in exponent notation (`1e21` is `1000000000000000000000`)."""
    number = Decimal(str(value))
    if number != number.to_integral_value():
        return format(number.normalize(), "f")
    return str(int(number))


def _padded(value: Number, width: int) -> str:
    """A whole, not negative number's digits, zero-padded to `width`."""
    digits = _number(value)
    if not digits.isdigit():
        raise ValueError(f"{value} cannot be zero-padded: padded key numbers must be whole and not negative")
    if len(digits) > width:
        raise ValueError(f"{value} has more than {width} digits")
    return digits.zfill(width)


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _moment(value: datetime | date) -> datetime:
    """A time in UTC: a time without a zone is taken as UTC, a date is its midnight."""
    if not isinstance(value, datetime):
        value = datetime(value.year, value.month, value.day)
    return value.astimezone(UTC) if value.tzinfo else value.replace(tzinfo=UTC)


def _epoch(moment: datetime, millis: bool) -> int:
    """Whole seconds or milliseconds since 1970 (UTC), truncated toward zero, in exact integer arithmetic."""
    micros = (_moment(moment) - _EPOCH) // timedelta(microseconds=1)
    unit = 1000 if millis else 1_000_000
    return micros // unit if micros >= 0 else -(-micros // unit)


def _timestamp(moment: datetime, fmt: str) -> str:
    """A timestamp inside a key: `iso8601`, `epoch_seconds` (10 digits), `epoch_millis` (13) or strftime."""
    if fmt in ("epoch_seconds", "epoch_millis"):
        millis = fmt == "epoch_millis"
        return f"{_epoch(moment, millis):0{13 if millis else 10}d}"
    return _moment(moment).strftime(ISO8601 if fmt == "iso8601" else fmt)


def _day(value: date) -> str:
    return value.strftime("%Y-%m-%d")


# Time buckets (UTC): month 2024-03, ISO week 2024-W09 (Monday first, ISO year), day 2024-03-01, hour 2024-03-01T09
_BUCKET_FORMATS = {"month": "%Y-%m", "week": "%G-W%V", "day": "%Y-%m-%d", "hour": "%Y-%m-%dT%H"}


def _bucket(value: datetime | date, unit: str) -> str:
    """The UTC month, ISO week, day or hour a time falls in."""
    return _moment(value).strftime(_BUCKET_FORMATS[unit])


def _buckets(start: datetime | date, end: datetime | date, unit: str) -> list[str]:
    """Every bucket from the one holding `start` to the one holding `end`, in order (walked by the hour or day)."""
    last, moment = _bucket(end, unit), _moment(start)
    step = timedelta(hours=1) if unit == "hour" else timedelta(days=1)
    found: list[str] = []
    while (text := _bucket(moment, unit)) <= last:
        if not found or found[-1] != text:
            found.append(text)
        moment += step
    return found


def _shard(values: Sequence[str], shards: int) -> str:
    """The shard: SHA-256 of the shard-by key texts joined by '#', first 8 hex digits, modulo shards, zero-padded."""
    digest = hashlib.sha256(SEPARATOR.join(values).encode("utf-8")).hexdigest()
    return str(int(digest[:8], 16) % shards).zfill(len(str(shards - 1)))


def _shards(shards: int) -> list[str]:
    return [str(n).zfill(len(str(shards - 1))) for n in range(shards)]


def _document(value: Any) -> dict[str, Any]:
    """A value inside a map or list, typed by what it is (as the AWS SDKs' document clients type it)."""
    if value is None:
        return {"NULL": True}
    if isinstance(value, bool):
        return {"BOOL": value}
    if isinstance(value, (int, float, Decimal)):
        return {"N": _number(value)}
    if isinstance(value, str):
        return {"S": value}
    if isinstance(value, (bytes, bytearray)):
        return {"B": bytes(value)}
    if isinstance(value, dict):
        return {"M": {str(k): _document(v) for k, v in value.items()}}
    if isinstance(value, (list, tuple)):
        return {"L": [_document(v) for v in value]}
    if isinstance(value, (set, frozenset)) and value and all(isinstance(v, str) for v in value):
        return {"SS": sorted(value)}
    if isinstance(value, (set, frozenset)) and value and all(
            isinstance(v, (int, float, Decimal)) and not isinstance(v, bool) for v in value):
        return {"NS": sorted(_number(v) for v in value)}
    raise ValueError(f"{value!r} is not a value DynamoDB stores in a map or list (text, a number, a boolean, "
                     "None, bytes, a non-empty set of text or numbers, a list or a map)")


def _read_number(text: str) -> int | Decimal:
    number = Decimal(text)
    return int(number) if number == number.to_integral_value() and "." not in text and "e" not in text.lower() \
        else number


def _read_document(value: Mapping[str, Any]) -> Any:
    """A value of a map or list as `_document` wrote it."""
    ((kind, inner),) = value.items()
    read: dict[str, Callable[[Any], Any]] = {
        "M": lambda inner: {k: _read_document(v) for k, v in inner.items()},
        "L": lambda inner: [_read_document(v) for v in inner], "NULL": lambda inner: None,
        "N": _read_number, "NS": lambda inner: {_read_number(n) for n in inner}, "SS": set, "B": bytes}
    return read[kind](inner) if kind in read else inner


def _read_timestamp(value: Mapping[str, Any], fmt: str) -> datetime:
    if fmt in ("epoch_seconds", "epoch_millis"):
        number = int(value["N"])
        return _EPOCH + (timedelta(milliseconds=number) if fmt == "epoch_millis" else timedelta(seconds=number))
    return datetime.strptime(value["S"], ISO8601 if fmt == "iso8601" else fmt).replace(tzinfo=UTC)


_PLACEHOLDER = re.compile(r"\{([A-Za-z0-9_.:]+)\}")


def _bind(template: Any, values: Mapping[str, str]) -> Any:
    """The request with every `{name}` replaced by the value's text, in one pass (a value holding `{...}` stays)."""
    if isinstance(template, str):
        return _PLACEHOLDER.sub(lambda match: values.get(match.group(1), match.group(0)), template)
    if isinstance(template, dict):
        return {key: _bind(value, values) for key, value in template.items()}
    if isinstance(template, list):
        return [_bind(value, values) for value in template]
    return template


def _key_of(item: _Item, names: Sequence[str]) -> _Item:
    return {name: item[name] for name in names}


class _Read:
    """A read's requests (one, or one per shard or time bucket), page by page, and where each stands: None not begun,
    False done, else its ExclusiveStartKey; the page token belongs to them, their values bound."""

    def __init__(self, client: Any, operation: str, bodies: Sequence[dict[str, Any]], start: str | None,
                 limit: int | None) -> None:
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
            raise ValueError(f"limit {limit!r}: a page holds at least 1 item (None: every item)")
        self.client, self.operation, self.bodies, self.limit = client, operation, bodies, limit
        self.read = hashlib.sha256(json.dumps(bodies, sort_keys=True, default=repr).encode()).hexdigest()[:16]
        self.at: list[Any] = [None] * len(bodies) if start is None else self._decoded(start)

    def _decoded(self, token: str) -> list[Any]:
        try:
            data = json.loads(base64.urlsafe_b64decode(token.encode()))
            at = data["at"] if data["read"] == self.read else None
        except (ValueError, TypeError, KeyError):
            at = None
        if not isinstance(at, list) or len(at) != len(self.bodies) \
                or not all(position is None or position is False or self._key(position) for position in at):
            raise ValueError("not a page token of this read (a token continues the call that returned it, with the "
                             "same arguments)") from None
        return at

    @staticmethod
    def _key(position: Any) -> bool:
        """Whether a token's position is a key: attribute names with values {"S": text} or {"N": text}."""
        return isinstance(position, dict) and bool(position) and all(
            isinstance(name, str) and isinstance(value, dict) and len(value) == 1
            and next(iter(value)) in ("S", "N") and isinstance(next(iter(value.values())), str)
            for name, value in position.items())

    def token(self) -> str | None:
        """An opaque token for where the read stands; None when every request is done."""
        if all(position is False for position in self.at):
            return None
        data = {"read": self.read, "at": self.at}
        return base64.urlsafe_b64encode(json.dumps(data, sort_keys=True).encode()).decode()

    def page(self, number: int, position: Any, wanted: int | None) -> dict[str, Any]:
        """One page of request `number` from `position` (None: its start), of `wanted` items (None: all it holds)."""
        request = dict(self.bodies[number])
        if position is not None:
            request["ExclusiveStartKey"] = position
        if wanted is None:
            request.pop("Limit", None)
        elif "Limit" in request:  # none with a filter: it would count the items before the filter
            request["Limit"] = wanted
        answer: dict[str, Any] = (self.client.query if self.operation == "Query" else self.client.scan)(**request)
        return answer

    def pages(self, number: int, wanted: int | None, page_keys: Sequence[str]) -> list[_Item]:
        """Items of request `number` from where it stands until `wanted` have arrived; it then stands after them."""
        items: list[_Item] = []
        while True:
            answer = self.page(number, self.at[number], None if wanted is None else wanted - len(items))
            items.extend(answer.get("Items", []))
            self.at[number] = answer.get("LastEvaluatedKey", False)
            if wanted is not None and len(items) > wanted:  # stopped inside a page: go on after the last item kept
                self.at[number] = _key_of(items[wanted - 1], page_keys)
                return items[:wanted]
            if self.at[number] is False or (wanted is not None and len(items) == wanted):
                return items

    def in_order(self, page_keys: Sequence[str]) -> tuple[list[_Item], str | None]:
        """The requests read one after another (one request, or one per time bucket) until `limit` items."""
        items: list[_Item] = []
        for number in range(len(self.bodies)):
            wanted = None if self.limit is None else self.limit - len(items)
            if wanted == 0:
                break
            if self.at[number] is not False:
                items += self.pages(number, wanted, page_keys)
        return items, self.token()

    def merged(self, page_keys: Sequence[str], sort_key: str | None,
               descending: bool) -> tuple[list[_Item], str | None]:
        """One request per shard, merged in sort-key order: each shard reads up to `limit` of its items, the first
        `limit` of all are kept, and each shard goes on after the last of its own items kept."""
        starts = list(self.at)
        candidates: list[tuple[str, int, _Item]] = []  # (sort key, shard, item), shard by shard
        for number in range(len(self.bodies)):
            if self.at[number] is not False:
                found = self.pages(number, self.limit, page_keys)
                candidates += [(item[sort_key]["S"] if sort_key else "", number, item) for item in found]
        merged = sorted(candidates, key=lambda entry: entry[0], reverse=descending)  # stable: ties keep shard order
        kept = merged if self.limit is None else merged[:self.limit]
        for number in range(len(self.bodies)):
            own = [item for _, shard, item in kept if shard == number]
            if len(own) < sum(1 for _, shard, _ in candidates if shard == number):  # not all its items were kept
                # a shard's items are fetched in order, so the kept ones are its first
                self.at[number] = _key_of(own[-1], page_keys) if own else starts[number]
        return [item for _, _, item in kept], self.token()

    def count(self) -> int:
        """How many items the requests (`Select: COUNT`) match across every page, at most `limit`."""
        total = 0
        for number in range(len(self.bodies)):
            position = None
            while self.limit is None or total < self.limit:
                answer = self.page(number, position, None if self.limit is None else self.limit - total)
                total += answer["Count"]
                if (position := answer.get("LastEvaluatedKey")) is None:
                    break
        return total if self.limit is None else min(total, self.limit)


def _projection(names: Sequence[str]) -> dict[str, Any]:
    """A request's part that reads only `names`."""
    placeholders = {f"#a{number}": name for number, name in enumerate(names)}
    return {"ProjectionExpression": ", ".join(placeholders), "ExpressionAttributeNames": placeholders}


def _fetch(client: Any, table: str, items: list[_Item], table_keys: Sequence[str],
           attributes: Sequence[str]) -> list[_Item]:
    """The attributes an index does not project, read from the table by key."""
    read = _projection(list(dict.fromkeys([*attributes, *table_keys])))
    found = _batch_get(client, table, read, [_key_of(item, table_keys) for item in items], table_keys)
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
    request: dict[str, Any] = {"ResourceArn": client.describe_table(TableName=table)["Table"]["TableArn"]}
    tags: dict[str, str] = {}
    while True:
        answer = client.list_tags_of_resource(**request)
        tags.update({entry["Key"]: entry["Value"] for entry in answer.get("Tags", [])})
        if not answer.get("NextToken"):
            break
        request["NextToken"] = answer["NextToken"]
    if (live := tags.get(tag)) != digest:
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

    def typed(self, values: Mapping[str, Any]) -> _Item:
        """The key attributes of an item of `values`, as stored."""
        return {name: {"S": text} for name, text in self.build(values).items()}


@dataclass(frozen=True)
class _Entity:
    """An entity as the module writes and reads it: how each attribute is stored and read, and its keys."""

    name: str
    stored: Mapping[str, Callable[[Any], dict[str, Any]]]  # attribute -> its DynamoDB value
    read: Mapping[str, Callable[[Any], Any]]  # attribute -> its value from the DynamoDB value
    table: _Keys
    indexes: tuple[_Keys, ...]
    formers: Mapping[str, str] | None = None  # a renamed attribute -> its old name, read too until migrated

    def carries(self, keys: _Keys, values: Mapping[str, Any]) -> bool:
        """Whether an item of `values` takes part in an index (one it must, but cannot, take part in: an error)."""
        missing = [attribute for attribute in keys.attributes if values.get(attribute) is None]
        if missing and not keys.sparse:
            raise ValueError(f"{self.name} needs {', '.join(missing)}")
        return not missing

    def item(self, values: Mapping[str, Any]) -> _Item:
        """The item as stored: its attributes, the entity marker, the keys of the table and of each index it is in."""
        item = {name: self.stored[name](value) for name, value in values.items() if value is not None}
        item[ENTITY_ATTRIBUTE] = {"S": self.name}
        item.update(self.table.typed(values))
        for keys in self.indexes:
            if self.carries(keys, values):
                item.update(keys.typed(values))
        return item

    def values(self, row: Mapping[str, Any], names: Sequence[str] | None = None) -> dict[str, Any]:
        """An item's attribute values (only `names`, when given; a key attribute, `PK`, as its text)."""
        formers, wanted = self.formers or {}, self.read if names is None else names
        stored = {name: row.get(name, row.get(formers.get(name, ""))) for name in wanted}
        return {name: self.read.get(name, lambda v: v["S"])(v) for name, v in stored.items() if v is not None}

    def own_item(self) -> dict[str, Any]:
        """A write's condition: only an absent item or one of this entity, never another entity's item."""
        return {"ConditionExpression": "attribute_not_exists(#pk) OR #entity = :entity",
                "ExpressionAttributeNames": {"#pk": self.table.names[0], "#entity": ENTITY_ATTRIBUTE},
                "ExpressionAttributeValues": {":entity": {"S": self.name}}}

    def put(self, client: Any, table: str, values: Mapping[str, Any]) -> None:
        client.put_item(TableName=table, Item=self.item(values), **self.own_item())

    def delete(self, client: Any, table: str, key: Mapping[str, Any]) -> None:
        client.delete_item(TableName=table, Key=self.table.typed(key), **self.own_item())

    def current(self, client: Any, table: str, key: Mapping[str, Any], names: Sequence[str] | None) -> dict[str, Any]:
        """The item's values now (only `names`, when given), read strongly consistent."""
        read = {} if names is None else _projection([*names, ENTITY_ATTRIBUTE])
        row = client.get_item(TableName=table, Key=self.table.typed(key), ConsistentRead=True, **read).get("Item")
        if row is None or row.get(ENTITY_ATTRIBUTE) != {"S": self.name}:
            raise ItemNotFound(f"no {self.name} under {dict(key)}")
        return self.values(row, names)

    def update(self, client: Any, table: str, key: Mapping[str, Any], changes: Mapping[str, Any]) -> None:
        """Change attributes (None removes one). Index keys made of a changed attribute are rewritten (the others
        they need are read first); a changed table key attribute moves the item: a delete and a put in one
        transaction. Either holds only if what was read is unchanged (else DynamoDB refuses: read again)."""
        if not changes:
            return
        # Only the table key's attributes of `key`: a whole item may be passed as the key, its other values stale.
        key = {attribute: key[attribute] for attribute in self.table.attributes if attribute in key}
        expression = _Expression(self)
        if self.table.typed({**key, **changes}) != self.table.typed(key):
            current = self.current(client, table, key, None)
            expression.unchanged(current, sorted(self.read))
            client.transact_write_items(TransactItems=[
                {"Delete": {"TableName": table, "Key": self.table.typed(key), **expression.condition()}},
                {"Put": {"TableName": table, "Item": self.item({**current, **changes}),
                         "ConditionExpression": "attribute_not_exists(#pk)",
                         "ExpressionAttributeNames": {"#pk": self.table.names[0]}}}])
            return
        affected = [keys for keys in self.indexes if set(keys.attributes) & set(changes)]
        needed = sorted({a for keys in affected for a in keys.attributes} - set(changes) - set(key))
        current = self.current(client, table, key, needed) if needed else {}
        values = {**key, **current, **changes}
        sets = [expression.assign(a, self.stored[a](v)) for a, v in sorted(changes.items()) if v is not None]
        removes = [expression.name(a) for a, v in sorted(changes.items()) if v is None]
        for keys in affected:  # a local index shares the table's partition key, which stays as it is
            rewritten = [n for n in keys.names if n not in self.table.names]
            if self.carries(keys, values):
                built = keys.build(values)
                sets += [expression.assign(n, {"S": built[n]}) for n in rewritten]
            else:
                removes += [expression.name(n) for n in rewritten]
        expression.unchanged(current, needed)
        update = " ".join(f"{verb} {', '.join(parts)}" for verb, parts in (("SET", sets), ("REMOVE", removes)) if parts)
        try:
            client.update_item(TableName=table, Key=self.table.typed(key), UpdateExpression=update,
                               **expression.condition())
        except Exception as error:
            response = getattr(error, "response", None)
            if needed or not isinstance(response, dict) \
                    or response.get("Error", {}).get("Code") != "ConditionalCheckFailedException":
                raise
            raise ItemNotFound(f"no {self.name} under {dict(key)}") from None


class _Expression:
    """The placeholders of one request's expressions (`#n1`, `:v1`) and its condition: an item of the entity."""

    def __init__(self, entity: _Entity) -> None:
        self.entity = entity
        self.names = {"#entity": ENTITY_ATTRIBUTE}
        self.values: dict[str, Any] = {":entity": {"S": entity.name}}
        self.conditions = ["#entity = :entity"]

    def name(self, attribute: str) -> str:
        placeholder = f"#n{len(self.names)}"
        self.names[placeholder] = attribute
        return placeholder

    def assign(self, attribute: str, value: dict[str, Any]) -> str:
        """`#n1 = :v1`: an attribute's new value in an update, the value it must have in a condition."""
        name, placeholder = self.name(attribute), f":v{len(self.values)}"
        self.values[placeholder] = value
        return f"{name} = {placeholder}"

    def unchanged(self, current: Mapping[str, Any], attributes: Sequence[str]) -> None:
        """Hold only while `attributes` have the values read (`current`): what was read has not changed since."""
        for attribute in attributes:
            self.conditions.append(self.assign(attribute, self.entity.stored[attribute](current[attribute]))
                                   if attribute in current else f"attribute_not_exists({self.name(attribute)})")

    def condition(self) -> dict[str, Any]:
        return {"ConditionExpression": " AND ".join(self.conditions), "ExpressionAttributeNames": self.names,
                "ExpressionAttributeValues": self.values}


def _returned(entities: Mapping[str, tuple[_Entity, Sequence[str]]], row: Mapping[str, Any]) -> dict[str, Any]:
    """A read's item: the returned attributes of its entity (and the entity, when a read mixes several)."""
    if len(entities) == 1:
        ((entity, names),) = entities.values()
        return entity.values(row, names)
    name = row[ENTITY_ATTRIBUTE]["S"]
    entity, names = entities[name]
    return {ENTITY_ATTRIBUTE: name, **entity.values(row, names)}


# --- generated from the blueprint ---
