"""The generated TypeScript module: the Python module's counterpart for the AWS SDK v3 document client
(`@aws-sdk/lib-dynamodb`), passing `tsc --strict`."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from tablewright.client.model import TABLE_PLACEHOLDER, Argument, Client, Entity, Field, KeyWrite, Part, Read
from tablewright.client.names import camel, class_name, snake
from tablewright.design.design import ENTITY_ATTRIBUTE, NOW, TABLE
from tablewright.design.locked import DESIGN_TAG

RUNTIME = (Path(__file__).parent / "typescript_runtime.ts").read_text()
RESERVED = set(re.findall(r"^(?:export )?(?:async )?(?:function|class|interface|type|const) ([A-Za-z_]\w*)", RUNTIME,
                          re.MULTILINE)) | set(re.findall(r"^  (\w+),$", RUNTIME, re.MULTILINE)) | {
    "createHash", "DescribeTableCommand", "ListTagsOfResourceCommand", "DESIGN_DIGEST", "DESIGN_TAG", "TABLE_NAMES",
    "this.checkDesign", "this.tableName", "this.client", "this.constructor"} | {
    # JavaScript's and TypeScript's global names: an interface of the same name would hide the global type.
    "Array", "ArrayLike", "Awaited", "BigInt", "Boolean", "Buffer", "Date", "Error", "Exclude", "Extract",
    "Function", "Infinity", "Iterable", "JSON", "Map", "Math", "NaN", "NonNullable", "Number", "Object", "Omit",
    "Parameters", "Partial", "Pick", "Promise", "PromiseLike", "RangeError", "Readonly", "ReadonlyArray", "Record",
    "RegExp", "Required", "ReturnType", "Set", "String", "Symbol", "TypeError", "Uint8Array", "WeakMap", "WeakSet"}


def value_type(field: Field) -> str:
    if field.values:
        return " | ".join(json.dumps(v) for v in field.values)
    return {"string": "string", "number": "number", "timestamp": "Date", "date": "string", "boolean": "boolean",
            "map": "Record<string, unknown>", "list": "unknown[]", "string_set": "Set<string>",
            "number_set": "Set<number>", "binary": "Uint8Array"}[field.type]


def key_text(field: Field, value: str) -> str:
    if field.type == "number":
        return f"padded({value}, {field.width})" if field.width else f"number({value})"
    if field.type == "timestamp":
        return f"timestamp({value}, {json.dumps(field.timestamp_format)})"
    if field.type == "date":
        return f"day({value})"
    if field.type == "boolean":
        return f'({value} ? "true" : "false")'
    return f"text({value})"


def stored(field: Field, value: str) -> str:
    """The expression for `value` as the document client stores it."""
    if field.epoch:
        return f"epoch({value}, {str(field.timestamp_format == 'epoch_millis').lower()})"
    if field.type == "timestamp":
        return f"timestamp({value}, {json.dumps(field.timestamp_format)})"
    if field.type == "date":
        return f"day({value})"
    return value


def stored_text(field: Field, value: str) -> str:
    """The text of a filter value as the attribute is stored (the request template's typed value)."""
    if field.epoch:
        return f"String({stored(field, value)})"
    if field.type in ("timestamp", "date", "number", "boolean"):
        return key_text(Field(field.name, field.type, (), False, None, field.timestamp_format), value)
    return value


def reader(field: Field) -> str:
    if field.type == "timestamp":
        return f"(v: unknown) => readTimestamp(v, {json.dumps(field.timestamp_format)})"
    return f"(v: {value_type(field)}) => v"


def _property(name: str, kind: str, optional: bool) -> str:
    return f"  {json.dumps(name)}{'?' if optional else ''}: {kind};"


def _interface(name: str, fields: list[tuple[str, str, bool]]) -> str:
    return f"export interface {name} {{\n" + "".join(_property(*f) + "\n" for f in fields) + "}\n"


def _access(name: str) -> str:
    return f"v[{json.dumps(name)}]"


def _template(parts: tuple[Part, ...], entity: Entity) -> list[str]:
    texts = []
    for part in parts:
        if part.literal is not None:
            texts.append(json.dumps(part.literal))
        elif part.shards:
            texts.append("shardNumber")
        elif part.bucket:
            texts.append(f"bucket({_access(str(part.attribute))}, {json.dumps(part.bucket)})")
        else:
            texts.append(key_text(entity.field(str(part.attribute)), _access(str(part.attribute))))
    return texts


def key_builder_name(entity: Entity, key: KeyWrite) -> str:
    return camel(f"{entity.name}_{'table' if key.index == TABLE else snake(key.index)}_key")


def _key_builder(entity: Entity, key: KeyWrite) -> str:
    argument = "{ " + " ".join(f"{json.dumps(a)}: {value_type(entity.field(a))};" for a in key.attributes) + " }"
    where = "the table" if key.index == TABLE else key.index
    templates = " / ".join("#".join(p.literal or "{" + (p.attribute or "_shard") + (f":{p.bucket}" if p.bucket else "")
                                    + "}" for p in t) for t in key.templates)
    lines = [f"/** {entity.name}'s key on {where}: {templates}. */",
             f"export function {key_builder_name(entity, key)}(v: {argument}): Record<string, string> {{"]
    if key.sharded:
        lines.append("  const shardNumber = shard([" + ", ".join(key_text(entity.field(a), _access(a))
                                                                for a in key.shard_by) + f"], {key.sharded});")
    rendered = []
    for name, parts in zip(key.names, key.templates, strict=True):
        texts = _template(parts, entity)
        joined = texts[0] if len(texts) == 1 else f"[{', '.join(texts)}].join(\"#\")"
        rendered.append(f"{json.dumps(name)}: {joined}")
    lines += ["  return { " + ", ".join(rendered) + " };", "}"]
    return "\n".join(lines) + "\n"


def entity_constant(entity: str) -> str:
    return f"{snake(entity).upper()}_ENTITY"


def _entity_spec(entity: Entity) -> str:
    def keys(key: KeyWrite) -> str:
        return (f"{{ names: {json.dumps(list(key.names))}, attributes: {json.dumps(list(key.attributes))},\n"
                f"    build: (v) => {key_builder_name(entity, key)}(v as Parameters<typeof "
                f"{key_builder_name(entity, key)}>[0]), sparse: {str(entity.sparse(key)).lower()} }}")
    lines = [f"const {entity_constant(entity.name)}: EntitySpec = {{", f"  name: {json.dumps(entity.name)},",
             "  stored: {"]
    lines += [f"    {json.dumps(f.name)}: (v: {value_type(f)}) => {stored(f, 'v')}," for f in entity.fields]
    lines += ["  },", "  read: {"]
    lines += [f"    {json.dumps(f.name)}: {reader(f)}," for f in entity.fields]
    lines += ["  },", f"  table: {keys(entity.table_key)},",
              "  indexes: [" + ", ".join(keys(k) for k in entity.keys[1:]) + "],", "};"]
    return "\n".join(lines) + "\n"


def item_type(read: Read) -> str:
    return class_name(read.pattern) + "Item"


def _read_types(client: Client, read: Read) -> str:
    def fields(entity: str, names: tuple[str, ...]) -> list[tuple[str, str, bool]]:
        own = client.entity(entity)
        return [(n, value_type(own.field(n)), own.field(n).optional) for n in names]
    if len(read.entities) == 1:
        ((entity, names),) = read.returns
        return _interface(item_type(read), fields(entity, names))
    text, members = "", []
    for entity, names in read.returns:
        members.append(class_name(read.pattern) + entity)
        text += _interface(members[-1], [(ENTITY_ATTRIBUTE, json.dumps(entity), False), *fields(entity, names)])
    return text + f"export type {item_type(read)} = {' | '.join(members)};\n"


def _argument_type(argument: Argument) -> str:
    kind = value_type(argument.field)
    if argument.field.type == "string" and not argument.field.values:
        kind = "string"
    return f"{{ from: {kind}; to: {kind} }}" if argument.between else kind


def _encoded(argument: Argument) -> list[str]:
    encode = key_text if argument.role == "key" else stored_text
    value = f"args[{json.dumps(argument.attribute)}]"
    if argument.between:
        return [f"{json.dumps(argument.attribute + '.from')}: {encode(argument.field, value + '.from')}",
                f"{json.dumps(argument.attribute + '.to')}: {encode(argument.field, value + '.to')}"]
    return [f"{json.dumps(argument.attribute)}: {encode(argument.field, value)}"]


def request_name(read: Read) -> str:
    return f"{read.pattern.upper()}_REQUEST"


def _batch_method(read: Read) -> str:
    """A batch get: one key per item, each encoded as the single read's arguments are."""
    entity = read.entities[0]
    spec = f"{{ {json.dumps(entity)}: [{entity_constant(entity)}, {json.dumps(list(read.returns[0][1]))}] }}"
    doc = (read.description + " " if read.description else "") + f"On the table: {read.summary}. Items come in " \
        "the order of `keys`, each key once, keys without an item left out."
    lines = [f"  /** {doc.replace('*/', '* /')} */",
             f"  async {camel(read.pattern)}(keys: readonly {entity}Key[]): Promise<{item_type(read)}[]> {{",
             "    const wanted = keys.map((args) => {"]
    lines += ["  " + line for line in _values_lines(read)]
    lines += ["      return values;", "    });",
              f"    const rows = await batchGet(this.client, this.tableName, {request_name(read)}, wanted, "
              f"{json.dumps(list(read.table_keys))});",
              f"    return rows.map((row) => returned({spec}, row) as unknown as {item_type(read)});", "  }"]
    return "\n".join(lines) + "\n"


def _values_lines(read: Read) -> list[str]:
    """`values`: the request's placeholders from the method's arguments (time buckets, clock and shard too)."""
    encoded = [e for argument in read.arguments for e in _encoded(argument)]
    lines = [f"    const values: Record<string, string> = {{ "
             f"{', '.join([json.dumps(TABLE_PLACEHOLDER) + ': this.tableName', *encoded])} }};"]
    for placeholder, attribute, unit in read.buckets:
        lines.append(f"    values[{json.dumps(placeholder)}] = "
                     f"bucket(args[{json.dumps(attribute)}], {json.dumps(unit)});")
    if read.hides_expired:
        lines.append(f"    values[{json.dumps(NOW)}] = clock(options.asOf);")
    if read.shard is not None:
        shards, shard_by = read.shard
        lines.append("    values._shard = shard([" + ", ".join(f"values[{json.dumps(a)}]" for a in shard_by)
                     + f"], {shards});")
    return lines


def _read_method(read: Read) -> str:
    if read.batch:
        return _batch_method(read)
    parameters = []
    if read.arguments:
        parameters.append("args: { " + " ".join(f"{json.dumps(a.attribute)}: {_argument_type(a)};"
                                                for a in read.arguments) + " }")
    single = read.operation == "GetItem"
    if not single:
        parameters.append(f"options: {'CountOptions' if read.count else 'ReadOptions'} = {{}}")
    returned = "number" if read.count else f"{item_type(read)} | null" if single else f"Page<{item_type(read)}>"
    doc = (read.description + " " if read.description else "") + f"{read.operation} on " + \
        ("the table" if read.index == TABLE else read.index) + f": {read.summary}."
    lines = [f"  /** {doc.replace('*/', '* /')} */",
             f"  async {camel(read.pattern)}({', '.join(parameters)}): Promise<{returned}> {{"]
    lines += _values_lines(read)
    spec = "{ " + ", ".join(f"{json.dumps(e)}: [{entity_constant(e)}, {json.dumps(list(names))}]"
                            for e, names in read.returns) + " }"
    if single:
        lines += [f"    const answer = await this.client.send(new GetCommand(request({request_name(read)}, values) "
                  "as GetCommand[\"input\"]));",
                  "    if (answer.Item === undefined) return null;",
                  f"    return returned({spec}, answer.Item) as unknown as {item_type(read)};", "  }"]
        return "\n".join(lines) + "\n"
    limit = "null" if read.limit is None else str(read.limit)
    lines.append(f"    const limit = options.limit === undefined ? {limit} : options.limit;")
    lines.append(_bodies(read))
    if read.count:
        lines += [f"    return countAll(this.client, {json.dumps(read.operation)}, bodies, limit);", "  }"]
        return "\n".join(lines) + "\n"
    declare = "let" if read.follow_up else "const"  # a follow-up replaces the rows
    if read.fan_out is not None and read.fan_out.kind == "shards":
        lines.append(f"    {declare} [rows, next] = await readMerged(this.client, bodies, limit, options.start, "
                     f"{json.dumps(list(read.page_keys))}, {json.dumps(read.sort_key)}, "
                     f"{str(read.descending).lower()});")
    else:
        lines.append(f"    {declare} [rows, next] = await readInOrder(this.client, {json.dumps(read.operation)}, "
                     f"bodies, limit, options.start, {json.dumps(list(read.page_keys))});")
    if read.follow_up:
        lines.append(f"    rows = await fetchMissing(this.client, this.tableName, rows, "
                     f"{json.dumps(list(read.table_keys))}, {json.dumps(list(read.follow_up))});")
    lines += [f"    return {{ items: rows.map((row) => returned({spec}, row) as unknown as {item_type(read)}), "
              "next };",
              "  }"]
    return "\n".join(lines) + "\n"


def _bodies(read: Read) -> str:
    """The read's requests: one, one per shard, or one per time bucket in the order they are read."""
    fan_out = read.fan_out
    if fan_out is None:
        return f"    const bodies = [request({request_name(read)}, values)];"
    if fan_out.kind == "shards":
        return (f"    const bodies = shardNumbers({fan_out.shards}).map((number) => request({request_name(read)}, "
                "{ ...values, _shard: number }));")
    placeholder = json.dumps(f"{fan_out.attribute}:{fan_out.bucket}")
    bounds = f"args[{json.dumps(fan_out.attribute)}]"
    order = ".reverse()" if read.descending else ""
    return (f"    const bodies = buckets({bounds}.from, {bounds}.to, {json.dumps(fan_out.bucket)}){order}"
            f".map((name) => request({request_name(read)}, {{ ...values, {placeholder}: name }}));")


def _writes(entity: Entity) -> str:
    name, spec = class_name(entity.name), entity_constant(entity.name)
    return (
        f"  /** Writes one {entity.name} with every key it needs (never over another entity's item). */\n"
        f"  async put{name}(item: {entity.name}): Promise<void> {{\n"
        f"    await putItem(this.client, this.tableName, {spec}, item as unknown as Row);\n  }}\n\n"
        f"  /** Changes attributes of one {entity.name} (null removes an optional one); keys made of a changed\n"
        f"   * attribute are rewritten, and a changed table key moves the item in one transaction. */\n"
        f"  async update{name}(key: {entity.name}Key, changes: {entity.name}Changes): Promise<void> {{\n"
        f"    await updateItem(this.client, this.tableName, {spec}, key as unknown as Row, changes as Row);\n  }}\n\n"
        f"  /** Deletes one {entity.name} (never another entity's item). */\n"
        f"  async delete{name}(key: {entity.name}Key): Promise<void> {{\n"
        f"    await deleteItem(this.client, this.tableName, {spec}, key as unknown as Row);\n  }}\n"
    )


def _literal(value: Any) -> str:
    return json.dumps(value, indent=2, sort_keys=True)


def render(client: Client) -> str:
    table_class = class_name(client.blueprint) + "Table"
    parts = [
        f"// Data access for blueprint `{client.blueprint}` {client.version} ({client.source}).\n//\n"
        "// Generated by Tablewright (`tablewright client --lang typescript`): do not edit, regenerate it when\n"
        f"// the blueprint changes. Design {client.digest}: `checkDesign()` compares it with the table's\n"
        f"// `{DESIGN_TAG}` tag. The reads send the requests `tablewright explain` documents.\n\n",
        RUNTIME,
        f"export const DESIGN_DIGEST = {json.dumps(client.digest)};\n",
        f"export const DESIGN_TAG = {json.dumps(DESIGN_TAG)};\n",
        "export const TABLE_NAMES: Record<string, string> = { " + ", ".join(
            f"{json.dumps(env)}: {json.dumps(name)}" for env, name in client.tables) + " };\n",
    ]
    for entity in client.entities:
        parts.append("\n" + _interface(entity.name, [(f.name, value_type(f), f.optional) for f in entity.fields]))
        parts.append(_interface(f"{entity.name}Key", [(a, value_type(entity.field(a)), False)
                                                      for a in entity.table_key.attributes]))
        parts.append(f"export type {entity.name}Changes = Partial<{{\n" + "".join(
            _property(f.name, value_type(f) + (" | null" if f.optional else ""), False) + "\n"
            for f in entity.fields) + "}>;\n")
        parts += ["\n" + _key_builder(entity, key) for key in entity.keys]
        parts.append("\n" + _entity_spec(entity))
    for read in client.reads:
        parts.append("\n" + _read_types(client, read))
        parts.append(f"const {request_name(read)}: Record<string, unknown> = {_literal(read.request)};\n")
    parts.append(
        f"\n/** The `{client.blueprint}` table: `new {table_class}(DynamoDBDocumentClient.from(new "
        "DynamoDBClient({})), TABLE_NAMES.prod)`. */\n"
        f"export class {table_class} {{\n"
        "  constructor(private readonly client: DynamoDBDocumentClient, readonly tableName: string) {}\n\n"
        "  /** Throws StaleDesign unless the table was deployed from the design this module was generated for. */\n"
        "  async checkDesign(): Promise<void> {\n"
        "    await checkDesign(this.client, this.tableName, DESIGN_DIGEST, DESIGN_TAG);\n  }\n"
    )
    parts += ["\n" + _writes(entity) for entity in client.entities]
    parts += ["\n" + _read_method(read) for read in client.reads]
    parts.append("}\n")
    return "".join(parts)


def names(client: Client) -> list[tuple[str, tuple[str, ...]]]:
    """Every name the module defines (`this.` for methods), with the blueprint field it comes from."""
    found: list[tuple[str, tuple[str, ...]]] = [(class_name(client.blueprint) + "Table", ("blueprint",))]
    for entity in client.entities:
        path = ("entities", entity.name)
        found += [(entity.name, path), (f"{entity.name}Key", path), (f"{entity.name}Changes", path),
                  (entity_constant(entity.name), path)]
        found += [(key_builder_name(entity, key), path) for key in entity.keys]
        found += [(f"this.{verb}{class_name(entity.name)}", path) for verb in ("put", "update", "delete")]
    for read in client.reads:
        path = ("access_patterns", read.pattern)
        found += [(item_type(read), path), (request_name(read), path), (f"this.{camel(read.pattern)}", path)]
        if len(read.entities) > 1:
            found += [(class_name(read.pattern) + entity, path) for entity in read.entities]
    return found
