"""What each item already written needs to match the later design: the writes of `tablewright migrate run`.

An item is read as the earlier design wrote it (its `_entity` names its entity) and becomes what the later design
reads: its entity's later name, renamed attributes under their new names, removed ones taken off, defaults and
converted types written, and every key (table and indexes) rendered from its values by the later design's
templates. Only those attributes are written: every other value stays byte for byte as the application wrote it.

Every write is conditioned on the values it was computed from, so an application write that lands in between
makes it fail; the runner then reads the item again and computes anew (a dual-writing application wins).
Keys of the table itself that change (a rename or re-key that moves items) are a delete and a put in one
transaction, the put conditioned on no item at the new key (one written by the application is newer).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from decimal import Decimal, InvalidOperation
from typing import Any

from tablewright.blueprint.encoding import (
    EPOCH_WIDTH,
    attribute_type_letter,
    parse_value,
    read_timestamp,
    stored_value,
)
from tablewright.blueprint.language import AttributeSpec
from tablewright.capacity.size import item_size
from tablewright.design.design import ENTITY_ATTRIBUTE, IndexDesign, TableDesign
from tablewright.design.items import build_item
from tablewright.migrate.runner import Rewrite

Typed = dict[str, Any]


class Unconvertible(ValueError):
    """A stored value that cannot be read as its attribute's (later) type."""


@dataclass(frozen=True)
class EntityMove:
    """How the items of one earlier entity become items of the later design."""

    former: str  # the `_entity` old items carry
    entity: str  # its later name
    renames: Mapping[str, str] = field(default_factory=dict)  # stored attribute, old name -> new
    removed: tuple[str, ...] = ()  # attributes a declared `removal: delete` takes off
    defaults: Mapping[str, Any] = field(default_factory=dict)  # attribute -> value for items without it
    converted: tuple[str, ...] = ()  # attributes whose type changes (`convert: true`)
    delete: bool = False  # the entity is removed with `removal: delete`
    expire_attribute: str | None = None  # the entity is removed with `removal: expire`: the TTL attribute to set
    identity: tuple[str, ...] = ()  # the attributes (later names) its earlier table key is made of: who an item is


def _number(text: str) -> int | Decimal:
    number = Decimal(text)
    return int(number) if number == number.to_integral_value() else number


def decoded(spec: AttributeSpec, typed: Typed) -> Any:
    """The value a key is rendered from, read back from how the attribute is stored. Raises Unconvertible."""
    try:
        if spec.type == "boolean":
            return bool(typed["BOOL"])
        if spec.type == "number":
            return _number(typed["N"])
        if spec.type == "date":
            return date.fromisoformat(typed["S"])
        if spec.type == "timestamp":
            fmt = spec.timestamp_format
            if fmt in EPOCH_WIDTH:
                seconds = Decimal(typed["N"]) / (1000 if fmt == "epoch_millis" else 1)
                return datetime.fromtimestamp(float(seconds), UTC)
            if fmt == "iso8601":
                return datetime.fromisoformat(typed["S"]).astimezone(UTC)
            return read_timestamp(typed["S"], fmt)
        return str(typed["S"])
    except (KeyError, TypeError, ValueError, InvalidOperation, OverflowError, OSError):
        raise Unconvertible(f"{_shown(typed)} is not a stored {spec.type}") from None


def _shown(typed: Typed) -> str:
    text = ascii(typed)
    return text if len(text) <= 80 else text[:77] + "..."


def converted(spec: AttributeSpec, typed: Typed) -> Typed:
    """A stored value of another type as `spec` stores it (`convert: true`). Raises Unconvertible."""
    [(letter, raw)] = typed.items() if len(typed) == 1 else [("", None)]
    plain: Any = {"S": raw, "N": _number(str(raw)) if letter == "N" else None, "BOOL": raw}.get(letter)
    if plain is None:
        raise Unconvertible(f"{_shown(typed)} cannot become a {spec.type}")
    if spec.type == "string":
        return {"S": ("true" if plain else "false") if isinstance(plain, bool) else str(plain)}
    if spec.type == "number" and isinstance(plain, str):
        try:
            plain = _number(plain)
        except InvalidOperation:
            raise Unconvertible(f"{_shown(typed)} is not a number") from None
    try:
        return stored_value(spec, parse_value(spec, float(plain) if isinstance(plain, Decimal) else plain))
    except ValueError as error:
        raise Unconvertible(f"{_shown(typed)} cannot become a {spec.type}: {error}") from None


@dataclass(frozen=True)
class Rewriter:
    """Computes each item's writes (`rewrite`) for the runner, and checks an item (`problem`) for `verify`."""

    design: TableDesign  # the later design
    moves: Mapping[str, EntityMove]  # by the `_entity` of old items
    failures: list[str] = field(default_factory=list)  # items `rewrite` left as they are, and why
    # The item at a table key, read strongly consistent: an item that moves to a key where the application wrote it
    # already (dual write: the same identity) is only deleted. None: every move is a put and a delete.
    existing: Callable[[Typed], Typed | None] | None = None
    max_units: float | None = None  # the most one item's writes may take (a worker's budget for a second)

    @property
    def key_names(self) -> tuple[str, ...]:
        return self.design.key_attributes

    def _table_key(self) -> tuple[str, ...]:
        keys = self.design.table_keys
        return (keys.pk,) if keys.sk is None else (keys.pk, keys.sk)

    def target(self, move: EntityMove, item: Typed) -> Typed:
        """The attributes the later design wants written on `item` (keys, marker, renamed, defaults, converted),
        each as it must be stored. Raises Unconvertible."""
        specs = self.design.blueprint.entities[move.entity].attributes
        stored: Typed = {}
        for name, spec in specs.items():
            former = next((old for old, new in move.renames.items() if new == name), None)
            value = item.get(name, item.get(former) if former else None)
            if value is None and name in move.defaults:
                value = stored_value(spec, parse_value(spec, move.defaults[name]))
            if value is not None and name in move.converted and next(iter(value)) != attribute_type_letter(spec):
                value = converted(spec, value)
            if value is not None:
                stored[name] = value
        in_keys = {name for shape in self.design.shapes[move.entity].values()
                   for name in (*shape.pk.attributes, *shape.sk.attributes, *shape.shard_by)}
        values = {name: decoded(specs[name], typed) for name, typed in stored.items() if name in in_keys}
        try:
            built = build_item(self.design, move.entity, values)
        except KeyError as error:
            raise Unconvertible(f"has no `{error.args[0]}`, which its keys are made of") from None
        except ValueError as error:
            raise Unconvertible(f"cannot be keyed: {error}") from None
        keys = {name: typed for name, typed in built.items() if name in self.key_names or name == ENTITY_ATTRIBUTE}
        written = {name: typed for name, typed in stored.items()
                   if name in move.defaults or name in move.converted or name in move.renames.values()}
        return {**written, **keys}

    def changes(self, item: Typed) -> tuple[Typed, list[str]] | None:
        """The attributes `item` needs set (as stored) and removed; None when it is not migrated. Raises
        Unconvertible."""
        move = self.moves.get(str(item.get(ENTITY_ATTRIBUTE, {}).get("S")))
        if move is None:
            return None
        if move.expire_attribute is not None:
            expired = move.expire_attribute in item
            return ({} if expired else {move.expire_attribute: {"N": str(int(datetime.now(UTC).timestamp()))}}), []
        wanted = self.target(move, item)
        removed = sorted({name for name in (*move.renames, *move.removed) if name in item} - set(wanted))
        return {name: typed for name, typed in wanted.items() if item.get(name) != typed}, removed

    def rewrite(self, item: Typed) -> Rewrite | None:
        """The writes that bring `item` to the later design; None when it has them already (or is not migrated)."""
        move = self.moves.get(str(item.get(ENTITY_ATTRIBUTE, {}).get("S")))
        if move is not None and move.delete:
            return self._within_budget(item, Rewrite(({"Delete": {"Key": self._key(item), **_condition(item, item)}},),
                                                     self._units(item, None)))
        try:
            found = self.changes(item)
        except Unconvertible as error:
            self.failures.append(f"{_key_text(self._key(item))}: {error}")
            return None
        if found is None or found == ({}, []):
            return None
        changed, removed = found
        after = {**{k: v for k, v in item.items() if k not in removed}, **changed}
        if any(name in changed for name in self._table_key()):
            return self._moved(item, after, self.moves[str(item[ENTITY_ATTRIBUTE]["S"])])
        update = {"Key": self._key(item), **_update(changed, removed, item)}
        return self._within_budget(item, Rewrite(({"Update": update},), self._units(item, after)))

    def _key(self, item: Typed) -> Typed:
        return {name: item[name] for name in self._table_key()}

    def _units(self, before: Typed | None, after: Typed | None) -> float:
        return write_units(before, after, self.design.indexes, self._table_key())

    def _within_budget(self, item: Typed, rewrite: Rewrite) -> Rewrite | None:
        """The rewrite, unless one write of it takes more units than a second of the budget allows (then the item is
        left as it is, and said so)."""
        if self.max_units is None or rewrite.write_units <= self.max_units:
            return rewrite
        self.failures.append(f"{_key_text(self._key(item))}: its writes take {rewrite.write_units:g} write units, more "
                             f"than a second of this worker's budget ({self.max_units:g}); left where it is (run it "
                             "with a larger --max-wcu, or fewer segments per worker)")
        return None

    def _moved(self, item: Typed, after: Typed, move: EntityMove) -> Rewrite | None:
        delete = {"Key": self._key(item), **_condition(item, item)}
        there = self.existing(self._key(after)) if self.existing is not None else None
        if there is not None:
            if any(there.get(name) != after.get(name) for name in move.identity):  # another item: never lose one
                self.failures.append(f"{_key_text(self._key(item))}: its new key {_key_text(self._key(after))} "
                                     "holds another item; left where it is")
                return None
            return self._within_budget(item, Rewrite(({"Delete": delete},), self._units(item, None)))  # dual-written
        put = {"Item": after, "ConditionExpression": "attribute_not_exists(#k)",
               "ExpressionAttributeNames": {"#k": self._table_key()[0]}}
        units = 2 * (self._units(item, None) + self._units(None, after))  # a transaction: twice
        return self._within_budget(item, Rewrite(({"Put": put}, {"Delete": delete}), units))

    def problem(self, item: Typed) -> str | None:
        """Why `item` is not (yet) where the later design reads it; None when it is (or is not migrated)."""
        marker = str(item.get(ENTITY_ATTRIBUTE, {}).get("S"))
        move = self.moves.get(marker)
        if move is None:
            return None
        where = _key_text(self._key(item))
        if move.delete:
            return f"{where}: a {marker} item, which the migration deletes"
        try:
            found = self.changes(item)
        except Unconvertible as error:
            return f"{where}: {error}"
        if found is None or found == ({}, []):
            return self._misshapen(move, item, where)
        changed, removed = found
        return f"{where}: {', '.join(sorted({*changed, *removed}))} not as the later design reads them"

    def _misshapen(self, move: EntityMove, item: Typed, where: str) -> str | None:
        """An attribute the migration concerns that the item lacks though required, or holds as another type."""
        specs = self.design.blueprint.entities[move.entity].attributes
        for name in sorted({*move.renames.values(), *move.defaults, *move.converted}):
            spec = specs[name]
            if name not in item and not spec.is_optional:
                return f"{where}: no `{name}`, which the later design requires"
            if name in item and not spec.is_document and next(iter(item[name])) != attribute_type_letter(spec):
                return f"{where}: `{name}` stored as {next(iter(item[name]))}, the later design reads a {spec.type}"
        return None


def _key_text(key: Typed) -> str:
    """A key as printed: control and other unprintable characters of the application's values escaped."""
    text = " ".join(f"{name}={next(iter(value.values()))}" for name, value in key.items())
    return "".join(char if char.isprintable() else repr(char)[1:-1] for char in text)


def _condition(read: Typed, names: Iterable[str]) -> dict[str, Any]:
    """`ConditionExpression` that holds only while every attribute of `names` is as read (absent if absent)."""
    parts, attribute_names, values = [], {}, {}
    for position, name in enumerate(sorted(names)):
        attribute_names[f"#c{position}"] = name
        if name in read:
            values[f":c{position}"] = read[name]
            parts.append(f"#c{position} = :c{position}")
        else:
            parts.append(f"attribute_not_exists(#c{position})")
    condition: dict[str, Any] = {"ConditionExpression": " AND ".join(parts),
                                 "ExpressionAttributeNames": attribute_names}
    if values:
        condition["ExpressionAttributeValues"] = values
    return condition


def _update(changed: Typed, removed: list[str], read: Typed) -> dict[str, Any]:
    """An UpdateItem's expressions: set `changed`, remove `removed`, conditioned on every attribute as read."""
    request = _condition(read, set(read) | set(changed) | set(removed))
    sets = []
    for position, (name, value) in enumerate(sorted(changed.items())):
        request["ExpressionAttributeNames"][f"#s{position}"] = name
        request.setdefault("ExpressionAttributeValues", {})[f":s{position}"] = value
        sets.append(f"#s{position} = :s{position}")
    drops = []
    for position, name in enumerate(removed):
        request["ExpressionAttributeNames"][f"#r{position}"] = name
        drops.append(f"#r{position}")
    request["UpdateExpression"] = " ".join(part for part in (
        f"SET {', '.join(sets)}" if sets else "", f"REMOVE {', '.join(drops)}" if drops else "") if part)
    return request


# Write units (Developer Guide, "Capacity unit consumption for write operations" and "Global secondary indexes:
# provisioned throughput considerations": https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/
# read-write-operations.html, .../GSI.html#GSI.ThroughputConsiderations): 1 per KB of the larger of the item
# before and after on the table; on each index, its entry's units (keys and projected attributes, the larger
# of before and after) once for a new or removed entry or a change of a projected attribute, twice when the
# entry's keys change (a delete and a put), none otherwise.
def write_units(before: Typed | None, after: Typed | None, indexes: tuple[IndexDesign, ...], table_keys: tuple[str, ...]
                ) -> float:
    sizes = [item_size(item) for item in (before, after) if item is not None]
    units = _units_of(max(sizes, default=0))
    for index in indexes:
        was, now = _entry(index, table_keys, before), _entry(index, table_keys, after)
        if was is None and now is None:
            continue
        keys = [name for name in (index.keys.pk, index.keys.sk) if name]
        rekeyed = was is not None and now is not None and any(was[name] != now[name] for name in keys)
        entries = 2 if rekeyed else 0 if was == now else 1
        units += entries * _units_of(max(item_size(entry) for entry in (was, now) if entry is not None))
    return float(units)


def _units_of(size: int) -> int:
    return max(1, math.ceil(size / 1024))


def _entry(index: IndexDesign, table_keys: tuple[str, ...], item: Typed | None) -> Typed | None:
    """The item's entry on the index (its keys and projected attributes), None when it is not in it."""
    keys = tuple(name for name in (index.keys.pk, index.keys.sk) if name)
    if item is None or any(name not in item for name in keys):
        return None
    if index.projection.type == "ALL":
        return item
    kept = set(keys) | set(table_keys) | set(index.projection.attributes)
    return {name: value for name, value in item.items() if name in kept}
