"""What a generated client needs to know about one design, whatever the language: the entities and their
fields, the keys each entity writes on the table and every index, and one read per access pattern with
the very request the cookbook documents (so the client sends what verification proves)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal

from tablewright.blueprint.language import AttributeSpec
from tablewright.blueprint.lock import DEFAULT_ENVIRONMENT, MovingKeys
from tablewright.blueprint.templates import SHARD, KeyTemplate
from tablewright.design.cookbook import name_placeholder, request
from tablewright.design.design import ENTITY_ATTRIBUTE, TABLE, FanOut, QueryPlan, Shape, TableDesign
from tablewright.design.evolution import declaration, declarations, rename_declaration
from tablewright.design.locked import attribute_renames, design_digest
from tablewright.design.moving import moved_plan, moved_shape
from tablewright.stacks.stack import Stack

TABLE_PLACEHOLDER = "_table"  # `{_table}` in a request template: the table name the client was given


@dataclass(frozen=True)
class Field:
    """One attribute of an entity."""

    name: str
    type: str  # the blueprint's type: string, number, timestamp, date, boolean, map, list, string_set, ...
    values: tuple[str, ...]  # an enum's values
    optional: bool
    width: int | None  # digits a number is padded to inside keys
    timestamp_format: str
    lacking: bool = False  # items written before a pending migration may lack it (read types: not required)

    @property
    def epoch(self) -> bool:
        return self.type == "timestamp" and self.timestamp_format in ("epoch_seconds", "epoch_millis")


@dataclass(frozen=True)
class Part:
    """One segment of a key template: a literal, an attribute's key text, its time bucket, or the shard."""

    literal: str | None = None
    attribute: str | None = None
    bucket: str | None = None
    shards: int = 0


@dataclass(frozen=True)
class KeyWrite:
    """The key attributes one entity writes for the table or one index."""

    index: str  # "table" or the index name
    names: tuple[str, ...]  # the item attributes: partition key, sort key
    templates: tuple[tuple[Part, ...], ...]  # one per name
    shard_by: tuple[str, ...]
    attributes: tuple[str, ...]  # the entity attributes the keys are made of, shard_by included
    before: bool = False  # the keys old items carry while a migration moves them (`Entity.moved`)

    @property
    def sharded(self) -> int:
        return next((part.shards for template in self.templates for part in template if part.shards), 0)


@dataclass(frozen=True)
class Entity:
    name: str
    fields: tuple[Field, ...]
    keys: tuple[KeyWrite, ...]  # the table's first
    formers: tuple[tuple[str, str], ...] = ()  # (attribute, its old name) of renames not yet migrated: read both
    former: str | None = None  # the name old items carry in `_entity` while a rename is not yet migrated
    moved: KeyWrite | None = None  # the table key old items carry while a migration moves them (where it differs)

    @property
    def table_key(self) -> KeyWrite:
        return self.keys[0]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(field.name for field in self.fields)

    def field(self, name: str) -> Field:
        """The attribute `name`; a key attribute the item carries (`PK`, read by a keys-only pattern) is text."""
        return next((field for field in self.fields if field.name == name),
                    Field(name, "string", (), False, None, "iso8601"))

    def sparse(self, key: KeyWrite) -> bool:
        """Whether an item may stay out of this index: one of its attributes is optional."""
        return key.index != TABLE and any(self.field(a).optional for a in key.attributes)


@dataclass(frozen=True)
class Argument:
    """A value the caller passes to a read: one attribute, or the two bounds of a `between`."""

    attribute: str
    field: Field
    between: bool
    role: Literal["key", "value"]  # key text inside a key condition, or stored form for a filter


@dataclass(frozen=True)
class Read:
    """One access pattern as the client runs it."""

    pattern: str
    description: str
    summary: str
    operation: Literal["GetItem", "Query", "Scan"]
    index: str
    entities: tuple[str, ...]
    arguments: tuple[Argument, ...]
    request: dict[str, Any]  # the cookbook's request, `{name}` placeholders, key attributes projected
    fan_out: FanOut | None
    shard: tuple[int, tuple[str, ...]] | None  # a sharded key read without fan-out: (shards, shard_by)
    buckets: tuple[tuple[str, str, str], ...]  # (placeholder, attribute, unit) of a key-bound time bucket
    limit: int | None
    descending: bool
    sort_key: str | None  # the index's sort key attribute (shards are merged by it)
    page_keys: tuple[str, ...]  # an item's table and index keys: where a page ends
    table_keys: tuple[str, ...]
    follow_up: tuple[str, ...]  # attributes read from the table after an index query (none: no follow-up)
    returns: tuple[tuple[str, tuple[str, ...]], ...]  # (entity, the attributes returned of it)
    count: bool = False  # `Select: COUNT`: the method returns how many items match
    hides_expired: bool = False  # the request filters out items past their TTL at `_now`
    batch: bool = False  # BatchGetItem: `request` is its table's entry, `Keys` one key template
    before: Read | None = None  # while a migration moves its entities' keys: the same read of the old keys
    renamed: tuple[tuple[str, str], ...] = ()  # (old name, entity) of its entities whose old items carry the old name


@dataclass(frozen=True)
class Client:
    blueprint: str
    source: str  # the blueprint file, as the command line named it
    version: str
    digest: str
    tables: tuple[tuple[str, str], ...]  # (environment, table name)
    entities: tuple[Entity, ...]
    reads: tuple[Read, ...]

    def entity(self, name: str) -> Entity:
        return next(entity for entity in self.entities if entity.name == name)


def field_of(name: str, spec: AttributeSpec) -> Field:
    return Field(name, spec.type, tuple(spec.values or ()), spec.optional, spec.width, spec.timestamp_format)


def _parts(template: KeyTemplate) -> tuple[Part, ...]:
    return tuple(Part(literal=s.literal, attribute=s.attribute, bucket=s.bucket, shards=s.shards or 0)
                 for s in template.segments)


def key_write(index: str, shape: Shape) -> KeyWrite:
    templates = (shape.pk, shape.sk) if shape.keys.sk is not None else (shape.pk,)
    used = [a for template in templates for a in template.attributes] + list(shape.shard_by)
    return KeyWrite(index, shape.keys.names, tuple(_parts(t) for t in templates), shape.shard_by,
                    tuple(dict.fromkeys(used)))


def pending_declarations(stacks: list[Stack]) -> set[str]:
    """The design's migration declarations that `migrate verify` has not recorded in every environment's lock: until
    then, old items may still have the old shape."""
    recorded = [{text for record in (stack.source.lock.migrated if stack.source.lock else ())
                 for text in record.declarations} for stack in stacks]
    return {text for text in declarations(stacks[0].design.blueprint) if not all(text in done for done in recorded)}


def _moved_table(design: TableDesign, name: str, moving: MovingKeys | None) -> KeyWrite | None:
    """The table key old items carry while a migration moves them, where it differs from the new one and is made of
    attributes the entity still has."""
    key = moving.keys.get(TABLE) if moving else None
    if key is None:
        return None
    shape = moved_shape(key, design.table_keys)
    used = set(shape.pk.attributes + shape.sk.attributes + shape.shard_by)
    if shape == design.shapes[name][TABLE] or not used <= set(design.blueprint.entities[name].attributes):
        return None
    return replace(key_write(TABLE, shape), before=True)


def entity_of(design: TableDesign, name: str, pending: set[str] = frozenset(),  # type: ignore[assignment]
              moving: MovingKeys | None = None) -> Entity:
    """The entity as the client writes and reads it; while a migration is `pending`, it reads a renamed attribute
    under its old name too, and types the attributes old items may lack as not required; while one `moving` its
    items, it knows the name and table key old items carry."""
    specs = design.blueprint.entities[name].attributes
    shapes = design.shapes[name]
    order = [TABLE, *sorted(index for index in shapes if index != TABLE)]
    formers = tuple((new, old) for old, new in sorted(attribute_renames(design.blueprint, name).items())
                    if rename_declaration(name, old, new) in pending)
    lacking = {new for new, _ in formers} | {
        str(m.attribute) for m in design.blueprint.migrations
        if m.kind == "attribute" and m.entity == name and m.default is not None and declaration(m) in pending}
    return Entity(name, tuple(replace(field_of(a, spec), lacking=a in lacking) for a, spec in sorted(specs.items())),
                  tuple(key_write(index, shapes[index]) for index in order), formers,
                  moving.entity if moving and moving.entity != name else None, _moved_table(design, name, moving))


def _with_formers(body: dict[str, Any], entities: list[Entity]) -> dict[str, Any]:
    """The request with the old names of renamed attributes it projects added to its projection."""
    listed = body.get("ExpressionAttributeNames", {}).values() if "ProjectionExpression" in body else ()
    formers = tuple(old for entity in entities for new, old in entity.formers if new in listed)
    return _projected(body, formers) if formers else body


def _arguments(plan: QueryPlan, entity: Entity) -> tuple[Argument, ...]:
    found: dict[str, Argument] = {}
    for parameter in plan.parameters:
        if parameter.role in ("derived", "clock") or parameter.attribute in found:
            continue
        between = parameter.name.endswith((".from", ".to"))
        found[parameter.attribute] = Argument(parameter.attribute, entity.field(parameter.attribute), between,
                                              "key" if parameter.role == "key" else "value")
    return tuple(found.values())


def _projected(body: dict[str, Any], names: tuple[str, ...]) -> dict[str, Any]:
    """The request with `names` (key attributes) added to its projection, so a page can end on any item."""
    if "ProjectionExpression" not in body:
        return body
    listed = body["ProjectionExpression"].split(", ")
    extra = [name for name in names if name_placeholder(name) not in listed]
    return {**body, "ProjectionExpression": ", ".join(listed + [name_placeholder(n) for n in extra]),
            "ExpressionAttributeNames": {**body["ExpressionAttributeNames"],
                                         **{name_placeholder(n): n for n in extra}}}


def _with_former_names(body: dict[str, Any], entities: list[Entity]) -> dict[str, Any]:
    """A Scan's request keeping the items of a renamed entity that still carry its old name in `_entity`."""
    formers = [entity.former for entity in entities if entity.former]
    guard = f"#{ENTITY_ATTRIBUTE} = :entity"
    if not formers or guard not in body.get("FilterExpression", ""):
        return body
    return {**body, "FilterExpression": body["FilterExpression"].replace(
        guard, f"#{ENTITY_ATTRIBUTE} IN (:entity, :entity_before)"),
        "ExpressionAttributeValues": {**body["ExpressionAttributeValues"], ":entity_before": {"S": formers[0]}}}


def read_of(design: TableDesign, plan: QueryPlan, entities: dict[str, Entity],
            moving: Mapping[str, MovingKeys] | None = None) -> Read:
    """The read of a pattern; `moving`: the entities a pending migration moves, whose old keys it reads too."""
    pattern = design.blueprint.access_patterns[plan.pattern]
    entity = entities[plan.entities[0]]
    page_keys = tuple(dict.fromkeys(plan.table_keys.names + plan.keys.names))
    body = request(plan, "{" + TABLE_PLACEHOLDER + "}")
    if plan.batch:  # the table's keys come back too: the items are returned in the order of the keys
        body = _projected(body["RequestItems"]["{" + TABLE_PLACEHOLDER + "}"], plan.table_keys.names)
    elif plan.operation != "GetItem":
        body = _projected(body, page_keys)
    body = _with_former_names(_with_formers(body, [entities[name] for name in plan.entities]),
                              [entities[name] for name in plan.entities])
    old = moved_plan(design, plan, moving) if moving else None
    derived = [p.name for p in plan.parameters if p.role == "derived"]
    fanned = plan.fan_out
    shard = None
    if SHARD in derived and not (fanned and fanned.kind == "shards"):
        shard = (plan.shape.shards, plan.shape.shard_by)
    fanned_bucket = f"{fanned.attribute}:{fanned.bucket}" if fanned and fanned.kind == "buckets" else None
    buckets = tuple((name, name.split(":")[0], name.split(":")[1]) for name in derived
                    if name not in (SHARD, fanned_bucket))
    # A keys-only pattern (`returns: []`) returns each item's table key attributes, as text.
    returned = plan.returns or plan.table_keys.names
    returns = tuple((name, tuple(a for a in returned if a in entities[name].names or not plan.returns))
                    for name in plan.entities)
    return Read(
        pattern=plan.pattern, description=pattern.description or "", summary=plan.summary,
        operation=plan.operation, index=plan.index, entities=plan.entities,
        arguments=_arguments(plan, entity), request=body, fan_out=fanned, shard=shard,
        buckets=buckets, limit=plan.limit, descending=not plan.scan_index_forward,
        sort_key=plan.keys.sk, page_keys=page_keys, table_keys=plan.table_keys.names,
        follow_up=plan.follow_up.attributes if plan.follow_up else (), returns=returns, count=plan.count,
        hides_expired=plan.hides_expired is not None, batch=plan.batch is not None,
        before=read_of(design, old, entities) if old else None,
        renamed=tuple((former, name) for name in plan.entities if (former := entities[name].former)),
    )


def client_of(stacks: list[Stack], source: str) -> Client:
    """The client of one blueprint's stacks (every environment of one design)."""
    first = stacks[0].design
    pending = pending_declarations(stacks)
    moving = {entity: keys for stack in reversed(stacks) for entity, keys in stack.design.moving.items()}
    entities = {name: entity_of(first, name, pending, moving.get(name)) for name in sorted(first.shapes)}
    return Client(
        blueprint=first.blueprint.blueprint, source=source, version=first.blueprint.version or "",
        digest=design_digest(first),
        tables=tuple((stack.source.environment or DEFAULT_ENVIRONMENT, stack.design.blueprint.table.name)
                     for stack in stacks),
        entities=tuple(entities.values()),
        reads=tuple(read_of(first, plan, entities, moving) for plan in sorted(first.plans, key=lambda p: p.pattern)),
    )

