"""The design stage: blueprint -> key shapes, indexes, projections and one query plan per pattern."""

from __future__ import annotations

import re

from tablewright.blueprint.language import AccessPattern, Blueprint, Capacity, CapacityRange, KeySpec
from tablewright.blueprint.lock import StackLock
from tablewright.blueprint.templates import KeyTemplate, parse_template
from tablewright.design.design import (
    TABLE,
    CapacityPolicy,
    IndexDesign,
    KeyNames,
    Projection,
    Scaling,
    Shape,
    TableDesign,
    key_names,
    key_types,
)
from tablewright.design.indexes import Need, assign_indexes, gsi_sort_key, minimum_groups, need_of, sharded_shape
from tablewright.design.locked import LockedState, locked_indexes, retained_keys
from tablewright.design.moving import moving_keys
from tablewright.design.queries import is_local, needed_attributes, query_plan
from tablewright.design.serve import Refusal, Served, serve
from tablewright.errors import DesignError, ErrorCode, FieldPath

MAX_LOCAL_INDEXES = 5


def design(blueprint: Blueprint, lock: StackLock | None = None) -> TableDesign:
    """Route every access pattern and plan the GSIs it needs, keeping every index of the design lock as
    it is. Raises DesignError naming the pattern."""
    members = _declared_shapes(blueprint)
    declared = set(members)
    locked = locked_indexes(blueprint, lock, declared)
    members.update({name: dict(state.members) for name, state in locked.items()})
    retiring = {name for name, state in locked.items() if state.retiring}
    routes: dict[str, tuple[str, Served]] = {}
    pending: dict[str, list[Need]] = {}
    for name in sorted(blueprint.access_patterns):
        pattern = blueprint.access_patterns[name]
        route = _route(blueprint, name, pattern, members, last=frozenset(retiring))
        if route is None:
            pending.setdefault(pattern.entities[0], []).append(need_of(name, pattern))
        else:
            routes[name] = route
    created = _successors(blueprint, locked, members, routes)
    groups = {entity: minimum_groups(blueprint, entity, needs) for entity, needs in pending.items()}
    # Indexes with declared key attributes exist as they are: the planner adds no entity to them.
    closed = frozenset(locked) | frozenset(created.values()) | frozenset(_keyed(blueprint))
    planned = assign_indexes(blueprint, groups, members, closed, first=_next_number(members) if locked else 1)
    for index, placements in planned.items():
        for _, patterns in placements.values():
            for name in patterns:
                served = serve(blueprint, blueprint.access_patterns[name], index, members[index])
                if isinstance(served, Refusal):
                    raise DesignError(f"planned {index} cannot serve this pattern: {served.reason}",
                                      path=("access_patterns", name),
                                      hint=served.hint or "change the pattern's conditions, or pin it to an index "
                                                          "(`index:`) whose keys serve it")
                routes[name] = (index, served)
    index_names = sorted((name for name in members if name != TABLE), key=gsi_sort_key)
    _check_index_settings(blueprint, index_names)
    _check_migrations(blueprint, index_names)
    _check_removals(blueprint, locked_indexes(blueprint, lock, declared, removed=True), routes, set(planned))
    serving = {name: [p for p, (i, _) in sorted(routes.items()) if i == name] for name in index_names}
    projections = {name: _locked_projection(blueprint, name, locked, created, serving)
                   or _projection(blueprint, name, serving[name]) for name in index_names}
    replaced_by = _replacements(locked, members, serving)
    predecessors = {new: old for old, new in replaced_by.items()}
    until_ready = {pattern: predecessors[i] for pattern, (i, _) in routes.items() if i in predecessors}
    indexes = tuple(
        IndexDesign(
            name=name,
            keys=_index_keys(blueprint, name, members[name], locked),
            members=tuple(sorted(members[name].items())),
            projection=projections[name],
            patterns=tuple(serving[name]),
            reason=_reason(blueprint, name, members[name], planned.get(name, {}), routes, locked, predecessors),
            local=is_local(blueprint, name),
            locked=name in locked,
            retiring=name in locked and not serving[name],
            successor=replaced_by.get(name),
            predecessor=predecessors.get(name),
        )
        for name in index_names
    )
    plans = tuple(query_plan(blueprint, name, routes[name], projections, members, until_ready.get(name))
                  for name in sorted(routes))
    shapes: dict[str, dict[str, Shape]] = {}
    for index, entities in members.items():
        for entity, shape in entities.items():
            shapes.setdefault(entity, {})[index] = shape
    _check_shared_attributes(blueprint, shapes)
    return TableDesign(blueprint, shapes, indexes, plans, _notes(groups), _capacity(blueprint, indexes),
                       retained_keys(blueprint, lock), moving_keys(blueprint, lock, shapes))


def _capacity(blueprint: Blueprint, indexes: tuple[IndexDesign, ...]) -> dict[str, CapacityPolicy]:
    """The billing and autoscaling of the table and of every GSI: an index's own `capacity`, with the
    table's target unless it sets one; else the table's."""
    table = blueprint.table.capacity
    if blueprint.table.billing == "on_demand" or table is None:
        policy = CapacityPolicy("on_demand", source=("table", "billing"))
        return {TABLE: policy} | {index.name: policy for index in indexes if not index.local}
    policies = {TABLE: _provisioned(table, table.target_utilization, ("table", "capacity"))}
    for index in indexes:
        settings = blueprint.indexes.get(index.name)
        own = settings.capacity if settings is not None else None
        if index.local:
            continue
        if own is None:
            policies[index.name] = policies[TABLE]
            continue
        target = own.target_utilization if "target_utilization" in own.model_fields_set else table.target_utilization
        policies[index.name] = _provisioned(own, target, ("indexes", index.name, "capacity"))
    return policies


def _provisioned(capacity: Capacity, target: int, source: tuple[str, ...]) -> CapacityPolicy:
    def scaling(bounds: CapacityRange) -> Scaling:
        own = bounds.target_utilization
        return Scaling(target if own is None else own, bounds.scale_in_cooldown, bounds.scale_out_cooldown,
                       bounds.disable_scale_in, tuple(bounds.scheduled))

    return CapacityPolicy("provisioned", (capacity.read.min, capacity.read.max),
                          (capacity.write.min, capacity.write.max), target, source,
                          scaling(capacity.read), scaling(capacity.write))


def _successors(blueprint: Blueprint, locked: dict[str, LockedState], members: dict[str, dict[str, Shape]],
                routes: dict[str, tuple[str, Served]]) -> dict[str, str]:
    """Locked indexes whose patterns now need a larger projection -> the successor that takes them: the
    same key attributes and shapes under the next unused name, built beside the locked index while it
    keeps serving (expand and contract). `indexes.<name>.rebuild: in_place` rebuilds the index itself."""
    successors: dict[str, str] = {}
    for name, state in sorted(locked.items(), key=lambda item: gsi_sort_key(item[0])):
        settings = blueprint.indexes.get(name)
        if settings is not None and (settings.rebuild == "in_place" or settings.projection is not None):
            continue  # the blueprint asks for this index itself: rebuilt in place
        served = [p for p, (i, _) in routes.items() if i == name]
        needed = tuple(sorted({a for p in served for a in needed_attributes(blueprint, blueprint.access_patterns[p])}))
        if not served or not state.projection.lacks(needed):
            continue
        successor = f"GSI{_next_number(members)}"
        members[successor] = dict(state.members)
        successors[name] = successor
        for pattern in served:
            routes[pattern] = (successor, routes[pattern][1])  # the same shapes: the same key condition
    return successors


def _replacements(locked: dict[str, LockedState], members: dict[str, dict[str, Shape]],
                  serving: dict[str, list[str]]) -> dict[str, str]:
    """Retiring locked index -> the serving index with the same key attributes and shapes that replaced it
    (created by `_successors` in this design, or in an earlier one and locked since)."""
    found = {}
    for old in sorted(locked, key=gsi_sort_key):
        if serving[old]:
            continue
        same = [new for new in sorted(members, key=gsi_sort_key)
                if new not in (old, TABLE) and serving.get(new) and members[new] == members[old]]
        if same:
            found[old] = same[0]
    return found


def _next_number(members: dict[str, dict[str, Shape]]) -> int:
    """One above the highest `GSI<n>` in use: a new index never takes the name of one that exists."""
    numbers = [gsi_sort_key(name)[1] for name in members if re.fullmatch(r"GSI\d+", name)]
    return max(numbers, default=0) + 1


def _locked_projection(blueprint: Blueprint, name: str, locked: dict[str, LockedState], successors: dict[str, str],
                       serving: dict[str, list[str]]) -> Projection | None:
    """A locked index keeps its projection unless the blueprint rebuilds it in place; a successor projects
    what its predecessor did plus what the patterns now need."""
    patterns = blueprint.access_patterns
    needed = tuple(sorted({a for p in serving[name] for a in needed_attributes(blueprint, patterns[p])}))
    predecessor = next((old for old, new in successors.items() if new == name), None)
    if predecessor is not None:
        return Projection("INCLUDE", tuple(sorted(set(locked[predecessor].projection.attributes) | set(needed))))
    if name not in locked:
        return None
    settings = blueprint.indexes.get(name)
    grows = bool(locked[name].projection.lacks(needed))
    rebuilt = settings is not None and (settings.projection is not None or (settings.rebuild == "in_place" and grows))
    return None if rebuilt else locked[name].projection


def _index_keys(blueprint: Blueprint, name: str, members: dict[str, Shape], locked: dict[str, LockedState]) -> KeyNames:
    """The attributes its members' keys are written to (a successor keeps its predecessor's)."""
    if members:
        return next(iter(members.values())).keys
    return locked[name].keys if name in locked else key_names(blueprint, name)


def _keyed(blueprint: Blueprint) -> list[str]:
    """Indexes whose key attributes the blueprint declares (`indexes.<name>.keys`)."""
    return sorted(name for name, spec in blueprint.indexes.items() if spec.keys is not None and not spec.remove)


def _declared_shapes(blueprint: Blueprint) -> dict[str, dict[str, Shape]]:
    """index -> entity -> shape, for the base table and every index with declared keys."""
    members: dict[str, dict[str, Shape]] = {TABLE: {}}
    members.update({name: {} for name in _keyed(blueprint)})
    table_keys = key_names(blueprint, TABLE)
    for name, entity in sorted(blueprint.entities.items()):
        table_pk = parse_template(entity.key.pk)
        members[TABLE][name] = _entity_shape(blueprint, name, TABLE, entity.key, ("entities", name, "key"))
        for index, keys in sorted(entity.index_keys.items()):
            path = ("entities", name, "index_keys", index)
            if is_local(blueprint, index) and (parse_template(keys.pk) != table_pk or keys.shards):
                raise DesignError(
                    f"local index {index} shares the table's partition key, so its partition key must be "
                    f"{entity.key.pk!r} (unsharded)",
                    path=(*path, "pk"),
                    hint=f"write `pk: \"{entity.key.pk}\"` and vary only the sort key",
                    code=ErrorCode.INDEX_SETTINGS,
                )
            members.setdefault(index, {})[name] = _entity_shape(blueprint, name, index, keys, path)
    locals_declared = sorted(name for name, spec in blueprint.indexes.items() if spec.type == "local")
    if len(locals_declared) > MAX_LOCAL_INDEXES:
        raise DesignError(f"{len(locals_declared)} local indexes; a table may have at most {MAX_LOCAL_INDEXES}",
                          path=("indexes", locals_declared[MAX_LOCAL_INDEXES]),
                          code=ErrorCode.INDEX_SETTINGS)
    for name in locals_declared:
        if name not in members:
            raise DesignError(f"local index `{name}` has no entity keys",
                              path=("indexes", name),
                              hint=f"declare `entities.<Entity>.index_keys.{name}: {{pk: ..., sk: ...}}`, or its "
                                   f"`keys: {{sk: ...}}`",
                              code=ErrorCode.INDEX_SETTINGS)
        spec = blueprint.indexes[name].keys
        if spec is not None and (spec.partition.name != table_keys.pk or spec.sort is None):
            raise DesignError(f"local index `{name}` must have the table's partition key `{table_keys.pk}` and a "
                              "sort key of its own", path=("indexes", name, "keys"),
                              hint=f"write `keys: {{pk: {table_keys.pk}, sk: <its sort key attribute>}}`",
                              code=ErrorCode.INDEX_SETTINGS)
    return members


def _entity_shape(blueprint: Blueprint, entity: str, index: str, keys: KeySpec, path: FieldPath) -> Shape:
    """An entity's shape on the table or an index, its templates checked against the key attributes
    they are written to."""
    names = key_names(blueprint, index)
    label = "the table" if index == TABLE else f"index {index}"
    if names.sk is None and keys.sk is not None:
        raise DesignError(f"{label} has no sort key, so this key has no `sk`", path=(*path, "sk"),
                          hint=f"remove `sk`: one item per `{names.pk}`",
                          code=ErrorCode.KEY_TEMPLATE)
    if names.sk is not None and keys.sk is None:
        raise DesignError(f"{label} has a sort key (`{names.sk}`): write its template", path=path,
                          hint="add `sk:`, e.g. a constant such as `PROFILE` for one item per partition",
                          code=ErrorCode.KEY_TEMPLATE)
    types = key_types(blueprint)
    typed = sorted(name for name in names.names if types.get(name, "S") != "S")
    if typed:
        raise DesignError(
            f"`{typed[0]}`, a key attribute of {label}, holds {'numbers' if types[typed[0]] == 'N' else 'binary'}; "
            "Tablewright's key templates write strings", path=path,
            hint="describe the entities of this table once it has string keys; the table itself is synthesized and "
                 "imported without them",
            code=ErrorCode.KEY_TEMPLATE)
    pk, sk = parse_template(keys.pk), parse_template(keys.sk) if keys.sk is not None else KeyTemplate(())
    attributes = blueprint.entities[entity].attributes
    for name, template, part in ((names.pk, pk, "pk"), (names.sk, sk, "sk")):
        if name in attributes and template.text != "{" + name + "}":
            raise DesignError(
                f"`{name}` is both an attribute of {entity} and the {part} attribute of {label}, so the key must "
                f"be the attribute itself", path=(*path, part),
                hint=f"write `{part}: \"{{{name}}}\"`, or rename the entity's attribute",
                code=ErrorCode.KEY_TEMPLATE)
    return sharded_shape(blueprint, entity, index, pk, sk, names, keys)


def _check_shared_attributes(blueprint: Blueprint, shapes: dict[str, dict[str, Shape]]) -> None:
    """An item attribute holds one value: two indexes that key an entity by the same attribute must
    write the same template into it."""
    for entity, by_index in sorted(shapes.items()):
        written: dict[str, tuple[str, str]] = {}
        for index, shape in sorted(by_index.items()):
            for attribute, template in ((shape.keys.pk, shape.pk), (shape.keys.sk, shape.sk)):
                if attribute is None:
                    continue
                first = written.setdefault(attribute, (index, template.text))
                if first[1] != template.text:
                    raise DesignError(
                        f"{entity} writes `{attribute}` as {first[1]!r} for {first[0]} and as {template.text!r} for "
                        f"{index}; one attribute holds one value", path=("entities", entity),
                        hint="give one of the indexes other key attributes, or the same template",
                        code=ErrorCode.KEY_TEMPLATE)


def _route(
    blueprint: Blueprint, name: str, pattern: AccessPattern, members: dict[str, dict[str, Shape]],
    last: frozenset[str] = frozenset(),
) -> tuple[str, Served] | None:
    """The first existing index that serves the pattern (the `last` ones, retiring, only after every other);
    None when a GSI must be planned for it."""
    path = ("access_patterns", name)
    if pattern.index is not None:
        candidates = [pattern.index]
    else:
        existing = sorted((i for i in members if i != TABLE), key=lambda i: (i in last, gsi_sort_key(i)))
        candidates = [TABLE] + [i for i in existing if all(e in members[i] for e in pattern.entities)]
    refusals: list[tuple[str, Refusal]] = []
    for index in candidates:
        if pattern.consistent and index != TABLE and not is_local(blueprint, index):
            continue
        served = serve(blueprint, pattern, index, members[index])
        if isinstance(served, Served):
            return index, served
        refusals.append((index, served))
    fatal = next((r for _, r in refusals if r.fatal), None)
    if fatal is not None:
        raise DesignError(fatal.reason, path=path, hint=fatal.hint)
    why = "; ".join(f"{'the base table' if i == TABLE else i}: {r.reason}" for i, r in refusals)
    hint = next((r.hint for _, r in refusals if r.hint), None)
    if pattern.index is not None:
        raise DesignError(f"`index: {pattern.index}` cannot serve this pattern: {why}", path=path,
                          hint=hint or f"remove `index: {pattern.index}` to let the planner choose, or change the "
                                       "pattern's conditions to match that index's keys")
    if pattern.scan == "allowed" and len(pattern.entities) == 1:
        return TABLE, _scan(blueprint, pattern)
    if len(pattern.entities) > 1:
        raise DesignError(
            f"no index serves this item collection: {why}",
            path=path,
            hint=hint or "give the entities one partition-key template on the table or under `index_keys`",
        )
    if pattern.consistent:
        raise DesignError(
            f"a strongly consistent read needs the base table or a local index, which cannot serve it: {why}",
            path=path,
            hint=hint or "remove `consistent: true` (GSIs are eventually consistent) or change the table keys",
        )
    if not pattern.equalities:
        raise DesignError(
            f"no `=` condition, so no partition can be addressed: a Query cannot serve it ({why})",
            path=(*path, "where"),
            hint="add an `=` condition (for example per tenant, per day or per shard), "
                 "or accept a full-table read with `scan: allowed` and a `reason`",
        )
    return None


def _scan(blueprint: Blueprint, pattern: AccessPattern) -> Served:
    """A full-table Scan for a pattern that says `scan: allowed`; its conditions become filters."""
    return Served("Scan", "", (), (), (), (f"Scan accepted: {pattern.reason}",))


def _check_index_settings(blueprint: Blueprint, index_names: list[str]) -> None:
    for name, settings in blueprint.indexes.items():
        if name not in index_names and not settings.remove:
            known = ", ".join(index_names) or "none"
            raise DesignError(
                f"settings for index `{name}`, which this design does not have",
                path=("indexes", name),
                hint=f"remove them; the design has these indexes: {known}",
                code=ErrorCode.UNKNOWN_NAME,
            )


def _check_removals(blueprint: Blueprint, removed: dict[str, LockedState], routes: dict[str, tuple[str, Served]],
                    planned: set[str]) -> None:
    """An index the blueprint removes must not be one a pattern still needs (it would be planned again)."""
    for name, state in removed.items():
        needing = sorted(pattern for pattern, (index, _) in routes.items() if index in planned and isinstance(
                             serve(blueprint, blueprint.access_patterns[pattern], name, state.members), Served))
        if needing:
            raise DesignError(f"{name} still serves {', '.join(needing)}, so it cannot be removed",
                              path=("indexes", name, "remove"), code=ErrorCode.INDEX_SETTINGS,
                              hint=f"remove or change those patterns first (then {name} retires), or drop "
                                   "`remove: true`")


def _check_migrations(blueprint: Blueprint, index_names: list[str]) -> None:
    for position, migration in enumerate(blueprint.migrations):
        if migration.index != TABLE and migration.index not in index_names:
            raise DesignError(f"the migration names index `{migration.index}`, which this design does not have",
                              path=("migrations", position, "index"),
                              hint=f"use `table` or one of: {', '.join(index_names) or 'none'}",
                              code=ErrorCode.UNKNOWN_NAME)


def _projection(blueprint: Blueprint, index: str, patterns: list[str]) -> Projection:
    requested = blueprint.indexes[index].projection if index in blueprint.indexes else None
    if requested == "all":
        return Projection("ALL")
    if requested == "keys_only":
        return Projection("KEYS_ONLY")
    if isinstance(requested, list):
        return Projection("INCLUDE", tuple(sorted(requested))) if requested else Projection("KEYS_ONLY")
    union = sorted({a for p in patterns for a in needed_attributes(blueprint, blueprint.access_patterns[p])})
    return Projection("INCLUDE", tuple(union)) if union else Projection("KEYS_ONLY")


def _reason(
    blueprint: Blueprint,
    index: str,
    members: dict[str, Shape],
    planned: dict[str, tuple[Shape, tuple[str, ...]]],
    routes: dict[str, tuple[str, Served]],
    locked: dict[str, LockedState],
    predecessors: dict[str, str],
) -> str:
    parts = []
    origin = "locked" if index in locked else f"successor of {predecessors[index]}" if index in predecessors else ""
    for entity, shape in sorted(members.items()):
        patterns = sorted(p for p, (i, _) in routes.items()
                          if i == index and entity in blueprint.access_patterns[p].entities)
        how = origin or ("planned" if entity in planned else "declared")
        served = f" for {', '.join(patterns)}" if patterns else " (no pattern reads it here)"
        parts.append(f"{entity} keyed {shape} ({how}){served}")
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
