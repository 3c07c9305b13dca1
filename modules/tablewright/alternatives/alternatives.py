"""What each GSI costs against the designs an expert would weigh instead, each designed and costed in full.

For a global index and the patterns it serves:
- **a filter on an existing index**: each pattern keeps the conditions an index (or the table) it could
  already use has in its key, the rest become a FilterExpression; the GSI is then not written at all, and
  the reads pay for every item the broader key condition reads (DynamoDB charges what a Query reads before
  its filter: https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Query.FilterExpression.html);
- **an inverted index**: the index keyed by the table's own sort key, then its partition key (the patterns
  must bind the whole sort key; other conditions become a filter): the items hold no key attributes of
  the index, and one such index serves every entity's reverse lookups;
- **copies in the table**: the application writes a copy of each item under the index's keys, holding what
  the index entry holds and what the patterns return; the reads go to the table (strongly consistent ones
  become possible), and every write of the item writes its copy (a key change moves it: a delete and a put).

Each alternative is a blueprint of its own, designed and estimated as any blueprint is: the same rules
price it. An alternative that needs another new index, or that no existing index can serve, is named with
the reason instead.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from tablewright.alternatives.split import (
    Split,
    lock_without_member,
    mover,
    new_index_name,
    split_blueprint,
    unsharded,
    weighed,
)
from tablewright.blueprint.language import AccessPattern, Blueprint, EntitySpec, IndexSpec, KeyAttributes, KeySpec
from tablewright.blueprint.lock import StackLock
from tablewright.blueprint.references import check_references
from tablewright.capacity.cost import CostReport, monthly_cost
from tablewright.capacity.estimate import (
    PAGE_BYTES,
    attribute_cardinality,
    change_shares,
    changed_attributes,
    collection,
    presence,
    projected_bytes,
    read_entry_bytes,
)
from tablewright.capacity.loads import CapacityReport, estimate
from tablewright.design.design import TABLE, IndexDesign, QueryPlan, Shape, TableDesign
from tablewright.design.designer import design as design_of
from tablewright.design.indexes import identity
from tablewright.design.locked import lock_of
from tablewright.design.serve import tenant_led
from tablewright.errors import TablewrightError
from tablewright.stacks.stack import Stack

FILTER, INVERTED, COPIES = "filter on an existing index", "an inverted index", "copies in the table"
THROUGHPUT_LINES = ("provisioned read capacity", "provisioned write capacity", "on-demand read requests",
                    "on-demand write requests")


@dataclass(frozen=True)
class Figures:
    read_units: float  # RCU/s the index's patterns consume, where they are served
    write_units: float  # WCU/s the index (or the copies) take
    monthly: float | None  # the table's whole throughput bill, USD a month (None: not priced)


@dataclass(frozen=True)
class Alternative:
    kind: str  # FILTER, INVERTED or COPIES
    how: str  # what changes, pattern by pattern
    figures: Figures | None  # None: not possible (`how` says why)
    blueprint: Blueprint | None = None  # the alternative, as a blueprint (None: not possible)
    lock: StackLock | None = None  # the deployed indexes it is designed against (the lock without the index)


@dataclass(frozen=True)
class IndexChoice:
    index: str
    patterns: tuple[str, ...]
    current: Figures
    alternatives: tuple[Alternative, ...]
    split: Split | str | None = None  # the shared GSI split, when one entity's writes throttle it (str: why not)


def throughput_bill(cost: CostReport) -> float | None:
    lines = [line for line in cost.billed if line.item in THROUGHPUT_LINES]
    if any(line.monthly is None for line in lines):
        return None
    return round(sum(line.monthly or 0.0 for line in lines), 2)


def _figures(capacity: CapacityReport, patterns: tuple[str, ...], written: float, bill: float | None) -> Figures:
    reads = sum(capacity.read(pattern).units_per_second + capacity.read(pattern).table_units_per_second
                for pattern in patterns)
    return Figures(round(reads, 2), round(written, 2), bill)


def index_choices(design: TableDesign, capacity: CapacityReport, cost: CostReport) -> list[IndexChoice]:
    """Every global index a pattern reads, with its alternatives (a stack's own design, capacity and cost are
    the figures each alternative is weighed against)."""
    choices = []
    bill, deployed = throughput_bill(cost), lock_of(design)
    for index in design.global_indexes:
        patterns = tuple(sorted(plan.pattern for plan in design.plans if plan.index == index.name))
        if not patterns or index.retiring:
            continue
        current = _figures(capacity, patterns, capacity.load(index.name).write_units_per_second, bill)
        lock = _without(deployed, index.name)
        alternatives = tuple(_alternative(design, capacity, lock, kind, index, patterns, rewrite)
                             for kind, rewrite in ((FILTER, _filtered), (INVERTED, _inverted), (COPIES, _copied)))
        split = _split(design, capacity, deployed, index, bill)
        choices.append(IndexChoice(index.name, patterns, current, alternatives, split))
    return choices


# Environments of one design (`Stack.same_as`) have the same alternatives: weighed once. Keyed by the first stack's
# identity, which the memo holds, so an id is not reused while it is remembered.
_CHOICES: dict[int, tuple[Stack, list[IndexChoice]]] = {}
_CHOICES_SIZE = 64


def stack_choices(stack: Stack) -> list[IndexChoice]:
    """A stack's alternatives to each GSI (`index_choices`), computed once for the environments of one design: their
    figures and texts are every environment's; the blueprints and locks they hold are the first environment's."""
    first = stack.same_as or stack
    found = _CHOICES.get(id(first))
    if found is None:
        if len(_CHOICES) >= _CHOICES_SIZE:
            del _CHOICES[next(iter(_CHOICES))]  # the oldest
        found = _CHOICES[id(first)] = (first, index_choices(first.design, first.capacity, first.cost))
    return found[1]


def _designed(blueprint: Blueprint, lock: StackLock) -> TableDesign | str:
    """A rewritten blueprint validated as one read from a file is, then designed against the deployed indexes;
    or why it is not possible."""
    try:
        blueprint = Blueprint.model_validate(blueprint.model_dump(exclude_unset=True))
        check_references(blueprint)
        return design_of(blueprint, lock)
    except TablewrightError as error:
        return f"not possible: {error.message}"
    except ValueError as error:  # a rewritten key or pattern its own model refuses
        return f"not possible: {str(error).splitlines()[0]}"


def _split(design: TableDesign, capacity: CapacityReport, deployed: StackLock, index: IndexDesign,
           bill: float | None) -> Split | str | None:
    """The shared GSI split (`split.py`), designed, estimated and priced as a blueprint of its own."""
    entity = mover(design, capacity, index)
    if entity is None:
        return None
    new = new_index_name(design)
    rewritten = split_blueprint(design, index, entity, new)
    if isinstance(rewritten, str):
        return rewritten
    blueprint, how = rewritten
    other = _designed(blueprint, lock_without_member(deployed, index.name, entity))
    if isinstance(other, str):
        return other
    report = estimate(other, capacity.prices)
    after = throughput_bill(monthly_cost(other, report))
    return weighed(design, capacity, other, report, (index, entity, new, how), (bill, after), other.blueprint)


Rewritten = tuple[Blueprint, str, tuple[str, ...]]  # the alternative blueprint, what changed, the copy entities
# (the design, the blueprint without the index, the index, its patterns) -> the alternative, or why it is not possible
Rewrite = Callable[[TableDesign, Blueprint, IndexDesign, tuple[str, ...]], Rewritten | str]


def _alternative(design: TableDesign, capacity: CapacityReport, lock: StackLock, kind: str, index: IndexDesign,
                 patterns: tuple[str, ...], rewrite: Rewrite) -> Alternative:
    rewritten = rewrite(design, _without_index(design.blueprint, index.name), index, patterns)
    if isinstance(rewritten, str):
        return Alternative(kind, rewritten, None)
    blueprint, how, copies = rewritten
    other = _designed(blueprint, lock)
    if isinstance(other, str):
        return Alternative(kind, other, None)
    blueprint = other.blueprint
    allowed = len(design.global_indexes) - (0 if kind == INVERTED else 1)  # an inverted index replaces this one
    if len(other.global_indexes) > allowed:
        return Alternative(kind, f"not possible: {how}: no index the design keeps serves it (its order, range "
                                 "or returned attributes need an index of their own)", None)
    paged = [plan.pattern for plan in other.plans if plan.pattern in patterns and plan.filter_expression
             and plan.operation == "Query" and _bytes_read(other, plan) > PAGE_BYTES]
    if paged:
        return Alternative(kind, f"not priced: {how}: `{paged[0]}` would read more than a 1 MB page a call, "
                                 "many pages before its filter keeps enough", None)
    report = estimate(other, capacity.prices)
    written = sum((write.units_per_second.get(TABLE, 0.0) for write in report.writes if write.entity in copies), 0.0)
    if kind == INVERTED:
        written = report.load(index.name).write_units_per_second
    bill = throughput_bill(monthly_cost(other, report))
    return Alternative(kind, how, _figures(report, patterns, written, bill), blueprint, lock)


def _bytes_read(design: TableDesign, plan: QueryPlan) -> float:
    """What a filtered call reads: every item its key condition matches, before the filter keeps enough."""
    items, _ = collection(design, plan)
    return (items or 0.0) * read_entry_bytes(design, plan)


def _without_index(blueprint: Blueprint, index: str) -> Blueprint:
    """The blueprint without the index's settings and declared keys (a planned index has neither)."""
    settings = {name: spec for name, spec in blueprint.indexes.items() if name != index}
    entities = {name: spec.model_copy(update={"index_keys": {i: key for i, key in spec.index_keys.items()
                                                             if i != index}})
                for name, spec in blueprint.entities.items()}
    return blueprint.model_copy(update={"indexes": settings, "entities": entities})


def _without(lock: StackLock, index: str) -> StackLock:
    """The deployed design without `index`: every other index keeps its name, keys and settings."""
    entities = {name: entity.model_copy(update={"keys": {i: key for i, key in entity.keys.items() if i != index}})
                for name, entity in lock.entities.items()}
    return lock.model_copy(update={"indexes": {name: locked for name, locked in lock.indexes.items() if name != index},
                                   "entities": entities})


def _filtered(design: TableDesign, blueprint: Blueprint, index: IndexDesign, patterns: tuple[str, ...]
              ) -> Rewritten | str:
    rewritten, hows = dict(blueprint.access_patterns), []
    for name in patterns:
        pattern = blueprint.access_patterns[name]
        if len(pattern.entities) > 1:
            return f"not possible: `{name}` reads an item collection, which one key condition must gather"
        key = _broader_key(design, index.name, pattern)
        if key is None:
            return f"not possible: no other index of {pattern.entities[0]} has a key `{name}` binds"
        rewritten[name], moved = _keyed_by(pattern, key, None if pattern.index == index.name else pattern.index)
        hows.append(f"`{name}` FILTER {moved}")
    return blueprint.model_copy(update={"access_patterns": rewritten}), "; ".join(hows), ()


def _keyed_by(pattern: AccessPattern, key: frozenset[str], index: str | None = None) -> tuple[AccessPattern, str]:
    """The pattern with the conditions outside `key` moved to its filter (and its `items`, which counted the
    narrower key, dropped), pinned to `index` or to none, and what moved."""
    where = {a: op for a, op in pattern.where.items() if a in key}
    moved = {a: op for a, op in pattern.where.items() if a not in key}
    described = ", ".join(f"{a} {op}" for a, op in sorted(moved.items()))
    update = {"where": where, "filter": {**moved, **pattern.filter}, "index": index}
    return pattern.model_copy(update={**update, "items": None} if moved else update), described


def _inverted(design: TableDesign, blueprint: Blueprint, index: IndexDesign, patterns: tuple[str, ...]
              ) -> Rewritten | str:
    """The index keyed by the table's sort key, then its partition key: no key attributes of its own in the
    items, one index for every entity's reverse lookups."""
    keys = design.table_keys
    if keys.sk is None:
        return "not possible: the table has no sort key to invert"
    if index.keys.names == (keys.sk, keys.pk):
        return f"not possible: {index.name} is an inverted index already"
    entities, rewritten, hows = dict(blueprint.entities), dict(blueprint.access_patterns), []
    for name in patterns:
        pattern = blueprint.access_patterns[name]
        if len(pattern.entities) > 1:
            return f"not possible: `{name}` reads an item collection"
        entity = pattern.entities[0]
        table = design.shapes[entity][TABLE]
        if not table.sk.attributes:
            return f"not possible: the sort key of {entity} ({table.sk}) is a literal: one partition for all of them"
        if table.shards > 1 or not set(table.sk.attributes) <= set(pattern.equalities):
            return f"not possible: `{name}` does not bind the whole sort key of {entity} ({table.sk})"
        inverted = KeySpec(pk=table.sk.text, sk=table.pk.text)
        entities[entity] = entities[entity].model_copy(update={"index_keys": {
            **entities[entity].index_keys, index.name: inverted}})
        rewritten[name], moved = _keyed_by(pattern, frozenset(table.pk.attributes + table.sk.attributes),
                                           index.name if pattern.index == index.name else None)
        hows.append(f"`{name}` on {index.name} keyed {inverted.pk} / {inverted.sk}" + (f" FILTER {moved}" if moved
                                                                                        else ""))
    settings = design.blueprint.indexes.get(index.name)  # its shards, projection and capacity stay
    inverted_keys = KeyAttributes(pk=keys.sk, sk=keys.pk)
    spec = settings.model_copy(update={"keys": inverted_keys}) if settings else IndexSpec(keys=inverted_keys)
    update = {"entities": entities, "access_patterns": rewritten, "indexes": {**blueprint.indexes, index.name: spec}}
    return blueprint.model_copy(update=update), "; ".join(hows), ()


def _broader_key(design: TableDesign, index: str, pattern: AccessPattern) -> frozenset[str] | None:
    """The key attributes of the other shape of the entity whose partition key the pattern binds and whose
    partitions hold the fewest items (the most values of the attributes bound), on an index that stays."""
    entity, tenant = pattern.entities[0], design.blueprint.tenant
    equalities = set(pattern.equalities)
    retiring = {i.name for i in design.indexes if i.retiring}
    keys = []
    for other, shape in sorted(design.shapes[entity].items()):
        partition = set(shape.pk.attributes) | set(shape.shard_by)
        scoped = tenant is not None and tenant in equalities
        if other in (index, *retiring) or not partition <= equalities or (
                scoped and not tenant_led(design.blueprint, shape.pk)):
            continue
        bound = {a for a in shape.sk.attributes if a in pattern.where} | partition
        keys.append((-_values(design, bound), other, frozenset(bound)))
    return min(keys)[2] if keys else None


def _values(design: TableDesign, attributes: set[str]) -> int:
    """How many distinct combinations the attributes take (an unknown count as one: no selectivity claimed)."""
    combinations = 1
    for attribute in sorted(attributes):
        combinations *= attribute_cardinality(design, attribute)[0] or 1
    return combinations


def _copied(design: TableDesign, blueprint: Blueprint, index: IndexDesign, patterns: tuple[str, ...]
            ) -> Rewritten | str:
    entities, rewritten, copies = dict(blueprint.entities), dict(blueprint.access_patterns), {}
    for entity, shape in index.members:
        served = [name for name in patterns if entity in blueprint.access_patterns[name].entities]
        if not served:
            continue
        if any(len(blueprint.access_patterns[name].entities) > 1 for name in served):
            return "not possible: an item collection on an index cannot be copied item by item"
        if blueprint.tenant is not None and not tenant_led(blueprint, shape.pk):
            return f"not possible: a copy keyed {shape} in the table: every key there starts with `{blueprint.tenant}`"
        copy = f"{entity}By{re.sub(r'[^A-Za-z0-9]', '', index.name)}"
        if copy in entities:
            return f"not possible: the blueprint already has an entity named {copy}"
        entities[copy] = _copy_of(design, entity, index, shape, served)
        copies[entity] = copy
        for name in served:
            rewritten[name] = blueprint.access_patterns[name].model_copy(update={"entity": copy, "index": TABLE})
    shapes = dict(index.members)
    how = "; ".join(f"{copy} (a copy of each {entity} keyed {shapes[entity]}) in the table, written with it"
                    for entity, copy in sorted(copies.items()))
    update = {"entities": entities, "access_patterns": rewritten}
    return blueprint.model_copy(update=update), how, tuple(copies.values())


def _copy_of(design: TableDesign, entity: str, index: IndexDesign, shape: Shape, served: list[str]) -> EntitySpec:
    spec = design.blueprint.entities[entity]
    projection = None if index.projection.type == "ALL" else index.projection.attributes
    returned = {a for name in served for a in (design.blueprint.access_patterns[name].returns or spec.attributes)}
    keyed = {*shape.pk.attributes, *shape.sk.attributes, *shape.shard_by}
    ttl = design.blueprint.table.ttl_attribute
    expiring = {ttl} if ttl else set()  # copies expire with their items
    needed = {*returned, *keyed, *expiring, *identity(design.blueprint, entity)}
    kept = sorted(set(spec.attributes) if projection is None else {*projection, *needed} & set(spec.attributes))
    share = presence(design, entity, index.name)  # a sparse index holds only the items with its keys
    rates = spec.write_rates
    shares = change_shares(design, entity, changed_attributes(design, entity)[0])
    changed = {a: share for a, share in shares.items() if a in kept}  # an update the copy does not see
    writes = rates.model_copy(update={"inserts": rates.inserts * share, "updates": rates.updates * share if changed
                                      else 0.0, "changes": changed, "deletes": rates.deletes * share,
                                      "expiries": rates.expiries * share, "failing": {}, "batch": None})
    # A copy exists only for items with every key attribute: those are never absent from it.
    required = {"optional": False, "present": None}
    attributes = {a: spec.attributes[a].model_copy(update=required) if a in keyed else spec.attributes[a] for a in kept}
    return spec.model_copy(update={
        "attributes": attributes,
        "key": KeySpec(pk=unsharded(shape), sk=shape.sk.text if shape.keys.sk else None,
                       shards=shape.shards if shape.shards > 1 else None,
                       shard_by=list(shape.shard_by) if shape.shards > 1 else None),
        "index_keys": {}, "writes": writes, "writes_per_second": 0.0, "transactional": False, "examples": [],
        "item_bytes": projected_bytes(design, entity, index.name, tuple(kept)),
        "item_count": None if spec.item_count is None else round(spec.item_count * share),
    })
