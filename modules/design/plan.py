"""The design stage: blueprint -> key shapes, GSIs, projections and one query plan per pattern."""

from __future__ import annotations

import re

from modules.blueprint.model import AccessPattern, Blueprint
from modules.design.indexes import Need, assign_indexes, gsi_sort_key, minimum_groups, need_of
from modules.design.model import (
    TABLE,
    FollowUp,
    IndexDesign,
    Projection,
    QueryPlan,
    Shape,
    TableDesign,
    key_names,
)
from modules.design.serve import Refusal, Served, serve
from modules.design.templates import parse_template
from modules.errors import DesignError


def design(bp: Blueprint) -> TableDesign:
    """Route every access pattern and plan the GSIs it needs. Raises DesignError naming the pattern."""
    members = _declared_shapes(bp)
    routes: dict[str, tuple[str, Served]] = {}
    pending: dict[str, list[Need]] = {}
    for name in sorted(bp.access_patterns):
        pattern = bp.access_patterns[name]
        route = _route(bp, name, pattern, members)
        if route is None:
            pending.setdefault(pattern.entities[0], []).append(need_of(name, pattern))
        else:
            routes[name] = route
    groups = {entity: minimum_groups(bp, entity, needs) for entity, needs in pending.items()}
    planned = assign_indexes(bp, groups, members)
    for index, placements in planned.items():
        for entity, (_, patterns) in placements.items():
            for name in patterns:
                served = serve(bp, bp.access_patterns[name], index, members[index])
                if isinstance(served, Refusal):
                    raise DesignError(f"planned {index} cannot serve this pattern: {served.reason}",
                                      path=("access_patterns", name), hint=served.hint)
                routes[name] = (index, served)
    index_names = sorted((name for name in members if name != TABLE), key=gsi_sort_key)
    _check_index_settings(bp, index_names)
    projections = {name: _projection(bp, name, [p for p, (i, _) in routes.items() if i == name]) for name in index_names}
    indexes = tuple(
        IndexDesign(
            name=name,
            keys=key_names(name),
            members=tuple(sorted(members[name].items())),
            projection=projections[name],
            patterns=tuple(sorted(p for p, (i, _) in routes.items() if i == name)),
            reason=_reason(bp, name, members[name], planned.get(name, {}), routes),
        )
        for name in index_names
    )
    plans = tuple(_plan(bp, name, routes[name], projections) for name in sorted(routes))
    shapes: dict[str, dict[str, Shape]] = {}
    for index, entities in members.items():
        for entity, shape in entities.items():
            shapes.setdefault(entity, {})[index] = shape
    return TableDesign(bp, shapes, indexes, plans, _notes(groups))


def _declared_shapes(bp: Blueprint) -> dict[str, dict[str, Shape]]:
    """index -> entity -> shape, for the base table and every index with declared keys."""
    members: dict[str, dict[str, Shape]] = {TABLE: {}}
    for name, entity in sorted(bp.entities.items()):
        members[TABLE][name] = Shape(parse_template(entity.key.pk), parse_template(entity.key.sk))
        for index, keys in entity.index_keys.items():
            members.setdefault(index, {})[name] = Shape(parse_template(keys.pk), parse_template(keys.sk))
    return members


def _route(
    bp: Blueprint, name: str, pattern: AccessPattern, members: dict[str, dict[str, Shape]]
) -> tuple[str, Served] | None:
    """The first existing index that serves the pattern; None when a GSI must be planned for it."""
    path = ("access_patterns", name)
    if pattern.index is not None:
        candidates = [pattern.index]
    else:
        declared = sorted((i for i in members if i != TABLE), key=gsi_sort_key)
        candidates = [TABLE] + [i for i in declared if all(e in members[i] for e in pattern.entities)]
    refusals: list[tuple[str, Refusal]] = []
    for index in candidates:
        if pattern.consistent and index != TABLE:
            continue
        served = serve(bp, pattern, index, members[index])
        if isinstance(served, Served):
            return index, served
        refusals.append((index, served))
    fatal = next((r for _, r in refusals if r.fatal), None)
    if fatal is not None:
        raise DesignError(fatal.reason, path=path, hint=fatal.hint)
    why = "; ".join(f"{'the base table' if i == TABLE else i}: {r.reason}" for i, r in refusals)
    hint = next((r.hint for _, r in refusals if r.hint), None)
    if pattern.index is not None:
        raise DesignError(f"`index: {pattern.index}` cannot serve this pattern: {why}", path=path, hint=hint)
    if len(pattern.entities) > 1:
        raise DesignError(
            f"no index serves this item collection: {why}",
            path=path,
            hint=hint or "give the entities one partition-key template on the table or under `index_keys`",
        )
    if pattern.consistent:
        raise DesignError(
            f"a strongly consistent read needs the base table, which cannot serve it: {why}",
            path=path,
            hint=hint or "remove `consistent: true` (GSIs are eventually consistent) or change the table keys",
        )
    if not pattern.equalities:
        raise DesignError(
            f"no `=` condition, so no partition can be addressed ({why})",
            path=path + ("where",),
            hint="a Query reads one partition: add an `=` condition (for example per tenant, per day or per shard)",
        )
    return None


def _check_index_settings(bp: Blueprint, index_names: list[str]) -> None:
    for name in bp.indexes:
        if name not in index_names:
            known = ", ".join(index_names) or "none"
            raise DesignError(
                f"settings for index `{name}`, which this design does not have",
                path=("indexes", name),
                hint=f"remove them; the design has these GSIs: {known}",
            )


def _needed(bp: Blueprint, pattern: AccessPattern) -> tuple[str, ...]:
    if pattern.returns is not None:
        return tuple(pattern.returns)
    return tuple(sorted({a for e in pattern.entities for a in bp.entities[e].attributes}))


def _projection(bp: Blueprint, index: str, patterns: list[str]) -> Projection:
    requested = bp.indexes[index].projection if index in bp.indexes else None
    if requested == "all":
        return Projection("ALL")
    if requested == "keys_only":
        return Projection("KEYS_ONLY")
    if isinstance(requested, list):
        return Projection("INCLUDE", tuple(sorted(requested))) if requested else Projection("KEYS_ONLY")
    union = sorted({a for p in patterns for a in _needed(bp, bp.access_patterns[p])})
    return Projection("INCLUDE", tuple(union)) if union else Projection("KEYS_ONLY")


def _plan(
    bp: Blueprint, name: str, route: tuple[str, Served], projections: dict[str, Projection]
) -> QueryPlan:
    index, served = route
    pattern = bp.access_patterns[name]
    returns = _needed(bp, pattern)
    keys = key_names(index)
    follow_up = None
    projected = returns
    if index != TABLE:
        lacking = projections[index].lacks(returns)
        if lacking:
            if not pattern.follow_up:
                raise DesignError(
                    f"{index} does not project {', '.join(lacking)}, which this pattern returns, "
                    "and follow-up reads are disabled",
                    path=("access_patterns", name, "returns"),
                    hint=f"project them (indexes.{index}.projection) or remove `follow_up: false`",
                )
            follow_up = FollowUp(returns)
            projected = tuple(a for a in returns if a not in lacking)
    summary = _summary(served, keys.pk, keys.sk)
    return QueryPlan(
        pattern=name,
        entities=pattern.entities,
        operation=served.operation,
        index=index,
        keys=keys,
        key_condition=served.key_condition,
        values=served.values,
        parameters=served.parameters,
        scan_index_forward=pattern.order == "asc",
        limit=pattern.limit if served.operation == "Query" else None,
        consistent=pattern.consistent,
        returns=returns,
        projected=projected,
        follow_up=follow_up,
        order_attributes=served.order_attributes,
        summary=summary,
        notes=served.notes,
    )


def _summary(served: Served, pk: str, sk: str) -> str:
    """The key condition with attribute names and value templates in place of placeholders."""
    values = dict(served.values)
    text = served.key_condition.replace("#pk", pk).replace("#sk", sk)
    return re.sub(r":[a-z]+", lambda m: values[m.group(0)], text)


def _reason(
    bp: Blueprint,
    index: str,
    members: dict[str, Shape],
    planned: dict[str, tuple[Shape, tuple[str, ...]]],
    routes: dict[str, tuple[str, Served]],
) -> str:
    parts = []
    for entity, shape in sorted(members.items()):
        patterns = sorted(p for p, (i, _) in routes.items() if i == index and entity in bp.access_patterns[p].entities)
        origin = "planned" if entity in planned else "declared"
        served = f" for {', '.join(patterns)}" if patterns else " (no pattern reads it here)"
        parts.append(f"{entity} keyed {shape} ({origin}){served}")
    return "; ".join(parts)


def _notes(groups: dict[str, list[list[Need]]]) -> tuple[str, ...]:
    if not groups:
        return ()
    most = max(len(g) for g in groups.values())
    busiest = sorted(e for e, g in groups.items() if len(g) == most)
    return (
        f"{most} planned GSI shape(s) per entity at most ({', '.join(busiest)}); entities overload the same "
        "GSIs, so the planned indexes are the fewest this set of patterns allows",
    )
