"""Plan the fewest GSIs for the patterns the base table and declared indexes cannot serve.

An item holds one value per GSI key attribute, so an entity takes part in a GSI with one key shape.
Patterns of the same entity share a shape when one partition key and one sort-key order serve them
all; the planner partitions each entity's patterns into the fewest such groups (an exact search,
small in practice). Entities overload the same GSIs: the i-th shape of every entity goes to the
i-th index, and generated partition keys start with the entity's tag so they never collide.

Nothing here depends on pattern names or on the order of the YAML: needs are ordered by what they
ask of a key, groups by the key shape they make. Locked indexes (the design lock) are closed: new
shapes go to new indexes numbered after every existing one.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from tablewright.blueprint.language import AccessPattern, Blueprint, KeySpec
from tablewright.blueprint.templates import KeyTemplate, Segment, entity_tag
from tablewright.design.design import KeyNames, Shape, key_names
from tablewright.design.serve import may_share, tenant_led

# Above this many patterns per entity the exact search would be slow; first-fit is used instead.
EXACT_SEARCH_LIMIT = 14


@dataclass(frozen=True)
class Need:
    """What one pattern requires of an index key: attributes bound by `=` and the one it orders by."""

    pattern: str
    equalities: frozenset[str]
    ordering: str | None


def need_of(name: str, pattern: AccessPattern) -> Need:
    return Need(name, frozenset(pattern.equalities), pattern.ordering_attribute)


def _canonical(need: Need) -> tuple[tuple[str, ...], str, str]:
    """What a need asks of a key; the pattern's name only separates needs that ask the same."""
    return tuple(sorted(need.equalities)), need.ordering or "", need.pattern


def sort_sequence(needs: Sequence[Need], partition: frozenset[str]) -> list[str] | None:
    """Sort-key attributes that serve every need given the partition attributes, or None if impossible.

    Each need wants its remaining `=` attributes as the leading sort-key components (in any order)
    followed by its ordering attribute. Processing needs from the fewest such attributes up builds
    the one sequence that satisfies them all, or proves there is none.
    """
    sequence: list[str] = []
    for need in sorted(needs, key=lambda n: (len(n.equalities - partition), _canonical(n))):
        leading = need.equalities - partition
        size = len(leading)
        if len(sequence) >= size:
            if set(sequence[:size]) != leading:
                return None
        else:
            if not set(sequence) <= leading:
                return None
            sequence += sorted(leading - set(sequence))
        if need.ordering is not None:
            if len(sequence) > size:
                if sequence[size] != need.ordering:
                    return None
            else:
                sequence.append(need.ordering)
    return sequence


def shape_for(blueprint: Blueprint, entity: str, needs: Sequence[Need]) -> tuple[KeyTemplate, KeyTemplate] | None:
    """The (partition, sort) key templates serving all `needs` of `entity`, or None when none can."""
    partition = frozenset.intersection(*(need.equalities for need in needs))
    if not partition:
        return None
    tenant = blueprint.tenant
    scoped = tenant is not None and any(tenant in need.equalities for need in needs)
    if scoped and tenant not in partition:  # a tenant's reads never share a key with cross-tenant ones
        return None
    sequence = sort_sequence(needs, partition)
    if sequence is None:
        return None
    tag = Segment(literal=entity_tag(entity))
    rest = tuple(Segment(attribute=a) for a in sorted(partition - {tenant}))
    # A tenant's key starts with the tenant, before any literal: what `dynamodb:LeadingKeys` can confine.
    pk = KeyTemplate((Segment(attribute=tenant), tag, *rest) if tenant is not None and scoped else (tag, *rest))
    if not sequence:
        sequence = _identity(blueprint, entity, partition)
    sk = KeyTemplate(tuple(Segment(attribute=a) for a in sequence) or (Segment(literal=entity_tag(entity)),))
    return pk, sk


def identity(blueprint: Blueprint, entity: str) -> tuple[str, ...]:
    """The attributes of the entity's primary key, partition key first."""
    key = blueprint.entities[entity].key
    found = re.findall(r"\{([A-Za-z][A-Za-z0-9_]*)", key.pk + "#" + (key.sk or ""))
    return tuple(dict.fromkeys(found))


def _identity(blueprint: Blueprint, entity: str, partition: frozenset[str]) -> list[str]:
    """A stable sort order for a shape no pattern orders: the primary key attributes not in the partition."""
    return [a for a in identity(blueprint, entity) if a not in partition]


def minimum_groups(blueprint: Blueprint, entity: str, needs: Sequence[Need]) -> list[list[Need]]:
    """Partition `needs` into the fewest groups that each have a shape."""
    ordered = sorted(needs, key=_canonical)
    if len(ordered) > EXACT_SEARCH_LIMIT:
        return _first_fit(blueprint, entity, ordered)
    best: list[list[Need]] | None = None

    def search(position: int, groups: list[list[Need]]) -> None:
        nonlocal best
        if best is not None and len(groups) >= len(best):
            return
        if position == len(ordered):
            best = [list(group) for group in groups]
            return
        need = ordered[position]
        for group in groups:
            if shape_for(blueprint, entity, [*group, need]) is not None:
                group.append(need)
                search(position + 1, groups)
                group.pop()
        groups.append([need])
        search(position + 1, groups)
        groups.pop()

    search(0, [])
    return best or []


def _first_fit(blueprint: Blueprint, entity: str, needs: Sequence[Need]) -> list[list[Need]]:
    groups: list[list[Need]] = []
    for need in needs:
        for group in groups:
            if shape_for(blueprint, entity, [*group, need]) is not None:
                group.append(need)
                break
        else:
            groups.append([need])
    return groups


def gsi_sort_key(name: str) -> tuple[str, int, str]:
    """Natural order: GSI2 before GSI10."""
    match = re.fullmatch(r"(.*?)(\d+)", name)
    return (match.group(1), int(match.group(2)), name) if match else (name, -1, name)


def assign_indexes(
    blueprint: Blueprint, groups: dict[str, list[list[Need]]], members: dict[str, dict[str, Shape]],
    closed: frozenset[str] = frozenset(), first: int = 1,
) -> dict[str, dict[str, tuple[Shape, tuple[str, ...]]]]:
    """Place every group's shape on the lowest-numbered GSI (from `first`, never a `closed` one) where
    its partitions cannot collide.

    `members` (index -> entity -> shape) holds what is already placed and is extended in place.
    Returns index -> entity -> (shape, patterns) for the placements made here.
    """
    placed: dict[str, dict[str, tuple[Shape, tuple[str, ...]]]] = {}
    for entity in sorted(groups):
        shaped = []
        for group in groups[entity]:
            templates = shape_for(blueprint, entity, group)
            assert templates is not None
            shaped.append((templates, group))
        for (pk, sk), group in sorted(shaped, key=lambda item: (item[0][0].text, item[0][1].text)):
            name = _free_index(blueprint, entity, pk, members, closed, first)
            shape = sharded_shape(blueprint, entity, name, pk, sk, key_names(blueprint, name), None)
            members.setdefault(name, {})[entity] = shape
            placed.setdefault(name, {})[entity] = (shape, tuple(sorted(n.pattern for n in group)))
    return placed


def sharded_shape(
    blueprint: Blueprint, entity: str, index: str, pk: KeyTemplate, sk: KeyTemplate, keys: KeyNames, key: KeySpec | None
) -> Shape:
    """A shape with the sharding its key (`key.shards`) or its index (`indexes.<name>.shards`) asks for."""
    settings = blueprint.indexes.get(index)
    shards = (key.shards if key else None) or (settings.shards if settings else None)
    if not shards:
        return Shape(pk, sk, keys)
    shard_by = ((key.shard_by if key else None) or (settings.shard_by if settings else None)
                or identity(blueprint, entity))
    return Shape(pk.sharded(shards), sk, keys, tuple(shard_by))


def _free_index(blueprint: Blueprint, entity: str, pk: KeyTemplate, members: dict[str, dict[str, Shape]],
                closed: frozenset[str], first: int) -> str:
    number = first
    while True:
        name = f"GSI{number}"
        taken = members.get(name, {})
        local = name in blueprint.indexes and blueprint.indexes[name].type == "local"
        # An index holds tenant-led keys only or none: a tenant's policy on it never matches what others read.
        if name not in closed and not local and entity not in taken and not any(
            may_share(blueprint, entity, pk, other, theirs.pk) or tenant_led(blueprint, pk) != tenant_led(
                blueprint, theirs.pk) for other, theirs in taken.items()
        ):
            return name
        number += 1
