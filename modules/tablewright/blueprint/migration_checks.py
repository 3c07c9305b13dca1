"""Checks of `migrations:` and renamed attributes against the blueprint: what each names exists (or is gone, for a
removal), and no two entities or attributes are renamed into one, which would merge their items' data."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from tablewright.blueprint.encoding import describe_stored, parse_value
from tablewright.blueprint.invalid import Invalid
from tablewright.blueprint.language import RESERVED_ATTRIBUTE, Blueprint, EntitySpec, Migration
from tablewright.blueprint.templates import parse_template
from tablewright.errors import BlueprintError, ErrorCode, FieldPath

Suggest = Callable[[str, Iterable[str]], str]


def check_migrations(blueprint: Blueprint) -> None:
    _check_renamed_or_removed(blueprint)
    _check_no_merging_renames(blueprint)


def check_attribute_renames(name: str, entity: EntitySpec) -> None:
    """A renamed attribute's old name is gone from the entity and taken by one rename only (two attributes renamed
    from one would both claim its values)."""
    claimed: dict[str, str] = {}
    for attribute, spec in entity.attributes.items():
        former = spec.renamed_from
        if former is None:
            continue
        where = ("entities", name, "attributes", attribute, "renamed_from")
        if RESERVED_ATTRIBUTE.match(former):
            raise BlueprintError(f"`{former}` is a key or marker attribute Tablewright writes, not one of `{name}`'s",
                                 path=where, code=ErrorCode.VALUE_NOT_ALLOWED,
                                 hint="name the attribute's old name, as the blueprint declared it before")
        if former in entity.attributes:
            raise BlueprintError(f"`{former}` is still an attribute of `{name}`, so `{attribute}` was not renamed "
                                 "from it", path=where, code=ErrorCode.CONTRADICTION,
                                 hint=f"remove `{former}` (it is `{attribute}` now), or `renamed_from`")
        if former in claimed:
            raise BlueprintError(f"`{claimed[former]}` and `{attribute}` are both renamed from `{former}`: old items "
                                 "hold one value for both", path=where, code=ErrorCode.CONTRADICTION,
                                 hint="rename one attribute from it; the other is a new attribute (declare a "
                                      "`default` for old items under `migrations:` if it is required)")
        claimed[former] = attribute


def check_migration(blueprint: Blueprint, position: int, migration: Migration, suggest: Suggest) -> None:
    base = ("migrations", position)
    if migration.kind == "attribute":
        _check_attribute_migration(blueprint, base, migration, suggest)
        return
    if migration.kind == "removal":
        if migration.entity in blueprint.entities:
            raise BlueprintError(f"the removal of `{migration.entity}` names an entity the blueprint still declares",
                                 path=(*base, "entity"), code=ErrorCode.CONTRADICTION,
                                 hint=f"remove `entities.{migration.entity}`, or this entry if it stays")
        if migration.removal == "expire" and blueprint.table.ttl_attribute is None:
            raise BlueprintError("`removal: expire` needs the table's TTL (`table.ttl_attribute`)",
                                 path=(*base, "removal"), code=ErrorCode.CONTRADICTION,
                                 hint="set `table.ttl_attribute`, or use `delete` (a job deletes the items)")
        return
    if migration.entity not in blueprint.entities:
        raise BlueprintError(f"unknown entity `{migration.entity}`", path=(*base, "entity"),
                             code=ErrorCode.UNKNOWN_NAME,
                             hint=suggest(migration.entity, blueprint.entities))
    if migration.renamed_from is not None and migration.renamed_from in blueprint.entities:
        raise BlueprintError(f"`{migration.renamed_from}` is still an entity of the blueprint, so it was not renamed",
                             path=(*base, "renamed_from"), code=ErrorCode.CONTRADICTION,
                             hint=f"remove `entities.{migration.renamed_from}` (it is `{migration.entity}` now), or "
                                  "this entry")
    for side, key in (("from", migration.from_), ("to", migration.to)):
        for part in ("pk", "sk") if key is not None else ():
            try:
                parse_template(getattr(key, part))
            except Invalid as error:
                raise BlueprintError(error.message, path=(*base, side, part),
                                     code=ErrorCode.KEY_TEMPLATE, hint=error.hint) from None


def _check_attribute_migration(blueprint: Blueprint, base: FieldPath, migration: Migration, suggest: Suggest) -> None:
    entity = blueprint.entities.get(migration.entity)
    if entity is None:
        raise BlueprintError(f"unknown entity `{migration.entity}`", path=(*base, "entity"),
                             code=ErrorCode.UNKNOWN_NAME, hint=suggest(migration.entity, blueprint.entities))
    attribute = str(migration.attribute)
    spec = entity.attributes.get(attribute)
    if migration.removal is not None:
        if spec is not None:
            raise BlueprintError(f"the removal of `{migration.entity}.{attribute}` names an attribute the entity "
                                 "still declares", path=(*base, "attribute"), code=ErrorCode.CONTRADICTION,
                                 hint=f"remove `entities.{migration.entity}.attributes.{attribute}`, or this entry")
        return
    if spec is None:
        raise BlueprintError(f"`{attribute}` is not an attribute of `{migration.entity}`", path=(*base, "attribute"),
                             code=ErrorCode.UNKNOWN_NAME, hint=suggest(attribute, entity.attributes))
    if migration.default is not None:
        if spec.is_optional:
            raise BlueprintError(f"`{migration.entity}.{attribute}` is optional: old items may go without it",
                                 path=(*base, "default"), code=ErrorCode.CONTRADICTION,
                                 hint="remove this entry, or make the attribute required")
        try:
            parse_value(spec, migration.default)
        except ValueError as error:
            raise BlueprintError(f"`default` is not a value of `{attribute}`: {error}", path=(*base, "default"),
                                 code=ErrorCode.VALUE_NOT_ALLOWED,
                                 hint=f"write a value as `{attribute}`'s type says ({describe_stored(spec)})") from None


def _check_no_merging_renames(blueprint: Blueprint) -> None:
    """Each entity is renamed from at most one and into at most one: two renamed into one would merge their items
    under one name (and, where their keys meet, one would overwrite the other)."""
    into: dict[str, str] = {}
    out_of: dict[str, str] = {}
    for position, migration in enumerate(blueprint.migrations):
        if migration.kind != "rename" or migration.renamed_from is None:
            continue
        where = ("migrations", position, "renamed_from")
        former, entity = migration.renamed_from, migration.entity
        if entity in into:
            raise BlueprintError(
                f"`{into[entity]}` and `{former}` are both renamed `{entity}`: their items would merge under one name, "
                "and where their keys meet one would overwrite the other", path=where, code=ErrorCode.CONTRADICTION,
                hint=f"rename one of them into a distinct entity with keys of its own, or keep it as it is; then "
                     f"move its items with a key migration (`tablewright migrate`) if `{entity}` must hold them")
        if former in out_of:
            raise BlueprintError(f"`{former}` is renamed both `{out_of[former]}` and `{entity}`", path=where,
                                 code=ErrorCode.CONTRADICTION, hint="rename it once; the other entity is new")
        into[entity], out_of[former] = former, entity


def _check_renamed_or_removed(blueprint: Blueprint) -> None:
    """An entity's items move to a new name or go, not both (running both would delete the renamed items)."""
    renamed = {m.renamed_from: m.entity for m in blueprint.migrations if m.renamed_from is not None}
    for position, migration in enumerate(blueprint.migrations):
        if migration.removal is not None and migration.entity in renamed:
            raise BlueprintError(
                f"`{migration.entity}` is declared both renamed (to `{renamed[migration.entity]}`) and removed",
                path=("migrations", position, "entity"), code=ErrorCode.CONTRADICTION,
                hint=f"keep the rename if `{renamed[migration.entity]}` holds its items, or the removal if they go")
