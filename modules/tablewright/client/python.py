"""The generated Python module: entity types, key builders, writes and one method per access pattern.

It needs boto3's DynamoDB client and the standard library, nothing else, and passes `mypy --strict`.
"""

from __future__ import annotations

import builtins
import json
import keyword
import pprint
import re
from pathlib import Path
from typing import Any

from tablewright.client.model import TABLE_PLACEHOLDER, Argument, Client, Entity, Field, KeyWrite, Part, Read
from tablewright.client.names import class_name, snake
from tablewright.design.design import ENTITY_ATTRIBUTE, NOW, TABLE
from tablewright.design.locked import DESIGN_TAG

# The runtime in two parts, its values and its requests; the second's own imports (for the type checker) dropped.
_REQUESTS = (Path(__file__).parent / "python_runtime_requests.py").read_text()
RUNTIME = (Path(__file__).parent / "python_runtime.py").read_text() + "\n\n" + \
    _REQUESTS.split("# --- end of the type checker's import ---\n", 1)[1].lstrip("\n")
# What the module's top level defines: the runtime's names and what it imports.
MODULE_NAMES = set(re.findall(r"^(?:class |def |import )?([A-Za-z_]\w*)", RUNTIME, re.MULTILINE)) | set(
    re.findall(r"^from \S+ import (.+?)(?:  #.*)?$", RUNTIME, re.MULTILINE)[-1].split(", ")) | {
    "Callable", "Mapping", "Sequence", "dataclass", "UTC", "date", "datetime", "Decimal",
    "DESIGN_DIGEST", "DESIGN_TAG", "TABLE_NAMES"}
# Names a parameter or a method would hide when taken as they are: a parameter `cast` hides `cast()` in the
# method's body, a method `str` hides the type `str` in the annotations of the methods after it.
SHADOWED = set(keyword.kwlist) | MODULE_NAMES | {"self", "limit", "start", "as_of", "str", "int", "float", "bool",
                                                  "bytes", "set", "dict", "list", "tuple"}
# Names a module-level definition (an entity's type) may not take.
RESERVED = SHADOWED | set(dir(builtins))


def identifier(name: str) -> str:
    """A blueprint name as a Python parameter or method: a keyword or a name the generated code uses gets a
    trailing underscore (`from_`, `str_`)."""
    return name + "_" if name in SHADOWED else name


def value_type(field: Field) -> str:
    if field.values:
        return "Literal[" + ", ".join(json.dumps(v) for v in field.values) + "]"
    return {"string": "str", "number": "Number", "timestamp": "datetime", "date": "date", "boolean": "bool",
            "map": "dict[str, Any]", "list": "list[Any]", "string_set": "set[str]", "number_set": "set[Number]",
            "binary": "bytes"}[field.type]


def key_text(field: Field, value: str) -> str:
    """The expression for `value`'s text inside a key."""
    if field.type == "number":
        return f"_padded({value}, {field.width})" if field.width else f"_number({value})"
    if field.type == "timestamp":
        return f"_timestamp({value}, {json.dumps(field.timestamp_format)})"
    if field.type == "date":
        return f"_day({value})"
    if field.type == "boolean":
        return f'("true" if {value} else "false")'
    return f"_text({value})"


def stored(field: Field, value: str) -> str:
    """The expression for `value` as a DynamoDB attribute value."""
    if field.epoch:
        return f'{{"N": str(_epoch({value}, {field.timestamp_format == "epoch_millis"}))}}'
    return {
        "string": f'{{"S": {value}}}', "number": f'{{"N": _number({value})}}', "boolean": f'{{"BOOL": {value}}}',
        "timestamp": f'{{"S": _timestamp({value}, {json.dumps(field.timestamp_format)})}}',
        "date": f'{{"S": _day({value})}}', "map": f"_document({value})", "list": f"_document({value})",
        "string_set": f'{{"SS": sorted({value})}}', "number_set": f'{{"NS": sorted(_number(n) for n in {value})}}',
        "binary": f'{{"B": bytes({value})}}',
    }[field.type]


def stored_text(field: Field, value: str) -> str:
    """The text of a filter value as the attribute is stored (it goes into the request's typed value)."""
    if field.epoch:
        return f'str(_epoch({value}, {field.timestamp_format == "epoch_millis"}))'
    if field.type in ("timestamp", "date", "number", "boolean"):
        return key_text(Field(field.name, field.type, (), False, None, field.timestamp_format), value)
    return value


def reader(field: Field) -> str:
    """A function from the DynamoDB attribute value to the value."""
    if field.type == "timestamp":
        return f"lambda v: _read_timestamp(v, {json.dumps(field.timestamp_format)})"
    return {
        "string": 'lambda v: v["S"]', "number": 'lambda v: _read_number(v["N"])', "boolean": 'lambda v: v["BOOL"]',
        "date": 'lambda v: date.fromisoformat(v["S"])', "map": "_read_document", "list": "_read_document",
        "string_set": 'lambda v: set(v["SS"])', "number_set": 'lambda v: {_read_number(n) for n in v["NS"]}',
        "binary": 'lambda v: bytes(v["B"])',
    }[field.type]


def _typed_dict(name: str, fields: list[tuple[str, str, bool]], total: bool = True) -> str:
    """`Name = TypedDict("Name", {...})` (the functional form: attribute names need not be identifiers)."""
    lines = [f'{name} = TypedDict("{name}", {{']
    for field, kind, optional in fields:
        lines.append(f"    {json.dumps(field)}: {f'NotRequired[{kind}]' if optional else kind},")
    return "\n".join(lines) + "\n}" + ("" if total else ", total=False") + ")\n"


def _joined(texts: list[str]) -> str:
    return texts[0].strip() if len(texts) == 1 else '"#".join([' + ", ".join(t.strip() for t in texts) + "])"


def _template(parts: tuple[Part, ...], entity: Entity) -> list[str]:
    texts = []
    for part in parts:
        if part.literal is not None:
            texts.append(json.dumps(part.literal))
        elif part.shards:
            continue
        elif part.bucket:
            texts.append(f"_bucket({identifier(str(part.attribute))}, {json.dumps(part.bucket)})")
        else:
            texts.append(key_text(entity.field(str(part.attribute)), identifier(str(part.attribute))))
    return texts


def key_builder_name(entity: Entity, key: KeyWrite) -> str:
    return f"{snake(entity.name)}_{'table' if key.index == TABLE else snake(key.index)}_key"


def _key_builder(entity: Entity, key: KeyWrite) -> str:
    parameters = ", ".join(f"{identifier(a)}: {value_type(entity.field(a))}" for a in key.attributes)
    where = "the table" if key.index == TABLE else key.index
    lines = [f"def {key_builder_name(entity, key)}({parameters}) -> dict[str, str]:",
             f'    """{entity.name}\'s key on {where}: '
             + " / ".join("#".join(p.literal or "{" + (p.attribute or "_shard") + (f":{p.bucket}" if p.bucket else "")
                                   + "}" for p in t) for t in key.templates) + '."""']
    if key.sharded:
        texts = ", ".join(key_text(entity.field(a), identifier(a)) for a in key.shard_by)
        lines.append(f"    _shard_number = _shard([{texts}], {key.sharded})")
    rendered = []
    for name, parts in zip(key.names, key.templates, strict=True):
        text = _joined(_template(parts, entity) + (["_shard_number"] if any(p.shards for p in parts) else []))
        rendered.append(f"{json.dumps(name)}: {text}")
    lines.append("    return {" + ", ".join(rendered) + "}")
    return "\n".join(lines) + "\n"


def _entity_spec(entity: Entity) -> str:
    def keys(key: KeyWrite) -> str:
        arguments = ", ".join(f"v[{json.dumps(a)}]" for a in key.attributes)
        return (f"_Keys({tuple(key.names)!r}, {tuple(key.attributes)!r},\n"
                f"              lambda v: {key_builder_name(entity, key)}({arguments}), {entity.sparse(key)})")
    lines = [f"{entity_constant(entity.name)} = _Entity(", f"    {json.dumps(entity.name)},", "    stored={"]
    lines += [f"        {json.dumps(f.name)}: lambda v: {stored(f, 'v')}," for f in entity.fields]
    lines += ["    },", "    read={"]
    lines += [f"        {json.dumps(f.name)}: {reader(f)}," for f in entity.fields]
    lines += ["    },", f"    table={keys(entity.table_key)},",
              "    indexes=(" + "".join(keys(k) + ", " for k in entity.keys[1:]).rstrip(" ") + "),", ")"]
    return "\n".join(lines) + "\n"


def entity_constant(entity: str) -> str:
    return f"_{snake(entity).upper()}"


def item_type(read: Read) -> str:
    return class_name(read.pattern) + "Item"


def _read_types(client: Client, read: Read) -> str:
    if len(read.entities) == 1:
        ((entity, names),) = read.returns
        fields = [(n, value_type(client.entity(entity).field(n)), client.entity(entity).field(n).optional)
                  for n in names]
        return _typed_dict(item_type(read), fields)
    text, members = "", []
    for entity, names in read.returns:
        member = class_name(read.pattern) + entity
        members.append(member)
        fields = [(ENTITY_ATTRIBUTE, f"Literal[{json.dumps(entity)}]", False)]
        fields += [(n, value_type(client.entity(entity).field(n)), client.entity(entity).field(n).optional)
                   for n in names]
        text += _typed_dict(member, fields)
    return text + f"{item_type(read)} = {' | '.join(members)}\n"


def _argument_type(argument: Argument) -> str:
    kind = value_type(argument.field)
    if argument.field.type == "string" and not argument.field.values:
        kind = "str"
    return f"tuple[{kind}, {kind}]" if argument.between else kind


def _encoded(argument: Argument) -> list[str]:
    encode = key_text if argument.role == "key" else stored_text
    name = identifier(argument.attribute)
    if argument.between:
        return [f"{json.dumps(argument.attribute + '.from')}: {encode(argument.field, name + '[0]')}",
                f"{json.dumps(argument.attribute + '.to')}: {encode(argument.field, name + '[1]')}"]
    return [f"{json.dumps(argument.attribute)}: {encode(argument.field, name)}"]


def request_name(read: Read) -> str:
    return f"_{read.pattern.upper()}_REQUEST"


def _batch_method(client: Client, read: Read) -> str:
    """A batch get: one key per item, each encoded as the single read's arguments are."""
    entity = read.entities[0]
    spec = f"{{{json.dumps(entity)}: ({entity_constant(entity)}, {read.returns[0][1]!r})}}"
    doc = (read.description + " " if read.description else "") + f"On the table: {read.summary}. " \
        "Items come in the order of `keys`, each key once, keys without an item left out."
    locals_ = ", ".join(identifier(a.attribute) for a in read.arguments)
    taken = ", ".join(f"_key[{json.dumps(a.attribute)}]" for a in read.arguments)
    lines = [f"    def {identifier(read.pattern)}(self, keys: Sequence[{entity}Key]) -> list[{item_type(read)}]:",
             f'        """{_docstring(doc)}"""', "        _keys = []", "        for _key in keys:",
             f"            {locals_} = {taken}"]
    lines += ["    " + line for line in _values_lines(read)]
    lines += [f"            _keys.append(_bind({request_name(read)}[\"Keys\"][0], _values))",
              f"        _read = {{k: v for k, v in {request_name(read)}.items() if k != \"Keys\"}}",
              f"        _rows = _batch_get(self._client, self.table_name, _read, _keys, {read.table_keys!r})",
              f"        return [cast({item_type(read)}, _returned({spec}, _row)) for _row in _rows]"]
    return "\n".join(lines) + "\n"


def _values_lines(read: Read) -> list[str]:
    """`_values`: the request's placeholders from the method's arguments (time buckets, clock and shard too)."""
    encoded = [e for argument in read.arguments for e in _encoded(argument)]
    lines = [f'        _values = {{{", ".join([json.dumps(TABLE_PLACEHOLDER) + ": self.table_name", *encoded])}}}']
    for placeholder, attribute, unit in read.buckets:
        lines.append(f"        _values[{json.dumps(placeholder)}] = "
                     f"_bucket({identifier(attribute)}, {json.dumps(unit)})")
    if read.hides_expired:
        lines.append(f"        _values[{json.dumps(NOW)}] = _clock(as_of)")
    if read.shard is not None:
        shards, shard_by = read.shard
        lines.append('        _values["_shard"] = _shard([' + ", ".join(f"_values[{json.dumps(a)}]" for a in shard_by)
                     + f"], {shards})")
    return lines


def _read_method(client: Client, read: Read) -> str:
    if read.batch:
        return _batch_method(client, read)
    parameters = ["self"]
    if read.arguments:
        parameters.append("*")
    parameters += [f"{identifier(a.attribute)}: {_argument_type(a)}" for a in read.arguments]
    single = read.operation == "GetItem"
    if not single:
        parameters += [f"limit: int | None = {read.limit}"] + ([] if read.count else ["start: str | None = None"])
    if read.hides_expired:
        parameters.append("as_of: datetime | None = None")
    returned = "int" if read.count else f"{item_type(read)} | None" if single else f"Page[{item_type(read)}]"
    doc = (read.description + " " if read.description else "") + f"{read.operation} on " + \
        ("the table" if read.index == TABLE else read.index) + f": {read.summary}."
    lines = [f"    def {identifier(read.pattern)}({', '.join(parameters)}) -> {returned}:",
             f'        """{_docstring(doc)}"""']
    lines += _values_lines(read)
    spec = "{" + ", ".join(f"{json.dumps(e)}: ({entity_constant(e)}, {names!r})" for e, names in read.returns) + "}"
    if single:
        lines += [f"        _row = self._client.get_item(**_bind({request_name(read)}, _values)).get(\"Item\")",
                  "        if _row is None:", "            return None",
                  f"        return cast({item_type(read)}, _returned({spec}, _row))"]
        return "\n".join(lines) + "\n"
    lines.append(_bodies(read))
    if read.count:
        lines.append(f"        return _count(self._client, {json.dumps(read.operation)}, _bodies, limit)")
        return "\n".join(lines) + "\n"
    if read.fan_out is not None and read.fan_out.kind == "shards":
        lines.append(f"        _rows, _token = _read_merged(self._client, _bodies, limit, start, {read.page_keys!r}, "
                     f"{read.sort_key!r}, {read.descending})")
    else:
        lines.append(f"        _rows, _token = _read_in_order(self._client, {json.dumps(read.operation)}, _bodies, "
                     f"limit, start, {read.page_keys!r})")
    if read.follow_up:
        lines.append(f"        _rows = _fetch(self._client, self.table_name, _rows, {read.table_keys!r}, "
                     f"{read.follow_up!r})")
    lines.append(f"        return Page([cast({item_type(read)}, _returned({spec}, _row)) for _row in _rows], _token)")
    return "\n".join(lines) + "\n"


def _bodies(read: Read) -> str:
    """The read's requests: one, one per shard, or one per time bucket in the order they are read."""
    fan_out = read.fan_out
    if fan_out is None:
        return f"        _bodies = [_bind({request_name(read)}, _values)]"
    if fan_out.kind == "shards":
        return (f"        _bodies = [_bind({request_name(read)}, {{**_values, \"_shard\": _number}}) "
                f"for _number in _shards({fan_out.shards})]")
    name = identifier(fan_out.attribute)
    placeholder = json.dumps(f"{fan_out.attribute}:{fan_out.bucket}")
    order = "[::-1]" if read.descending else ""
    return (f"        _bodies = [_bind({request_name(read)}, {{**_values, {placeholder}: _bucket_name}}) "
            f"for _bucket_name in _buckets({name}[0], {name}[1], {json.dumps(fan_out.bucket)}){order}]")


def _docstring(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')


def _writes(entity: Entity) -> str:
    name, spec = snake(entity.name), entity_constant(entity.name)
    return (
        f"    def put_{name}(self, item: {entity.name}) -> None:\n"
        f'        """Writes one {entity.name} with every key it needs (never over another entity\'s item)."""\n'
        f"        _put(self._client, self.table_name, {spec}, item)\n\n"
        f"    def update_{name}(self, key: {entity.name}Key, changes: {entity.name}Changes) -> None:\n"
        f'        """Changes attributes of one {entity.name} (None removes an optional one); keys made of a changed\n'
        f'        attribute are rewritten, and a changed table key moves the item in one transaction."""\n'
        f"        _update(self._client, self.table_name, {spec}, key, changes)\n\n"
        f"    def delete_{name}(self, key: {entity.name}Key) -> None:\n"
        f'        """Deletes one {entity.name} (never another entity\'s item)."""\n'
        f"        _delete(self._client, self.table_name, {spec}, key)\n"
    )


def _header(client: Client) -> str:
    return (
        f'"""Data access for blueprint `{client.blueprint}` {client.version} ({client.source}).\n\n'
        "Generated by Tablewright (`tablewright client --lang python`): do not edit, regenerate it when the\n"
        f"blueprint changes. Design {client.digest}: `check_design()` compares it with the table's\n"
        f"`{DESIGN_TAG}` tag. The reads send the requests `tablewright explain` documents.\n"
        '"""\n\n'
    )


def render(client: Client) -> str:
    parts = [_header(client), RUNTIME,
             f"DESIGN_DIGEST = {json.dumps(client.digest)}\n",
             f"DESIGN_TAG = {json.dumps(DESIGN_TAG)}\n",
             "TABLE_NAMES: dict[str, str] = {" + ", ".join(f"{json.dumps(env)}: {json.dumps(name)}"
                                                          for env, name in client.tables) + "}\n\n"]
    for entity in client.entities:
        fields = [(f.name, value_type(f), f.optional) for f in entity.fields]
        parts.append("\n" + _typed_dict(entity.name, fields))
        parts.append(_typed_dict(f"{entity.name}Key", [(a, value_type(entity.field(a)), False)
                                                       for a in entity.table_key.attributes]))
        changes = [(f.name, value_type(f) + (" | None" if f.optional else ""), False) for f in entity.fields]
        parts.append(_typed_dict(f"{entity.name}Changes", changes, total=False))
        parts += ["\n\n" + _key_builder(entity, key) for key in entity.keys]
        parts.append("\n\n" + _entity_spec(entity))
    for read in client.reads:
        parts.append("\n" + _read_types(client, read))
        parts.append(f"{request_name(read)}: dict[str, Any] = {_literal(read.request)}\n")
    table_class = class_name(client.blueprint) + "Table"
    parts.append(
        f"\n\nclass {table_class}:\n"
        f'    """The `{client.blueprint}` table: `{table_class}(boto3.client("dynamodb"), TABLE_NAMES["prod"])`."""\n\n'
        "    def __init__(self, client: Any, table_name: str) -> None:\n"
        "        self._client = client\n"
        "        self.table_name = table_name\n\n"
        "    def check_design(self) -> None:\n"
        '        """Raises StaleDesign unless the table was deployed from the design this module was made for."""\n'
        "        _check_design(self._client, self.table_name, DESIGN_DIGEST, DESIGN_TAG)\n"
    )
    parts += ["\n" + _writes(entity) for entity in client.entities]
    parts += ["\n" + _read_method(client, read) for read in client.reads]
    return "".join(parts)


def _literal(value: Any) -> str:
    """A request as a Python literal, keys sorted."""
    return pprint.pformat(value, width=100, sort_dicts=True)


def names(client: Client) -> list[tuple[str, tuple[str, ...]]]:
    """Every name the module defines (`self.` for methods), with the blueprint field it comes from."""
    found: list[tuple[str, tuple[str, ...]]] = [(class_name(client.blueprint) + "Table", ("blueprint",))]
    for entity in client.entities:
        path = ("entities", entity.name)
        found += [(entity.name, path), (f"{entity.name}Key", path), (f"{entity.name}Changes", path),
                  (entity_constant(entity.name), path)]
        found += [(key_builder_name(entity, key), path) for key in entity.keys]
        found += [(f"{key_builder_name(entity, key)}({identifier(a)})", (*path, "attributes", a))
                  for key in entity.keys for a in key.attributes]
        found += [(f"self.{verb}_{snake(entity.name)}", path) for verb in ("put", "update", "delete")]
    for read in client.reads:
        path = ("access_patterns", read.pattern)
        found += [(item_type(read), path), (request_name(read), path), (f"self.{identifier(read.pattern)}", path)]
        found += [(f"{read.pattern}({identifier(a.attribute)})", (*path, "where", a.attribute))
                  for a in read.arguments]
        if len(read.entities) > 1:
            found += [(class_name(read.pattern) + entity, path) for entity in read.entities]
    return found
