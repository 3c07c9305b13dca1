"""Batch gets (`batch:`): the cookbook's BatchGetItem, its `Keys` one per probe, checked against the oracle.

The keys are those of items in the data and one no item has; the answer comes back in no order, so it is
compared as a set, and keys DynamoDB leaves under `UnprocessedKeys` are sent again, as the cookbook says.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from botocore.exceptions import ClientError

from tablewright.capacity.size import batch_read_units, item_size
from tablewright.design.cookbook import bind, request
from tablewright.design.design import QueryPlan, TableDesign
from tablewright.verify.oracle import Expected, expected, key_probes
from tablewright.verify.runner import PagingError, PatternResult, compare, operations_label, refusal, send_batch_get
from tablewright.verify.samples import Sample


def verify_batch(client: Any, design: TableDesign, plan: QueryPlan, table: str,
                 samples: Sequence[Sample]) -> PatternResult:
    assert plan.batch is not None
    result = PatternResult(plan.pattern, plan.index, plan.sent_operation, operations_label(plan), probes=1)
    probes = key_probes(design, plan, samples, plan.batch)
    template = request(plan, table)["RequestItems"][table]["Keys"][0]
    keys = list({json.dumps(k, sort_keys=True): k for k in (bind(template, p.encoded) for p in probes)}.values())
    found = [sample for probe in probes for sample in expected(design, plan, samples, probe).samples]
    want = Expected(tuple((sample,) for sample in found), (1,) * len(found), ordered=False)
    try:
        read = request(plan, table)["RequestItems"][table]
        rows, result.requests = send_batch_get(client, table, {**read, "Keys": keys})
        difference = compare(design, plan, want, rows)
    except (ClientError, PagingError) as error:
        difference = refusal(error)
    if difference is not None:
        result.failure = f"{plan.pattern}: with {len(keys)} keys: {difference}"
        return result
    result.items = len(found)
    # Each key is read as its own GetItem (Developer Guide, "Capacity unit consumption for read operations"), a key
    # without an item for the minimum.
    sizes = [item_size(sample.item) for sample in found] + [0] * (len(keys) - len(found))
    result.capacity = batch_read_units(sizes, plan.consistent)
    result.read_requests = result.requests
    return result
