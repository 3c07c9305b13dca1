"""DynamoDB item sizes and read costs (Developer Guide: "Item sizes and formats", "Read consumption").

An item's size is the sum of its attribute names' and values' lengths. Reads are billed on the
total size of the items read, rounded up to the next 4 KB per request (GetItem, Query); each item
of a BatchGetItem is rounded up on its own. An eventually consistent read costs half.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from decimal import Decimal
from typing import Any

READ_UNIT_BYTES = 4096
WRITE_UNIT_BYTES = 1024


def value_size(value: dict[str, Any]) -> int:
    (kind, content), = value.items()
    if kind == "S":
        return len(content.encode("utf-8"))
    if kind == "N":
        digits = Decimal(content).normalize().as_tuple().digits
        return math.ceil(len(digits) / 2) + 1
    if kind == "B":
        return len(content)
    if kind in ("SS", "BS"):
        return sum(len(v.encode("utf-8")) if isinstance(v, str) else len(v) for v in content)
    if kind == "NS":
        return sum(value_size({"N": v}) for v in content)
    if kind in ("BOOL", "NULL"):
        return 1
    if kind in ("L", "M"):
        items = content.items() if kind == "M" else enumerate(content)
        return 3 + sum((len(str(k).encode()) if kind == "M" else 0) + 1 + value_size(v) for k, v in items)
    raise ValueError(f"unsupported attribute type {kind}")


def item_size(item: dict[str, dict[str, Any]]) -> int:
    """Bytes of a (low-level, typed) item."""
    return sum(len(name.encode("utf-8")) + value_size(value) for name, value in item.items())


def read_units(total_bytes: int, consistent: bool) -> float:
    """Read capacity units of one GetItem or Query page that read `total_bytes` (at least one unit)."""
    units = max(1, math.ceil(total_bytes / READ_UNIT_BYTES))
    return float(units) if consistent else units / 2


def batch_read_units(sizes: Iterable[int], consistent: bool) -> float:
    """BatchGetItem: every item is rounded up to 4 KB on its own."""
    return sum(read_units(size, consistent) for size in sizes)
