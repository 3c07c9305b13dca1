"""What a generated module holds and what each of its functions and methods does, whatever the language: the
text each value takes inside a key or a request, the pieces of each key builder, the values a read binds into its
request, the requests it sends and how it pages them, the types it returns, its documentation, and the names the
module defines.

python.py and typescript.py each give a `Language`: the templates of the code (filled in with `str.format`) and
the few functions that write values and types; `render` walks the design once for both.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from tablewright.client.model import TABLE_PLACEHOLDER, Argument, Client, Entity, Field, KeyWrite, Part, Read
from tablewright.client.names import class_name, snake
from tablewright.design.design import ENTITY_ATTRIBUTE, NOW, TABLE
from tablewright.design.locked import DESIGN_TAG
from tablewright.text import escape_hidden

Name = tuple[str, tuple[str, ...]]  # a name the module defines, and the blueprint field it comes from


@dataclass(frozen=True)
class Call:
    """A value's text, made by a function of the runtime: `padded(value, 3)`, `timestamp(value, "iso8601")`.
    `boolean` writes "true" or "false", `epoch` the text of the seconds or milliseconds."""

    function: str
    arguments: tuple[str | int | bool, ...] = ()


def key_text(field: Field) -> Call:
    """How a value is written inside a key."""
    if field.type == "number":
        return Call("padded", (field.width,)) if field.width else Call("number")
    if field.type == "timestamp":
        return Call("timestamp", (field.timestamp_format,))
    return Call({"date": "day", "boolean": "boolean"}.get(field.type, "text"))


def stored_text(field: Field) -> Call | None:
    """How a filter value is written: as the attribute is stored (None: as it is)."""
    if field.epoch:
        return Call("epoch", (field.timestamp_format == "epoch_millis",))
    if field.type in ("timestamp", "date", "number", "boolean"):
        return key_text(replace(field, values=(), width=None))
    return None


@dataclass(frozen=True)
class Naming:
    """A language's names for what the module defines."""

    entity_constant: Callable[[str], str]  # the runtime's description of an entity
    key_builder: Callable[[Entity, KeyWrite], str]
    write: Callable[[str, str], str]  # a write method: verb, entity
    read: Callable[[str], str]  # a read method, from the pattern's name
    request: Callable[[str], str]  # a read's request template, from the pattern's name
    parameter: Callable[[str], str] | None  # a parameter's name, when it may differ from the attribute's
    this: str  # what a method is named by, outside the class: `self.`, `this.`


@dataclass(frozen=True)
class Language:
    """How one language writes the module. Templates are filled in with `str.format`: `{0}`, `{1}` positional,
    the others named (see `render` and the functions it calls for each one's fields)."""

    naming: Naming
    templates: Mapping[str, str]
    runtime: str  # the module's runtime, the same in every module
    value_type: Callable[[Field], str]
    stored: Callable[[Field, str], str]  # an attribute's value as the runtime stores it, from `v`
    reader: Callable[[Field], str]  # a function from the stored value to the attribute's value
    constant: Callable[[Any], str]  # a constant (text, a number, a boolean, None, a tuple of text)
    literal: Callable[[Any], str]  # a request template
    key_value: Callable[[str], str]  # an attribute's value inside a key builder
    argument: Callable[[str], str]  # an argument's value inside a read method
    comment: Callable[[str], str]  # text made safe inside a docstring or doc comment

    def call(self, call: Call | None, value: str) -> str:
        """`call` applied to the expression `value`."""
        if call is None:
            return value
        arguments = [self.constant(argument) for argument in call.arguments]
        if call.function in ("boolean", "epoch"):
            return self.templates[call.function].format(value, *arguments)
        return self.templates["call"].format(call.function, ", ".join([value, *arguments]))

    def joined(self, texts: list[str]) -> str:
        """Key texts joined by '#' (one stands alone)."""
        return texts[0] if len(texts) == 1 else self.templates["join"].format(", ".join(texts))


def render(client: Client, language: Language) -> str:
    """The module: header, runtime, constants; each entity's types, key builders and description; each read's types
    and request template; the table class with the writes of every entity and one method per access pattern."""
    t = language.templates
    tables = ", ".join(f"{json.dumps(env)}: {json.dumps(name)}" for env, name in client.tables)
    source = language.comment(escape_hidden(client.source, keep=""))  # a path, on one line of the header comment
    parts = [t["header"].format(blueprint=client.blueprint, version=client.version, source=source,
                                digest=client.digest, tag=DESIGN_TAG),
             language.runtime, t["constants"].format(digest=json.dumps(client.digest), tag=json.dumps(DESIGN_TAG),
                                                     tables=tables)]
    for entity in client.entities:
        parts.append("\n" + entity_types(language, entity))
        parts += [t["gap"] + key_builder(language, entity, key) for key in entity_keys(entity)]
        parts.append(t["gap"] + entity_spec(language, entity))
    for read in client.reads:
        parts.append("\n" + read_types(language, client, read))
        parts.append(t["request"].format(name=language.naming.request(read.pattern),
                                         literal=language.literal(read.request)))
        if read.before is not None:
            parts.append(t["request"].format(name=before_request(language, read),
                                             literal=language.literal(read.before.request)))
    parts.append(t["table"].format(blueprint=client.blueprint, name=class_name(client.blueprint) + "Table"))
    parts += ["\n" + t["writes"].format(entity=entity.name, constant=language.naming.entity_constant(entity.name),
                                        requests=t["doc_line"].join(map(language.comment, update_requests(entity))),
                                        **{verb: language.naming.write(verb, entity.name)
                                           for verb in ("put", "update", "delete")})
              for entity in client.entities]
    parts += ["\n" + read_method(language, read) for read in client.reads]
    parts.append(t["end"])
    return "".join(parts)


def update_requests(entity: Entity) -> list[str]:
    """The requests an update sends, as its doc says them (capacity/requests.py counts the same)."""
    table = entity.table_key.attributes
    lines = [f"Sends one UpdateItem. A change of {', '.join(table)} (the table key) reads the item (a strongly",
             "consistent GetItem) and moves it: its delete and put in one TransactWriteItems."]
    for key in entity.keys[1:]:
        rest = [a for a in key.attributes if a not in table]  # the table key's attributes are always in `key`
        if len(rest) > 1:
            lines.append(f"Changing some of {', '.join(rest)} ({key.index}'s key) reads the others first (a "
                         "strongly consistent")
            lines.append("GetItem): pass all of them, the unchanged ones as they are, to send the UpdateItem alone.")
    return lines


def _type(language: Language, template: str, name: str, fields: list[tuple[str, str, bool]]) -> str:
    t = language.templates
    lines = "".join(t["optional" if optional else "field"].format(attribute=json.dumps(attribute), kind=kind)
                    for attribute, kind, optional in fields)
    return t[template].format(name=name, fields=lines)


def entity_types(language: Language, entity: Entity) -> str:
    """An entity's type, the type of its table key, and that of its changes (any of its attributes)."""
    value_type = language.value_type
    return (_type(language, "type", entity.name, [(f.name, value_type(f), f.optional) for f in entity.fields])
            + _type(language, "type", f"{entity.name}Key", [(a, value_type(entity.field(a)), False)
                                                              for a in entity.table_key.attributes])
            + _type(language, "changes", f"{entity.name}Changes", [
                (f.name, language.templates["nullable"].format(value_type(f)) if f.optional else value_type(f), False)
                for f in entity.fields]))


def read_types(language: Language, client: Client, read: Read) -> str:
    """The type of a read's items: one entity's returned attributes, or a union of one type per entity (each with
    the entity marker)."""
    def fields(entity: str, names: tuple[str, ...]) -> list[tuple[str, str, bool]]:
        own = client.entity(entity)
        return [(name, language.value_type(own.field(name)), own.field(name).optional or own.field(name).lacking)
                for name in names]
    item = item_type(read)
    if len(read.entities) == 1:
        ((entity, names),) = read.returns
        return _type(language, "type", item, fields(entity, names))
    marker = language.templates["entity_literal"]
    members = [(class_name(read.pattern) + entity, [(ENTITY_ATTRIBUTE, marker.format(json.dumps(entity)), False),
                                                    *fields(entity, names)]) for entity, names in read.returns]
    return "".join(_type(language, "type", name, fields) for name, fields in members) + \
        language.templates["union"].format(name=item, members=" | ".join(name for name, _ in members))


def item_type(read: Read) -> str:
    return class_name(read.pattern) + "Item"


# -- key builders and entities -------------------------------------------------------------------------------


def key_summary(entity: Entity, key: KeyWrite) -> str:
    """`Order's key on GSI1: ORDER#{userId} / {orderedAt}`."""
    where = "the table" if key.index == TABLE else key.index
    templates = " / ".join("#".join(p.literal or "{" + (p.attribute or "_shard") + (f":{p.bucket}" if p.bucket else "")
                                    + "}" for p in template) for template in key.templates)
    return f"{entity.name}'s key on {where}: {templates}"


def key_builder_words(entity: Entity, key: KeyWrite) -> str:
    """The key builder's name, in words: `order_gsi1_key`, `order_table_key_before` (the key old items carry)."""
    return f"{snake(entity.name)}_{'table' if key.index == TABLE else snake(key.index)}_key" + \
        ("_before" if key.before else "")


def entity_keys(entity: Entity) -> tuple[KeyWrite, ...]:
    """The keys an entity's key builders make: the table's, each index's, and the table key old items carry."""
    return entity.keys + ((entity.moved,) if entity.moved else ())


def before_request(language: Language, read: Read) -> str:
    """The name of a read's request of the keys old items carry."""
    return language.naming.request(read.pattern) + "_BEFORE"


def _piece(language: Language, entity: Entity, part: Part) -> str:
    if part.literal is not None:
        return json.dumps(part.literal)
    if part.shards:
        return language.templates["shard_number"]
    value = language.key_value(str(part.attribute))
    if part.bucket:
        return language.call(Call("bucket", (part.bucket,)), value)
    return language.call(key_text(entity.field(str(part.attribute))), value)


def key_builder(language: Language, entity: Entity, key: KeyWrite) -> str:
    """A function of the attributes a key is made of: each key attribute's text (the shard's, when sharded, first)."""
    t = language.templates
    parameters = [t["parameter"].format(name=language.key_value(a), attribute=json.dumps(a),
                                        kind=language.value_type(entity.field(a))) for a in key.attributes]
    shard = ""
    if key.sharded:
        texts = ", ".join(language.call(key_text(entity.field(a)), language.key_value(a)) for a in key.shard_by)
        shard = t["shard"].format(texts=texts, shards=key.sharded)
    keys = [f"{json.dumps(name)}: {language.joined([_piece(language, entity, part) for part in parts])}"
            for name, parts in zip(key.names, key.templates, strict=True)]
    return t["key_builder"].format(name=language.naming.key_builder(entity, key), summary=key_summary(entity, key),
                                   parameters=t["parameters"].join(parameters), shard=shard, keys=", ".join(keys))


def entity_spec(language: Language, entity: Entity) -> str:
    """The runtime's description of an entity: how each attribute is stored and read, and how its keys are built."""
    t, constant = language.templates, language.constant
    def keys(key: KeyWrite) -> str:
        return t["keys"].format(names=constant(tuple(key.names)), attributes=constant(tuple(key.attributes)),
                                builder=language.naming.key_builder(entity, key), sparse=constant(entity.sparse(key)),
                                arguments=", ".join(f"v[{json.dumps(a)}]" for a in key.attributes))
    indexes = ", ".join(keys(key) for key in entity.keys[1:])
    return t["entity"].format(
        constant=language.naming.entity_constant(entity.name), entity=json.dumps(entity.name),
        stored="".join(t["stored"].format(attribute=json.dumps(f.name), kind=language.value_type(f),
                                          stored=language.stored(f, "v")) for f in entity.fields),
        read="".join(t["read"].format(attribute=json.dumps(f.name), reader=language.reader(f)) for f in entity.fields),
        table=keys(entity.table_key), indexes=t["indexes"].format(indexes) if indexes else "",
        formers=t["formers"].format(constant(dict(entity.formers))) if entity.formers else "",
        former=t["former"].format(constant(entity.former)) if entity.former else "",
        moved=t["moved"].format(keys(entity.moved)) if entity.moved else "")


# -- reads ---------------------------------------------------------------------------------------------------


def read_summary(read: Read) -> str:
    """What a read method's documentation says."""
    own = read.description + " " if read.description else ""
    if read.batch:
        return own + f"On the table: {read.summary}. Items come in the order of `keys`, each key once, keys " \
            "without an item left out."
    moving = f" While a migration moves the items, it reads the keys old items carry too: {read.before.summary}." \
        if read.before else ""
    return own + f"{read.operation} on {'the table' if read.index == TABLE else read.index}: {read.summary}." + moving


def argument_type(language: Language, argument: Argument) -> str:
    """An argument's type: its value's (any text for a string without `values`), a pair of them for a `between`."""
    field = argument.field
    kind = language.templates["string"] if field.type == "string" and not field.values else language.value_type(field)
    return language.templates["between"].format(kind) if argument.between else kind


def _encoded(language: Language, argument: Argument) -> list[str]:
    encode = key_text(argument.field) if argument.role == "key" else stored_text(argument.field)
    value = language.argument(argument.attribute)
    if not argument.between:
        return [f"{json.dumps(argument.attribute)}: {language.call(encode, value)}"]
    bound = language.templates["bound"]
    return [f"{json.dumps(f'{argument.attribute}.{end}')}: {language.call(encode, bound.format(value, n, end))}"
            for n, end in enumerate(("from", "to"))]


def bound_values(language: Language, read: Read, indent: str) -> str:
    """The statements that bind a read's placeholders, from the method's arguments: the table's name and each
    argument's text, then each value computed from those (time buckets, the clock, the shard)."""
    t = language.templates
    entries = [f"{json.dumps(TABLE_PLACEHOLDER)}: {t['table_name']}"]
    entries += [entry for argument in read.arguments for entry in _encoded(language, argument)]
    computed = [(placeholder, language.call(Call("bucket", (unit,)), language.argument(attribute)))
                for placeholder, attribute, unit in read.buckets]
    if read.hides_expired:
        computed.append((NOW, t["clock"]))
    if read.shard is not None:
        shards, shard_by = read.shard
        hashed = ", ".join(t["bound_value"].format(json.dumps(a)) for a in shard_by)
        computed.append(("_shard", t["call"].format("shard", f"[{hashed}], {shards}")))
    return "".join([t["values"].format(indent=indent, entries=", ".join(entries))] + [
        t["value"].format(indent=indent, placeholder=json.dumps(placeholder), value=value)
        for placeholder, value in computed])


def _bodies(language: Language, read: Read, request: str, bodies: str = "bodies") -> str:
    """The read's requests: one, one per shard, or one per time bucket in the order they are read; then those of
    the keys old items carry, while a migration moves them (`bodies`: the name of the list)."""
    t, fan_out = language.templates, read.fan_out
    name = t[bodies + "_name"]
    if read.before is not None:
        return _bodies(language, replace(read, before=None), request) + "\n" + _bodies(
            language, read.before, before_request(language, read), "before") + t["more_bodies"]
    if fan_out is None:
        return t["bodies"].format(request=request, bodies=name)
    if fan_out.kind == "shards":
        return t["bodies_by_shard"].format(request=request, shards=fan_out.shards, bodies=name)
    bounds = language.argument(str(fan_out.attribute))
    return t["bodies_by_bucket"].format(
        bodies=name, request=request, placeholder=json.dumps(f"{fan_out.attribute}:{fan_out.bucket}"),
        unit=json.dumps(fan_out.bucket), start=t["bound"].format(bounds, 0, "from"),
        end=t["bound"].format(bounds, 1, "to"), order=t["reversed"] if read.descending else "")


def _merged(read: Read) -> bool:
    """Whether a page's requests are merged in sort-key order: one per shard, or those of the new keys and of the
    old ones while a migration moves the items (else they are read one after another)."""
    if read.fan_out is not None:
        return read.fan_out.kind == "shards"
    return read.before is not None and read.sort_key is not None and (
        read.before.fan_out is None or read.before.fan_out.kind == "shards")


def _returned(language: Language, read: Read) -> str:
    """The entities a read's items are of, with the attributes returned of each (under an entity's old name too,
    which its old items carry while a rename is migrated, when a read mixes several)."""
    t = language.templates
    names = dict(read.returns)
    aliases = read.renamed if len(read.returns) > 1 else ()
    return t["returned"].format(", ".join(t["returns"].format(
        entity=json.dumps(marker), constant=language.naming.entity_constant(entity), names=language.constant(
            names[entity])) for marker, entity in [*((e, e) for e, _ in read.returns), *aliases]))


def _kind(read: Read) -> str:
    """What a read method returns: one item (`get`), a page, how many (`count`), or a batch's items."""
    if read.batch:
        return "batch"
    return "get" if read.operation == "GetItem" else "count" if read.count else "page"


def _signature(language: Language, read: Read, kind: str) -> str:
    """A read method's parameters (its arguments; a page's size and token; the time expiry is judged at) and what
    it returns."""
    t = language.templates
    if kind == "batch":
        parameters = [t["self"], t["batch_keys"].format(entity=read.entities[0])]
    else:
        arguments = t["parameters"].join(t["argument"].format(
            name=language.argument(a.attribute), attribute=json.dumps(a.attribute), kind=argument_type(language, a))
            for a in read.arguments)
        parameters = [t["self"], t["arguments"].format(arguments) if arguments else "",
                      t["options_" + kind].format(limit=language.constant(read.limit)),
                      t["as_of"] if read.hides_expired else ""]
    return t["signature"].format(parameters=", ".join(p for p in parameters if p),
                                 returns=t["returns_" + kind].format(item=item_type(read)))


def read_method(language: Language, read: Read) -> str:
    """One access pattern's method: it binds its values, sends the requests, pages them, and returns its items
    (one, a page, all of a batch's, or how many)."""
    t, constant, kind = language.templates, language.constant, _kind(read)
    request = language.naming.request(read.pattern)
    fields = {
        "name": language.naming.read(read.pattern), "doc": language.comment(read_summary(read)),
        "signature": _signature(language, read, kind), "request": request, "item": item_type(read),
        "operation": json.dumps(read.operation), "limit": constant(read.limit),
        "values": bound_values(language, read, t["indent"]), "batch_values": bound_values(language, read, t["inner"]),
        "page_keys": constant(read.page_keys), "sort_key": constant(read.sort_key),
        "descending": constant(read.descending), "table_keys": constant(read.table_keys),
        "follow_up": constant(read.follow_up), "declare": t["replaced" if read.follow_up else "kept"],
        "keys": ", ".join(language.argument(a.attribute) for a in read.arguments),
        "taken": ", ".join(t["batch_key"].format(json.dumps(a.attribute)) for a in read.arguments),
        "returned": _returned(language, read),
        "bodies": _bodies(language, read, request),
        "before": t["bound_request"].format(before_request(language, read)) if read.before else constant(None),
        "before_request": before_request(language, read) if read.before else constant(None)}
    merged = _merged(read)
    steps = {"batch": ["batch"], "get": ["bind", "get"], "count": ["bind", "requests", "count"],
             "page": ["bind", "requests", "merged" if merged else "in_order",
                      *(["follow_up"] if read.follow_up else []), "page"]}[kind]
    return "".join(t[step].format(**fields) for step in ["method", *steps])


# -- names ---------------------------------------------------------------------------------------------------


def names(client: Client, naming: Naming) -> list[Name]:
    """Every name the module defines (methods as `self.x` or `this.x`), with the blueprint field it comes from."""
    found: list[Name] = [(class_name(client.blueprint) + "Table", ("blueprint",))]
    for entity in client.entities:
        path = ("entities", entity.name)
        found += [(name, path) for name in (entity.name, f"{entity.name}Key", f"{entity.name}Changes",
                                            naming.entity_constant(entity.name))]
        found += [(naming.key_builder(entity, key), path) for key in entity_keys(entity)]
        if naming.parameter is not None:
            found += [(f"{naming.key_builder(entity, key)}({naming.parameter(a)})", (*path, "attributes", a))
                      for key in entity_keys(entity) for a in key.attributes]
        found += [(naming.this + naming.write(verb, entity.name), path) for verb in ("put", "update", "delete")]
    for read in client.reads:
        path = ("access_patterns", read.pattern)
        found += [(item_type(read), path), (naming.request(read.pattern), path),
                  (naming.this + naming.read(read.pattern), path)]
        found += [(naming.request(read.pattern) + "_BEFORE", path)] if read.before else []
        if naming.parameter is not None:
            found += [(f"{read.pattern}({naming.parameter(a.attribute)})", (*path, "where", a.attribute))
                      for a in read.arguments]
        if len(read.entities) > 1:
            found += [(class_name(read.pattern) + entity, path) for entity in read.entities]
    return found
