"""Key traps: values that change inside keys, keys that do not sort as their values, separators
inside values, entities whose sort keys overlap, keys over DynamoDB's size limits."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime

from tablewright.blueprint.encoding import BUCKET_FORMATS, EPOCH_WIDTH, admits_separator, sort_problem
from tablewright.blueprint.language import AttributeSpec
from tablewright.blueprint.templates import SEPARATOR, KeyTemplate
from tablewright.blueprint.traits import mutable
from tablewright.design.design import TABLE, Shape, TableDesign, place
from tablewright.design.serve import may_share
from tablewright.errors import FieldPath
from tablewright.lint.findings import Context, Issue, rule

MAX_PARTITION_KEY_BYTES = 2048
MAX_SORT_KEY_BYTES = 1024


def _shapes(design: TableDesign) -> Iterator[tuple[str, str, Shape, dict[str, AttributeSpec]]]:
    """Each entity's key shape on each index, with the entity's attribute specs."""
    for entity, shapes in sorted(design.shapes.items()):
        specs = design.blueprint.entities[entity].attributes
        for index, shape in sorted(shapes.items()):
            yield entity, index, shape, specs


def _path(design: TableDesign, entity: str, index: str, part: str) -> FieldPath:
    if index == TABLE:
        return ("entities", entity, "key", part)
    if index in design.blueprint.entities[entity].index_keys:
        return ("entities", entity, "index_keys", index, part)
    patterns = [p for p in design.index(index).patterns if entity in design.blueprint.access_patterns[p].entities]
    return ("access_patterns", patterns[0]) if patterns else ("entities", entity)


@rule("TW201", "Changing value inside a key",
      "Keep mutable attributes (a status) out of the table's key: each change is a delete and a put in a "
      "transaction. In a GSI key a change costs two index writes, which capacity counts.",
      why="Changing value (`mutable: true` or a status-like name) inside a key",
      severity="warning in the table key, info in a GSI key")
def mutable_in_key(ctx: Context) -> Iterator[Issue]:
    design = ctx.design
    for entity, index, shape, specs in _shapes(design):
        for part, template in (("pk", shape.pk), ("sk", shape.sk)):
            for attribute in template.attributes:
                if not mutable(attribute, specs[attribute]):
                    continue
                declared = ("declared mutable" if specs[attribute].mutable
                            else "a status-like name, so assumed to change")
                if index == TABLE:
                    yield Issue(
                        "warning",
                        f"{entity}'s table key {template.text} contains `{attribute}` ({declared}): every change is a "
                        "delete of the old item and a put of the new one, in a transaction (4 WCU per KB)",
                        f"move `{attribute}` out of the table key, e.g. into a GSI key where a change is two index "
                        f"writes; declare `mutable: false` on `{attribute}` if it never changes",
                        _path(design, entity, index, part),
                    )
                else:
                    yield Issue(
                        "info",
                        f"{index}: {entity}'s key {template.text} contains `{attribute}` ({declared}): each change "
                        f"costs two writes on {index} (delete + put), counted in the capacity estimate",
                        "nothing to do if the rate is acceptable; the application updates the index key attributes "
                        "together with the value",
                        _path(design, entity, index, part),
                    )


@rule("TW202", "Sort key does not sort as its values",
      "Zero-pad numbers (`width`) and write timestamps in a chronological fixed-width format (the default ISO 8601).",
      why="Sort key does not sort as its values (number without `width`, non-chronological timestamp format), naming "
          "the patterns it breaks",
      severity="error when a pattern orders or ranges by it, else warning")
def unsortable_sort_key(ctx: Context) -> Iterator[Issue]:
    design = ctx.design
    for entity, index, shape, specs in _shapes(design):
        for attribute in shape.sk.attributes:
            spec = specs[attribute]
            problem = sort_problem(attribute, spec)
            if problem is None:
                continue
            broken = _ordering_patterns(design, entity, index, attribute)
            fix = (f"declare `width:` on `{attribute}` (the digits of its largest value), so keys sort as the "
                   "numbers do" if spec.type == "number" else
                   f"give `{attribute}` a chronological fixed-width format: `iso8601` (the default), "
                   "`epoch_seconds` or `epoch_millis`")
            yield Issue(
                "error" if broken else "warning",
                f"{place(index)}: {entity}'s sort key {shape.sk.text}: {problem}; "
                + (f"wrong order or range for {', '.join(broken)}" if broken else "no pattern orders by it yet"),
                fix,
                ("entities", entity, "attributes", attribute),
            )


def _ordering_patterns(design: TableDesign, entity: str, index: str, attribute: str) -> list[str]:
    """Patterns on `index` that order or range by `attribute` of `entity`."""
    found = []
    for plan in design.plans:
        if plan.index != index or entity not in plan.entities:
            continue
        ranged = design.blueprint.access_patterns[plan.pattern].range_condition
        if attribute in plan.order_attributes or (ranged and ranged[0] == attribute):
            found.append(plan.pattern)
    return sorted(found)


@rule("TW203", "Separator allowed inside a key value",
      "Declare `values:` or a `pattern:` without '#' for text attributes followed by other key components.",
      why="Separator allowed inside a key value: free text (no `values`, no `pattern` excluding `#`) followed by more "
          "components of the same key; never the last component, where a `#` shifts nothing",
      severity="warning")
def separator_in_values(ctx: Context) -> Iterator[Issue]:
    """Judged on where the value sits: a '#' inside the last component of a key shifts nothing, inside
    an earlier one it shifts every later component. Enumerated values cannot hold '#' (the loader
    refuses them); a `pattern:` that excludes '#' says the application refuses such values."""
    design = ctx.design
    seen: set[tuple[str, str]] = set()
    for entity, _index, shape, specs in _shapes(design):
        for template in (shape.pk, shape.sk):
            for position, segment in enumerate(template.segments[:-1]):
                attribute = segment.attribute
                if attribute is None or segment.bucket or (entity, attribute) in seen:
                    continue
                spec = specs[attribute]
                if not admits_separator(spec):
                    continue
                seen.add((entity, attribute))
                later = template.prefix(position + 1).text
                yield Issue(
                    "warning",
                    f"`{attribute}` of {entity} is free text in key {template.text}, followed by more components: "
                    f"a value containing '{SEPARATOR}' shifts them (after `{later}`), so two items can share a key "
                    "or a prefix query catch the wrong ones",
                    f"declare `pattern:` on `{attribute}` (e.g. \"^[^#]+$\") and refuse such values on write, or move "
                    f"`{attribute}` to the end of the key",
                    ("entities", entity, "attributes", attribute),
                )


@rule("TW204", "Overlapping sort keys of entities sharing partitions",
      "Start each entity's sort key with a literal of its own, so one entity's prefix is never a prefix of another's.",
      why="Overlapping sort keys of entities sharing partitions",
      severity="warning; error when two entities can have the same primary key")
def overlapping_sort_keys(ctx: Context) -> Iterator[Issue]:
    design = ctx.design
    blueprint = design.blueprint
    for index in [TABLE] + [i.name for i in design.indexes]:
        members = sorted((e, shapes[index]) for e, shapes in design.shapes.items() if index in shapes)
        for position, (first, one) in enumerate(members):
            for second, other in members[position + 1:]:
                if not may_share(blueprint, first, one.pk, second, other.pk):
                    continue
                if may_share(blueprint, first, one.sk, second, other.sk):
                    yield Issue(
                        "error",
                        f"{place(index)}: {first} ({one}) and {second} ({other}) can have the same key: "
                        "one item would overwrite the other",
                        f"give {second}'s sort key a leading literal of its own",
                        _path(design, second, index, "sk"),
                    )
                    continue
                shorter, longer = sorted([(first, one), (second, other)], key=lambda m: len(m[1].sk.segments))
                leading = _leading_literals(shorter[1].sk)
                if leading and may_share(blueprint, shorter[0], shorter[1].sk, longer[0], longer[1].sk, leading):
                    prefix = shorter[1].sk.prefix(leading).text + SEPARATOR
                    yield Issue(
                        "warning",
                        f"{place(index)}: {shorter[0]} ({shorter[1].sk.text}) and {longer[0]} "
                        f"({longer[1].sk.text}) share the sort-key prefix {prefix!r} in the same partitions: a "
                        "begins_with on it would return both",
                        f"start {longer[0]}'s sort key with a literal of its own",
                        _path(design, longer[0], index, "sk"),
                    )


def _leading_literals(template: KeyTemplate) -> int:
    count = 0
    while count < len(template.segments) and template.segments[count].literal is not None:
        count += 1
    return count


def _max_bytes(spec: AttributeSpec, bucket: str | None) -> int | None:
    """The longest text an attribute takes inside a key, or None when unknown."""
    if bucket is not None:
        return len(datetime(2024, 3, 1, tzinfo=UTC).strftime(BUCKET_FORMATS[bucket]))
    if spec.type == "string":
        if spec.values:
            return max(len(v.encode()) for v in spec.values)
        return spec.max_length
    if spec.type == "number":
        return spec.width or 40
    if spec.type == "date":
        return 10
    if spec.type == "boolean":
        return 5
    fmt = spec.timestamp_format
    if fmt in EPOCH_WIDTH:
        return EPOCH_WIDTH[fmt]
    if fmt == "iso8601":
        return 20
    sample = datetime(2024, 9, 30, 23, 59, 59, 999999, tzinfo=UTC).strftime(fmt)
    return len(sample.encode()) + 9 * fmt.count("%B")


@dataclass(frozen=True)
class KeyLength:
    """How long a key can get: `bytes` at its longest, counting each unbounded component (free text without
    `max_length`) as one byte, which it holds at least; `unbounded` names those components."""

    bytes: int
    unbounded: tuple[str, ...]


def key_bytes(template: KeyTemplate, specs: dict[str, AttributeSpec]) -> KeyLength:
    total = len(template.segments) - 1
    unbounded = []
    for segment in template.segments:
        if segment.literal is not None:
            total += len(segment.literal)
        elif segment.shards is not None:
            total += len(str(segment.shards - 1))
        else:
            size = _max_bytes(specs[str(segment.attribute)], segment.bucket)
            if size is None:
                unbounded.append(str(segment.attribute))
            total += 1 if size is None else size
    return KeyLength(total, tuple(unbounded))


def _shown(text: str) -> str:
    """A template in a message: long literals cut in the middle."""
    return text if len(text) <= 120 else f"{text[:60]}...{text[-40:]}"


# DynamoDB's key size limits: "Partition key value: 2,048 bytes; sort key value: 1,024 bytes" (Developer Guide,
# "Quotas in Amazon DynamoDB", Attributes: https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/
# ServiceQuotas.html#limits-attributes).
@rule("TW205", "Key over DynamoDB's size limit",
      "Partition keys may hold 2,048 bytes and sort keys 1,024: shorten the components or their `max_length`.",
      why="Key over DynamoDB's size limit (partition 2,048 B, sort 1,024 B) at its longest: literals, encoded values "
          "and declared `max_length`s (free text without one counts one byte: a key over the limit from its literals "
          "alone is caught too); DynamoDB refuses every write of such an item, and `verify --allow-lint-errors` fails "
          "as it would",
      severity="error")
def key_size(ctx: Context) -> Iterator[Issue]:
    design = ctx.design
    for entity, index, shape, specs in _shapes(design):
        for part, template, limit in (("pk", shape.pk, MAX_PARTITION_KEY_BYTES), ("sk", shape.sk, MAX_SORT_KEY_BYTES)):
            length = key_bytes(template, specs)
            if length.bytes > limit:
                kind = "partition" if part == "pk" else "sort"
                reach = (f"is at least {length.bytes:,} bytes (with one byte for each of "
                         f"{', '.join(f'`{a}`' for a in length.unbounded)})" if length.unbounded
                         else f"can reach {length.bytes:,} bytes (its literals, encoded values and declared "
                              "max_length)")
                yield Issue(
                    "error",
                    f"{place(index)}: {entity}'s {kind} key {_shown(template.text)} {reach}, over DynamoDB's "
                    f"{limit:,}: DynamoDB refuses every write of such an item",
                    "shorten the literals and the longest components, or key by an id instead of free text",
                    _path(design, entity, index, part),
                )

