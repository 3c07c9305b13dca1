"""Hot partitions: per-key load from declared rates and sizes, on the table and every GSI.

DynamoDB throttles per partition (per key under adaptive capacity): a partition serves at most
3,000 RCU and 1,000 WCU per second, however much the table has. The busiest key of a partition-key
template gets the traffic share its values imply (1/N for N values, or a declared `hot_key_share`).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field

from modules.blueprint.traits import hottest_share, key_cardinality, status_like
from modules.capacity.estimate import query_read
from modules.design.design import TABLE, Shape, TableDesign
from modules.design.serve import may_share
from modules.errors import FieldPath
from modules.lint.findings import Context, Issue, rule

PARTITION_RCU = 3000
PARTITION_WCU = 1000
MIN_SHARDS, MAX_SHARDS = 5, 20
LOW_CARDINALITY = 100


@dataclass
class KeyLoad:
    """The estimated load on the busiest key of one partition family of an index.

    Terms are (entity or pattern, units per second on the index, share of the busiest key, shards).
    Sharding divides a key's writes; a fanned-out read sends each shard its own request.
    """

    index: str
    entities: list[str]
    shapes: dict[str, Shape]
    write_terms: list[tuple[str, float, float, int]] = field(default_factory=list)
    read_terms: list[tuple[str, float, float, int]] = field(default_factory=list)

    @property
    def unsharded_wcu(self) -> float:
        return sum(units * share for _, units, share, _ in self.write_terms)

    @property
    def wcu(self) -> float:
        return sum(units * share / shards for _, units, share, shards in self.write_terms)

    @property
    def rcu(self) -> float:
        return sum(units * share / shards for _, units, share, shards in self.read_terms)


def partition_families(design: TableDesign, members: dict[str, Shape]) -> list[list[str]]:
    """Entities whose partition keys can take the same values share partitions (item collections): the
    families of the given members (entity -> its shape on one index), each sorted."""
    families: list[list[str]] = []
    for entity in sorted(members):
        joined = [f for f in families if any(
            may_share(design.blueprint, entity, members[entity].pk, other, members[other].pk) for other in f)]
        merged = [entity] + [e for f in joined for e in f]
        families = [f for f in families if f not in joined] + [sorted(merged)]
    return families


def key_loads(ctx: Context) -> list[KeyLoad]:
    design, capacity = ctx.design, ctx.capacity
    loads = []
    for index in [TABLE] + [i.name for i in design.global_indexes]:
        members = {e: shapes[index] for e, shapes in design.shapes.items() if index in shapes}
        local = [i.name for i in design.local_indexes] if index == TABLE else []
        for family in partition_families(design, members):
            shares = {}
            for entity in family:
                share = hottest_share(members[entity].pk, design.blueprint.entities[entity].attributes)
                if share is not None:
                    shares[entity] = share
            if not shares:
                continue
            load = KeyLoad(index, family, {e: members[e] for e in family})
            for write in capacity.writes:
                if write.entity in shares:
                    units = sum(u for i, u in write.units_per_second.items() if i == index or i in local)
                    load.write_terms.append((write.entity, units, shares[write.entity], members[write.entity].shards))
            for read in capacity.reads:
                entity = design.plan(read.pattern).entities[0]
                if (read.index == index or read.index in local) and entity in shares:
                    load.read_terms.append((read.pattern, read.units_per_second, shares[entity],
                                            members[entity].shards))
            loads.append(load)
    return loads


def _where(design: TableDesign, index: str, entity: str) -> tuple[str, FieldPath, str]:
    """(name for messages, field path, where to set `shards`) for an entity's key on an index."""
    if index == TABLE:
        return "the table", ("entities", entity, "key", "pk"), f"entities.{entity}.key.shards"
    if index in design.blueprint.entities[entity].index_keys:
        return (index, ("entities", entity, "index_keys", index, "pk"), f"entities.{entity}.index_keys.{index}.shards")
    patterns = [p for p in design.index(index).patterns if entity in design.blueprint.access_patterns[p].entities]
    if index in design.blueprint.indexes or not patterns:  # a locked index no pattern reads: the entity's own line
        path: FieldPath = ("indexes", index) if index in design.blueprint.indexes else ("entities", entity)
    else:
        path = ("access_patterns", patterns[0])
    return index, path, f"indexes.{index}.shards"


def _template(load: KeyLoad) -> str:
    return " / ".join(dict.fromkeys(load.shapes[e].pk.text for e in load.entities))


def _reasons(design: TableDesign, load: KeyLoad) -> str:
    reasons = []
    for entity in load.entities:
        _, why = key_cardinality(load.shapes[entity].pk, design.blueprint.entities[entity].attributes)
        reasons += why
    return "; ".join(dict.fromkeys(reasons))


def _breakdown(load: KeyLoad) -> str:
    parts = [f"{entity} writes {units:,.0f} WCU/s x {share:.2f}" + (f" / {shards} shards" if shards > 1 else "")
             for entity, units, share, shards in load.write_terms if units]
    parts += [f"{pattern} reads {units:,.1f} RCU/s x {share:.2f}" + (f" / {shards} shards" if shards > 1 else "")
              for pattern, units, share, shards in load.read_terms if units]
    return "; ".join(parts) or "no declared traffic"


def _shards_needed(load: float, limit: int, warn: float) -> int:
    return min(MAX_SHARDS, max(MIN_SHARDS, math.ceil(load / (limit * warn))))


def _fan_out_cost(ctx: Context, load: KeyLoad, shards: int) -> str:
    costs = []
    for pattern, _, _, _ in load.read_terms:
        read = ctx.capacity.read(pattern)
        plan = ctx.design.plan(pattern)
        if plan.operation == "GetItem" or read.requests_per_call >= shards:
            continue
        extra = (query_read(ctx.design, plan, shards)[1] - read.units_per_call) * read.rps
        costs.append(f"{pattern} sends {shards} queries per call (+{extra:,.1f} RCU/s)")
    return "; reads fan out: " + ", ".join(costs) if costs else ""


def _time_bucket_hint(design: TableDesign, load: KeyLoad) -> str:
    entity = load.entities[0]
    specs = design.blueprint.entities[entity].attributes
    times = [a for a in load.shapes[entity].sk.attributes if specs[a].type in ("timestamp", "date")]
    if not times or any(s.bucket for s in load.shapes[entity].pk.segments):
        return ""
    return (f"; or, if traffic is spread over time, bucket it: add `#{{{times[0]}:month}}` to the partition key "
            "(range reads then take one query per month)")


@dataclass(frozen=True)
class Sharding:
    """The fix TW103/TW104 compute for a hot key, and the load it leaves on each shard's key.

    `wcu`: the key's writes spread over the shards. `rcu`: each call of a Query that reads more items than
    there are shards sends every shard one request, with the pattern's limit if it has one, for the items of
    that shard (rounded up per request);
    reads of single items are not spread (each item lives in one shard), nor is a read already fanned out
    over at least that many shards.
    """

    shards: int
    setting: str  # the blueprint field to set to `shards`
    wcu: float
    rcu: float
    read_hot: bool  # the reads alone are over the warning level
    single_reads: bool  # every read of the key is of one item: sharding does not spread them


def is_hot(load: KeyLoad, warn: float) -> bool:
    """Over the warning level (`lint.hot_key_warning` of a partition's limit): TW103 or TW104."""
    return load.wcu > PARTITION_WCU * warn or load.rcu > PARTITION_RCU * warn


def _sharded_rcu(ctx: Context, load: KeyLoad, shards: int) -> float:
    total = 0.0
    for pattern, units, share, current in load.read_terms:
        read = ctx.capacity.read(pattern)
        if ctx.design.plan(pattern).operation == "GetItem" or read.items_per_call <= 1 \
                or read.requests_per_call >= shards:
            total += units * share / current
            continue
        total += query_read(ctx.design, ctx.design.plan(pattern), shards)[1] / shards * read.rps * share
    return total


def suggested_sharding(ctx: Context, load: KeyLoad) -> Sharding:
    """The shard count that brings the busiest key under the warning level (5-20), and what it leaves."""
    warn = ctx.design.blueprint.lint.hot_key_warning
    single_reads = all(ctx.capacity.read(p).items_per_call <= 1 for p, _, _, _ in load.read_terms)
    read_hot = load.rcu > PARTITION_RCU * warn
    shards = _shards_needed(load.unsharded_wcu, PARTITION_WCU, warn)
    if read_hot and not single_reads:
        shards = max(shards, _shards_needed(load.rcu, PARTITION_RCU, warn))
    setting = _where(ctx.design, load.index, load.entities[0])[2]
    return Sharding(shards, setting, load.unsharded_wcu / shards, _sharded_rcu(ctx, load, shards), read_hot,
                    single_reads)


def _fix(ctx: Context, load: KeyLoad, warn: float) -> str:
    """The computed fix: the shard count that brings the busiest key under the warning level."""
    fix = suggested_sharding(ctx, load)
    shards, per_shard = fix.shards, fix.wcu
    text = f"shard it into {shards}: set `{fix.setting}: {shards}` (about {per_shard:,.0f} WCU per shard)"
    if per_shard > PARTITION_WCU * warn:
        text += f"; even {MAX_SHARDS} shards stay hot, so key it by a higher-cardinality attribute instead"
    if fix.read_hot and fix.single_reads:
        text += "; the hot reads are of single items, which sharding does not spread: cache them (DAX) instead"
    return text + _fan_out_cost(ctx, load, shards) + _time_bucket_hint(ctx.design, load)


@rule("TW103", "Hot key over a partition's limit",
      "Shard the partition key (`shards: N`, N from the load, 5-20) or key it by a higher-cardinality attribute.",
      why="Hot key over a partition's limit (3,000 RCU / 1,000 WCU per key)",
      severity="error")
def hot_key_over_limit(ctx: Context) -> Iterator[Issue]:
    for load in key_loads(ctx):
        if load.wcu <= PARTITION_WCU and load.rcu <= PARTITION_RCU:
            continue
        name, path, _ = _where(ctx.design, load.index, load.entities[0])
        over = (f"{load.wcu:,.0f} WCU per key, above a partition's {PARTITION_WCU:,}" if load.wcu > PARTITION_WCU
                else f"{load.rcu:,.0f} RCU per key, above a partition's {PARTITION_RCU:,}")
        yield Issue(
            "error",
            f"{name}: partition key {_template(load)} ({_reasons(ctx.design, load)}) gets an estimated {over} "
            f"({_breakdown(load)})",
            _fix(ctx, load, ctx.design.blueprint.lint.hot_key_warning),
            path,
        )


@rule("TW104", "Hot key near a partition's limit",
      "Shard the partition key or spread its values before traffic grows; "
      "the estimate is above `lint.hot_key_warning`.",
      why="Hot key above `lint.hot_key_warning` of a partition's limit",
      severity="warning")
def hot_key_near_limit(ctx: Context) -> Iterator[Issue]:
    warn = ctx.design.blueprint.lint.hot_key_warning
    for load in key_loads(ctx):
        if load.wcu > PARTITION_WCU or load.rcu > PARTITION_RCU:
            continue
        if load.wcu <= PARTITION_WCU * warn and load.rcu <= PARTITION_RCU * warn:
            continue
        name, path, _ = _where(ctx.design, load.index, load.entities[0])
        yield Issue(
            "warning",
            f"{name}: partition key {_template(load)} ({_reasons(ctx.design, load)}) gets an estimated "
            f"{load.wcu:,.0f} WCU and {load.rcu:,.0f} RCU per key, over {warn:.0%} of a partition's "
            f"{PARTITION_WCU:,} WCU / {PARTITION_RCU:,} RCU ({_breakdown(load)})",
            _fix(ctx, load, warn),
            path,
        )


@rule("TW101", "Low-cardinality partition key",
      "Key by a high-cardinality attribute (an id), or keep the traffic within the stated headroom.",
      why="Low-cardinality partition key (enum, boolean, date, status-like name, or `cardinality:`)",
      severity="info, with the headroom")
def low_cardinality(ctx: Context) -> Iterator[Issue]:
    warn = ctx.design.blueprint.lint.hot_key_warning
    for load in key_loads(ctx):
        if load.wcu > PARTITION_WCU * warn or load.rcu > PARTITION_RCU * warn:
            continue  # TW103/TW104 already say it, with numbers
        for entity in load.entities:
            specs = ctx.design.blueprint.entities[entity].attributes
            distinct, reasons = key_cardinality(load.shapes[entity].pk, specs)
            shards = load.shapes[entity].shards
            if distinct is None or distinct * shards >= LOW_CARDINALITY:
                continue
            if shards > 1:
                reasons = [*reasons, f"x {shards} shards"]
                distinct *= shards
            name, path, _ = _where(ctx.design, load.index, entity)
            headroom = min(PARTITION_WCU / load.wcu if load.wcu else math.inf,
                           PARTITION_RCU / load.rcu if load.rcu else math.inf)
            grows = (f"; it reaches a partition's limit at about {headroom:,.0f}x today's rates"
                     if headroom < math.inf else "")
            yield Issue(
                "info",
                f"{name}: {entity}'s partition key {load.shapes[entity].pk.text} takes about {distinct} value(s) "
                f"({'; '.join(reasons)}); the busiest gets {load.wcu:,.1f} WCU and {load.rcu:,.1f} RCU "
                f"per second{grows}",
                "fine at the declared rates; key it by a high-cardinality attribute (or shard it) before traffic "
                "grows toward that limit",
                path,
            )


@rule("TW102", "GSI partitioned by a status",
      "A GSI keyed by a status is a traffic funnel, not an index: put a high-cardinality attribute in its "
      "partition key and the status in the sort key, use a sparse index, or shard it.",
      why="GSI partitioned by a status: a traffic funnel, not an index",
      severity="warning")
def status_funnel(ctx: Context) -> Iterator[Issue]:
    design = ctx.design
    for index in design.global_indexes:
        for entity, shape in index.members:
            attributes = [s.attribute for s in shape.pk.segments if s.attribute]
            if not attributes or not all(status_like(a) for a in attributes) or shape.shards > 1:
                continue
            path = _where(design, index.name, entity)[1]
            yield Issue(
                "warning",
                f"{index.name}: {entity} is partitioned by {', '.join(attributes)} ({shape.pk.text}): every "
                f"{entity} of one {attributes[0]} lands in one partition, a traffic funnel rather than an index",
                f"partition {index.name} by a high-cardinality attribute with `{attributes[0]}` in the sort key, "
                f"write the key only for the {attributes[0]} values you query (a sparse index), or shard it "
                f"(`indexes.{index.name}.shards`)",
                path,
            )
