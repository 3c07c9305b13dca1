"""One query plan per access pattern: the request it sends, its filter, and what it returns."""

from __future__ import annotations

import re

from tablewright.blueprint.encoding import attribute_type_letter, describe_stored
from tablewright.blueprint.language import AccessPattern, Blueprint, Operator
from tablewright.design.design import (
    ENTITY_ATTRIBUTE,
    NOW,
    TABLE,
    FollowUp,
    KeyNames,
    Parameter,
    Projection,
    QueryPlan,
    Shape,
    key_names,
)
from tablewright.design.serve import Served
from tablewright.errors import DesignError


def is_local(blueprint: Blueprint, index: str) -> bool:
    return index in blueprint.indexes and blueprint.indexes[index].type == "local"


def needed_attributes(blueprint: Blueprint, pattern: AccessPattern) -> tuple[str, ...]:
    """What the pattern returns: its `returns` (a count: nothing), else every attribute of its entities."""
    if pattern.count:
        return ()
    if pattern.returns is not None:
        return tuple(pattern.returns)
    return tuple(sorted({a for e in pattern.entities for a in blueprint.entities[e].attributes}))


def filter_conditions(
    blueprint: Blueprint, pattern: AccessPattern, conditions: dict[str, Operator], entity_guard: bool
) -> tuple[str | None, tuple[tuple[str, dict[str, str]], ...], tuple[Parameter, ...]]:
    """A FilterExpression for `conditions` (values as the attributes are stored)."""
    specs = blueprint.entities[pattern.entities[0]].attributes
    clauses, values, parameters = [], [], []
    for attribute, op in sorted(conditions.items()):
        spec = specs[attribute]
        letter = attribute_type_letter(spec)
        placeholder = f":f_{attribute}"
        if op == "between":
            clauses.append(f"#{attribute} BETWEEN {placeholder}_from AND {placeholder}_to")
            values += [(f"{placeholder}_from", {letter: f"{{{attribute}.from}}"}),
                       (f"{placeholder}_to", {letter: f"{{{attribute}.to}}"})]
            parameters += [Parameter(f"{attribute}.from", attribute, describe_stored(spec), "value"),
                           Parameter(f"{attribute}.to", attribute, describe_stored(spec), "value")]
            continue
        clauses.append(f"begins_with(#{attribute}, {placeholder})" if op == "begins_with"
                       else f"#{attribute} {op} {placeholder}")
        values.append((placeholder, {letter: f"{{{attribute}}}"}))
        parameters.append(Parameter(attribute, attribute, describe_stored(spec), "value"))
    if entity_guard:
        clauses.append(f"#{ENTITY_ATTRIBUTE} = :entity")
        values.append((":entity", {"S": pattern.entities[0]}))
    return (" AND ".join(clauses) or None), tuple(values), tuple(parameters)


def hides_expired(blueprint: Blueprint, pattern: AccessPattern, operation: str,
                  projection: Projection | None) -> str | None:
    """The TTL attribute a request filters on: items past it stay readable until DynamoDB deletes them,
    typically within a few days (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/TTL.html).
    None when the pattern returns them, reads none of the expiring entities, is a GetItem (no filter), or
    reads an index that does not project the attribute (a filter there would keep every item; lint TW502)."""
    name = blueprint.table.ttl_attribute
    if name is None or pattern.expired == "returned" or operation == "GetItem":
        return None
    if projection is not None and projection.lacks((name,)):
        return None
    return name if any(name in blueprint.entities[entity].attributes for entity in pattern.entities) else None


def query_plan(
    blueprint: Blueprint,
    name: str,
    route: tuple[str, Served],
    projections: dict[str, Projection],
    members: dict[str, dict[str, Shape]],
    until_ready: str | None = None,
) -> QueryPlan:
    index, served = route
    pattern = blueprint.access_patterns[name]
    returns = needed_attributes(blueprint, pattern)
    keys = members[index][pattern.entities[0]].keys
    notes = list(served.notes)
    if until_ready is not None:
        notes.append(_until_ready_note(index, until_ready, projections[until_ready].lacks(returns)))
    projection = None if index == TABLE else projections[index]
    follow_up, projected, fetched = _index_returns(blueprint, name, index, projection, returns)
    notes += fetched
    scan = served.operation == "Scan"
    conditions = pattern.conditions if scan else pattern.filter
    filter_expression, filter_values, filter_parameters = filter_conditions(blueprint, pattern, conditions, scan)
    _refuse_count_or_batch(name, pattern, served.operation, index)
    notes += _request_notes(pattern)
    expiring = hides_expired(blueprint, pattern, served.operation, projection)
    if expiring:
        filter_parameters += (Parameter(NOW, expiring, "epoch seconds: the current time", "clock"),)
    summary = _plan_summary(served, keys, pattern, filter_expression, expiring)
    return QueryPlan(
        pattern=name,
        entities=pattern.entities,
        operation=served.operation,
        index=index,
        keys=keys,
        shape=members[index][pattern.entities[0]],
        key_condition=served.key_condition,
        values=served.values,
        parameters=served.parameters + filter_parameters,
        filter_expression=filter_expression,
        filter_values=filter_values,
        hides_expired=expiring,
        fan_out=served.fan_out,
        scan_index_forward=pattern.order == "asc",
        limit=pattern.limit if served.operation == "Query" else None,
        consistent=pattern.consistent,
        count=pattern.count,
        returns=returns,
        projected=projected,
        follow_up=follow_up,
        order_attributes=served.order_attributes,
        summary=summary,
        notes=tuple(notes),
        until_ready=until_ready,
        table_keys=key_names(blueprint, TABLE),
        batch=pattern.batch,
    )


def _until_ready_note(index: str, until_ready: str, lacking: tuple[str, ...]) -> str:
    return (f"{index} replaces {until_ready} (same keys, a larger projection): until {index} is ACTIVE, "
            f"run this query on {until_ready}" + (f", which lacks {', '.join(lacking)} (read them from the "
                                                  "table by key)" if lacking else ""))


def _index_returns(blueprint: Blueprint, name: str, index: str, projection: Projection | None,
                   returns: tuple[str, ...]) -> tuple[FollowUp | None, tuple[str, ...], list[str]]:
    """(follow-up read, attributes the index returns, notes): what the index does not project, a local index
    fetches from the table itself and a GSI leaves to a follow-up read (refused with `follow_up: false`)."""
    lacking = () if projection is None else projection.lacks(returns)
    if lacking and is_local(blueprint, index):
        return None, returns, [f"{index} fetches {', '.join(lacking)} from the table for each item (extra reads)"]
    if not lacking:
        return None, returns, []
    if not blueprint.access_patterns[name].follow_up:
        raise DesignError(
            f"{index} does not project {', '.join(lacking)}, which this pattern returns, "
            "and follow-up reads are disabled",
            path=("access_patterns", name, "returns"),
            hint=f"project them (indexes.{index}.projection) or remove `follow_up: false`",
        )
    return FollowUp(returns), tuple(a for a in returns if a not in lacking), []


def _refuse_count_or_batch(name: str, pattern: AccessPattern, operation: str, index: str) -> None:
    """`count` needs more than one item to count, `batch` the table's whole primary key (GetItem)."""
    if pattern.count and operation == "GetItem":
        raise DesignError("`count: true` on a pattern that reads one item by its whole key (GetItem)",
                          path=("access_patterns", name, "count"),
                          hint="remove `count` (the item is there or not), or bind fewer key attributes")
    if pattern.batch and operation != "GetItem":
        where = "the table" if index == TABLE else index
        raise DesignError(f"`batch: {pattern.batch}` reads items by their whole primary key on the table (GetItem), "
                          f"and this pattern is a {operation} on {where}",
                          path=("access_patterns", name, "batch"),
                          hint="bind exactly the attributes of the table's primary key with `=` (no others, no "
                               "`index:` but `table`), or remove `batch`")


def _request_notes(pattern: AccessPattern) -> list[str]:
    """How the application sends a filtered read with a limit, and a batch."""
    notes = []
    if pattern.filter and pattern.limit:
        notes.append(f"no Limit is sent (it would count items before the filter): read pages until "
                     f"{pattern.limit} items pass the filter")
    if pattern.batch:
        notes.append(f"one BatchGetItem per call, `Keys` holding the {pattern.batch} items' keys; send the keys it "
                     "returns under UnprocessedKeys again until none are left")
    return notes


def _plan_summary(served: Served, keys: KeyNames, pattern: AccessPattern, filter_expression: str | None,
                  expiring: str | None) -> str:
    """One line for the request: its key condition (or the Scan), batch, filter, expiry filter and count."""
    summary = "Scan (whole table)" if served.operation == "Scan" else _summary(served, keys)
    if pattern.batch:
        summary = f"BatchGetItem of {pattern.batch} keys, each {summary}"
    if filter_expression:
        summary += f" FILTER {filter_expression.replace('#', '')}"
    if expiring:
        summary += f" HIDING {expiring} <= now"
    if pattern.count:
        summary += " SELECT COUNT"
    return summary


def _summary(served: Served, keys: KeyNames) -> str:
    """The key condition with attribute names and value templates in place of placeholders."""
    values = dict(served.values)
    text = served.key_condition.replace("#pk", keys.pk).replace("#sk", keys.sk or "")
    return re.sub(r":[a-z]+", lambda m: values[m.group(0)], text)
