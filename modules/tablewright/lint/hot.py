"""Hot partitions: the load on the busiest key values of the table and every GSI, at their peak.

DynamoDB throttles per partition, so per key value under adaptive capacity: one serves at most 3,000 RCU
and 1,000 WCU per second, however much the table has. Each busy key value gets its share of the traffic of
the patterns and entities on its template (declared, or judged at its worst and said so), at the busiest
second of their profiles. Every fix a finding offers has been applied to that key and simulated over the
day (modules/tablewright/simulate): it is offered with what the simulation shows it leaves.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, replace

from tablewright.blueprint.traffic import peak_curve
from tablewright.blueprint.traits import key_cardinality, status_like
from tablewright.capacity.estimate import ReadCost, query_read
from tablewright.capacity.traffic import PARTITION_UNITS, Flow, HotKey, TrafficModel
from tablewright.design.design import TABLE, Shape, TableDesign
from tablewright.errors import FieldPath
from tablewright.lint.findings import Context, Issue, rule
from tablewright.simulate.engine import key_throttle

PARTITION_RCU = PARTITION_UNITS["read"]
PARTITION_WCU = PARTITION_UNITS["write"]
MIN_SHARDS, MAX_SHARDS = 5, 20
MAX_SPLIT = 100  # counter items one hot item may be split into (the `shards` bound)
MAX_PROVEN = 20  # hot keys per stack whose fixes lint simulates (the busiest): bounds the work of one lint run
LOW_CARDINALITY = 100


@dataclass(frozen=True)
class KeyLoad:
    """One busy key value of a partition-key template on an index, at its peak (units per second)."""

    index: str
    entities: list[str]
    shapes: dict[str, Shape]
    key: HotKey
    terms: list[tuple[Flow, float]]  # each flow on the key and the share of it the key receives

    def _peak(self, direction: str) -> float:
        return sum(flow.peak * share for flow, share in self.terms if flow.direction == direction)

    @property
    def wcu(self) -> float:
        return self._peak("write")

    @property
    def rcu(self) -> float:
        return self._peak("read")

    @property
    def average_wcu(self) -> float:
        return sum(flow.units * share for flow, share in self.terms if flow.direction == "write")

    @property
    def average_rcu(self) -> float:
        return sum(flow.units * share for flow, share in self.terms if flow.direction == "read")


def key_loads(ctx: Context, every: bool = False) -> list[KeyLoad]:
    """The busiest value of each template (`every`: each value the model follows), table first then each GSI."""
    model: TrafficModel = ctx.capacity.traffic
    design = ctx.design
    loads = []
    for key in model.hot_keys:
        if key.rank and not every:
            continue
        shapes = {e: design.shapes[e][key.target] for e in key.entities}
        terms = [(model.flows[i], share) for i, share in key.terms]
        loads.append(KeyLoad(key.target, list(key.entities), shapes, key, terms))
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


def _assumptions(load: KeyLoad) -> str:
    """Why this value gets its share, and the line that replaces each assumption."""
    reasons = [f"{c.placeholder}: {c.reason}" for c in load.key.components]
    declares = [c.declare for c in load.key.components if c.declare]
    text = "; ".join(dict.fromkeys(reasons))
    return text + (f"; to replace the assumption declare {', '.join(dict.fromkeys(declares))}" if declares else "")


def _breakdown(ctx: Context, load: KeyLoad) -> str:
    parts = []
    for flow, share in load.terms:
        unit = "WCU" if flow.direction == "write" else "RCU"
        verb = "writes" if flow.direction == "write" else "reads before its updates" if flow.before_write else "reads"
        once = flow.direction == "read" and share == _one_call(ctx, load, flow) < 1
        parts.append(f"{flow.source} {verb} {flow.units:,.1f} {unit}/s on average, {flow.peak:,.1f} at peak "
                     f"({flow.profile.basis}{', events' if flow.profile.surges else ''}) x {share:.3g}"
                     + (f" (a batch get names the key once among its {round(1 / share)} items)" if once else ""))
    return "; ".join(parts) or "no declared traffic"


@dataclass(frozen=True)
class Sharding:
    """A fix for a hot key, and the peak load it leaves on each key value.

    `kind`: `shard` (spread the key's items over N partition-key values; a Query fans out to all of them),
    `split` (a single item split into N items, written at random, read and summed together) or `cache`
    (the key's reads served by a cache that refreshes it `simulation.cache_reads_per_second` times a second).
    """

    kind: str
    shards: int
    setting: str  # the blueprint field to set
    wcu: float
    rcu: float
    read_hot: bool
    single_reads: bool  # every read of the key is of one item: sharding does not spread them
    before: float = 0.0  # throttled units a simulated day on the key's values, as declared (-1: not simulated)
    after: float = 0.0  # with the fix, on every value it makes of the key (each shard, each counter item)
    terms: tuple[tuple[Flow, float], ...] = ()


def is_hot(load: KeyLoad, warn: float) -> bool:
    """Over the warning level (`lint.hot_key_warning` of a partition's limit): TW103 or TW104."""
    return load.wcu > PARTITION_WCU * warn or load.rcu > PARTITION_RCU * warn


def _count(load: float, limit: int, warn: float, low: int, high: int) -> int:
    return min(high, max(low, math.ceil(load / (limit * warn))))


def _pattern_read(ctx: Context, flow: Flow) -> ReadCost | None:
    """The pattern a read flow is the calls of; None for the reads a client makes before a write (of one item)."""
    return next((read for read in ctx.capacity.reads if read.pattern == flow.pattern), None)


def _single_read(ctx: Context, flow: Flow) -> bool:
    read = _pattern_read(ctx, flow)
    return read is None or ctx.design.plan(read.pattern).operation == "GetItem" or read.items_per_call <= 1


def _sharded_terms(ctx: Context, load: KeyLoad, shards: int) -> list[tuple[Flow, float]]:
    """The key's terms once spread over `shards` values: writes divided (and the read an update makes of its item
    first); each Query call sends every shard a request (its own rounding) for that shard's items; reads of single
    items stay where they are."""
    current = load.key.shards
    terms = []
    for flow, share in load.terms:
        if flow.pattern is None:
            terms.append((flow, share * current / shards))
            continue
        read = _pattern_read(ctx, flow)
        if read is None or _single_read(ctx, flow) or read.requests_per_call >= shards \
                or flow.per_request != read.units_per_call:
            terms.append((flow, share))
            continue
        units = query_read(ctx.design, ctx.design.plan(flow.source), shards)[1]
        terms.append((replace(flow, per_request=units), share * current / shards))
    return terms


def _split_terms(load: KeyLoad, items: int) -> list[tuple[Flow, float]]:
    """A single item split into `items`: each write (and the read an update makes of its item first) goes to one
    of them; every pattern's read reads all of them (each item's key still sees every read)."""
    return [(flow, share / items if flow.pattern is None else share) for flow, share in load.terms]


def _one_call(ctx: Context, load: KeyLoad, flow: Flow) -> float:
    """The share of one call of a read flow that lands on the key: a batch get names a single item once among its
    items (capacity/loads.py bounds its share so), any other call reads the key's whole answer."""
    read = _pattern_read(ctx, flow)
    if read is None or not ctx.design.plan(read.pattern).batch or not load.key.single_item:
        return 1.0  # not a pattern's batch get (a Query, a GetItem, a read the client sends for an update)
    return 1 / read.items_per_call if read.items_per_call else 1.0


def _cached_terms(ctx: Context, load: KeyLoad, terms: list[tuple[Flow, float]] | None = None
                  ) -> list[tuple[Flow, float]]:
    """The key's reads served by a cache that refreshes it `cache_reads_per_second` times a second, on top of
    `terms` (the key's own, or those a shard or split fix leaves, aligned with them): a refresh is one call of each
    read flow, spread over the key's values as the fix spreads a call."""
    refresh = ctx.design.blueprint.simulation.cache_reads_per_second
    flat = replace(load.terms[0][0].profile, points=peak_curve(1, "00:00"), surges=(), basis="a cache's refreshes")
    cached = []
    for (flow, share), (old, old_share) in zip(terms or load.terms, load.terms, strict=True):
        if flow.pattern is None:  # a write, or the strongly consistent read an update makes first: not cached
            cached.append((flow, share))
            continue
        spread = share / old_share if old_share else 1.0
        cached.append((replace(flow, requests=refresh, profile=flat), _one_call(ctx, load, old) * spread))
    return cached


def _peak(terms: list[tuple[Flow, float]], direction: str) -> float:
    return sum(flow.peak * share for flow, share in terms if flow.direction == direction)


def hot_loads(ctx: Context) -> list[KeyLoad]:
    """The busiest value of each template over the warning level, table first then each GSI (TW103, TW104)."""
    warn = ctx.design.blueprint.lint.hot_key_warning
    return [load for load in key_loads(ctx) if is_hot(load, warn)]


def _simulated(ctx: Context, load: KeyLoad) -> bool:
    """Whether the key is among the stack's MAX_PROVEN busiest hot keys, whose fixes are simulated."""
    busiest = sorted(hot_loads(ctx), key=lambda k: -(k.wcu / PARTITION_WCU + k.rcu / PARTITION_RCU))[:MAX_PROVEN]
    return any(k.key == load.key for k in busiest)


def _throttled(ctx: Context, terms: list[tuple[Flow, float]]) -> tuple[float, int]:
    """`key_throttle`, once per set of terms in a lint run."""
    memo = ctx.memo.setdefault("key_throttle", {})
    key = tuple(terms)
    if key not in memo:
        memo[key] = key_throttle(terms)
    found: tuple[float, int] = memo[key]
    return found


def _fix(ctx: Context, load: KeyLoad, kind: str, count: int, terms: list[tuple[Flow, float]], before: float,
         setting: str) -> Sharding:
    """The fix simulated on one of the `count` values it makes of the key (shards, counter items; a cache keeps
    the key's own), each of which is loaded alike."""
    single_reads = all(_single_read(ctx, flow) for flow, _ in load.terms if flow.direction == "read")
    after = _throttled(ctx, terms)[0] * (count if kind != "cache" else load.key.shards) if before >= 0 else -1.0
    return Sharding(kind, count, setting, _peak(terms, "write"), _peak(terms, "read"),
                    load.rcu > PARTITION_RCU * ctx.design.blueprint.lint.hot_key_warning, single_reads, before, after,
                    tuple(terms))


def candidate_fixes(ctx: Context, load: KeyLoad) -> list[Sharding]:
    """Every fix in the catalog that applies to the key, each simulated (for the MAX_PROVEN busiest keys of the
    stack; the others get `before` and `after` -1). Once per key and lint run: the rules and the charts ask."""
    memo: dict[int, list[Sharding]] = ctx.memo.setdefault("candidate_fixes", {})
    if id(load.key) not in memo:  # the model's hot keys live as long as the context
        memo[id(load.key)] = _candidate_fixes(ctx, load)
    return memo[id(load.key)]


def _candidate_fixes(ctx: Context, load: KeyLoad) -> list[Sharding]:
    warn = ctx.design.blueprint.lint.hot_key_warning
    before = _throttled(ctx, load.terms)[0] * load.key.shards if _simulated(ctx, load) else -1.0
    setting = _where(ctx.design, load.index, load.entities[0])[2]
    unsharded_wcu = load.wcu * load.key.shards
    fixes = []
    read_hot = load.rcu > PARTITION_RCU * warn
    if load.key.single_item:
        if load.wcu > PARTITION_WCU * warn:
            items = _count(load.wcu, PARTITION_WCU, warn, 2, MAX_SPLIT)
            fixes.append(_fix(ctx, load, "split", items, _split_terms(load, items), before, setting))
    elif load.wcu > PARTITION_WCU * warn or read_hot:
        shards = _count(unsharded_wcu, PARTITION_WCU, warn, MIN_SHARDS, MAX_SHARDS)
        single = all(_single_read(ctx, flow) for flow, _ in load.terms if flow.direction == "read")
        if read_hot and not single:
            shards = max(shards, _count(load.rcu * load.key.shards, PARTITION_RCU, warn, MIN_SHARDS, MAX_SHARDS))
        if shards > load.key.shards:
            fixes.append(_fix(ctx, load, "shard", shards, _sharded_terms(ctx, load, shards), before, setting))
    if read_hot:
        fixes.append(_fix(ctx, load, "cache", 0, _cached_terms(ctx, load), before, setting))
    return fixes


def combined_fixes(ctx: Context, load: KeyLoad) -> list[Sharding]:
    """Every set of two or more of the key's candidate fixes applied together, each simulated. Shard and split
    never both apply (a single item is split, a partition of many items sharded) and a cache works on the values
    either makes, so the sets are a shard or split with a cache: at most one a key. Its `kind` joins the parts
    (`split+cache`); `shards` and `setting` are the shard or split's."""
    memo: dict[int, list[Sharding]] = ctx.memo.setdefault("combined_fixes", {})
    if id(load.key) not in memo:
        singles = candidate_fixes(ctx, load)
        before = singles[0].before if singles else -1.0
        memo[id(load.key)] = [
            _fix(ctx, load, f"{fix.kind}+cache", fix.shards, _cached_terms(ctx, load, list(fix.terms)), before,
                 fix.setting)
            for fix in singles if fix.kind != "cache" and any(f.kind == "cache" for f in singles)]
    return memo[id(load.key)]


def suggested_sharding(ctx: Context, load: KeyLoad) -> Sharding:
    """The fix the charts draw: the first proven one, else the first tried (shard or split)."""
    fixes = candidate_fixes(ctx, load)
    proven = [f for f in fixes if f.after < f.before or f.before <= 0]
    chosen = (proven or fixes or [_fix(ctx, load, "shard", load.key.shards, load.terms, 0.0, "")])[0]
    return chosen


def _fix_text(ctx: Context, load: KeyLoad, fix: Sharding) -> str:
    return _fix_words(ctx, load, fix) + f" ({_proof(fix)})"


def _fix_words(ctx: Context, load: KeyLoad, fix: Sharding) -> str:
    """What to change for one fix, and what it leaves at peak."""
    if fix.kind == "shard":
        text = (f"shard it into {fix.shards}: set `{fix.setting}: {fix.shards}` (about {fix.wcu:,.0f} WCU and "
                f"{fix.rcu:,.0f} RCU per shard at peak)")
        fanned = [f"{new.source} sends {fix.shards} queries per call "
                  f"(+{(new.per_request - old.per_request) * new.requests:,.1f} RCU/s)"
                  for (new, _), (old, _) in zip(fix.terms, load.terms, strict=True)
                  if new.direction == "read" and new.per_request != old.per_request]
        text += ("; reads fan out: " + ", ".join(dict.fromkeys(fanned))) if fanned else ""
    elif fix.kind == "split":
        entity = load.entities[0]
        text = (f"split the item into {fix.shards} counter items, each write to one at random and every read "
                f"summing all {fix.shards}: set `{fix.setting}: {fix.shards}` with `shard_by:` naming an attribute "
                f"outside {entity}'s primary key that differs between writers (sharding by the key itself cannot "
                f"spread one item); about {fix.wcu:,.0f} WCU per item at peak, and reads cost {fix.shards}x")
    else:
        text = (f"serve its reads from a cache (DAX or the application's) or a materialised top-N refreshed "
                f"{ctx.design.blueprint.simulation.cache_reads_per_second:g} time(s) a second: about "
                f"{fix.rcu:,.{0 if fix.rcu >= 10 else 1}f} RCU on the key at peak")
    return text


def _combined_text(ctx: Context, load: KeyLoad, fix: Sharding) -> str:
    """A shard or split with a cache: both settings, and what the pair leaves on each value it makes."""
    kind = fix.kind.split("+")[0]
    first = _fix_words(ctx, load, replace(fix, kind=kind))
    refresh = ctx.design.blueprint.simulation.cache_reads_per_second
    words = "split counter" if kind == "split" else "shards"
    return (f"cache + {words} together: {first}; and serve its reads from a cache refreshed {refresh:g} time(s) "
            f"a second: together about {fix.wcu:,.0f} WCU and {fix.rcu:,.1f} RCU on each of the {fix.shards} "
            f"values at peak ({_proof(fix)})")


def _proof(fix: Sharding) -> str:
    if fix.before < 0:
        return f"not simulated: lint simulates the {MAX_PROVEN} busiest hot keys of a stack"
    if fix.after == 0:
        return (f"simulated: removes all {fix.before:,.0f} throttled units a day" if fix.before
                else "simulated: no throttling")
    share = 1 - fix.after / fix.before if fix.before else 0.0
    return f"simulated: {fix.after:,.0f} throttled units a day remain of {fix.before:,.0f} ({share:.0%} fewer)"


def _fixes_text(ctx: Context, load: KeyLoad) -> str:
    fixes = candidate_fixes(ctx, load)
    working = [f for f in fixes if f.before <= 0 or f.after < f.before]
    texts = [_fix_text(ctx, load, f) for f in working]
    if not any(f.after <= 0 for f in working):  # no single fix cures it: the fixes together, each set simulated
        pairs = [f for f in combined_fixes(ctx, load) if f.before <= 0 or f.after < f.before]
        texts += [_combined_text(ctx, load, f) for f in pairs]
        working += pairs
    if not any(f.after <= 0 for f in working):
        texts.append("key it by a higher-cardinality attribute: no fix tried, alone or together, removes the "
                     "throttling")
    return "; or ".join(texts)


def _message(ctx: Context, load: KeyLoad, over: str) -> str:
    name = _where(ctx.design, load.index, load.entities[0])[0]
    single = ("; each value is a single item, so shards on its key do not spread it"
              if load.key.single_item else (f"; {load.key.shards} shards" if load.key.shards > 1 else ""))
    before, seconds = _throttled(ctx, load.terms) if _simulated(ctx, load) else (0.0, 0)
    each = f" on each of its {load.key.shards} shards" if load.key.shards > 1 else ""
    throttles = (f"; simulated over a day: {before:,.0f} units throttled in {seconds:,} s{each}" if before else "")
    return (f"{name}: partition key {load.key.label} ({_assumptions(load)}) gets an estimated {over} at its peak"
            f"{single} ({_breakdown(ctx, load)}){throttles}")


@rule("TW103", "Hot key over a partition's limit",
      "Apply the offered fix (each is simulated and offered only when it removes or reduces the throttling): "
      "shard the key, split a single hot item into counter items, cache a read-hot key, the shard or split "
      "with a cache when no fix alone cures it, or key it by a higher-cardinality attribute.",
      why="Hot key over a partition's limit (3,000 RCU / 1,000 WCU per key) at its peak",
      severity="error")
def hot_key_over_limit(ctx: Context) -> Iterator[Issue]:
    for load in key_loads(ctx):
        if load.wcu <= PARTITION_WCU and load.rcu <= PARTITION_RCU:
            continue
        over = (f"{load.wcu:,.0f} WCU per key, above a partition's {PARTITION_WCU:,}" if load.wcu > PARTITION_WCU
                else f"{load.rcu:,.0f} RCU per key, above a partition's {PARTITION_RCU:,}")
        yield Issue("error", _message(ctx, load, over), _fixes_text(ctx, load),
                    _where(ctx.design, load.index, load.entities[0])[1])


def _loads_within_limit(ctx: Context, over_warning: bool) -> Iterator[KeyLoad]:
    """The key loads within a partition's limit at their peak: over `lint.hot_key_warning` of it (TW104), or under
    (those over the limit are TW103's)."""
    warn = ctx.design.blueprint.lint.hot_key_warning
    for load in key_loads(ctx):
        if load.wcu <= PARTITION_WCU and load.rcu <= PARTITION_RCU and is_hot(load, warn) == over_warning:
            yield load


@rule("TW104", "Hot key near a partition's limit",
      "Apply the offered fix before traffic grows; the key's peak is above `lint.hot_key_warning` of a "
      "partition's limit.",
      why="Hot key above `lint.hot_key_warning` of a partition's limit at its peak",
      severity="warning")
def hot_key_near_limit(ctx: Context) -> Iterator[Issue]:
    warn = ctx.design.blueprint.lint.hot_key_warning
    for load in _loads_within_limit(ctx, over_warning=True):
        over = (f"{load.wcu:,.0f} WCU and {load.rcu:,.0f} RCU per key, over {warn:.0%} of a partition's "
                f"{PARTITION_WCU:,} WCU / {PARTITION_RCU:,} RCU")
        yield Issue("warning", _message(ctx, load, over), _fixes_text(ctx, load),
                    _where(ctx.design, load.index, load.entities[0])[1])


@rule("TW101", "Low-cardinality partition key",
      "Key by a high-cardinality attribute (an id), or keep the traffic within the stated headroom.",
      why="Low-cardinality partition key (enum, boolean, date, status-like name, or `cardinality:`)",
      severity="info, with the headroom")
def low_cardinality(ctx: Context) -> Iterator[Issue]:
    for load in _loads_within_limit(ctx, over_warning=False):  # TW103/TW104 say the others, with numbers
        for entity in load.entities:
            specs = ctx.design.blueprint.entities[entity].attributes
            distinct, _ = key_cardinality(load.shapes[entity].pk, specs)
            shards = load.shapes[entity].shards
            if distinct is None or distinct * shards >= LOW_CARDINALITY:
                continue
            distinct *= shards
            name, path, _ = _where(ctx.design, load.index, entity)
            headroom = min(PARTITION_WCU / load.wcu if load.wcu else math.inf,
                           PARTITION_RCU / load.rcu if load.rcu else math.inf)
            grows = (f"; it reaches a partition's limit at about {headroom:,.0f}x today's rates"
                     if headroom < math.inf else "")
            yield Issue(
                "info",
                f"{name}: {entity}'s partition key {load.shapes[entity].pk.text} takes about {distinct} value(s) "
                f"({_assumptions(load)}{'; x ' + str(shards) + ' shards' if shards > 1 else ''}); the busiest gets "
                f"{load.wcu:,.1f} WCU and "
                f"{load.rcu:,.1f} RCU per second at its peak{grows}",
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
