"""The JSON layout cdktf writes `cdk.tf.json` and `manifest.json` in, so that CDK Terrain's output is the same
bytes.

cdktf 0.21 serializes with `json-stable-stringify` (`{space: 2}`), CDK Terrain with `safe-stable-stringify`
(`null, 2`). Both sort keys and indent by two spaces; they differ in empty arrays and objects only:
cdktf writes the closing bracket on its own line (`[` newline `]`), cdktn writes `[]`. `stable_json`
reproduces the first exactly: keys sorted by UTF-16 code units (JavaScript's default sort), strings
escaped as `JSON.stringify` does, numbers as JavaScript prints them.
"""

from __future__ import annotations

import json
import math
from decimal import Decimal
from json.encoder import encode_basestring
from typing import Any

INDENT = "  "


def stable_json(value: Any, level: int = 0) -> str:
    """`value` (parsed JSON: dicts, lists, strings, numbers, booleans, None) as cdktf writes it."""
    parts: list[str] = []
    _write(value, "\n" + INDENT * level, parts)
    return "".join(parts)


def _write(value: Any, indent: str, parts: list[str]) -> None:
    """Append the text of `value` to `parts` (one list for the whole document: a stack's file holds tens
    of thousands of values)."""
    if isinstance(value, dict):
        inner = indent + INDENT
        parts.append("{")
        for position, key in enumerate(_sorted_keys(value)):
            parts.append(f"{',' if position else ''}{inner}{_string(key)}: ")
            _write(value[key], inner, parts)
        parts.append(indent + "}")
    elif isinstance(value, list):
        inner = indent + INDENT
        parts.append("[")
        for position, item in enumerate(value):
            parts.append(f",{inner}" if position else inner)
            _write(item, inner, parts)
        parts.append(indent + "]")
    else:
        parts.append(_scalar(value))


def _sorted_keys(mapping: dict[str, Any]) -> list[str]:
    # Code points and UTF-16 code units order ASCII keys alike; only other keys need the slower sort key.
    if all(map(str.isascii, mapping)):
        return sorted(mapping)
    return sorted(mapping, key=_utf16)


def _utf16(key: str) -> bytes:
    return key.encode("utf-16-be", "surrogatepass")


# `JSON.stringify`'s escapes: what `json.dumps(text, ensure_ascii=False)` writes, without its set-up per call.
_string = encode_basestring


def _scalar(value: Any) -> str:
    if isinstance(value, str):
        return _string(value)
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return js_number(value)
    raise TypeError(f"not a JSON value: {type(value).__name__}")


def js_number(value: float) -> str:
    """A double as JavaScript's `Number.prototype.toString` prints it (ECMA-262 Number::toString):
    the shortest digits that round-trip (Python's repr finds the same ones), positional from 1e-6 to 1e21."""
    if not math.isfinite(value):
        return "null"  # JSON.stringify's answer for NaN and the infinities
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    digits_tuple, exponent = Decimal(repr(abs(value))).normalize().as_tuple()[1:]
    assert isinstance(exponent, int)
    digits = "".join(map(str, digits_tuple))
    size = len(digits)
    point = exponent + size  # the decimal point sits after `point` digits
    if size <= point <= 21:
        return sign + digits + "0" * (point - size)
    if 0 < point <= 21:
        return sign + digits[:point] + "." + digits[point:]
    if -6 < point <= 0:
        return sign + "0." + "0" * -point + digits
    shown = point - 1
    mantissa = digits[0] + ("." + digits[1:] if size > 1 else "")
    return f"{sign}{mantissa}e{'+' if shown >= 0 else '-'}{abs(shown)}"
