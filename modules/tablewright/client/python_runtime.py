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


# What a timestamp format's directives read: fixed digits or one of a few fixed words, as strftime writes them (C
# locale). A blueprint's format has each directive once, so the expression has no unbounded repetition and no two
# readings: a value is read in one pass (tests/hostile/test_timestamp_formats.py; the engine's: blueprint/encoding.py).
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December")
_TIME_FIELDS = {"Y": "[0-9]{4}", "y": "[0-9]{2}", "m": "[0-9]{2}", "d": "[0-9]{2}", "j": "[0-9]{3}", "H": "[0-9]{2}",
                "I": "[0-9]{2}", "M": "[0-9]{2}", "S": "[0-9]{2}", "f": "[0-9]{6}", "p": "AM|PM",
                "b": "|".join(month[:3] for month in _MONTHS), "B": "|".join(_MONTHS)}
_TIME_PATTERNS: dict[str, re.Pattern[str]] = {}


def _time_pattern(fmt: str) -> re.Pattern[str]:
    """The expression a format's values match: its text, and each directive as a named group of `_TIME_FIELDS`."""
    if fmt not in _TIME_PATTERNS:
        pieces = re.split("(%.)", fmt, flags=re.DOTALL)  # text, directive, text, ...
        directives = [piece[1] for piece in pieces[1::2]]
        if len(set(directives)) < len(directives) or not set(directives) <= _TIME_FIELDS.keys():
            raise ValueError(f"timestamp format {fmt!r}: each directive once, of {' '.join(_TIME_FIELDS)}")
        _TIME_PATTERNS[fmt] = re.compile("".join(f"(?P<{piece[1]}>{_TIME_FIELDS[piece[1]]})" if n % 2
                                                 else re.escape(piece) for n, piece in enumerate(pieces)))
    return _TIME_PATTERNS[fmt]


def _read_timestamp(value: Mapping[str, Any], fmt: str) -> datetime:
    """A stored timestamp: as `_timestamp` writes it (as datetime.strptime reads it, minus its leniency)."""
    if fmt in ("epoch_seconds", "epoch_millis"):
        number = int(value["N"])
        return _EPOCH + (timedelta(milliseconds=number) if fmt == "epoch_millis" else timedelta(seconds=number))
    text = str(value["S"])
    found = _time_pattern(ISO8601 if fmt == "iso8601" else fmt).fullmatch(text)
    if found is None:
        raise ValueError(f"{text[:40]!r}{'...' if len(text) > 40 else ''} is not a timestamp of the format {fmt!r}")
    got = found.groupdict()
    part = {name: int(digits) for name, digits in got.items() if digits.isdigit()}
    name = got.get("B") or got.get("b")
    year = part["Y"] if "Y" in part else part["y"] + (1900 if part["y"] >= 69 else 2000) if "y" in part else 1900
    hour = part.get("H", 0)
    if "I" in part:
        if not 1 <= part["I"] <= 12:
            raise ValueError(f"{text!r}: the hour of a 12-hour clock is 01 to 12")
        hour = part["I"] % 12 + (12 if got.get("p") == "PM" else 0)
    if "j" in part and not 1 <= part["j"] <= 366:
        raise ValueError(f"{text!r}: the day of the year is 001 to 366")
    month = part.get("m", 1 + [month[:3] for month in _MONTHS].index(name[:3]) if name else 1)
    moment = datetime(year, month, part.get("d", 1), hour, part.get("M", 0), part.get("S", 0), part.get("f", 0),
                      tzinfo=UTC)
    return moment + timedelta(days=part["j"] - 1) if "j" in part else moment


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
    by_key = _batch_found(client, table, read, [_key_of(item, table_keys) for item in items], table_keys)
    return [{**item, **by_key.get(_text_of(_key_of(item, table_keys)), {})} for item in items]


def _batch_get(client: Any, table: str, template: Mapping[str, Any], wanted: list[dict[str, str]],
               table_keys: Sequence[str], before: Mapping[str, Any] | None = None) -> list[_Item]:
    """A batch read's items: its template's key (`Keys` holds the one) bound to each of `wanted`, each key once, in
    their order, keys without an item left out. `before`: while a migration moves the items, the template of the
    key old items carry, read for the keys without an item."""
    read = {name: value for name, value in template.items() if name != "Keys"}
    keys = [_bind(template["Keys"][0], values) for values in wanted]
    found = _batch_found(client, table, read, keys, table_keys)
    texts = [_text_of(key) for key in keys]
    if before is not None:
        old = {text: _bind(before["Keys"][0], values) for text, values in zip(texts, wanted, strict=True)
               if text not in found}
        moved = _batch_found(client, table, read, list(old.values()), table_keys) if old else {}
        found.update({text: moved[_text_of(key)] for text, key in old.items() if _text_of(key) in moved})
    return [found[text] for text in dict.fromkeys(texts) if text in found]


def _text_of(key: _Item) -> str:
    return json.dumps(key, sort_keys=True)


def _batch_found(client: Any, table: str, read: Mapping[str, Any], keys: list[_Item],
                 table_keys: Sequence[str]) -> dict[str, _Item]:
    """The items of `keys` by their key's text: BatchGetItem, 100 keys each, the unprocessed ones sent again after
    a pause."""
    unique = list({_text_of(key): key for key in keys}.values())
    found: dict[str, _Item] = {}
    for first in range(0, len(unique), BATCH_GET_LIMIT):
        pending: dict[str, Any] = {table: {**read, "Keys": unique[first:first + BATCH_GET_LIMIT]}}
        retries = 0
        while pending:
            answer = client.batch_get_item(RequestItems=pending)
            for item in answer["Responses"].get(table, []):
                found[_text_of(_key_of(item, table_keys))] = item
            pending = answer.get("UnprocessedKeys") or {}
            if pending:  # throttled: back off before asking again
                time.sleep(min(1.0, 0.05 * 2 ** retries))
                retries += 1
    return found


def _get_item(client: Any, request: dict[str, Any], before: dict[str, Any] | None) -> _Item | None:
    """GetItem. While a migration moves the item (`before`: the request of its old key): the old key when the new
    one holds nothing, then the new one again (the item may have moved in between)."""
    row: _Item | None = client.get_item(**request).get("Item")
    if row is None and before is not None:
        row = client.get_item(**before).get("Item") or client.get_item(**request).get("Item")
    return row


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
