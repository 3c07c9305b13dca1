"""The oracle: what a pattern should return, computed on the sample items' values, not their keys.

Conditions compare attribute values (numbers as numbers, times as times); results are ordered by
the values of the ordering attributes. When keys do not sort as their values do, DynamoDB and the
oracle disagree, and verification fails.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tablewright.blueprint.encoding import bucket_value, encode_key_value, stored_value
from tablewright.blueprint.language import AttributeSpec, Operator
from tablewright.blueprint.templates import SHARD, shard_number
from tablewright.design.design import NOW, FanOut, Parameter, QueryPlan, TableDesign
from tablewright.verify.samples import Sample, carries_keys, index_key

PROBES_PER_PATTERN = 3


@dataclass(frozen=True)
class Probe:
    """One set of parameter values for a pattern: semantic values and their key encodings."""

    values: dict[str, Any]
    encoded: dict[str, str]

    def describe(self) -> str:
        return ", ".join(f"{name}={self.encoded[name]}" for name in self.encoded)


@dataclass(frozen=True)
class Expected:
    """Expected results as tie groups in order; `take` items come from each group (limit cuts the last)."""

    groups: tuple[tuple[Sample, ...], ...]
    takes: tuple[int, ...]
    ordered: bool
    matching: tuple[Sample, ...] = ()  # every item meeting the conditions, in order, before the limit

    @property
    def samples(self) -> list[Sample]:
        return [sample for group, take in zip(self.groups, self.takes, strict=True) for sample in group[:take]]


def _candidates(design: TableDesign, plan: QueryPlan, samples: Sequence[Sample]) -> list[Sample]:
    """The items the plan's index holds, judged from their values: an item without one of its key
    attributes on a sparse index is not there, whatever was written."""
    return [s for s in samples if s.entity in plan.entities and carries_keys(design, s, plan.index)]


def expires_at(design: TableDesign, sample: Sample, attribute: str) -> int | None:
    """The sample's TTL as DynamoDB reads it (epoch seconds), or None when it has none."""
    value = sample.values.get(attribute)
    if value is None:
        return None
    (text,) = stored_value(design.blueprint.entities[sample.entity].attributes[attribute], value).values()
    return int(text)


def _live(design: TableDesign, plan: QueryPlan, sample: Sample, values: dict[str, Any]) -> bool:
    """Whether the request keeps the sample: not past its TTL at `_now`, when the plan hides expired items."""
    if plan.hides_expired is None:
        return True
    expiry = expires_at(design, sample, plan.hides_expired)
    return expiry is None or expiry > values[NOW]


def _clock(design: TableDesign, plan: QueryPlan, samples: Sequence[Sample]) -> int:
    """A `_now` that hides about half of the expiring samples: the median of their TTLs (or 0)."""
    assert plan.hides_expired is not None
    found = sorted(e for s in samples if (e := expires_at(design, s, plan.hides_expired)) is not None)
    return found[len(found) // 2] if found else 0


def _matches(conditions: dict[str, Operator], sample: Sample, values: dict[str, Any]) -> bool:
    """Whether the sample meets every condition; an item without the attribute meets none."""
    for attribute, op in conditions.items():
        value = sample.values.get(attribute)
        if value is None:
            return False
        if op == "between":
            if not values[f"{attribute}.from"] <= value <= values[f"{attribute}.to"]:
                return False
            continue
        wanted = values[attribute]
        if not {
            "=": value == wanted,
            "<": value < wanted,
            "<=": value <= wanted,
            ">": value > wanted,
            ">=": value >= wanted,
            "begins_with": str(value).startswith(str(wanted)),
        }[op]:
            return False
    return True


def _range_values(attribute: str, op: str, seen: list[Any]) -> dict[str, Any]:
    ordered = sorted(set(seen))
    middle = ordered[len(ordered) // 2]
    if op == "between":
        return {f"{attribute}.from": ordered[len(ordered) // 4], f"{attribute}.to": ordered[(3 * len(ordered)) // 4]}
    if op == "begins_with":
        text = str(middle)
        return {attribute: text[: max(1, len(text) // 2)]}
    if op == "=":
        return {attribute: Counter(seen).most_common(1)[0][0]}
    return {attribute: middle}


def _group_key(sample: Sample, attributes: Sequence[str]) -> str:
    return json.dumps([str(sample.values.get(a)) for a in attributes])


def probes(design: TableDesign, plan: QueryPlan, samples: Sequence[Sample]) -> list[Probe]:
    """Parameter sets taken from the data: the fullest partitions, the smallest, and an absent one."""
    pattern = design.blueprint.access_patterns[plan.pattern]
    entity = plan.entities[0]
    specs = design.blueprint.entities[entity].attributes
    equalities = pattern.equalities
    own = [sample for sample in _candidates(design, plan, samples)
           if sample.entity == entity and all(sample.values.get(a) is not None for a in equalities)]
    groups: dict[str, list[Sample]] = {}
    for sample in own:
        groups.setdefault(_group_key(sample, equalities), []).append(sample)
    ranked = sorted(groups.values(), key=lambda g: (-len(g), _group_key(g[0], equalities)))
    chosen = ranked[: PROBES_PER_PATTERN - 1] + ranked[-1:] if len(ranked) >= PROBES_PER_PATTERN else ranked
    ranged = pattern.range_condition
    result = []
    for group in chosen:
        values = {a: group[0].values[a] for a in equalities}
        if ranged:
            values.update(_range_values(*ranged, _present(ranged[0], group) or _present(ranged[0], own)))
        for attribute, op in pattern.filter.items():
            values.update(_range_values(attribute, op, _present(attribute, group) or _present(attribute, own)))
        result.append(values)
    absent = _absent(specs, equalities, result[0]) if result else None
    if absent is not None:
        result.append(absent)
    if plan.hides_expired is not None:
        now = _clock(design, plan, own)
        result = [{**values, NOW: now} for values in result]
    return [Probe(values, encode_parameters(specs, plan, values)) for values in result]


def key_probes(design: TableDesign, plan: QueryPlan, samples: Sequence[Sample], count: int) -> list[Probe]:
    """Whole keys for a batch of `count`: those of the first items in key order, and one no item has."""
    entity = plan.entities[0]
    specs = design.blueprint.entities[entity].attributes
    equalities = design.blueprint.access_patterns[plan.pattern].equalities
    keyed = {_group_key(s, equalities): s for s in _candidates(design, plan, samples)
             if s.entity == entity and all(s.values.get(a) is not None for a in equalities)}
    present = [{a: keyed[key].values[a] for a in equalities} for key in sorted(keyed)[:count - 1]]
    absent = (_absent(specs, equalities, present[0]) or _unused_number(specs, equalities, present[0], list(
        keyed.values()))) if present else None
    chosen = present + ([absent] if absent is not None else [])
    return [Probe(values, encode_parameters(specs, plan, values)) for values in chosen]


def _unused_number(specs: dict[str, AttributeSpec], equalities: Sequence[str], template: dict[str, Any],
                   samples: Sequence[Sample]) -> dict[str, Any] | None:
    """The same key with a number no item has (one more than the largest), for keys without free text."""
    for attribute in equalities:
        spec = specs[attribute]
        unused = max(s.values[attribute] for s in samples) + 1 if spec.type == "number" else None
        if unused is not None and (spec.width is None or unused < 10 ** spec.width):
            return {**template, attribute: unused}
    return None


def _present(attribute: str, samples: Sequence[Sample]) -> list[Any]:
    """The attribute's values in the samples that carry it (an optional attribute may be missing)."""
    return [s.values[attribute] for s in samples if s.values.get(attribute) is not None]


def _absent(
    specs: dict[str, AttributeSpec], equalities: Sequence[str], template: dict[str, Any]
) -> dict[str, Any] | None:
    """The same parameters with one free-text `=` value that no item has."""
    for attribute in equalities:
        spec = specs[attribute]
        if spec.type == "string" and not spec.values:
            return {**template, attribute: f"{attribute}-absent"}
    return None


def encode_parameters(specs: dict[str, AttributeSpec], plan: QueryPlan, values: dict[str, Any]) -> dict[str, str]:
    """Each parameter's text: key encoding, stored form (filters), or derived (shard, time bucket)."""
    encoded: dict[str, str] = {}
    for parameter in plan.parameters:
        if parameter.role == "key":
            encoded[parameter.name] = encode_key_value(specs[parameter.attribute], values[parameter.name])
        elif parameter.role == "value":
            (text,) = stored_value(specs[parameter.attribute], values[parameter.name]).values()
            encoded[parameter.name] = str(text)
        elif parameter.role == "clock":
            encoded[parameter.name] = str(values[parameter.name])
    shape = plan.shape
    for parameter in plan.parameters:
        if parameter.role != "derived" or (plan.fan_out is not None and _fanned(plan.fan_out, parameter)):
            continue
        if parameter.name == SHARD:
            encoded[SHARD] = shard_number([encoded[a] for a in shape.shard_by], shape.shards)
        else:
            attribute, bucket = parameter.name.split(":")
            encoded[parameter.name] = bucket_value(specs[attribute], values[attribute], bucket)
    return encoded


def _fanned(fan_out: FanOut, parameter: Parameter) -> bool:
    """Whether the runner supplies this derived parameter itself, once per shard or bucket."""
    if fan_out.kind == "shards":
        return parameter.name == SHARD
    return parameter.name == f"{fan_out.attribute}:{fan_out.bucket}"


def expected(design: TableDesign, plan: QueryPlan, samples: Sequence[Sample], probe: Probe,
             limited: bool = True) -> Expected:
    """The pattern's answer from its declaration (conditions, order, limit: every matching item when not
    `limited`); the plan only adds the tie-breaking key components after the declared ordering attribute."""
    pattern = design.blueprint.access_patterns[plan.pattern]
    matching = [s for s in _candidates(design, plan, samples)
                if _matches(pattern.conditions, s, probe.values) and _live(design, plan, s, probe.values)]
    declared = pattern.ordering_attribute
    attributes = ([declared] if declared else []) + [a for a in plan.order_attributes if a != declared]
    if len(plan.entities) > 1:
        # An item collection comes back in sort-key order, whatever entities it mixes.
        def sort_key(sample: Sample) -> tuple[Any, ...]:
            key = index_key(sample, plan.keys)
            assert key is not None  # `_candidates` keeps only the items on the index
            return (key[1],)
    else:
        def sort_key(sample: Sample) -> tuple[Any, ...]:
            return tuple(sample.values[a] for a in attributes)
    ordered = sorted(matching, key=sort_key, reverse=pattern.order == "desc")
    groups: list[tuple[Sample, ...]] = []
    for sample in ordered:
        if groups and sort_key(groups[-1][0]) == sort_key(sample):
            groups[-1] = groups[-1] + (sample,)
        else:
            groups.append((sample,))
    limit = pattern.limit if plan.operation == "Query" and limited else None
    takes, remaining = [], limit if limit is not None else len(ordered)
    for group in groups:
        take = min(len(group), remaining)
        if take == 0:
            break
        takes.append(take)
        remaining -= take
    is_ordered = declared is not None or limit is not None or len(plan.entities) > 1
    return Expected(tuple(groups[: len(takes)]), tuple(takes), ordered=is_ordered and plan.operation == "Query",
                    matching=tuple(ordered))

