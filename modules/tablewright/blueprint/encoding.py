"""How attribute values are written: inside keys (strings that must sort as the values do) and as
DynamoDB attribute values. One place, used by the query plans, the cookbook and verification.
"""

from __future__ import annotations

import base64
import binascii
import functools
import re
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from typing import Any, TypeVar

from tablewright.blueprint import regex
from tablewright.blueprint.language import AttributeSpec
from tablewright.blueprint.templates import SEPARATOR

ISO8601 = "%Y-%m-%dT%H:%M:%SZ"
DATE = "%Y-%m-%d"
EPOCH_WIDTH = {"epoch_seconds": 10, "epoch_millis": 13}


def encode_key_value(spec: AttributeSpec, value: Any) -> str:
    """The text an attribute value takes inside a key."""
    if spec.type == "boolean":
        return "true" if value else "false"
    if spec.type == "number":
        return _number_text(spec, value)
    if spec.type == "date":
        text: str = value.strftime(DATE)
        return text
    if spec.type == "timestamp":
        fmt = spec.timestamp_format
        if fmt in EPOCH_WIDTH:
            return f"{_epoch(value, fmt):0{EPOCH_WIDTH[fmt]}d}"
        return _utc(value).strftime(ISO8601 if fmt == "iso8601" else fmt)
    text = str(value)
    if SEPARATOR in text:
        raise ValueError(f"value {text!r} contains the key separator {SEPARATOR!r}")
    return text


# A time bucket's text (UTC): each sorts as the times it holds. `week` is the ISO 8601 week, Monday first, with
# its ISO year (2024-12-30 is in 2025-W01).
BUCKET_FORMATS = {"month": "%Y-%m", "week": "%G-W%V", "day": "%Y-%m-%d", "hour": "%Y-%m-%dT%H"}
BUCKET_SHAPES = {"month": "YYYY-MM", "week": "YYYY-Www, ISO week", "day": "YYYY-MM-DD", "hour": "YYYY-MM-DDTHH"}


def bucket_value(spec: AttributeSpec, value: Any, bucket: str) -> str:
    """The time bucket of a timestamp or date (UTC): `2024-03` by month, `2024-W09` by ISO week,
    `2024-03-01` by day, `2024-03-01T09` by hour."""
    return _utc(_moment(value)).strftime(BUCKET_FORMATS[bucket])


def _moment(value: Any) -> datetime:
    return value if isinstance(value, datetime) else datetime(value.year, value.month, value.day)


def bucket_range(spec: AttributeSpec, start: Any, end: Any, bucket: str) -> list[str]:
    """Every time bucket from the one holding `start` to the one holding `end`, in order."""
    last = bucket_value(spec, end, bucket)
    moment = _bucket_start(_utc(_moment(start)), bucket)
    buckets: list[str] = []
    while (text := moment.strftime(BUCKET_FORMATS[bucket])) <= last:
        buckets.append(text)
        moment = _next_bucket(moment, bucket)
    return buckets


def _bucket_start(moment: datetime, bucket: str) -> datetime:
    day = moment.replace(hour=0, minute=0, second=0, microsecond=0)
    if bucket == "month":
        return day.replace(day=1)
    if bucket == "week":
        return day - timedelta(days=day.weekday())
    return day if bucket == "day" else moment.replace(minute=0, second=0, microsecond=0)


def _next_bucket(start: datetime, bucket: str) -> datetime:
    if bucket == "month":
        return (start.replace(day=28) + timedelta(days=4)).replace(day=1)
    return start + {"week": timedelta(days=7), "day": timedelta(days=1), "hour": timedelta(hours=1)}[bucket]


def stored_value(spec: AttributeSpec, value: Any) -> dict[str, Any]:
    """The DynamoDB (low-level, typed) representation of an attribute value."""
    if spec.is_document:
        return _document(spec.type, value)
    if spec.type == "boolean":
        return {"BOOL": bool(value)}
    if spec.type == "number":
        return {"N": str(value)}
    if spec.type == "timestamp" and spec.timestamp_format in EPOCH_WIDTH:
        return {"N": str(_epoch(value, spec.timestamp_format))}
    if spec.type in ("timestamp", "date"):
        return {"S": encode_key_value(spec, value)}
    return {"S": str(value)}


def _document(kind: str, value: Any) -> dict[str, Any]:
    if kind == "map":
        return {"M": {str(k): _plain(v) for k, v in value.items()}}
    if kind == "list":
        return {"L": [_plain(v) for v in value]}
    if kind == "string_set":
        return {"SS": sorted(str(v) for v in value)}
    if kind == "number_set":
        return {"NS": sorted(str(v) for v in value)}
    return {"B": bytes(value)}


def _plain(value: Any) -> dict[str, Any]:
    """A value inside a map or list, typed by what it is."""
    if isinstance(value, bool):
        return {"BOOL": value}
    if isinstance(value, (int, float)):
        return {"N": str(value)}
    if isinstance(value, dict):
        return _document("map", value)
    if isinstance(value, list):
        return _document("list", value)
    return {"S": str(value)}


def attribute_type_letter(spec: AttributeSpec) -> str:
    """The DynamoDB scalar type an attribute is stored as: S, N or BOOL."""
    return next(iter(stored_value(spec, example_value(spec))))


def example_value(spec: AttributeSpec) -> Any:
    """A representative value, for documentation and type probing."""
    if spec.values:
        return spec.values[0]
    return {
        "string": "example",
        "number": 42,
        "timestamp": datetime(2024, 3, 1, 9, 30, tzinfo=UTC),
        "date": date(2024, 3, 1),
        "boolean": True,
        "map": {"key": "value"},
        "list": ["first", "second"],
        "string_set": ["a", "b"],
        "number_set": [1, 2],
        "binary": b"\x00\x01\x02\x03",
    }[spec.type]


def key_encoding(spec: AttributeSpec) -> str:
    """A short, stable name for how a value is written into keys: `timestamp:iso8601`, `number:width=6`.
    Two specs with the same name write the same key text for the same value."""
    if spec.type == "timestamp":
        return f"timestamp:{spec.timestamp_format}"
    if spec.type == "number":
        return f"number:width={spec.width}" if spec.width else "number"
    return spec.type


def describe_encoding(spec: AttributeSpec) -> str:
    """How an application writes the value into a key, e.g. `ISO 8601 UTC, 2024-03-01T09:30:00Z`."""
    sample = encode_key_value(spec, example_value(spec))
    if spec.type == "timestamp":
        fmt = spec.timestamp_format
        name = {"iso8601": "ISO 8601 UTC", "epoch_seconds": "epoch seconds, 10 digits",
                "epoch_millis": "epoch milliseconds, 13 digits"}.get(fmt, f"strftime {fmt!r} in UTC")
        return f"{name}, e.g. {sample}"
    if spec.type == "number":
        return f"zero-padded to {spec.width} digits, e.g. {sample}" if spec.width else f"decimal digits, e.g. {sample}"
    if spec.type == "date":
        return f"YYYY-MM-DD, e.g. {sample}"
    if spec.type == "boolean":
        return "true or false"
    if spec.values:
        return "one of " + ", ".join(spec.values)
    return "text without '#'"


Moment = TypeVar("Moment", date, datetime)
# Keys hold times with four-digit years (so they sort as they are written), and a time bucket's next day or
# month must exist: years 1000 to 9998.
YEARS = range(1000, 9999)


def _within_years(moment: Moment, raw: Any) -> Moment:
    if moment.year not in YEARS:
        raise ValueError(f"{raw!r} is in the year {moment.year}: keys hold years {YEARS[0]} to {YEARS[-1]}")
    return moment


def parse_value(spec: AttributeSpec, raw: Any) -> Any:
    """The semantic value of a blueprint-given value (an example item). Raises ValueError."""
    if spec.type == "boolean":
        if not isinstance(raw, bool):
            raise ValueError(f"expected true or false, got {raw!r}")
        return raw
    if spec.type == "number":
        if isinstance(raw, bool) or not isinstance(raw, (int, float)):
            raise ValueError(f"expected a number, got {raw!r}")
        return raw
    if spec.type == "date":
        try:
            day = date.fromisoformat(str(raw))
        except ValueError:
            raise ValueError(f"expected a date as YYYY-MM-DD, got {raw!r}") from None
        return _within_years(day, raw)
    if spec.type == "timestamp":
        try:
            if isinstance(raw, (int, float)) and not isinstance(raw, bool):
                moment = datetime.fromtimestamp(raw, UTC)
            else:
                moment = _utc(datetime.fromisoformat(str(raw)))
        except (OverflowError, OSError):
            raise ValueError(f"{raw!r} is out of the range keys hold (years {YEARS[0]} to {YEARS[-1]})") from None
        except ValueError:
            raise ValueError(f"expected an ISO 8601 timestamp such as 2024-03-01T09:30:00Z, got {raw!r}") from None
        return _within_years(moment, raw)
    if spec.is_document:
        return _parse_document(spec.type, raw)
    if isinstance(raw, (dict, list, bool)) or raw is None:
        raise ValueError(f"expected text, got {raw!r}")
    text = str(raw)
    if spec.values and text not in spec.values:
        raise ValueError(f"{text!r} is not one of {', '.join(spec.values)}")
    return text


def _parse_document(kind: str, raw: Any) -> Any:
    if kind == "map" and isinstance(raw, dict):
        return raw
    if kind == "list" and isinstance(raw, list):
        return raw
    if kind in ("string_set", "number_set") and isinstance(raw, list) and raw and len(set(map(str, raw))) == len(raw):
        wanted = (str,) if kind == "string_set" else (int, float)
        if all(isinstance(v, wanted) and not isinstance(v, bool) for v in raw):
            return raw
    if kind == "binary" and isinstance(raw, str):
        try:
            return base64.b64decode(raw, validate=True)
        except binascii.Error:
            raise ValueError(f"expected base64 text, got {raw!r}") from None
    what = {"map": "a mapping", "list": "a list", "string_set": "a list of distinct strings",
            "number_set": "a list of distinct numbers", "binary": "base64 text"}[kind]
    raise ValueError(f"expected {what}, got {raw!r}")


# Timestamp directives that sort chronologically when they appear in this order (a prefix of it).
_CHRONOLOGICAL = (("Y", "m", "d", "H", "M", "S", "f"), ("Y", "j", "H", "M", "S", "f"))


def timestamp_sorts(fmt: str) -> bool:
    """Whether keys written with this timestamp format sort in time order."""
    if fmt in EPOCH_WIDTH or fmt == "iso8601":
        return True
    directives = tuple(re.findall(r"%(.)", fmt))
    return any(directives == chain[: len(directives)] for chain in _CHRONOLOGICAL)


# What a timestamp format's directives read: fixed digits or one of a few fixed words, as strftime writes them (C
# locale). A blueprint's format has each directive once (blueprint/language/attributes.py), so the expression has no
# unbounded repetition and no two readings: a stored value is read in one pass, in time linear in its length, here
# as in both clients' runtimes (tests/hostile/test_timestamp_formats.py).
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December")
TIME_FIELDS = {"Y": "[0-9]{4}", "y": "[0-9]{2}", "m": "[0-9]{2}", "d": "[0-9]{2}", "j": "[0-9]{3}", "H": "[0-9]{2}",
               "I": "[0-9]{2}", "M": "[0-9]{2}", "S": "[0-9]{2}", "f": "[0-9]{6}", "p": "AM|PM",
               "b": "|".join(month[:3] for month in MONTHS), "B": "|".join(MONTHS)}


@functools.cache
def timestamp_pattern(fmt: str) -> re.Pattern[str]:
    """The expression a strftime format's values match: its text, and each directive as a named group."""
    pieces = re.split("(%.)", ISO8601 if fmt == "iso8601" else fmt, flags=re.DOTALL)  # text, directive, text...
    directives = [piece[1] for piece in pieces[1::2]]
    if len(set(directives)) < len(directives) or not set(directives) <= TIME_FIELDS.keys():
        raise ValueError(f"timestamp format {fmt!r}: each directive once, of {' '.join(TIME_FIELDS)}")
    return re.compile("".join(f"(?P<{piece[1]}>{TIME_FIELDS[piece[1]]})" if n % 2 else re.escape(piece)
                              for n, piece in enumerate(pieces)))


def read_timestamp(text: str, fmt: str) -> datetime:
    """A timestamp stored as text in a strftime format (or iso8601), in UTC: what `encode_key_value` writes, read as
    datetime.strptime reads it, without its leniency (a one-digit day, free spacing, locale month names). Raises
    ValueError."""
    found = timestamp_pattern(fmt).fullmatch(text)
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
    month = part.get("m", 1 + [month[:3] for month in MONTHS].index(name[:3]) if name else 1)
    moment = datetime(year, month, part.get("d", 1), hour, part.get("M", 0), part.get("S", 0), part.get("f", 0),
                      tzinfo=UTC)
    return moment + timedelta(days=part["j"] - 1) if "j" in part else moment


def sort_problem(name: str, spec: AttributeSpec) -> str | None:
    """Why keys holding this attribute would not sort as its values do, or None."""
    if spec.type == "number" and spec.width is None:
        return f"`{name}` is a number without `width`: inside keys it compares as text, so 10 sorts before 9"
    if spec.type == "timestamp" and not timestamp_sorts(spec.timestamp_format):
        return f"`{name}` uses timestamp format {spec.timestamp_format!r}, which does not sort chronologically"
    return None


def admits_separator(spec: AttributeSpec) -> bool:
    """Whether a value of this attribute may hold the key separator: free text, no `values:`, and no
    `pattern:` that refuses '#'."""
    if spec.type != "string" or spec.values:
        return False
    probes = (SEPARATOR, f"a{SEPARATOR}b", f"x{SEPARATOR}", f"1{SEPARATOR}2")
    return spec.pattern is None or any(regex.fullmatch(spec.pattern, probe) for probe in probes)


def describe_stored(spec: AttributeSpec) -> str:
    """How a filter value is written: as the attribute is stored."""
    if spec.type == "number":
        return "a number"
    if spec.type == "timestamp" and spec.timestamp_format in EPOCH_WIDTH:
        return f"{spec.timestamp_format.replace('_', ' ')} as a number"
    return describe_encoding(spec)


def _number_text(spec: AttributeSpec, value: Any) -> str:
    number = Decimal(str(value))
    if spec.width is None:
        return format(number.normalize(), "f") if number != number.to_integral_value() else str(int(number))
    if number != number.to_integral_value() or number < 0:
        raise ValueError(f"{value} cannot be zero-padded: padded key numbers must be whole and not negative")
    text = str(int(number)).zfill(spec.width)
    if len(text) > spec.width:
        raise ValueError(f"{value} has more than {spec.width} digits")
    return text


def _utc(value: datetime) -> datetime:
    return value.astimezone(UTC) if value.tzinfo else value.replace(tzinfo=UTC)


EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _epoch(value: datetime, fmt: str) -> int:
    """Whole seconds or milliseconds since 1970 (UTC), truncated toward zero, in exact integer arithmetic (a
    float's product drops a millisecond of about one value in 160)."""
    micros = (_utc(value) - EPOCH) // timedelta(microseconds=1)
    unit = 1000 if fmt == "epoch_millis" else 1_000_000
    return micros // unit if micros >= 0 else -(-micros // unit)
