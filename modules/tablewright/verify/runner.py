"""Run every query plan against a DynamoDB endpoint exactly as the cookbook writes it, and compare
with the oracle.

The endpoint is any boto3 DynamoDB client: moto in-process for `tablewright verify`, or the
emulator server a Terraform apply created the table on (the end-to-end tests).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from botocore.exceptions import ClientError

from tablewright.blueprint.encoding import bucket_range, sort_problem
from tablewright.blueprint.language import BATCH_GET_LIMIT, AttributeSpec
from tablewright.blueprint.templates import SHARD, shard_values
from tablewright.capacity.size import batch_read_units, item_size, read_units
from tablewright.design.cookbook import bind, name_placeholder, read_attributes, request
from tablewright.design.design import ENTITY_ATTRIBUTE, TABLE, FollowUp, KeyNames, QueryPlan, TableDesign
from tablewright.verify.indexes import IndexResult
from tablewright.verify.oracle import Expected, Probe, expected, probes
from tablewright.verify.samples import Sample, index_key

BATCH_WRITE_LIMIT = 25
MIN_PAGES = 3  # every paginated pattern is walked across at least this many pages
MAX_PAGES = 10_000


class PagingError(Exception):
    """A read whose pages do not end (the same LastEvaluatedKey again)."""


@dataclass
class PatternResult:
    pattern: str
    index: str
    operation: str
    operations_per_call: str
    items: int = 0
    capacity: float = 0.0
    read_requests: int = 0  # requests the call `capacity` is for sends (a fan-out: one per shard or bucket)
    emulator_capacity: float | None = None
    requests: int = 0
    probes: int = 0
    failure: str | None = None

    @property
    def passed(self) -> bool:
        return self.failure is None


@dataclass
class ClientCheck:
    """One check of the generated client (`verify --client`)."""

    name: str
    failure: str | None = None

    @property
    def passed(self) -> bool:
        return self.failure is None


@dataclass
class BlueprintResult:
    blueprint: str
    table: str
    items_written: int
    results: list[PatternResult] = field(default_factory=list)
    indexes: list[IndexResult] = field(default_factory=list)
    refused: str | None = None  # DynamoDB refused the sample items: nothing else was run
    client: list[ClientCheck] = field(default_factory=list)  # `verify --client`: the generated client's checks

    @property
    def passed(self) -> bool:
        return self.refused is None and all(result.passed for result in self.results) and all(
            index.passed for index in self.indexes) and all(check.passed for check in self.client)

    @property
    def failures(self) -> list[str]:
        """Every failure: the sample items refused, then patterns, then indexes, each naming what failed."""
        return ([self.refused] if self.refused else []) + [r.failure for r in self.results if r.failure] + [
            i.failure for i in self.indexes if i.failure] + [c.failure for c in self.client if c.failure]


def table_key(keys: KeyNames, item: dict[str, Any]) -> tuple[str, str]:
    """An item's primary key (partition, sort) as text."""
    found = keys.of(item)
    assert found is not None  # every item carries the table's key
    return found


def write_samples(client: Any, table: str, samples: Sequence[Sample]) -> None:
    for start in range(0, len(samples), BATCH_WRITE_LIMIT):
        pending = {table: [{"PutRequest": {"Item": s.item}} for s in samples[start:start + BATCH_WRITE_LIMIT]]}
        while pending:
            pending = client.batch_write_item(RequestItems=pending).get("UnprocessedItems") or {}


@dataclass
class Response:
    rows: list[dict[str, Any]]
    requests: int
    emulator_capacity: float
    count: int = 0  # the items DynamoDB counted (`Count`): the rows, or for `Select: COUNT` the answer itself


def _read_pages(
    client: Any, operation: str, body: dict[str, Any], wanted: int | None
) -> tuple[list[dict[str, Any]], int, float, int]:
    """Follow LastEvaluatedKey until the answer is complete or `wanted` items have arrived (or, for a count,
    been counted): (items, requests, capacity, count)."""
    items: list[dict[str, Any]] = []
    requests, capacity, count = 0, 0.0, 0
    call = client.query if operation == "Query" else client.scan
    limited = "Limit" in body
    seen: set[str] = set()
    while True:
        answer = call(**body)
        requests += 1
        capacity += answer.get("ConsumedCapacity", {}).get("CapacityUnits", 0.0)
        items.extend(answer.get("Items", []))
        count += len(answer["Items"]) if "Items" in answer else answer["Count"]
        if wanted is not None and count >= wanted:
            return items[:wanted], requests, capacity, wanted
        if "LastEvaluatedKey" not in answer:
            return items, requests, capacity, count
        token = json.dumps(answer["LastEvaluatedKey"], sort_keys=True)
        if token in seen or requests > MAX_PAGES:
            raise PagingError(f"LastEvaluatedKey {token[:80]} does not move the read on after {requests} pages")
        seen.add(token)
        body = {**body, "ExclusiveStartKey": answer["LastEvaluatedKey"]}
        if limited and wanted is not None:
            body["Limit"] = wanted - count


def fan_out_values(plan: QueryPlan, probe: Probe, specs: dict[str, AttributeSpec]) -> list[dict[str, str]]:
    """Parameter sets for every request of a fanned-out read, in the order they are read."""
    fan_out = plan.fan_out
    if fan_out is None:
        return [probe.encoded]
    if fan_out.kind == "shards":
        return [{**probe.encoded, SHARD: shard} for shard in shard_values(fan_out.shards)]
    spec = specs[fan_out.attribute]
    buckets = bucket_range(spec, probe.values[f"{fan_out.attribute}.from"], probe.values[f"{fan_out.attribute}.to"],
                           fan_out.bucket)
    if not plan.scan_index_forward:
        buckets.reverse()
    placeholder = f"{fan_out.attribute}:{fan_out.bucket}"
    return [{**probe.encoded, placeholder: bucket} for bucket in buckets]


def run_plan(
    client: Any, plan: QueryPlan, table: str, probe: Probe, specs: dict[str, AttributeSpec],
    page_size: int | None = None,
) -> Response:
    """Send the plan's requests with the probe's values (one per shard or bucket when it fans out),
    follow pagination, merge, then run the follow-up. With a `page_size`, every matching item, in pages
    of that many (`Limit`) each continuing from the last one's `LastEvaluatedKey` (`ExclusiveStartKey`)."""
    template = request(plan, table)
    template["ReturnConsumedCapacity"] = "TOTAL"
    wanted = plan.limit
    if page_size is not None and plan.operation != "GetItem":
        template["Limit"] = page_size
        wanted = None
    items: list[dict[str, Any]] = []
    requests, capacity, count = 0, 0.0, 0
    merged = plan.fan_out is not None and plan.fan_out.kind == "shards" and not plan.count
    for parameters in fan_out_values(plan, probe, specs):
        body = bind(template, parameters)
        if plan.operation == "GetItem":
            answer = client.get_item(**body)
            part = [answer["Item"]] if "Item" in answer else []
            used, cost, counted = 1, answer.get("ConsumedCapacity", {}).get("CapacityUnits", 0.0), len(part)
        else:
            remaining = None if wanted is None else (wanted if merged else wanted - count)
            part, used, cost, counted = _read_pages(client, plan.operation, body, remaining)
        items.extend(part)
        requests += used
        capacity += cost
        count += counted
        if wanted is not None and count >= wanted and not merged:
            break
    sort_key = plan.keys.sk
    if plan.fan_out is not None and plan.fan_out.kind == "shards" and sort_key is not None:
        items.sort(key=lambda item: item[sort_key]["S"], reverse=not plan.scan_index_forward)
    if wanted is not None:
        items = items[:wanted]
    if plan.follow_up is not None and items:
        fetched, batches = _follow_up(client, plan.follow_up, plan.table_keys, table, items)
        requests += batches
        items = [{**item, **fetched.get(table_key(plan.table_keys, item), {})} for item in items]
    return Response(items, requests, capacity, count if plan.count else len(items))


def _follow_up(
    client: Any, follow_up: FollowUp, table_keys: KeyNames, table: str, items: list[dict[str, Any]]
) -> tuple[dict[tuple[str, str], dict[str, Any]], int]:
    """BatchGetItem on the base table for the attributes the index lacks."""
    attributes = follow_up.attributes
    found: dict[tuple[str, str], dict[str, Any]] = {}
    batches = 0
    keys = list(dict.fromkeys(table_key(table_keys, item) for item in items))
    read = (*attributes, *table_keys.names)
    for start in range(0, len(keys), BATCH_GET_LIMIT):
        fetched, requests = send_batch_get(client, table, {
            "Keys": [{name: {"S": text} for name, text in zip(table_keys.names, key, strict=False)}
                     for key in keys[start:start + BATCH_GET_LIMIT]],
            "ProjectionExpression": ", ".join(name_placeholder(a) for a in read),
            "ExpressionAttributeNames": {name_placeholder(a): a for a in read},
        })
        batches += requests
        found.update({table_key(table_keys, item): item for item in fetched})
    return found, batches


MAX_BATCH_ROUNDS = 10  # requests for one batch before keys still unprocessed count as a failure


def send_batch_get(client: Any, table: str, entry: dict[str, Any]) -> tuple[list[dict[str, Any]], int]:
    """The items of one BatchGetItem (`entry`: the table's Keys and projection), its unprocessed keys sent again
    until none are left, and the requests it took."""
    pending: dict[str, Any] = {table: entry}
    items: list[dict[str, Any]] = []
    rounds = 0
    while pending:
        if rounds == MAX_BATCH_ROUNDS:
            raise PagingError(f"keys still unprocessed after {MAX_BATCH_ROUNDS} BatchGetItem requests")
        answer = client.batch_get_item(RequestItems=pending)
        rounds += 1
        items += answer["Responses"].get(table, [])
        pending = answer.get("UnprocessedKeys") or {}
    return items, rounds


def refusal(error: ClientError | PagingError) -> str:
    """A request DynamoDB refused (e.g. BETWEEN bounds out of order once encoded), or a read that did not end."""
    if isinstance(error, ClientError):
        return f"DynamoDB refused the request: {error.response.get('Error', {}).get('Message', error)}"
    return str(error)


SET_TYPES = ("SS", "NS", "BS")


def comparable(value: dict[str, Any]) -> dict[str, Any]:
    """A set compared as a set: DynamoDB returns its members in no particular order."""
    ((kind, inner),) = value.items()
    return {kind: sorted(inner)} if kind in SET_TYPES else value


def _row(item: dict[str, Any], attributes: tuple[str, ...]) -> str:
    # Binary values come back as bytes: compared by their text, as every other value is.
    return json.dumps({a: comparable(item[a]) for a in attributes if a in item}, sort_keys=True, default=repr)


SHOWN_VALUE = 40  # characters of one attribute's value a failure shows


def short_value(value: Any) -> str:
    """A value as a failure shows it: its JSON, cut to `SHOWN_VALUE` characters."""
    text = json.dumps(value, sort_keys=True, default=repr)
    return text if len(text) <= SHOWN_VALUE else text[:SHOWN_VALUE - 3] + "..."


def shortened(row: str) -> str:
    """A compared item (`_row`'s JSON) with every value cut to `SHOWN_VALUE` characters."""
    return "{" + ", ".join(f"{name}: {short_value(value)}" for name, value in json.loads(row).items()) + "}"


def differences(wanted: str, got: str) -> str:
    """Only the attributes in which two compared items differ, each value shortened."""
    want, have = json.loads(wanted), json.loads(got)
    names = sorted(name for name in want.keys() | have.keys() if want.get(name) != have.get(name))
    return "; ".join(f"{name} expected {short_value(want[name]) if name in want else '(absent)'}, got "
                     f"{short_value(have[name]) if name in have else '(absent)'}" for name in names)


def compare_count(want: Expected, answer: Response) -> str | None:
    """A count's answer: no items, and as many counted as the oracle finds."""
    if answer.rows:
        return (f"the request returns {len(answer.rows)} item(s); a count needs only how many match "
                "(Select: COUNT): it reads more than it needs")
    if answer.count != len(want.samples):
        return f"counted {answer.count} items, expected {len(want.samples)}"
    return None


def compare(design: TableDesign, plan: QueryPlan, want: Expected, rows: list[dict[str, Any]]) -> str | None:
    """The first difference between DynamoDB's answer and the oracle's, or None."""
    returns = plan.returns
    allowed = {*read_attributes(plan), *returns, *(plan.table_keys.names if plan.follow_up else ())}
    for row in rows:
        beyond = sorted(set(row) - allowed)
        if beyond:
            shown = ", ".join(beyond[:5]) + (f" and {len(beyond) - 5} more" if len(beyond) > 5 else "")
            return (f"a returned item holds {shown}, which the pattern does not return (returns: "
                    f"{', '.join(returns) or '[] (keys only)'}): the request reads more than it needs")
        entity = row.get(ENTITY_ATTRIBUTE, {}).get("S", plan.entities[0])
        own = design.blueprint.entities[entity].attributes if entity in design.blueprint.entities else {}
        lacking = [a for a in returns if a in own and not own[a].is_optional and a not in row]
        if lacking:
            return f"a returned item lacks {', '.join(lacking)} (returns: {', '.join(returns)})"
    actual = [_row(row, returns) for row in rows]
    if not want.ordered:
        expected_rows = Counter(_row(s.item, returns) for s in want.samples)
        if Counter(actual) != expected_rows:
            missing = expected_rows - Counter(actual)
            extra = Counter(actual) - expected_rows
            if missing:
                return f"expected item missing: {shortened(next(iter(missing)))}"
            return f"unexpected item returned: {shortened(next(iter(extra)))}"
        return None
    position = 0
    for group, take in zip(want.groups, want.takes, strict=True):
        group_rows = Counter(_row(s.item, returns) for s in group)
        chunk = actual[position:position + take]
        for offset, got in enumerate(chunk):
            if group_rows[got] <= 0:
                wanted = _row(group[0].item, returns)
                return f"item {position + offset + 1} differs: {differences(wanted, got)}"
            group_rows[got] -= 1
        if len(chunk) < take:
            return (f"expected {sum(want.takes)} items, got {len(actual)}; first missing: "
                    f"{shortened(_row(group[0].item, returns))}")
        position += take
    if position < len(actual):
        return f"expected {position} items, got {len(actual)}; first extra: {shortened(actual[position])}"
    return None


def operations_label(plan: QueryPlan) -> str:
    """Requests per call: a number, or a rate per time bucket when the read fans out over buckets."""
    if plan.fan_out is not None and plan.fan_out.kind == "buckets":
        return f"1 per {plan.fan_out.bucket}" + (" + 1" if plan.follow_up else "")
    return str(plan.operations_per_call)


def partitions_addressed(plan: QueryPlan, probe: Probe, specs: dict[str, AttributeSpec]) -> list[str]:
    """The partition key each request of one call reads, in order: one, or one per shard or time
    bucket of a fan-out (a Scan addresses none)."""
    template = dict(plan.values).get(":pk")
    if template is None:
        return []
    return [bind(template, parameters) for parameters in fan_out_values(plan, probe, specs)]


def requests_sent(plan: QueryPlan, partitions: Sequence[str], samples: Sequence[Sample]) -> list[str]:
    """The partitions a call reads before it stops: every shard; time buckets in order only until
    `limit` items have arrived (as the runner reads them)."""
    if plan.fan_out is None or plan.fan_out.kind != "buckets" or plan.limit is None:
        return list(partitions)
    counts = Counter(_partition(sample, plan) for sample in samples)
    sent, arrived = [], 0
    for partition in partitions:
        sent.append(partition)
        arrived += counts[partition]
        if arrived >= plan.limit:
            break
    return sent


def samples_read(plan: QueryPlan, want: Expected, partitions: Sequence[str]) -> list[Sample]:
    """The items one call's requests read: those it returns, except on a sharded read with a `Limit`, where
    every shard's request reads up to the limit of its own items (the call keeps the first `limit` of them)."""
    sharded = plan.fan_out is not None and plan.fan_out.kind == "shards" and bool(partitions)
    if not sharded or plan.limit is None or plan.filter_expression:
        return want.samples
    taken: Counter[str] = Counter()
    read = []
    for sample in want.matching:
        partition = _partition(sample, plan)
        if taken[partition] < plan.limit:
            taken[partition] += 1
            read.append(sample)
    return read


def _partition(sample: Sample, plan: QueryPlan) -> str:
    key = index_key(sample, plan.keys)
    return key[0] if key is not None else ""


def model_capacity(
    design: TableDesign, plan: QueryPlan, samples: Sequence[Sample], partitions: Sequence[str] = (),
    returned: Sequence[Sample] | None = None,
) -> float:
    """Read units of one call under the capacity model: each request (one per partition in
    `partitions`: a shard or time bucket of a fan-out) is the size of the entries it reads (`samples`)
    rounded up to 4 KB on its own, an empty one costs the minimum, eventually consistent reads half;
    follow-up BatchGetItem items (`returned`, by default `samples`) are rounded one by one. No
    `partitions` (a Scan): one request for everything."""
    projected = None if plan.index == TABLE else _index_entry_attributes(design, plan)
    sizes: Counter[str] = Counter()
    for sample in samples:
        entry = sample.item if projected is None else {a: v for a, v in sample.item.items() if a in projected}
        sizes[_partition(sample, plan) if partitions else ""] += item_size(entry)
    sent = requests_sent(plan, partitions, samples) if partitions else [""]
    main = sum(read_units(sizes[partition], plan.consistent) for partition in sent)
    fetched = samples if returned is None else returned
    if plan.follow_up is None or not fetched:
        return main
    return main + batch_read_units((item_size(s.item) for s in fetched), plan.consistent)


def _index_entry_attributes(design: TableDesign, plan: QueryPlan) -> set[str] | None:
    projection = design.index(plan.index).projection
    if projection.type == "ALL":
        return None
    return {*plan.table_keys.names, *plan.keys.names, *projection.attributes}


def verify_pattern(
    client: Any, design: TableDesign, plan: QueryPlan, table: str, samples: Sequence[Sample]
) -> PatternResult:
    result = PatternResult(plan.pattern, plan.index, plan.operation, operations_label(plan))
    specs = design.blueprint.entities[plan.entities[0]].attributes
    for probe in probes(design, plan, samples):
        want = expected(design, plan, samples, probe)
        result.probes += 1
        try:
            answer = run_plan(client, plan, table, probe, specs)
            result.requests += answer.requests
            difference = compare_count(want, answer) if plan.count else compare(design, plan, want, answer.rows)
            if difference is None and plan.operation != "GetItem":
                difference = _paging_difference(client, design, plan, table, probe, specs, samples)
        except (ClientError, PagingError) as error:
            difference = refusal(error)
        if difference is not None:
            result.failure = f"{plan.pattern}: with {probe.describe()}: {difference}{_suspects(design, plan)}"
            return result
        if len(want.samples) >= result.items:
            addressed = partitions_addressed(plan, probe, specs)
            result.items = len(want.samples)
            result.capacity = model_capacity(design, plan, samples_read(plan, want, addressed), addressed,
                                             want.samples)
            result.read_requests = max(1, len(requests_sent(plan, addressed, want.samples)))
            result.emulator_capacity = answer.emulator_capacity
    return result


def _paging_difference(client: Any, design: TableDesign, plan: QueryPlan, table: str, probe: Probe,
                       specs: dict[str, AttributeSpec], samples: Sequence[Sample]) -> str | None:
    """Every matching item read in pages (at least `MIN_PAGES` of them when there are as many items), each
    from the previous page's LastEvaluatedKey: the oracle's items in its order, none twice, none missing."""
    everything = expected(design, plan, samples, probe, limited=False)
    size = max(1, len(everything.samples) // MIN_PAGES)
    paged = run_plan(client, plan, table, probe, specs, page_size=size)
    difference = compare_count(everything, paged) if plan.count else compare(design, plan, everything, paged.rows)
    if difference is not None:
        return f"read in pages of {size} (Limit, then ExclusiveStartKey): {difference}"
    if paged.count >= MIN_PAGES and paged.requests < MIN_PAGES:
        return f"{paged.count} items in pages of {size} took {paged.requests} request(s), not {MIN_PAGES} or more"
    return None


def _suspects(design: TableDesign, plan: QueryPlan) -> str:
    """Key encodings that do not sort as their values: the usual cause of a wrong order or range."""
    pattern = design.blueprint.access_patterns[plan.pattern]
    ranged = pattern.range_condition
    involved = list(plan.order_attributes) + ([ranged[0]] if ranged else [])
    specs = design.blueprint.entities[plan.entities[0]].attributes
    problems = [problem for a in dict.fromkeys(involved) if (problem := sort_problem(a, specs[a])) is not None]
    return f" (cause: {'; '.join(problems)})" if problems else ""
