# --- Tablewright's client runtime, its values: the same in every generated Python module ---
# How values are written into keys and items, and how reads are paged.
# Mirrors modules/tablewright/blueprint/encoding.py.

# The imports of the whole module: python_runtime_requests.py (which follows this part) and the generated code use
# those marked F401.
import base64  # noqa: F401
import hashlib
import json  # noqa: F401
import re
import time  # noqa: F401
from collections.abc import Callable, Mapping, Sequence  # noqa: F401
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
    number = Decimal(str(value))
    if number != number.to_integral_value():
        return format(number.normalize(), "f")
    return str(int(number))


def _padded(value: Number, width: int) -> str:
    number = Decimal(str(value))
    if number != number.to_integral_value() or number < 0:
        raise ValueError(f"{value} cannot be zero-padded: padded key numbers must be whole and not negative")
    text = str(int(number)).zfill(width)
    if len(text) > width:
        raise ValueError(f"{value} has more than {width} digits")
    return text


def _utc(moment: datetime) -> datetime:
    return moment.astimezone(UTC) if moment.tzinfo else moment.replace(tzinfo=UTC)


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _epoch(moment: datetime, millis: bool) -> int:
    """Whole seconds or milliseconds since 1970 (UTC), truncated toward zero, in exact integer arithmetic."""
    micros = (_utc(moment) - _EPOCH) // timedelta(microseconds=1)
    unit = 1000 if millis else 1_000_000
    return micros // unit if micros >= 0 else -(-micros // unit)


def _clock(as_of: datetime | None) -> str:
    """The `_now` of a read that hides expired items: `as_of`, else the current time, in epoch seconds."""
    return str(_epoch(as_of or datetime.now(UTC), False))


def _timestamp(moment: datetime, fmt: str) -> str:
    """A timestamp inside a key: `iso8601`, `epoch_seconds` (10 digits), `epoch_millis` (13) or strftime."""
    if fmt in ("epoch_seconds", "epoch_millis"):
        millis = fmt == "epoch_millis"
        return f"{_epoch(moment, millis):0{13 if millis else 10}d}"
    return _utc(moment).strftime(ISO8601 if fmt == "iso8601" else fmt)


def _day(value: date) -> str:
    return value.strftime("%Y-%m-%d")


# A time bucket's text (UTC): month 2024-03, ISO week 2024-W09 (Monday first, ISO year), day 2024-03-01, hour
# 2024-03-01T09.
_BUCKET_FORMATS = {"month": "%Y-%m", "week": "%G-W%V", "day": "%Y-%m-%d", "hour": "%Y-%m-%dT%H"}


def _moment(value: datetime | date) -> datetime:
    return _utc(value if isinstance(value, datetime) else datetime(value.year, value.month, value.day))


def _bucket(value: datetime | date, unit: str) -> str:
    """The UTC month, ISO week, day or hour a time falls in."""
    return _moment(value).strftime(_BUCKET_FORMATS[unit])


def _buckets(start: datetime | date, end: datetime | date, unit: str) -> list[str]:
    """Every bucket from the one holding `start` to the one holding `end`, in order."""
    last = _bucket(end, unit)
    moment = _moment(start)
    day = moment.replace(hour=0, minute=0, second=0, microsecond=0)
    moment = {"month": day.replace(day=1), "week": day - timedelta(days=day.weekday()), "day": day,
              "hour": moment.replace(minute=0, second=0, microsecond=0)}[unit]
    found: list[str] = []
    while (text := moment.strftime(_BUCKET_FORMATS[unit])) <= last:
        found.append(text)
        moment = (moment.replace(day=28) + timedelta(days=4)).replace(day=1) if unit == "month" else moment + {
            "week": timedelta(days=7), "day": timedelta(days=1), "hour": timedelta(hours=1)}[unit]
    return found


def _shard(values: Sequence[str], shards: int) -> str:
    """The shard of an item: SHA-256 of its shard-by values (key text joined by '#'), first 8 hex digits,
    modulo the shard count, zero-padded."""
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
    ((kind, inner),) = value.items()
    if kind == "M":
        return {k: _read_document(v) for k, v in inner.items()}
    if kind == "L":
        return [_read_document(v) for v in inner]
    if kind == "N":
        return _read_number(inner)
    if kind == "NULL":
        return None
    if kind == "SS":
        return set(inner)
    if kind == "NS":
        return {_read_number(n) for n in inner}
    if kind == "B":
        return bytes(inner)
    return inner


def _read_timestamp(value: Mapping[str, Any], fmt: str) -> datetime:
    if fmt in ("epoch_seconds", "epoch_millis"):
        number = int(value["N"])
        return _EPOCH + (timedelta(milliseconds=number) if fmt == "epoch_millis" else timedelta(seconds=number))
    return datetime.strptime(value["S"], ISO8601 if fmt == "iso8601" else fmt).replace(tzinfo=UTC)


_PLACEHOLDER = re.compile(r"\{([A-Za-z0-9_.:]+)\}")


def _bind(template: Any, values: Mapping[str, str]) -> Any:
    """The request with every `{name}` in its strings replaced by the value's text, in one pass (a value that
    holds `{...}` stays as it is)."""
    if isinstance(template, str):
        return _PLACEHOLDER.sub(lambda match: values.get(match.group(1), match.group(0)), template)
    if isinstance(template, dict):
        return {key: _bind(value, values) for key, value in template.items()}
    if isinstance(template, list):
        return [_bind(value, values) for value in template]
    return template
