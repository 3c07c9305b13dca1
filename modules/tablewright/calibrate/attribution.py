"""Each entity's share of what a table or GSI served, from the keys Contributor Insights counted there.

An accessed-keys rule (PKC by partition key, SKC by partition and sort key) sums `ConsumedThroughputUnits` per
key: 3 x the write units plus the read units (capacity units when provisioned, request units on demand), reads and
writes of the key together; its `AggregateValue` is that sum over every key of the table or index.
https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/contributorinsights_HowItWorks.html#contributorinsights_HowItWorks.Graphs

A report lists only the top keys (at most 100). Each listed key that only one entity's key template on the target
makes is that entity's; a key of an item collection, which several entities' templates make, is theirs, split by
their declared throughput units; the rest of the rule's `AggregateValue` (keys no template makes, and every key
not listed) is split by every entity's declared throughput units. An entity's share is its keys' units plus its
part of the rest, over the `AggregateValue`. `fit.py` takes the shares as proportions among the entities no table
or GSI measured tells apart, whatever window the report covers.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from tablewright.blueprint.templates import SEPARATOR, KeyTemplate
from tablewright.calibrate.insights import RuleReport
from tablewright.capacity.traffic import Flow
from tablewright.stacks.stack import Stack

ACCESSED = ("PKC", "SKC")
WRITE_WEIGHT = {"read": 1.0, "write": 3.0}  # ConsumedThroughputUnits: 3 x write units + read units


@dataclass(frozen=True)
class Attribution:
    """Each entity's share of a target's throughput units, by one accessed-keys report."""

    target: str
    rule: str
    shares: tuple[tuple[str, float], ...]  # (entity, share of the target's throughput units), by entity
    listed: int  # keys the report lists
    covered: float  # the listed keys' share of the rule's AggregateValue
    attributed: float  # the share of the listed keys that one entity's template makes


def matches(template: KeyTemplate, value: str, stack: Stack, entity: str) -> bool:
    """Whether the template makes the value: as many `#`-separated segments, the same literal ones, digits where
    the shard number goes and a declared value where an enum is."""
    parts = value.split(SEPARATOR)
    if len(parts) != len(template.segments):
        return False
    specs = stack.design.blueprint.entities[entity].attributes
    for part, segment in zip(parts, template.segments, strict=True):
        if segment.literal is not None and part != segment.literal:
            return False
        if segment.shards is not None and not part.isdigit():
            return False
        if segment.attribute is not None:
            values = specs[segment.attribute].values
            if not part or (segment.bucket is None and values is not None and part not in values):
                return False
    return True


def members(stack: Stack, target: str) -> dict[str, KeyTemplate]:
    """The partition-key template of each entity the target holds."""
    return {entity: shapes[target].pk for entity, shapes in sorted(stack.design.shapes.items()) if target in shapes}


def throughput_units(flows: Sequence[Flow], target: str) -> dict[str, float]:
    """Each entity's declared throughput units on the target, as an accessed-keys rule counts them."""
    found: dict[str, float] = {}
    for flow in flows:
        if flow.target == target:
            found[flow.entity] = found.get(flow.entity, 0.0) + WRITE_WEIGHT[flow.direction] * flow.units
    return found


def makers(stack: Stack, report: RuleReport, keys: tuple[str, ...]) -> tuple[str, ...]:
    """The entities whose key templates on the target make the key (with the sort key's, for SKC): several for a
    key of an item collection."""
    shapes = {entity: spec[report.target] for entity, spec in stack.design.shapes.items() if report.target in spec}
    return tuple(entity for entity, shape in sorted(shapes.items()) if matches(shape.pk, keys[0], stack, entity)
                 and (report.kind != "SKC" or len(keys) < 2 or matches(shape.sk, keys[1], stack, entity)))


def _split(units: float, entities: Sequence[str], declared: dict[str, float]) -> dict[str, float]:
    """`units` shared by the entities' declared units (nothing when they declare none)."""
    total = sum(declared.get(entity, 0.0) for entity in entities)
    return {entity: units * declared.get(entity, 0.0) / total if total else 0.0 for entity in entities}


def attribute(stack: Stack, report: RuleReport) -> Attribution | None:
    """The entities' shares of the report's target: a listed key one entity's template makes is that entity's, one
    an item collection's templates make is theirs (by declared units), the rest is everyone's (by declared
    units). None when the target holds fewer than two entities or the rule counted nothing."""
    entities = sorted(members(stack, report.target))
    if report.kind not in ACCESSED or len(entities) < 2 or report.aggregate <= 0:
        return None
    declared = throughput_units(stack.capacity.traffic.flows, report.target)
    keyed = dict.fromkeys(entities, 0.0)
    single = 0.0
    for contributor in report.contributors:
        found = makers(stack, report, contributor.keys)
        single += contributor.value if len(found) == 1 else 0.0
        for entity, units in _split(contributor.value, found, declared).items():
            keyed[entity] += units
    listed = sum(contributor.value for contributor in report.contributors)
    aggregate = max(report.aggregate, listed)  # approximate values may add up to a little more than the total
    if not math.isfinite(aggregate):  # values each finite, but not their sum: no measurement
        return None
    rest = _split(aggregate - sum(keyed.values()), entities, declared)
    shares = tuple((entity, (keyed[entity] + rest[entity]) / aggregate) for entity in entities)
    return Attribution(report.target, report.rule, shares, len(report.contributors), listed / aggregate,
                       single / aggregate)


def attributions(stack: Stack, reports: Sequence[RuleReport]) -> dict[str, Attribution]:
    """Per target, the attribution of the stack's accessed-keys report that attributes the most to one entity
    (of a PKC and an SKC report, the SKC one tells an item collection's entities apart by sort key)."""
    best: dict[str, Attribution] = {}
    for report in reports:
        if report.stack != stack.name:
            continue
        found = attribute(stack, report)
        if found is not None and (found.target not in best or found.attributed > best[found.target].attributed):
            best[found.target] = found
    return best
