"""The emulator's consumed capacity, computed as DynamoDB computes it, and its item operations made atomic.

moto answers `ReturnConsumedCapacity` with fixed figures (1 unit per PutItem, 0.5 per UpdateItem, nothing for
TransactWriteItems), so a write budget measured on it would measure nothing. When a request asks for `TOTAL` or
`INDEXES`, PutItem, UpdateItem, DeleteItem, TransactWriteItems, GetItem and Scan report instead:

- an item's size: its attribute names' UTF-8 bytes plus its values' sizes (strings' UTF-8 bytes, numbers' one
  byte per two significant digits plus one, binaries' raw bytes, 3 bytes per list or map plus 1 per element),
  `tablewright.capacity.size` ("Item sizes and formats",
  https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/CapacityUnitCalculations.html);
- a write: the item's size rounded up to 1 KB, the larger of the item before and after for PutItem and
  UpdateItem, the deleted item's for DeleteItem, at least one unit
  (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/read-write-operations.html
  #write-operation-consumption);
- plus, for each secondary index the item is in before or after, the index entry's size (the table's and the
  index's keys and the projected attributes) rounded up to 1 KB: one write to put or remove an entry or to
  update its projected attributes, two (a delete and a put) when an index key changes, none when the entry is
  unchanged (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/GSI.html
  #GSI.ThroughputConsiderations.Writes);
- a transaction: every table write twice, one to prepare and one to commit
  (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis.html
  #transaction-capacity-handling); a ConditionCheck is charged as a transactional write of the checked item
  (AWS does not say which unit it takes); index entries once;
- reads: GetItem the item's size rounded up to 4 KB (a missing item: one unit), Scan the summed size of the
  items it evaluated (before the filter) rounded up to 4 KB, at least one unit; both halved when eventually
  consistent (read-write-operations.html#read-operation-consumption).

A write whose condition fails is answered with an error, which carries no ConsumedCapacity, as on AWS. Query,
BatchGetItem and BatchWriteItem keep moto's figures; everything else is moto's. The item operations also run one
at a time: DynamoDB applies each item write (its condition included) atomically, while moto reads, checks and
writes in steps the server's threads would interleave.
"""

from __future__ import annotations

import base64
import copy
import math
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tablewright.capacity.size import READ_UNIT_BYTES, WRITE_UNIT_BYTES, item_size

Typed = dict[str, Any]  # a low-level item: attribute name -> {"S": ...}
Undo = Callable[[], None]
_serial = threading.RLock()  # held by every item operation of the emulator
_scan = threading.local()  # per server thread: whether its Scan is measured, and the bytes it evaluated
MEASURED = ("put_item", "update_item", "delete_item", "transact_write_items", "get_item", "scan")
# Every item operation, run one at a time (the others keep moto's figures).
SERIALIZED = (*MEASURED, "query", "batch_write_item", "batch_get_item", "transact_get_items", "execute_statement",
              "batch_execute_statement", "execute_transaction")


def typed_size(item: Typed | None) -> int:
    """Bytes of a low-level item as the emulator holds it (binaries arrive in base64; their raw bytes count)."""
    return item_size({name: _raw(value) for name, value in item.items()}) if item else 0


def _raw(value: Typed) -> Typed:
    (kind, content), = value.items()
    if kind == "B" and isinstance(content, str):
        return {"B": base64.b64decode(content)}
    if kind == "BS":
        return {"BS": [base64.b64decode(v) if isinstance(v, str) else v for v in content]}
    if kind == "M":
        return {"M": {name: _raw(v) for name, v in content.items()}}
    if kind == "L":
        return {"L": [_raw(v) for v in content]}
    return value


def write_units(size: int) -> int:
    return max(1, math.ceil(size / WRITE_UNIT_BYTES))


def read_units(size: int, consistent: bool) -> float:
    units = max(1, math.ceil(size / READ_UNIT_BYTES))
    return float(units) if consistent else units / 2


@dataclass(frozen=True)
class Index:
    name: str
    keys: tuple[str, ...]  # the index's key attributes
    projected: frozenset[str] | None  # non-key attributes copied into it; None: ALL
    local: bool


def indexes_of(table: Any) -> list[Index]:
    """The secondary indexes of a moto table."""
    found = []
    for local, index in [(False, i) for i in table.global_indexes or []] + [(True, i) for i in table.indexes or []]:
        projection = index.projection or {}
        kind = projection.get("ProjectionType", "ALL")
        projected = None if kind == "ALL" else frozenset(projection.get("NonKeyAttributes", []))
        found.append(Index(index.name, tuple(k["AttributeName"] for k in index.schema), projected, local))
    return found


def entry(index: Index, table_keys: tuple[str, ...], item: Typed | None) -> Typed | None:
    """The item's entry on the index, or None when the item lacks one of the index's keys (sparse)."""
    if item is None or any(key not in item for key in index.keys):
        return None
    if index.projected is None:
        return item
    wanted = set(table_keys) | set(index.keys) | index.projected
    return {name: value for name, value in item.items() if name in wanted}


def index_units(index: Index, table_keys: tuple[str, ...], before: Typed | None, after: Typed | None) -> int:
    """Write units of one index for a change of an item from `before` to `after` (None: absent)."""
    old, new = entry(index, table_keys, before), entry(index, table_keys, after)
    if (old is None and new is None) or old == new:
        return 0
    if old is None or new is None:
        return write_units(typed_size(old or new))
    if any(old[key] != new[key] for key in index.keys):
        return write_units(typed_size(old)) + write_units(typed_size(new))
    return write_units(max(typed_size(old), typed_size(new)))


@dataclass
class Consumed:
    """The units one request consumed on one table: the table's and each index's."""

    table: float = 0.0
    indexes: dict[tuple[str, bool], float] | None = None  # (name, local) -> units

    def add_write(self, table: Any, before: Typed | None, after: Typed | None, transactional: bool) -> None:
        self.table += write_units(max(typed_size(before), typed_size(after))) * (2 if transactional else 1)
        keys = tuple(key for key in (table.hash_key_attr, table.range_key_attr) if key)
        for index in indexes_of(table):
            units = index_units(index, keys, before, after)
            if units:
                self.indexes = self.indexes or {}
                self.indexes[index.name, index.local] = self.indexes.get((index.name, index.local), 0.0) + units

    def answer(self, name: str, mode: str) -> Typed:
        """The `ConsumedCapacity` of the API reference: the total; with INDEXES, the table's and each index's."""
        indexes = self.indexes or {}
        body: Typed = {"TableName": name, "CapacityUnits": self.table + sum(indexes.values())}
        if mode == "INDEXES":
            body["Table"] = {"CapacityUnits": self.table}
            for local, field in ((False, "GlobalSecondaryIndexes"), (True, "LocalSecondaryIndexes")):
                chosen = {index: {"CapacityUnits": units} for (index, is_local), units in indexes.items()
                          if is_local == local}
                if chosen:
                    body[field] = chosen
        return body


def _stored(handler: Any, table_name: str, key: Typed, keep: bool = False) -> Typed | None:
    """The item the emulator holds under `key` (only its key attributes are used); `keep`: a copy the request
    about to run cannot change."""
    table = handler.dynamodb_backend.get_table(table_name)
    names = [name for name in (table.hash_key_attr, table.range_key_attr) if name]
    found = handler.dynamodb_backend.get_item(table_name, {name: key[name] for name in names})
    if found is None:
        return None
    attributes: Typed = found.to_json()["Attributes"]
    return copy.deepcopy(attributes) if keep else attributes


def _target(request: Typed) -> Typed:
    """The key a write request addresses (a Put's item holds it)."""
    key: Typed = request["Key"] if "Key" in request else request["Item"]
    return key


class Measure:
    """Each measured action: `before` reads what the answer needs, `after` computes it once the action ran."""

    @staticmethod
    def before(action: str, handler: Any) -> Any:
        body = handler.body
        if action == "transact_write_items":
            return [(name, _stored(handler, request["TableName"], _target(request), keep=True))
                    for name, request in (next(iter(one.items())) for one in body["TransactItems"])]
        if action in ("put_item", "update_item", "delete_item"):
            return _stored(handler, body["TableName"], _target(body), keep=True)
        if action == "scan":
            _scan.measured, _scan.bytes = True, 0
        return None

    @staticmethod
    def after(action: str, handler: Any, before: Any, mode: str) -> Any:
        body = handler.body
        backend = handler.dynamodb_backend
        if action == "transact_write_items":
            tables: dict[str, Consumed] = {}
            for (name, old), one in zip(before, body["TransactItems"], strict=True):
                request = one[name]
                table = backend.get_table(request["TableName"])
                new = old if name == "ConditionCheck" else _stored(handler, request["TableName"], _target(request))
                tables.setdefault(request["TableName"], Consumed()).add_write(table, old, new, transactional=True)
            return [consumed.answer(name, mode) for name, consumed in tables.items()]
        name = body["TableName"]
        if action == "scan":
            units = read_units(_scan.bytes, bool(body.get("ConsistentRead")))
            return Consumed(table=units).answer(name, mode)
        if action == "get_item":
            size = typed_size(_stored(handler, name, body["Key"]))
            return Consumed(table=read_units(size, bool(body.get("ConsistentRead")))).answer(name, mode)
        consumed = Consumed()
        consumed.add_write(backend.get_table(name), before, _stored(handler, name, _target(body)),
                           transactional=False)
        return consumed.answer(name, mode)


_UNMEASURED = object()


def _measured(action: str, original: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """moto's handler of `action`, run alone, its ConsumedCapacity replaced when the request asks for it."""
    def call(self: Any) -> Any:
        mode = self.body.get("ReturnConsumedCapacity", "NONE") if isinstance(self.body, dict) else "NONE"
        with _serial:
            if mode not in ("TOTAL", "INDEXES") or action not in MEASURED:
                return original(self)
            try:
                before = Measure.before(action, self)
            except Exception:  # a malformed request: moto answers it as it does
                before = _UNMEASURED
            try:
                result = original(self)
            finally:
                measured_scan = getattr(_scan, "measured", False)
                _scan.measured = False
            if before is not _UNMEASURED and (action != "scan" or measured_scan):
                result.result["ConsumedCapacity"] = Measure.after(action, self, before, mode)
            return result
    return call


def _evaluated_bytes(original: Callable[..., Any]) -> Callable[..., Any]:
    """moto's Table.scan, also recording the bytes of the items it evaluated when the Scan is measured: moto
    applies the FilterExpression and the projection after collecting them, so they are collected unfiltered and
    filtered here, as moto filters them."""
    def scan(self: Any, filters: Any, limit: Any, exclusive_start_key: Any, filter_expression: Any = None,
             index_name: Any = None, consistent_read: bool = False, projection_expression: Any = None,
             segments: Any = (None, None)) -> Any:
        if not getattr(_scan, "measured", False):
            return original(self, filters, limit, exclusive_start_key, filter_expression, index_name,
                            consistent_read, projection_expression, segments)
        results, scanned, last = original(self, filters, limit, exclusive_start_key, None, index_name,
                                          consistent_read, None, segments)
        _scan.bytes = sum(typed_size(item.to_json()["Attributes"]) for item in results)
        if filter_expression is not None:
            results = [item for item in results if filter_expression.expr(item)]
        if projection_expression:
            results = [item.project(projection_expression) for item in results]
        return results, scanned, last
    return scan


def _replace(owner: Any, name: str, value: Any) -> Undo:
    original = vars(owner)[name]
    setattr(owner, name, value)
    return lambda: setattr(owner, name, original)


def report_consumed_capacity() -> list[Undo]:
    """Patch moto's DynamoDB handler (and its Table.scan) as the module describes; returns the undos."""
    from moto.dynamodb.models.table import Table
    from moto.dynamodb.responses import DynamoHandler

    handler: Any = DynamoHandler
    undos = [_replace(handler, action, _measured(action, getattr(handler, action)))
             for action in SERIALIZED if action in vars(handler)]
    return [*undos, _replace(Table, "scan", _evaluated_bytes(Table.scan))]
