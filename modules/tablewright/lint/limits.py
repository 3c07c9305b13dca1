"""DynamoDB limits and costs a design can run into: index counts, projections, item sizes, ALL
projections, scans, filters, local-index item collections, autoscaling bounds."""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

from tablewright.blueprint.language import AccessPattern
from tablewright.blueprint.traffic import HOURS_PER_MONTH, SECONDS_PER_MONTH, entity_profile
from tablewright.blueprint.traits import hottest_share
from tablewright.capacity.estimate import (
    PAGE_BYTES,
    collection,
    entry_bytes,
    insert_units,
    item_bytes,
    projected_bytes,
    write_units,
)
from tablewright.capacity.loads import UNLIMITED, CapacityReport, IndexLoad
from tablewright.capacity.traffic import entity_writes
from tablewright.design.design import TABLE, CapacityPolicy, QueryPlan, TableDesign, place
from tablewright.errors import FieldPath
from tablewright.lint.findings import Context, Issue, Severity, rule
from tablewright.lint.quotas import beyond_quota

MAX_GSIS = 20
MAX_PROJECTED_ATTRIBUTES = 100
MAX_ITEM_BYTES = 400 * 1024
ITEM_COLLECTION_LIMIT = 10 * 2**30


def _index_path(design: TableDesign, index: str) -> FieldPath:
    if index in design.blueprint.indexes:
        return ("indexes", index)
    patterns = design.index(index).patterns
    return ("access_patterns", patterns[0]) if patterns else ("entities",)


@rule("TW301", "More than 20 GSIs", "Overload GSIs across entities (the planner does), or split the table.",
      why="More than 20 GSIs",
      severity="error")
def too_many_gsis(ctx: Context) -> Iterator[Issue]:
    gsis = ctx.design.global_indexes
    if len(gsis) > MAX_GSIS:
        yield Issue(
            "error",
            f"{len(gsis)} global secondary indexes; a table has at most {MAX_GSIS} by default",
            "pin patterns to shared shapes with `index_keys` so entities overload the same GSIs, or ask AWS for a "
            "quota increase",
            _index_path(ctx.design, gsis[MAX_GSIS].name),
        )


@rule("TW302", "More than 100 projected attributes",
      "Project fewer attributes (`returns`, `indexes.<name>.projection`), or use KEYS_ONLY and a follow-up read.",
      why="More than 100 projected non-key attributes across the secondary indexes",
      severity="error")
def too_many_projected(ctx: Context) -> Iterator[Issue]:
    counted = [(i.name, len(i.projection.attributes)) for i in ctx.design.indexes if i.projection.type == "INCLUDE"]
    total = sum(count for _, count in counted)
    if total > MAX_PROJECTED_ATTRIBUTES:
        largest = max(counted, key=lambda c: c[1])[0]
        yield Issue(
            "error",
            f"the secondary indexes project {total} non-key attributes in all "
            f"({', '.join(f'{n}: {c}' for n, c in counted)}); DynamoDB allows {MAX_PROJECTED_ATTRIBUTES} per table",
            f"trim `returns` of the patterns on {largest}, or make it KEYS_ONLY with a follow-up read",
            _index_path(ctx.design, largest),
        )


@rule("TW303", "Item over 400 KB", "Split the item (e.g. a header item and detail items under one partition key).",
      why="Item over 400 KB",
      severity="error")
def item_too_large(ctx: Context) -> Iterator[Issue]:
    for name, spec in sorted(ctx.design.blueprint.entities.items()):
        if spec.item_bytes and spec.item_bytes > MAX_ITEM_BYTES:
            yield Issue(
                "error",
                f"{name} items average {spec.item_bytes:,} bytes; DynamoDB items hold at most {MAX_ITEM_BYTES:,}",
                "split it into several items of one item collection, or keep the large part in S3",
                ("entities", name, "item_bytes"),
            )


@rule("TW304", "ALL projection",
      "Project only what the patterns return (the default); ALL copies every attribute into the index.",
      why="ALL projection, with its extra write cost per month (at the index's own billing and write target)",
      severity="warning")
def all_projection(ctx: Context) -> Iterator[Issue]:
    design = ctx.design
    region = design.blueprint.region
    price = ctx.capacity.prices.table_class(region, design.blueprint.table.table_class)
    for index in design.indexes:
        if index.projection.type != "ALL" or not index.members:  # members unknown: an adopted index
            continue
        extra = 0.0
        for entity, _ in index.members:
            writes = _entry_writes(ctx, entity, index.name)
            needed = tuple(sorted({a for p in index.patterns for a in design.plan(p).returns}))
            full = write_units(entry_bytes(design, entity, index.name))
            minimal = write_units(projected_bytes(design, entity, index.name, needed))
            extra += (full - minimal) * writes
        # The index's own billing and write target (a local index's writes are the table's).
        policy = design.capacity.get(index.name, design.capacity[TABLE])
        on_demand = policy.billing == "on_demand"
        if price is None:
            cost = f"not priced: no prices for {region or 'a blueprint without `region`'}"
        elif on_demand:
            monthly = extra * SECONDS_PER_MONTH * price.on_demand_write_request_unit
            cost = f"~${monthly:,.2f}/month on demand in {region}"
        else:
            target = policy.scaling("write").target
            monthly = extra / (target / 100) * HOURS_PER_MONTH * price.provisioned_wcu_hour
            cost = f"~${monthly:,.2f}/month provisioned at its {target}% write target in {region}"
        units = "write request units/s" if on_demand else "WCU/s"
        yield Issue(
            "warning",
            f"{index.name} projects ALL attributes: every write copies whole items into it, about {extra:,.1f} {units} "
            f"more than projecting what its patterns return ({cost}), plus the storage of full copies",
            f"remove `projection: all` from indexes.{index.name} to project only the returned attributes",
            ("indexes", index.name),
        )


def _entry_writes(ctx: Context, entity: str, index: str) -> float:
    """Writes of the entity's entry on `index` a second, over a month with its events: every write kind that
    consumes capacity, an event's `rate` as the traffic model counts it (capacity/traffic.py `entity_writes`)."""
    write = next(w for w in ctx.capacity.writes if w.entity == entity)
    profile = entity_profile(ctx.design.blueprint, entity)
    rate, per_target = entity_writes(ctx.design, write, profile)
    if not per_target:
        return 0.0
    units = write.units_per_second.get(index, 0.0) / rate if rate else insert_units(ctx.design, entity).get(index, 0.0)
    return profile.month_average(rate) * units / write_units(entry_bytes(ctx.design, entity, index))


def _planned_patterns(design: TableDesign) -> Iterator[tuple[QueryPlan, AccessPattern]]:
    """Each query plan with the access pattern it serves."""
    for plan in design.plans:
        yield plan, design.blueprint.access_patterns[plan.pattern]


@rule("TW305", "Pattern reads the whole table",
      "A Scan reads every item whatever its filter: give the pattern a key (an `=` condition), or keep the Scan rare.",
      why="Pattern reads the whole table (`scan: allowed`), with its cost",
      severity="warning")
def scan_pattern(ctx: Context) -> Iterator[Issue]:
    for plan, pattern in _planned_patterns(ctx.design):
        if plan.operation != "Scan":
            continue
        read = ctx.capacity.read(plan.pattern)
        schedule = pattern.schedule
        how_often = (f"a job ({schedule.every}) from {schedule.start} UTC over {schedule.seconds // 60:,} min"
                     if schedule
                     else f"{read.units_per_second:,.1f} RCU/s at {pattern.rps:g} scans/s")
        size = (f"{read.items_per_call:,} items, {read.units_per_call:,.0f} RCU per scan, {how_often}"
                if read.items_per_call else "declare the entities' `item_count` to size it")
        yield Issue(
            "warning",
            f"{plan.pattern} scans the whole table ({size}); accepted because: {pattern.reason}",
            "add an `=` condition the table or a GSI can key by, or run it on an export instead of the table",
            ("access_patterns", plan.pattern, "scan"),
        )


@rule("TW306", "Filter on a non-key attribute",
      "Filters run after the read and do not reduce its cost: "
      "make the attribute a key component or use a sparse index.",
      why="Filter on a non-key attribute: the read costs the same",
      severity="warning")
def filter_cost(ctx: Context) -> Iterator[Issue]:
    for plan, pattern in _planned_patterns(ctx.design):
        if plan.operation == "Scan" or not pattern.filter:
            continue
        read = ctx.capacity.read(plan.pattern)
        attributes = ", ".join(sorted(pattern.filter))
        yield Issue(
            "warning",
            f"{plan.pattern} filters on {attributes}: the key condition still reads about {read.items_per_call} "
            f"items ({read.units_per_call:g} RCU) per call, and the filter only discards some of them",
            f"make {attributes} a sort-key component after the bound ones (then it is a key condition), or index "
            "only the matching items (a sparse index)",
            ("access_patterns", plan.pattern, "filter"),
        )


def _entities_by_partition_key(design: TableDesign) -> list[tuple[str, list[str]]]:
    """The entities sharing each table partition-key template, by template."""
    by_key: dict[str, list[str]] = {}
    for entity, shapes in design.shapes.items():
        by_key.setdefault(shapes[TABLE].pk.text, []).append(entity)
    return sorted(by_key.items())


def _busiest_collection_bytes(design: TableDesign, entities: list[str]) -> float:
    """Bytes of items and local-index entries under the busiest value of a partition key the `entities` share;
    an entity without `item_count` or a known hottest share adds nothing."""
    total = 0.0
    for entity in entities:
        spec = design.blueprint.entities[entity]
        share = hottest_share(design.shapes[entity][TABLE].pk, spec.attributes,
                              design.blueprint.traffic.dominant_share)
        if spec.item_count is None or share is None:
            continue
        per_item = item_bytes(design, entity) + sum(entry_bytes(design, entity, i.name)
                                                   for i in design.local_indexes if i.name in design.shapes[entity])
        total += spec.item_count * share * per_item
    return total


@rule("TW307", "Item collection over 10 GB with a local index",
      "Tables with local secondary indexes cap each partition key's items at 10 GB: spread them or use a GSI.",
      why="Item collection over 10 GB (half: warning) on a table with a local index",
      severity="error")
def item_collection_size(ctx: Context) -> Iterator[Issue]:
    if not ctx.design.local_indexes:
        return
    for template, entities in _entities_by_partition_key(ctx.design):
        total = _busiest_collection_bytes(ctx.design, entities)
        if total > ITEM_COLLECTION_LIMIT / 2:
            severity: Severity = "error" if total > ITEM_COLLECTION_LIMIT else "warning"
            yield Issue(
                severity,
                f"the busiest partition key {template} holds about {total / 2**30:,.1f} GB of items and local-index "
                f"entries; with a local index each item collection is capped at 10 GB",
                "spread the items over more partition keys, or replace the local index by a GSI",
                ("entities", sorted(entities)[0], "key", "pk"),
            )


def _provisioned_loads(ctx: Context) -> Iterator[tuple[IndexLoad, CapacityPolicy]]:
    """Each provisioned target's load with its capacity policy: the ones with autoscaling bounds."""
    for load in ctx.capacity.loads:
        policy = ctx.design.capacity[load.index]
        if policy.billing == "provisioned":
            yield load, policy


@rule("TW308", "Autoscaling cannot reach the estimated peak",
      "Raise `capacity.*.max` to the suggested bound (peak at the target utilization), or lower the rates; above "
      "the table-level or account-level throughput quota (`simulation.table_quota`, `simulation.account_quota`) "
      "request a quota increase, split the workload across tables, or queue the writes.",
      why="Autoscaling maximum below the estimated peak",
      severity="warning")
def autoscaling_bounds(ctx: Context) -> Iterator[Issue]:
    provisioned = list(_provisioned_loads(ctx))
    for load, policy in provisioned:
        for direction in ("read", "write"):
            suggested = load.suggested_read if direction == "read" else load.suggested_write
            bounds = policy.bounds(direction)
            assert bounds is not None  # a provisioned policy has both
            if bounds[1] < suggested[1]:
                where = place(load.index)
                # the table and its GSIs each at its own peak: what the account-level quota must hold
                together = sum((other.suggested_read if direction == "read" else other.suggested_write)[1]
                               for other, _ in provisioned)
                yield Issue(
                    "warning",
                    f"{where}: {direction} capacity max {bounds[1]:,} is below the estimated peak "
                    f"{suggested[1]:,} (average {getattr(load, direction + '_units_per_second'):,.0f} units/s, peak "
                    f"{getattr(load, 'peak_' + direction):,.0f} at {policy.scaling(direction).target}% target)",
                    f"set `{direction}: {{min: {suggested[0]}, max: {suggested[1]}}}` or lower the declared rates"
                    + beyond_quota(ctx.design.blueprint.simulation, direction, suggested[1], together,
                                   "the peak's requests"),
                    (*policy.source, direction, "max"),
                )



def _minimums(provisioned: list[tuple[IndexLoad, CapacityPolicy]], direction: str) -> int:
    """The table's and its GSIs' suggested minimums together: what the account-level quota must hold at least."""
    return sum((load.suggested_read if direction == "read" else load.suggested_write)[0] for load, _ in provisioned)


@rule("TW310", "Autoscaling minimum below the average load",
      "Raise `capacity.*.min` to the suggested minimum: autoscaling scales in to the minimum in quiet periods and "
      "takes about two minutes above target to scale out again; a GSI that throttles also throttles the table's "
      "writes.",
      why="Autoscaling minimum below the average load (the autoscaler sits at the minimum after a quiet spell; a GSI "
          "that throttles back-pressures the table's writes)",
      severity="warning")
def autoscaling_minimum(ctx: Context) -> Iterator[Issue]:
    provisioned = list(_provisioned_loads(ctx))
    for load, policy in provisioned:
        where = place(load.index)
        for direction in ("read", "write"):
            bounds = policy.bounds(direction)
            average = load.read_units_per_second if direction == "read" else load.write_units_per_second
            suggested = load.suggested_read if direction == "read" else load.suggested_write
            if bounds is None or bounds[0] >= average:
                continue
            backpressure = " (GSI throttling back-pressures the table's writes)" if (
                load.index != TABLE and direction == "write") else ""
            yield Issue(
                "warning",
                f"{where}: {direction} capacity min {bounds[0]:,} is below the average load of "
                f"{average:,.0f} units/s: after a quiet spell the autoscaler sits at the minimum and every return "
                f"to normal traffic throttles for minutes{backpressure}",
                f"set `{direction}: {{min: {suggested[0]}, ...}}` (the average at the "
                f"{policy.scaling(direction).target}% target)"
                + beyond_quota(ctx.design.blueprint.simulation, direction, suggested[0],
                               _minimums(provisioned, direction), "the requests"),
                (*policy.source, direction, "min"),
            )


@rule("TW311", "Query reads whole large item collections",
      "Add a `limit` (and paginate), or key the pattern more narrowly: a Query without a limit reads the whole "
      "collection, a request per 1 MB page.",
      why="Query without a limit reads whole item collections over 1 MB (from `item_count` and the partition key's "
          "cardinality)",
      severity="warning")
def large_collection(ctx: Context) -> Iterator[Issue]:
    for read in ctx.capacity.reads:
        plan = ctx.design.plan(read.pattern)
        pattern = ctx.design.blueprint.access_patterns[read.pattern]
        if plan.operation != "Query" or pattern.limit is not None or pattern.items is not None:
            continue
        size, _ = collection(ctx.design, plan)
        if size is None or size * read.bytes_per_item <= PAGE_BYTES:
            continue
        yield Issue(
            "warning",
            f"{read.pattern} reads whole collections of about {size:,.0f} items "
            f"({size * read.bytes_per_item / 2**20:,.1f} MB): each call reads all of it, {read.requests_per_call:,} "
            f"requests of a 1 MB page ({read.units_per_call:,g} RCU)",
            "add `limit:` and paginate, or bind more of the key with `=`",
            ("access_patterns", read.pattern),
        )


@rule("TW309", "Retiring index still deployed",
      "An index of the design lock that no pattern reads any more (its patterns were removed, or a successor took "
      "them) stays until you remove it: set `indexes.<name>.remove: true` once nothing reads it.",
      why="Retiring index still deployed: a locked index no pattern reads (its patterns removed, or a successor took "
          "them)",
      severity="warning")
def retiring_index(ctx: Context) -> Iterator[Issue]:
    for index in ctx.design.indexes:
        if not index.retiring:
            continue
        why = f"{index.successor} replaced it" if index.successor else "no access pattern reads it"
        yield Issue(
            "warning",
            f"{index.name} is retiring ({why}) but still deployed: every write to its entities still costs "
            "its write units, and it counts against the 20 GSIs",
            f"once no application reads {index.name} any more, set `indexes: {{{index.name}: {{remove: true}}}}` "
            "(a window change: DynamoDB deletes it); until then keep it",
            ("indexes", index.name) if index.name in ctx.design.blueprint.indexes else ("access_patterns",),
        )


@rule("TW312", "No entities described",
      "A blueprint without entities (an adopted table) manages the table, its autoscaling and its alarms, but "
      "nothing can be checked, costed or verified: describe the items and how the application reads them.",
      why="No entities described (an adopted table): nothing can be checked, costed or verified",
      severity="warning")
def nothing_described(ctx: Context) -> Iterator[Issue]:
    if ctx.design.blueprint.entities:
        return
    keys = " and ".join(ctx.design.table_keys.names)
    yield Issue(
        "warning",
        "no entities: Tablewright manages the table as it is, but cannot check its keys for hot "
        "partitions, size its capacity from the traffic or verify any access pattern",
        f"under `entities:`, describe each kind of item and the templates written to {keys}, then the "
        "`access_patterns` that read them (the TODO block `adopt` wrote shows the form)",
        ("entities",),
    )


@dataclass(frozen=True)
class BelowPeak:
    """An on-demand maximum (of the table or a GSI, in one direction) below the declared peak."""

    target: str  # "table" or a GSI
    direction: str
    maximum: int
    average: float
    peak: int


def maxima_below_peak(design: TableDesign, capacity: CapacityReport) -> list[BelowPeak]:
    """Every on-demand maximum below the estimated peak (the daily curve's and events' busiest second)."""
    found = []
    for target, maxima in capacity.on_demand_maxima.items():
        load = capacity.load(target)
        for direction, maximum, average, busiest in zip(
                ("read", "write"), maxima, (load.read_units_per_second, load.write_units_per_second),
                (load.peak_read, load.peak_write), strict=True):
            peak = math.ceil(busiest)
            if maximum != UNLIMITED and maximum < peak:
                found.append(BelowPeak(target, direction, maximum, average, peak))
    return found


@rule("TW313", "On-demand maximum below the estimated peak",
      "Raise `max_throughput` to the estimated peak (or write `suggested`), or lower the declared rates: DynamoDB "
      "throttles every request above an on-demand maximum, and above the table-level quota "
      "(`simulation.table_quota`) whatever the maximum.",
      why="An on-demand maximum (`max_throughput`) below the estimated peak (average request units x peak factor): "
          "DynamoDB throttles the requests above it",
      severity="warning; error in production (and the review and gate hold the change for the window)")
def on_demand_maximum(ctx: Context) -> Iterator[Issue]:
    blueprint = ctx.design.blueprint
    for low in maxima_below_peak(ctx.design, ctx.capacity):
        indexes = blueprint.indexes
        own = low.target != TABLE and low.target in indexes and indexes[low.target].max_throughput is not None
        path: FieldPath = ("indexes", low.target, "max_throughput") if own else ("table", "max_throughput")
        yield Issue(
            "error" if blueprint.production else "warning",
            f"{place(low.target)}: on-demand {low.direction} maximum {low.maximum:,} request units/s is below the "
            f"estimated peak {low.peak:,} (average {low.average:,.0f}, at its busiest second): "
            "requests above it are throttled" + (" (production: an error)" if blueprint.production else ""),
            f"set `max_throughput: {{{low.direction}: {low.peak}}}` or more (with the other direction), or "
            "`suggested`, or lower the declared rates"
            + beyond_quota(blueprint.simulation, low.direction, low.peak, 0, "the peak's requests"),
            (*path, low.direction),  # `suggested` is never below the peak: only numbers get here
        )
