"""The request model's figures by hand (capacity/requests.py): what a call and a write send, the reads an update
makes before it writes, a count that stops at its limit, follow-ups per 100 items; TW314 and its fix.
tests/client/test_client_requests.py checks the same model against what both generated clients send."""

from __future__ import annotations

import math
import textwrap

from tablewright.blueprint.load import load_blueprint
from tablewright.design.design import TABLE
from tablewright.lint.engine import lint_design
from tablewright.stacks.stack import build_stacks

TRIPS = """\
    blueprint: trips
    version: 1.0.0
    table: {name: trips_main, billing: on_demand}
    entities:
      Trip:
        attributes: {tripId: string, cell: string, status: {type: string, values: [OPEN, DONE]}, at: timestamp}
        key: {pk: "TRIP#{tripId}", sk: TRIP}
        item_bytes: 6000
        item_count: 1000000
        writes: {inserts: 100, updates: 10000, changes: [cell]}
        index_keys:
          GSI1: {pk: "CELL#{cell}", sk: "{status}#{at}"}
    access_patterns:
      trip: {entity: Trip, where: {tripId: "="}, rps: 10}
      trips_in_cell: {entity: Trip, where: {cell: "=", status: "="}, index: GSI1, rps: 10, limit: 20}
"""

COUNTS = """\
    blueprint: counts
    version: 1.0.0
    table: {name: counts_main}
    entities:
      Event:
        attributes: {kind: {type: string, values: [A, B]}, eventId: string, at: timestamp}
        key: {pk: "EVENT#{kind}", sk: "{at}#{eventId}", shards: 8}
        item_bytes: 400
        item_count: 1200
        writes_per_second: 1
    access_patterns:
      kind_count: {entity: Event, where: {kind: "="}, count: true, limit: LIMIT, rps: 10}
"""


def _stack(write_blueprint, text: str):
    return build_stacks([load_blueprint(write_blueprint(textwrap.dedent(text)))])[0]


def _sent(kind) -> list[tuple[str, float]]:
    return [(request.operation, request.count) for request in kind.requests]


def test_an_update_of_part_of_an_index_key_reads_the_rest_first_and_capacity_counts_it(write_blueprint):
    stack = _stack(write_blueprint, TRIPS)
    (write,) = stack.capacity.writes
    kinds = {kind.kind: kind for kind in write.kinds}
    assert _sent(kinds["insert"]) == [("PutItem", 1)]
    # `cell` is GSI1's partition key, `status` and `at` its sort key: the client reads them first, strongly
    # consistent and charged on the whole item: ceil(6,000 / 4,096) = 2 RCU per update.
    assert _sent(kinds["update"]) == [("GetItem", 1), ("UpdateItem", 1)]
    assert kinds["update"].read_units == math.ceil(6000 / 4096)
    # 10,000 updates/s read 20,000 RCU/s on the table, beside the patterns' reads: `trip` 10/s of a 6,000 B item
    # eventually consistent (1 RCU), `trips_in_cell` 10/s of 20 entries.
    before = [flow for flow in stack.capacity.traffic.flows if flow.before_write]
    assert [(flow.target, flow.direction, flow.units) for flow in before] == [(TABLE, "read", 10_000 * 2.0)]
    table = next(load for load in stack.capacity.loads if load.index == TABLE)
    patterns = sum(read.units_per_second + read.table_units_per_second for read in stack.capacity.reads
                   if read.index == TABLE)
    assert table.read_units_per_second == patterns + 20_000


def test_tw314_names_the_read_and_its_fix_sends_one_update_item(write_blueprint):
    stack = _stack(write_blueprint, TRIPS)
    (finding,) = [f for f in lint_design(stack.design, stack.capacity) if f.code == "TW314"]
    assert "the client reads at, status first" in finding.message and "20,000 RCU/s" in finding.message
    assert "declare `writes.passes: [at, status]`: the update then sends its UpdateItem alone" in finding.fix
    fixed = _stack(write_blueprint, TRIPS.replace("changes: [cell]", "changes: [cell], passes: [at, status]"))
    (write,) = fixed.capacity.writes
    (update,) = [kind for kind in write.kinds if kind.kind == "update"]
    assert _sent(update) == [("UpdateItem", 1)]
    # passing unchanged values changes no key: GSI1 is rewritten as before (cell re-keys it: a delete and a put of
    # its entry), so the fix saves the read and costs no write unit
    (before,) = [kind for kind in stack.capacity.writes[0].kinds if kind.kind == "update"]
    assert update.units == before.units
    assert not [f for f in lint_design(fixed.design, fixed.capacity) if f.code == "TW314"]
    assert not [flow for flow in fixed.capacity.traffic.flows if flow.before_write]


def test_tw314_on_a_share_of_updates_says_what_a_move_still_reads(write_blueprint):
    # 5% of updates change cell (GSI1's partition key); 50% change tripId, the table key, and move the item.
    # Reads: 0.5 (moves) + 0.5 x 0.05 (the rest: part of GSI1's key) = 0.525 GetItem per update, 2 RCU each.
    text = TRIPS.replace("changes: [cell]", "changes: {cell: 0.05, tripId: 0.5}")
    stack = _stack(write_blueprint, text)
    (update,) = [kind for kind in stack.capacity.writes[0].kinds if kind.kind == "update"]
    assert _sent(update) == [("GetItem", 0.5 + 0.5 * 0.05), ("TransactWriteItems", 0.5), ("UpdateItem", 0.5)]
    assert update.read_units == (0.5 + 0.5 * 0.05) * 2
    (finding,) = [f for f in lint_design(stack.design, stack.capacity) if f.code == "TW314"]
    # the partial key's reads alone: 10,000 x 0.025 = 250 a second, 500 RCU/s
    assert finding.message.startswith("update_Trip changes cell, part of an index key with at, status")
    assert "on 2.5% of updates (250 a second: 500 RCU/s" in finding.message
    assert "the 50% of updates that change the table key still read the whole item to move it" in finding.fix


def test_an_update_of_the_table_key_reads_the_item_and_moves_it_in_a_transaction(write_blueprint):
    stack = _stack(write_blueprint, TRIPS.replace("changes: [cell]", "changes: [tripId]"))
    (update,) = [kind for kind in stack.capacity.writes[0].kinds if kind.kind == "update"]
    assert _sent(update) == [("GetItem", 1), ("TransactWriteItems", 1)]
    assert update.read_units == 2
    assert not [f for f in lint_design(stack.design, stack.capacity) if f.code == "TW314"]  # no way around it


def test_a_sharded_count_stops_reading_shards_once_it_has_its_limit(write_blueprint):
    # 1,200 events over 2 kinds: 600 of a kind, over 8 shards: 75 a shard. A limit of 200 needs ceil(200 / 75) = 3
    # shards; each request reads its shard's 75 items.
    read = _stack(write_blueprint, COUNTS.replace("LIMIT", "200")).capacity.read("kind_count")
    assert [(r.operation, r.count) for r in read.requests] == [("Query", 3)]
    assert read.items_per_call == 3 * 75
    # A limit above the kind's 600 items reads all 8 shards.
    read = _stack(write_blueprint, COUNTS.replace("LIMIT", "5000")).capacity.read("kind_count")
    assert [(r.operation, r.count) for r in read.requests] == [("Query", 8)]
