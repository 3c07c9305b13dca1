"""Can an index's key shape serve an access pattern, and with which key condition?

The rules (README, "Design rules"): the partition key template must be fully bound by `=` conditions; the
remaining conditions bind a leading run of sort-key components, then at most one range condition
on the next component. On top of that, the condition must not catch items of other entities that
share the partition, which is checked here from the templates alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from tablewright.blueprint.encoding import BUCKET_SHAPES, describe_encoding
from tablewright.blueprint.language import AccessPattern, Blueprint
from tablewright.blueprint.templates import (
    AFTER_SEPARATOR,
    SEPARATOR,
    SHARD,
    KeyTemplate,
    Segment,
    entity_tag,
    may_overlap,
    shard_values,
)
from tablewright.design.design import TABLE, FanOut, Parameter, Shape


@dataclass(frozen=True)
class Refusal:
    reason: str
    hint: str | None = None
    # The index matched the pattern's keys but would return wrong items: a design error, not a miss.
    fatal: bool = False


@dataclass(frozen=True)
class Served:
    operation: Literal["GetItem", "Query", "Scan"]
    key_condition: str
    values: tuple[tuple[str, str], ...]
    parameters: tuple[Parameter, ...]
    order_attributes: tuple[str, ...]
    notes: tuple[str, ...] = ()
    fan_out: FanOut | None = None


def serve(blueprint: Blueprint, pattern: AccessPattern, index: str, members: dict[str, Shape]) -> Served | Refusal:
    """The key condition `index` offers `pattern`, given every entity's shape on that index."""
    missing = [entity for entity in pattern.entities if entity not in members]
    if missing:
        return Refusal(f"{', '.join(missing)} has no keys on {_index_label(index)}")
    if blueprint.tenant is not None and pattern.where.get(blueprint.tenant) == "=" and not all(
            tenant_led(blueprint, shape.pk) for shape in members.values()):
        return Refusal(f"not every partition key on it starts with `{blueprint.tenant}`: a tenant's reads use only "
                       "indexes whose keys all do (what `dynamodb:LeadingKeys` confines)")
    if len(pattern.entities) > 1:
        return _serve_collection(blueprint, pattern, members)
    return _serve_single(blueprint, pattern, index, members)


def tenant_led(blueprint: Blueprint, pk: KeyTemplate) -> bool:
    """Whether a partition key starts with the blueprint's tenant (nothing before it)."""
    return blueprint.tenant is not None and pk.segments[0].attribute == blueprint.tenant


def _index_label(index: str) -> str:
    return "the base table" if index == TABLE else f"index {index}"


def _domain(blueprint: Blueprint, entity: str, segment: Segment) -> frozenset[str] | None:
    if segment.literal is not None:
        return frozenset([segment.literal])
    if segment.shards is not None:
        return frozenset(shard_values(segment.shards))
    if segment.bucket is not None:
        return None
    spec = blueprint.entities[entity].attributes[str(segment.attribute)]
    if spec.values:
        return frozenset(spec.values)
    if spec.type == "boolean":
        return frozenset(["true", "false"])
    return None


def may_share(blueprint: Blueprint, x: str, a: KeyTemplate, y: str, b: KeyTemplate, count: int | None = None) -> bool:
    """Whether the first `count` segments (all, when None) of two templates can render the same text."""
    if count is None:
        if len(a.segments) != len(b.segments):
            return False
        count = len(a.segments)
    if len(a.segments) < count or len(b.segments) < count:
        return False
    return all(
        may_overlap(_domain(blueprint, x, left), _domain(blueprint, y, right))
        for left, right in zip(a.segments[:count], b.segments[:count], strict=False)
    )


def _neighbours(blueprint: Blueprint, entities: tuple[str, ...], members: dict[str, Shape]) -> list[str]:
    """Other entities whose items can land in the same partitions as those of `entities`."""
    first = entities[0]
    return [
        other
        for other, shape in sorted(members.items())
        if other not in entities and may_share(blueprint, first, members[first].pk, other, shape.pk)
    ]


def _parameter(blueprint: Blueprint, entity: str, attribute: str, name: str | None = None) -> Parameter:
    spec = blueprint.entities[entity].attributes[attribute]
    return Parameter(name or attribute, attribute, describe_encoding(spec))


def _partition(
    blueprint: Blueprint, pattern: AccessPattern, entity: str, shape: Shape
) -> tuple[list[Parameter], FanOut | None] | Refusal:
    """How the pattern addresses partitions: parameters derived from its values, or a fan-out."""
    equalities = set(pattern.equalities)
    derived: list[Parameter] = []
    fan_outs: list[FanOut] = []
    for segment in shape.pk.segments:
        if segment.attribute is None or (segment.bucket is None and segment.attribute in equalities):
            continue
        if segment.bucket is None:
            return Refusal(f"its partition key {shape.pk.text} needs `{segment.attribute}` bound with `=`")
        if segment.attribute in equalities:
            derived.append(Parameter(segment.placeholder, segment.attribute,
                                     f"the {segment.bucket} of {segment.attribute} (UTC, "
                                     f"{BUCKET_SHAPES[segment.bucket]})", "derived"))
        elif pattern.where.get(segment.attribute) == "between":
            fan_outs.append(FanOut("buckets", attribute=segment.attribute, bucket=segment.bucket))
            derived.append(Parameter(segment.placeholder, segment.attribute,
                                     f"each {segment.bucket} from {segment.attribute}.from to {segment.attribute}.to",
                                     "derived"))
        else:
            return Refusal(
                f"its partition key {shape.pk.text} is bucketed by {segment.bucket} of `{segment.attribute}`, "
                f"which needs `=` or `between`",
                f"use `{segment.attribute}: between` to read a bounded range of buckets",
            )
    if shape.shards > 1:
        computable = all(a in equalities for a in shape.shard_by)
        how = (f"shard number 0..{shape.shards - 1} of ({', '.join(shape.shard_by)}): the first 8 hex digits of "
               f"SHA-256 of their key values joined by '#', modulo {shape.shards}, zero-padded")
        if not computable:
            fan_outs.append(FanOut("shards", shards=shape.shards))
            how = f"every shard 0..{shape.shards - 1}, one request each"
        derived.append(Parameter(SHARD, ",".join(shape.shard_by), how, "derived"))
    if len(fan_outs) > 1:
        return Refusal(f"its partition key {shape.pk.text} would fan out over both shards and time buckets",
                       "bind the shard attributes with `=`, or do not shard a bucketed key")
    return derived, (fan_outs[0] if fan_outs else None)


def _serve_single(
    blueprint: Blueprint, pattern: AccessPattern, index: str, members: dict[str, Shape]
) -> Served | Refusal:
    entity = pattern.entities[0]
    shape = members[entity]
    partition = _partition(blueprint, pattern, entity, shape)
    if isinstance(partition, Refusal):
        return partition
    derived, fan_out = partition
    if shape.keys.sk is None:
        return _serve_partition_only(blueprint, pattern, index, members, derived, fan_out)
    equalities = set(pattern.equalities)
    sk = shape.sk.segments
    bound = 0
    while bound < len(sk) and (sk[bound].literal is not None or sk[bound].attribute in equalities):
        bound += 1
    in_key = set(shape.pk.attributes) | {s.attribute for s in sk[:bound] if s.attribute}
    stray = sorted(equalities - in_key)
    if stray:
        return Refusal(f"`{stray[0]} =` does not bind a leading component of the sort key {shape.sk.text}")
    ranged = pattern.range_condition
    ordering = pattern.ordering_attribute
    if ordering is not None and bound < len(sk) and sk[bound].attribute != ordering:
        return Refusal(f"`{ordering}` is not the next sort-key component after the bound ones in {shape.sk.text}")
    if ordering is not None and bound == len(sk) and ranged is not None:
        return Refusal(f"`{ordering}` is not a sort-key component of {shape.sk.text}")

    neighbours = _neighbours(blueprint, (entity,), members)
    collision = _collision(blueprint, entity, shape.sk, bound, neighbours, members)
    if collision:
        return collision

    parameters = [_parameter(blueprint, entity, a) for a in sorted(equalities)] + derived
    values = [(":pk", shape.pk.text)]
    condition = "#pk = :pk"
    notes: list[str] = [f"fan-out: {fan_out.describe()}"] if fan_out else []
    if bound == len(sk):
        values.append((":sk", shape.sk.text))
        condition += " AND #sk = :sk"
        operation: Literal["GetItem", "Query"] = "GetItem" if index == TABLE and fan_out is None else "Query"
        return Served(operation, condition, tuple(values), tuple(parameters), (), tuple(notes), fan_out)
    prefix = shape.sk.prefix(bound).text + SEPARATOR if bound else ""
    order_attributes = tuple(s.attribute for s in sk[bound:] if s.attribute)
    if ranged is None:
        if bound:
            values.append((":sk", prefix))
            condition += " AND begins_with(#sk, :sk)"
        return Served("Query", condition, tuple(values), tuple(parameters), order_attributes, tuple(notes), fan_out)

    attribute, op = ranged
    last = bound == len(sk) - 1
    sk_condition = _range_condition(op, attribute, prefix, last, shared=bool(neighbours))
    if isinstance(sk_condition, Refusal):
        return Refusal(sk_condition.reason.format(neighbours=", ".join(neighbours)), sk_condition.hint)
    expression, range_values = sk_condition
    condition += " AND " + expression
    values.extend(range_values)
    if op == "between":
        parameters += [
            _parameter(blueprint, entity, attribute, f"{attribute}.from"),
            _parameter(blueprint, entity, attribute, f"{attribute}.to"),
        ]
    else:
        parameters.append(_parameter(blueprint, entity, attribute))
    if not last and op in ("<=", ">", "between"):
        notes.append(
            f"the `{AFTER_SEPARATOR}` after a bound makes it cover every item whose {attribute} equals it "
            f"(the next key component follows a `{SEPARATOR}`, which sorts just below `{AFTER_SEPARATOR}`)"
        )
    return Served("Query", condition, tuple(values), tuple(parameters), order_attributes, tuple(notes), fan_out)


def _serve_partition_only(blueprint: Blueprint, pattern: AccessPattern, index: str, members: dict[str, Shape],
                          derived: list[Parameter], fan_out: FanOut | None) -> Served | Refusal:
    """A key without a sort key: the partition key alone addresses the items (one on the table)."""
    entity = pattern.entities[0]
    shape = members[entity]
    label = _index_label(index)
    stray = sorted(set(pattern.equalities) - set(shape.pk.attributes))
    if stray:
        return Refusal(f"`{stray[0]} =` is not part of the partition key {shape.pk.text}, and {label} has no sort key")
    if pattern.range_condition is not None or pattern.ordering_attribute is not None:
        return Refusal(f"{label} has no sort key to range over or order by")
    neighbours = _neighbours(blueprint, (entity,), members)
    if neighbours:
        return Refusal(f"{label} has no sort key, and {', '.join(neighbours)} items can have the same partition key "
                       f"{shape.pk.text}", f"start {entity}'s key with a literal of its own "
                       f"(`{entity_tag(entity)}#...`)", fatal=True)
    parameters = tuple([_parameter(blueprint, entity, a) for a in sorted(pattern.equalities)] + derived)
    notes = (f"fan-out: {fan_out.describe()}",) if fan_out else ()
    operation: Literal["GetItem", "Query"] = "GetItem" if index == TABLE and fan_out is None else "Query"
    return Served(operation, "#pk = :pk", ((":pk", shape.pk.text),), parameters, (), notes, fan_out)


def _range_condition(
    op: str, attribute: str, prefix: str, last: bool, shared: bool
) -> tuple[str, list[tuple[str, str]]] | Refusal:
    """The sort-key part of a key condition for one range operator.

    `prefix` is the bound part of the key (ending in the separator, or empty). When other entities
    share the partition, open-ended comparisons are closed at the prefix so they cannot catch them.
    """
    value = prefix + "{" + attribute + "}"
    inclusive_end = "" if last else AFTER_SEPARATOR
    prefix_end = prefix[:-1] + AFTER_SEPARATOR if prefix else ""
    if op == "begins_with":
        return "begins_with(#sk, :sk)", [(":sk", value)]
    if op == "between":
        low = prefix + "{" + attribute + ".from}"
        high = prefix + "{" + attribute + ".to}" + inclusive_end
        return "#sk BETWEEN :lo AND :hi", [(":lo", low), (":hi", high)]
    strict_bound_needed = op in ("<", ">") and last
    if shared and strict_bound_needed:
        return Refusal(
            f"`{attribute} {op}` on the last sort-key component cannot be bounded in a partition shared with "
            "{neighbours}",
            f"use `{op}=`, or end this entity's sort key with another component (such as its id)",
        )
    if op == ">=":
        return ("#sk BETWEEN :lo AND :hi", [(":lo", value), (":hi", prefix_end)]) if shared else (
            "#sk >= :sk", [(":sk", value)])
    if op == ">":
        after = value + inclusive_end
        return ("#sk BETWEEN :lo AND :hi", [(":lo", after), (":hi", prefix_end)]) if shared else (
            "#sk > :sk", [(":sk", after)])
    if op == "<=":
        upto = value + inclusive_end
        return ("#sk BETWEEN :lo AND :hi", [(":lo", prefix), (":hi", upto)]) if shared else (
            "#sk <= :sk", [(":sk", upto)])
    return ("#sk BETWEEN :lo AND :hi", [(":lo", prefix), (":hi", value)]) if shared else (
        "#sk < :sk", [(":sk", value)])


def _collision(
    blueprint: Blueprint, entity: str, sk: KeyTemplate, bound: int, neighbours: list[str], members: dict[str, Shape]
) -> Refusal | None:
    """A neighbour whose sort keys the condition would also match."""
    for other in neighbours:
        theirs = members[other].sk
        if bound == len(sk.segments):
            hit = may_share(blueprint, entity, sk, other, theirs)
        else:
            hit = len(theirs.segments) > bound and may_share(blueprint, entity, sk, other, theirs, bound)
        if hit:
            shown = sk.prefix(bound).text + (SEPARATOR if bound < len(sk.segments) and bound else "")
            condition = f"SK = {sk.text}" if bound == len(sk.segments) else (
                f"begins_with(SK, {shown!r})" if bound else "the whole partition")
            return Refusal(
                f"sort-key prefix collision: {condition} also matches {other} items ({theirs.text}) "
                f"in the same partition",
                f"start {other}'s sort key with a literal of its own (e.g. `{entity_tag(other)}#...`), or move it "
                "to another partition",
                fatal=True,
            )
    return None


def _serve_collection(blueprint: Blueprint, pattern: AccessPattern, members: dict[str, Shape]) -> Served | Refusal:
    entities = pattern.entities
    shapes = [members[e] for e in entities]
    if shapes[0].keys.sk is None:
        return Refusal("a key without a sort key holds one item per partition: no item collection")
    if any(shape.shards > 1 or any(seg.bucket for seg in shape.pk.segments) for shape in shapes):
        return Refusal("an item collection needs one partition: its partition key is sharded or bucketed")
    if len({shape.pk.text for shape in shapes}) > 1:
        listing = "; ".join(f"{e}: {members[e].pk.text}" for e in entities)
        return Refusal(f"the collection's entities do not share one partition key ({listing})")
    if pattern.range_condition is not None or set(pattern.equalities) != set(shapes[0].pk.attributes):
        return Refusal(
            "an item collection is read by its partition key alone: bind exactly "
            + ", ".join(f"`{a} =`" for a in shapes[0].pk.attributes)
        )
    common = 0
    while all(
        len(s.sk.segments) > common and s.sk.segments[common].literal is not None
        and s.sk.segments[common] == shapes[0].sk.segments[common]
        for s in shapes
    ):
        common += 1
    condition = "#pk = :pk"
    values = [(":pk", shapes[0].pk.text)]
    outsiders = _neighbours(blueprint, entities, members)
    if outsiders:
        reachable = [
            o for o in outsiders
            if common == 0 or may_share(blueprint, entities[0], shapes[0].sk, o, members[o].sk, common)
        ]
        if reachable:
            return Refusal(
                f"the partition also holds {', '.join(reachable)} items, which no sort-key prefix of the "
                "collection excludes",
                "give the collection's sort keys a shared leading literal that the other entities do not use",
            )
        values.append((":sk", shapes[0].sk.prefix(common).text + SEPARATOR))
        condition += " AND begins_with(#sk, :sk)"
    parameters = tuple(_parameter(blueprint, entities[0], a) for a in sorted(pattern.equalities))
    return Served("Query", condition, tuple(values), parameters, ())
