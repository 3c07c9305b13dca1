# python.py joins this file to python_runtime.py into one module: these imports, for checkers, are left out.
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tablewright.client.python_runtime import ENTITY_ATTRIBUTE, ItemNotFound, _Item, _projection

# --- entities and their writes ---


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
    """An entity as the module writes and reads it: how each attribute is stored and read, and its keys. While a
    migration moves its items, old items may carry the `former` name and the `moved` table key: reads and writes
    find them there, and each write leaves the item in the new shape."""

    name: str
    stored: Mapping[str, Callable[[Any], dict[str, Any]]]  # attribute -> its DynamoDB value
    read: Mapping[str, Callable[[Any], Any]]  # attribute -> its value from the DynamoDB value
    table: _Keys
    indexes: tuple[_Keys, ...]
    formers: Mapping[str, str] | None = None  # a renamed attribute -> its old name, read too until migrated
    former: str | None = None  # the entity's old name, which old items carry until migrated
    moved: _Keys | None = None  # the table key old items carry until migrated

    def marker(self) -> tuple[str, dict[str, Any]]:
        """A condition that the item carries one of the entity's names in `_entity` (`#entity`), and its values."""
        if self.former is None:
            return "#entity = :entity", {":entity": {"S": self.name}}
        return "#entity IN (:entity, :former)", {":entity": {"S": self.name}, ":former": {"S": self.former}}

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
        condition, values = self.marker()
        return {"ConditionExpression": f"attribute_not_exists(#pk) OR {condition}",
                "ExpressionAttributeNames": {"#pk": self.table.names[0], "#entity": ENTITY_ATTRIBUTE},
                "ExpressionAttributeValues": values}

    def old_key(self, values: Mapping[str, Any]) -> _Item | None:
        """The table key an old item of `values` still carries, where it differs from the new one (None: none, or
        `values` lack what it is made of)."""
        if self.moved is None or any(values.get(attribute) is None for attribute in self.moved.attributes):
            return None
        old = self.moved.typed(values)
        return old if old != self.table.typed(values) else None

    def put(self, client: Any, table: str, values: Mapping[str, Any]) -> None:
        old = self.old_key(values)
        if old is None:
            client.put_item(TableName=table, Item=self.item(values), **self.own_item())
            return
        client.transact_write_items(TransactItems=[  # the item in the new shape only
            {"Put": {"TableName": table, "Item": self.item(values), **self.own_item()}},
            {"Delete": {"TableName": table, "Key": old, **self.own_item()}}])

    def delete(self, client: Any, table: str, key: Mapping[str, Any]) -> None:
        old = self.old_key(key)
        if old is None:
            client.delete_item(TableName=table, Key=self.table.typed(key), **self.own_item())
            return
        client.transact_write_items(TransactItems=[{"Delete": {"TableName": table, "Key": where, **self.own_item()}}
                                                   for where in (self.table.typed(key), old)])

    def current(self, client: Any, table: str, where: _Item, names: Sequence[str] | None) -> dict[str, Any]:
        """The values of the item under the key `where` now (only `names`, when given), read strongly consistent."""
        read = {} if names is None else _projection([*names, ENTITY_ATTRIBUTE])
        row = client.get_item(TableName=table, Key=where, ConsistentRead=True, **read).get("Item")
        if row is None or row.get(ENTITY_ATTRIBUTE, {}).get("S") not in (self.name, self.former):
            raise ItemNotFound(f"no {self.name} under {where}")
        return self.values(row, names)

    def update(self, client: Any, table: str, key: Mapping[str, Any], changes: Mapping[str, Any]) -> None:
        """Change attributes (None removes one). Index keys made of a changed attribute are rewritten (the others
        they need are read first); a changed table key moves the item: a delete and a put in one transaction. Either
        holds only if what was read is unchanged (else DynamoDB refuses: read again). An item still under its old
        key moves to the new one."""
        if not changes:
            return
        # Only the table key's attributes of `key`: a whole item may be passed as the key, its other values stale.
        key = {attribute: key[attribute] for attribute in self.table.attributes if attribute in key}
        old = self.old_key(key)
        try:
            if self.table.typed({**key, **changes}) != self.table.typed(key):
                self.move(client, table, self.table.typed(key), changes)
            else:
                self.update_in_place(client, table, key, changes)
        except ItemNotFound:
            if old is None:
                raise
            self.move(client, table, old, changes)

    def move(self, client: Any, table: str, where: _Item, changes: Mapping[str, Any]) -> None:
        """Move the item under the key `where` to the key its values with `changes` make, in one transaction."""
        expression = _Expression(self)
        current = self.current(client, table, where, None)
        expression.unchanged(current, sorted(self.read))
        client.transact_write_items(TransactItems=[
            {"Delete": {"TableName": table, "Key": where, **expression.condition()}},
            {"Put": {"TableName": table, "Item": self.item({**current, **changes}),
                     "ConditionExpression": "attribute_not_exists(#pk)",
                     "ExpressionAttributeNames": {"#pk": self.table.names[0]}}}])

    def update_in_place(self, client: Any, table: str, key: Mapping[str, Any], changes: Mapping[str, Any]) -> None:
        expression = _Expression(self)
        affected = [keys for keys in self.indexes if set(keys.attributes) & set(changes)]
        needed = sorted({a for keys in affected for a in keys.attributes} - set(changes) - set(key))
        current = self.current(client, table, self.table.typed(key), needed) if needed else {}
        values = {**key, **current, **changes}
        sets = [expression.assign(a, self.stored[a](v)) for a, v in sorted(changes.items()) if v is not None]
        sets += [expression.assign(ENTITY_ATTRIBUTE, {"S": self.name})] if self.former else []
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
        condition, self.values = entity.marker()
        self.conditions = [condition]

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
    """A read's item: the returned attributes of its entity (and the entity, when a read mixes several; an old item
    may carry the entity's former name)."""
    if len(entities) == 1:
        ((entity, names),) = entities.values()
        return entity.values(row, names)
    entity, names = entities[row[ENTITY_ATTRIBUTE]["S"]]
    return {ENTITY_ATTRIBUTE: entity.name, **entity.values(row, names)}


# --- generated from the blueprint ---
