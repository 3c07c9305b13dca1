"""Checks that relate one part of a blueprint to another. Each error names the exact field."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

from tablewright.blueprint.encoding import describe_stored, parse_value
from tablewright.blueprint.invalid import Invalid
from tablewright.blueprint.language import RESERVED_ATTRIBUTE, AccessPattern, Blueprint, EntitySpec, KeySpec
from tablewright.blueprint.migration_checks import check_attribute_renames, check_migration, check_migrations
from tablewright.blueprint.provider import (
    lowest_version,
    supports_insights_mode,
    supports_recovery_period,
    supports_warm_throughput,
)
from tablewright.blueprint.tags import check_tags
from tablewright.blueprint.templates import entity_tag, parse_template
from tablewright.blueprint.tenancy import check_tenant
from tablewright.blueprint.writes import check_failing_updates
from tablewright.errors import BlueprintError, ErrorCode, FieldPath, TablewrightError, closest_name, combined

TABLE = "table"
MAX_PATTERNS_PER_ENTITY = 100


def check_references(blueprint: Blueprint) -> None:
    """Every cross-reference problem of the blueprint, collected (one error per entity, pattern, section)."""
    errors: list[TablewrightError] = []

    def collect(check: Callable[..., None], *arguments: Any) -> None:
        try:
            check(*arguments)
        except TablewrightError as error:
            errors.append(error)

    collect(check_tags, blueprint)
    collect(_check_entity_tags, blueprint)
    for name, entity in blueprint.entities.items():
        collect(_check_entity, name, entity)
    collect(_check_index_names, blueprint)
    collect(_check_patterns_per_entity, blueprint)
    for name, pattern in blueprint.access_patterns.items():
        collect(_check_pattern, blueprint, name, pattern)
    collect(_check_ttl, blueprint)
    collect(check_tenant, blueprint)
    collect(check_failing_updates, blueprint)
    collect(_check_provider, blueprint)
    collect(_check_warm_throughput, blueprint)
    collect(_check_recovery_period, blueprint)
    collect(_check_index_throughput, blueprint)
    collect(_check_notify_region, blueprint)
    collect(_check_lint_codes, blueprint)
    for position, migration in enumerate(blueprint.migrations):
        collect(check_migration, blueprint, position, migration, suggest)
    collect(check_migrations, blueprint)
    if errors:
        raise combined(errors)


def _check_entity_tags(blueprint: Blueprint) -> None:
    tags: dict[str, str] = {}
    for name in blueprint.entities:
        tag = entity_tag(name)
        if tag in tags:
            raise BlueprintError(
                f"entities `{tags[tag]}` and `{name}` both key their items as {tag}",
                path=("entities", name),
                hint="rename one of them",
                code=ErrorCode.CONTRADICTION,
            )
        tags[tag] = name












def _check_lint_codes(blueprint: Blueprint) -> None:
    for code in blueprint.lint.ignore:
        if not re.fullmatch(r"TW[0-9]{3}", code):
            raise BlueprintError(f"`{code}` is not a finding code", path=("lint", "ignore", code),
                                 code=ErrorCode.UNKNOWN_NAME,
                                 hint="codes look like TW101; `tablewright lint` prints them")


def index_name_problem(names: Iterable[str]) -> tuple[str, str, str] | None:
    """Index names are case-sensitive in DynamoDB but name Terraform resources in lower case, so two
    names that differ only in case (or from a planned `GSI<n>` only in case) would collide. The first
    name (in sorted order) that does: (name, problem, fix); None when none does."""
    seen: dict[str, str] = {}
    for name in sorted(set(names)):
        folded = re.sub(r"[^a-z0-9_]+", "_", name.lower()).strip("_")
        if folded in seen:
            return (name, f"index names `{seen[folded]}` and `{name}` differ only in case or punctuation, and would "
                          "name the same Terraform resources", "give the indexes distinct names")
        seen[folded] = name
        if re.fullmatch(r"gsi[0-9]+", folded) and not re.fullmatch(r"GSI[1-9][0-9]*", name):
            return (name, f"`{name}` looks like a planned index name but is not one (`GSI<n>`)",
                    f"write `{name.upper()}` to pin a planned index, or choose another name")
    return None


def _check_index_names(blueprint: Blueprint) -> None:
    problem = index_name_problem({index for entity in blueprint.entities.values() for index in entity.index_keys}
                                 | set(blueprint.indexes))
    if problem is not None:
        name, message, hint = problem
        raise BlueprintError(message, path=_index_path(blueprint, name), code=ErrorCode.INDEX_SETTINGS, hint=hint)


def _index_path(blueprint: Blueprint, index: str) -> FieldPath:
    for entity_name, entity in sorted(blueprint.entities.items()):
        if index in entity.index_keys:
            return ("entities", entity_name, "index_keys", index)
    return ("indexes", index)


def _check_patterns_per_entity(blueprint: Blueprint) -> None:
    counts = Counter(pattern.entities[0] for pattern in blueprint.access_patterns.values())
    for entity, count in sorted(counts.items()):
        if count > MAX_PATTERNS_PER_ENTITY:
            raise BlueprintError(
                f"{count} access patterns read `{entity}`; Tablewright plans indexes for at most "
                f"{MAX_PATTERNS_PER_ENTITY} per entity", path=("access_patterns",), code=ErrorCode.OVER_LIMIT,
                hint="merge patterns that differ only in their filters or limits (one index key serves them), or "
                     "split the entity")


def suggest(name: str, options: Iterable[str]) -> str:
    options = sorted(options)
    if not options:
        return "none is declared: declare it first"
    close = closest_name(name, options)
    prefix = f"did you mean `{close}`? " if close else ""
    return f"{prefix}known: {', '.join(options)}"


def _check_entity(name: str, entity: EntitySpec) -> None:
    base = ("entities", name)
    for attribute in entity.attributes:
        if RESERVED_ATTRIBUTE.match(attribute):
            raise BlueprintError(
                f"attribute name `{attribute}` is reserved for generated keys",
                path=(*base, "attributes", attribute),
                hint="rename it; PK, SK, GSI<n>PK, GSI<n>SK and names starting with '_' are taken",
                code=ErrorCode.CONTRADICTION,
            )
    check_attribute_renames(name, entity)
    _check_templates(entity, entity.key, (*base, "key"))
    _check_shard_by(entity, entity.key.shard_by, (*base, "key", "shard_by"))
    _check_writes(entity, base)
    for position, example in enumerate(entity.examples):
        for attribute, raw in example.items():
            where = (*base, "examples", position, attribute)
            if attribute not in entity.attributes:
                raise BlueprintError(
                    f"`{attribute}` is not an attribute of `{name}`", path=where,
                    hint=suggest(attribute, entity.attributes), code=ErrorCode.UNKNOWN_NAME,
                )
            try:
                parse_value(entity.attributes[attribute], raw)
            except ValueError as error:
                raise BlueprintError(str(error), code=ErrorCode.VALUE_NOT_ALLOWED, path=where,
                                     hint=f"write a value of `{attribute}` as its type says "
                                          f"({describe_stored(entity.attributes[attribute])})") from None
    for index, keys in entity.index_keys.items():
        if index == TABLE:
            raise BlueprintError("`table` is not an index name",
                                 code=ErrorCode.INDEX_SETTINGS, path=(*base, "index_keys", index))
        _check_templates(entity, keys, (*base, "index_keys", index))
        _check_shard_by(entity, keys.shard_by, (*base, "index_keys", index, "shard_by"))


def _check_templates(entity: EntitySpec, keys: KeySpec, path: FieldPath) -> None:
    _check_template(entity, keys.pk, (*path, "pk"))
    if keys.sk is not None:
        _check_template(entity, keys.sk, (*path, "sk"))


def _check_template(entity: EntitySpec, text: str, path: FieldPath) -> None:
    try:
        template = parse_template(text)
    except Invalid as error:
        raise BlueprintError(error.message, code=ErrorCode.KEY_TEMPLATE, path=path, hint=error.hint) from None
    for segment in template.segments:
        attribute = segment.attribute
        if attribute is None:
            continue
        if attribute not in entity.attributes:
            raise BlueprintError(
                f"key template {text!r} uses `{{{attribute}}}`, which is not an attribute of this entity",
                path=path,
                hint=f"declare `{attribute}` under attributes, or fix the name; "
                f"{suggest(attribute, entity.attributes)}",
                code=ErrorCode.UNKNOWN_NAME,
            )
        spec = entity.attributes[attribute]
        if spec.is_document:
            raise BlueprintError(
                f"key template {text!r} uses `{{{attribute}}}`, a {spec.type}: keys hold strings, numbers, "
                "timestamps, dates and booleans",
                path=path, hint=f"key by a scalar attribute; keep `{attribute}` as a returned value",
                code=ErrorCode.KEY_TEMPLATE)
        if spec.is_optional and path[-2] == "key":
            raise BlueprintError(
                f"key template {text!r} uses `{{{attribute}}}`, which is optional, but every item has a table key",
                path=path, hint=f"make `{attribute}` required, or use it in an index key (a sparse index)",
                code=ErrorCode.KEY_TEMPLATE)
        if segment.bucket and spec.type not in ("timestamp", "date"):
            raise BlueprintError(
                f"`{{{segment.placeholder}}}` buckets `{attribute}`, a {entity.attributes[attribute].type}",
                path=path,
                hint="time buckets apply to timestamp and date attributes",
                code=ErrorCode.KEY_TEMPLATE,
            )
        if segment.bucket == "hour" and spec.type == "date":
            raise BlueprintError(
                f"`{{{segment.placeholder}}}` buckets `{attribute}` by hour, but a date has no time of day",
                path=path, hint=f"write {{{attribute}:day}}, or make `{attribute}` a timestamp",
                code=ErrorCode.KEY_TEMPLATE)
        if segment.bucket and path[-1] != "pk":
            raise BlueprintError(
                f"`{{{segment.placeholder}}}`: time buckets belong in partition keys",
                path=path,
                hint=f"keep `{{{attribute}}}` itself in the sort key so ranges stay exact",
                code=ErrorCode.KEY_TEMPLATE,
            )


def _check_writes(entity: EntitySpec, base: FieldPath) -> None:
    for position, attribute in enumerate(entity.writes.changes or () if entity.writes else ()):
        if attribute not in entity.attributes:
            raise BlueprintError(f"`writes.changes` names `{attribute}`, which is not an attribute of this entity",
                                 path=(*base, "writes", "changes", position), code=ErrorCode.UNKNOWN_NAME,
                                 hint=suggest(attribute, entity.attributes))
    for position, attribute in enumerate(entity.writes.passes if entity.writes else ()):
        if attribute not in entity.attributes:
            raise BlueprintError(f"`writes.passes` names `{attribute}`, which is not an attribute of this entity",
                                 path=(*base, "writes", "passes", position), code=ErrorCode.UNKNOWN_NAME,
                                 hint=suggest(attribute, entity.attributes))


def _check_shard_by(entity: EntitySpec, shard_by: list[str] | None, path: FieldPath) -> None:
    for attribute in shard_by or ():
        if attribute not in entity.attributes:
            raise BlueprintError(
                f"`shard_by` names `{attribute}`, which is not an attribute of this entity",
                path=path,
                hint=suggest(attribute, entity.attributes),
                code=ErrorCode.UNKNOWN_NAME,
            )


def _check_pattern(blueprint: Blueprint, name: str, pattern: AccessPattern) -> None:
    base = ("access_patterns", name)
    for entity_name in pattern.entities:
        if entity_name not in blueprint.entities:
            raise BlueprintError(
                f"unknown entity `{entity_name}`", path=(*base, "entity"),
                hint=suggest(entity_name, blueprint.entities),
                code=ErrorCode.UNKNOWN_NAME,
            )
    if len(set(pattern.entities)) != len(pattern.entities):
        raise BlueprintError("an entity is listed twice", code=ErrorCode.CONTRADICTION, path=(*base, "entity"),
                             hint="list each entity once")
    entities = [blueprint.entities[e] for e in pattern.entities]
    common = set.intersection(*(set(e.attributes) for e in entities))
    every = set().union(*(set(e.attributes) for e in entities))
    what = f"`{pattern.entities[0]}`" if len(entities) == 1 else "every entity of the collection"
    for section in ("where", "filter"):
        for attribute, op in getattr(pattern, section).items():
            where = (*base, section, attribute)
            if attribute not in common:
                raise BlueprintError(f"`{attribute}` is not an attribute of {what}",
                                     code=ErrorCode.UNKNOWN_NAME, path=where,
                                     hint=suggest(attribute, common))
            spec = entities[0].attributes[attribute]
            if spec.is_document:
                raise BlueprintError(
                    f"`{attribute}` is a {spec.type}: conditions compare strings, numbers, timestamps, dates and "
                    "booleans", path=where, code=ErrorCode.CONTRADICTION,
                    hint=f"condition on a scalar attribute; `{attribute}` can still be returned")
            if op == "begins_with" and spec.type != "string":
                raise BlueprintError(
                    f"begins_with needs a string attribute; `{attribute}` is a {spec.type}",
                    path=where,
                    hint="use `between` for a range of numbers, dates or timestamps",
                    code=ErrorCode.CONTRADICTION,
                )
            if len({e.attributes[attribute].type for e in entities}) > 1:
                raise BlueprintError(f"`{attribute}` has different types in the entities of this collection",
                                     code=ErrorCode.CONTRADICTION, path=where)
            if section == "filter" and spec.type == "boolean":
                raise BlueprintError(
                    f"filtering on the boolean `{attribute}` reads every item and discards some",
                    path=where,
                    hint="use a sparse index instead: write the index key only on items where it is true",
                    code=ErrorCode.CONTRADICTION,
                )
    if pattern.order_by is not None and pattern.order_by not in common:
        raise BlueprintError(
            f"`{pattern.order_by}` is not an attribute of {what}",
            path=(*base, "order_by"),
            hint=suggest(pattern.order_by, common),
            code=ErrorCode.UNKNOWN_NAME,
        )
    if pattern.order_by is not None and entities[0].attributes[pattern.order_by].is_document:
        raise BlueprintError(f"`{pattern.order_by}` is a {entities[0].attributes[pattern.order_by].type}: results "
                             "are ordered by a sort key, which holds scalars", path=(*base, "order_by"),
                                                                                     code=ErrorCode.CONTRADICTION,
                             hint="order by a string, number, timestamp or date attribute")
    for position, attribute in enumerate(pattern.returns or ()):
        if attribute not in every:
            raise BlueprintError(
                f"`{attribute}` is not an attribute of {what}",
                path=(*base, "returns", position),
                hint=suggest(attribute, every),
                code=ErrorCode.UNKNOWN_NAME,
            )
    _check_pinned_index(blueprint, base, pattern)


def _check_pinned_index(blueprint: Blueprint, base: FieldPath, pattern: AccessPattern) -> None:
    if pattern.index is None or pattern.index == TABLE:
        return
    declared = {index for entity in blueprint.entities.values() for index in entity.index_keys}
    if pattern.index not in declared:
        raise BlueprintError(
            f"`index: {pattern.index}` names no index with declared keys",
            path=(*base, "index"),
            hint=(
                "use `index: table`, remove `index:` to let the planner choose, or declare the keys under "
                f"`entities.<Entity>.index_keys.{pattern.index}`"
            ),
            code=ErrorCode.UNKNOWN_NAME,
        )
    for entity_name in pattern.entities:
        if pattern.index not in blueprint.entities[entity_name].index_keys:
            raise BlueprintError(
                f"`{entity_name}` has no keys on index `{pattern.index}`",
                path=(*base, "index"),
                hint=f"declare `entities.{entity_name}.index_keys.{pattern.index}: {{pk: ..., sk: ...}}`",
                code=ErrorCode.UNKNOWN_NAME,
            )
    local = pattern.index in blueprint.indexes and blueprint.indexes[pattern.index].type == "local"
    if pattern.consistent and not local:
        raise BlueprintError(
            "global secondary indexes only support eventually consistent reads",
            path=(*base, "consistent"),
            hint="remove `consistent: true` or use `index: table`",
            code=ErrorCode.CONTRADICTION,
        )


def _check_provider(blueprint: Blueprint) -> None:
    if lowest_version(blueprint.terraform.aws_provider) is None:
        raise BlueprintError(f"cannot read the version constraint {blueprint.terraform.aws_provider!r}",
                             code=ErrorCode.VALUE_NOT_ALLOWED, path=("terraform", "aws_provider"),
                             hint="write e.g. \"~> 5.100\" or \">= 6.11\"")
    if blueprint.contributor_insights == "throttled_keys" and not supports_insights_mode(blueprint):
        raise BlueprintError(
            f"throttled_keys needs hashicorp/aws >= 6.11 (the `mode` argument); the constraint "
            f"{blueprint.terraform.aws_provider!r} allows older versions, which always record accessed and throttled "
            "keys",
            path=("contributor_insights",),
            hint="set `terraform: {aws_provider: \">= 6.11\"}`, or use `accessed_and_throttled_keys` (or `off`)",
            code=ErrorCode.CONTRADICTION,
        )


def _check_warm_throughput(blueprint: Blueprint) -> None:
    paths: list[FieldPath] = [("table", "warm_throughput")] if blueprint.table.warm_throughput else []
    paths += [("indexes", name, "warm_throughput") for name, spec in blueprint.indexes.items() if spec.warm_throughput]
    if paths and not supports_warm_throughput(blueprint):
        raise BlueprintError(
            f"warm_throughput needs hashicorp/aws >= 6.13 (the `warm_throughput` argument); the constraint "
            f"{blueprint.terraform.aws_provider!r} allows older versions, which do not know it",
            path=paths[0],
            hint="set `terraform: {aws_provider: \">= 6.13\"}`, or remove `warm_throughput`",
            code=ErrorCode.CONTRADICTION,
        )


def _check_recovery_period(blueprint: Blueprint) -> None:
    if blueprint.table.point_in_time_recovery_days is not None and not supports_recovery_period(blueprint):
        raise BlueprintError(
            f"point_in_time_recovery_days needs hashicorp/aws >= 5.100 (`recovery_period_in_days`); the constraint "
            f"{blueprint.terraform.aws_provider!r} allows older versions",
            path=("table", "point_in_time_recovery_days"),
            hint="set `terraform: {aws_provider: \"~> 5.100\"}` (or later), or remove `point_in_time_recovery_days`",
            code=ErrorCode.CONTRADICTION)


def _check_index_throughput(blueprint: Blueprint) -> None:
    if blueprint.table.billing != "provisioned":
        return
    for name, spec in blueprint.indexes.items():
        if spec.max_throughput is not None:
            raise BlueprintError(
                "`max_throughput` applies to on-demand tables only; this table is provisioned",
                path=("indexes", name, "max_throughput"),
                hint=f"remove it; the autoscaler stops at `indexes.{name}.capacity` (or the table's capacity)",
                code=ErrorCode.CONTRADICTION,
            )


def arn_region(arn: str) -> str:
    """The region field of an ARN (`arn:partition:service:region:account:resource`)."""
    return arn.split(":")[3]


def _check_notify_region(blueprint: Blueprint) -> None:
    """CloudWatch alarm actions and EventBridge rule targets must be in the alarm's and the rule's own region."""
    if blueprint.alarms.notify == "create" or not blueprint.alarms.enabled:
        return
    for position, arn in enumerate(blueprint.alarms.notify):
        topic_region = arn_region(arn)
        if blueprint.region is None:
            raise BlueprintError(
                f"alarms.notify names a topic in {topic_region}, but the blueprint sets no `region`: alarms and the "
                "change rule can notify topics of their own region only, and the stack's region would be whatever "
                "Terraform's environment says",
                path=("alarms", "notify", position),
                hint=f"set `region: {topic_region}` (the region the stack deploys to), or write `notify: create`",
                code=ErrorCode.CONTRADICTION,
            )
        if topic_region != blueprint.region:
            raise BlueprintError(
                f"the topic {arn} is in {topic_region}, the stack in {blueprint.region}: CloudWatch alarms and "
                "EventBridge rules notify topics of their own region only",
                path=("alarms", "notify", position),
                hint=f"use a topic in {blueprint.region} (one per region, subscribed to the same on-call), or write "
                     "`notify: create`",
                code=ErrorCode.CONTRADICTION,
            )


def _check_ttl(blueprint: Blueprint) -> None:
    name = blueprint.table.ttl_attribute
    stated = sorted(name for name, spec in blueprint.access_patterns.items() if "expired" in spec.model_fields_set)
    if name is None and stated:
        raise BlueprintError(f"`{stated[0]}` says `expired:`, and the table has no TTL", code=ErrorCode.CONTRADICTION,
                             path=("access_patterns", stated[0], "expired"),
                             hint="remove `expired`, or set `table.ttl_attribute` to the attribute that expires items")
    if name is None or not blueprint.entities:  # an adopted table whose entities are still to be described
        return
    specs = [entity.attributes[name] for entity in blueprint.entities.values() if name in entity.attributes]
    if not specs:
        raise BlueprintError(
            f"TTL attribute `{name}` is not an attribute of any entity",
            path=("table", "ttl_attribute"),
            hint="declare it (a number or a timestamp with `format: epoch_seconds`) on the entities that expire",
            code=ErrorCode.UNKNOWN_NAME,
        )
    for spec in specs:
        if not (spec.type == "number" or (spec.type == "timestamp" and spec.timestamp_format == "epoch_seconds")):
            raise BlueprintError(
                f"TTL attribute `{name}` must hold epoch seconds as a number; it is a {spec.type}",
                path=("table", "ttl_attribute"),
                hint=f"declare `{name}: {{type: timestamp, format: epoch_seconds}}`",
                code=ErrorCode.CONTRADICTION,
            )
