"""Lint's fixes shown to work by applying them and simulating again: a hot key (TW103: shards, a counter split, a cache
for a top-N) and an event the table cannot serve (TW105: warm throughput, a scheduled minimum) throttle in the
simulated day, and the offered fix applied throttles nothing. Re-simulating only what a fix changes gives the whole
stack's figures."""

from __future__ import annotations

import pytest
import yaml

from tablewright.design.design import TABLE
from tablewright.lint.engine import lint_design as lint
from tablewright.simulate.stack import simulate_stack
from tests.support.simulate_support import FLEET, ON_DEMAND_SALE, PROVISIONED, stack_of


def _set(text: str, setting: str, value: int) -> str:
    data = yaml.safe_load(text)
    node = data
    *path, last = setting.split(".")
    for part in path:
        node = node.setdefault(part, {})
    node[last] = value
    return yaml.safe_dump(data, sort_keys=False)


def _hot(stack, code: str = "TW103"):
    return [f for f in lint(stack.design, stack.capacity) if f.code == code]


def _key_throttles(stack) -> float:
    result = simulate_stack(stack.design, stack.capacity)
    return sum(sum(run.key_throttled.values()) for run in result.declared.day.runs)


def test_a_status_gsi_with_no_weights_is_an_error_whose_offered_fix_simulated_throttles_nothing(write_blueprint):
    """3 statuses, no weights: the busiest is assumed to take 80% of 2,000 writes/s = 1,600 WCU (at the default
    peak factor of 3: 4,800), over a partition's 1,000. The fix shards it: ceil(4,800 / 500) = 10."""
    text = FLEET.format(extra="")
    stack = stack_of(write_blueprint, text)
    [finding] = _hot(stack)
    assert "4,800 WCU per key" in finding.message and "assumed to take 80%" in finding.message
    assert "declare `weights:` on status" in finding.message
    assert "shard it into 10: set `indexes.GSI1.shards: 10`" in finding.fix and "removes all" in finding.fix
    assert _key_throttles(stack) > 0
    fixed_stack = stack_of(write_blueprint, _set(text, "indexes.GSI1.shards", 10), "fixed.yaml")
    assert not _hot(fixed_stack) and not _hot(fixed_stack, "TW104")
    assert _key_throttles(fixed_stack) == 0


def test_declared_weights_replace_the_assumption(write_blueprint):
    weighted = FLEET.format(extra="").replace("values: [ONLINE, OFFLINE, UPDATING]",
                                              "weights: {ONLINE: 95, OFFLINE: 4, UPDATING: 1}")
    [finding] = _hot(stack_of(write_blueprint, weighted))
    assert "= ONLINE" in finding.message and "5,700 WCU per key" in finding.message  # 2,000 x 0.95 x 3


COUNTER = """\
blueprint: sale
version: 1.0.0
region: us-east-1
table: {{name: sale}}
traffic: {{peak_factor: 1}}
entities:
  Stock:
    attributes:
      sku: {{type: string, hot_key_share: 1.0}}
      writer: string
      remaining: number
    key: {{pk: "STOCK#{{sku}}", sk: "STOCK"{shards}}}
    writes: {{updates: 10000, changes: [remaining]}}
access_patterns:
  stock_of_sku:
    entity: Stock
    where: {{sku: "="}}
    rps: 10
"""


@pytest.mark.parametrize("shards", ["", ", shards: 10", ", shards: 50"])
def test_a_single_hot_item_is_an_error_whatever_shards_its_key_declares(write_blueprint, shards):
    stack = stack_of(write_blueprint, COUNTER.format(shards=shards))
    [finding] = _hot(stack)
    assert "10,000 WCU per key" in finding.message and "single item" in finding.message
    assert "split the item into 20 counter items" in finding.fix and "removes all" in finding.fix
    assert _key_throttles(stack) > 0


def test_the_offered_counter_split_applied_removes_the_throttling(write_blueprint):
    split = COUNTER.format(shards=', shards: 20, shard_by: [writer]')
    stack = stack_of(write_blueprint, split)
    assert not _hot(stack) and _key_throttles(stack) == 0


def test_an_on_demand_table_that_cannot_serve_its_event_is_warned_with_warm_throughput_proven(write_blueprint):
    """An established table that peaked at 10 writes/s serves 4,000 at once (a new table's throughput, never
    less): 6,000 of the sale's 10,000 a second throttle for its 600 s."""
    [finding] = _hot(stack_of(write_blueprint, ON_DEMAND_SALE), "TW105")
    assert finding.severity == "warning" and "3,600,000 units over 600 s" in finding.message
    assert "flash-sale" in finding.message
    assert "set `table.warm_throughput: {read: 12000, write: 10000}`" in finding.fix
    assert "removes the throttling" in finding.fix
    warmed = ON_DEMAND_SALE.replace("table: {name: shop}", "table: {name: shop, warm_throughput: {read: 12000, "
                                    "write: 10000}}\nterraform: {aws_provider: \">= 6.13\"}")
    assert not _hot(stack_of(write_blueprint, warmed, "warm.yaml"), "TW105")


def test_a_provisioned_table_gets_a_scheduled_minimum_that_simulated_removes_the_throttling(write_blueprint):
    text = ON_DEMAND_SALE.replace("table: {name: shop}", PROVISIONED).replace(
        "rate: 10000}", 'rate: 10000, on: "2027-11-26"}')
    [finding] = _hot(stack_of(write_blueprint, text), "TW105")
    # 10,000 / 0.7 = 14,285.7: the minimum from 15 minutes before the sale to its end, once (the sale's date).
    scheduled = ('add `{name: flash-sale, date: "2027-11-26", start: "17:45", end: "18:10", min: 14286}` to '
                 '`table.capacity.write.scheduled`')
    assert scheduled in finding.fix and "removes the throttling" in finding.fix.split("raise")[0]
    applied = text.replace("write: {min: 5, max: 40000}}}", "write: {min: 5, max: 40000, scheduled: [{name: "
                           "flash-sale, date: \"2027-11-26\", start: \"17:45\", end: \"18:10\", min: 14286}]}}}")
    stack = stack_of(write_blueprint, applied, "applied.yaml")
    assert not _hot(stack, "TW105")
    run = simulate_stack(stack.design, stack.capacity).declared.day.run(TABLE, "write")
    assert run.capacity[17 * 60 + 45] == 14286 and run.throttled_units == 0


def test_no_event_no_day_simulated_by_lint(write_blueprint):
    steady = ON_DEMAND_SALE.replace("    traffic:\n      events: [{name: flash-sale, start: \"18:00\", duration: "
                                    "10m, rate: 10000}]\n", "")
    assert not _hot(stack_of(write_blueprint, steady), "TW105")


def test_a_fix_simulated_on_its_own_target_matches_the_whole_stack_simulated_again(write_blueprint):
    """Lint re-simulates only what a fix changes (and the table's writes after a GSI's): the same figures."""
    from dataclasses import replace

    from tablewright.simulate.stack import _run_mode, capacities, run_mode

    stack = stack_of(write_blueprint, FLEET.format(extra="").replace("table: {name: fleet}", PROVISIONED.replace(
        "shop", "fleet")) + "traffic:\n  events: [{name: sale, start: \"12:00\", duration: 20m, factor: 3}]\n")
    settings = capacities(stack.design, stack.capacity, "provisioned")
    configured = run_mode(stack.design, stack.capacity, "provisioned")
    for target in ("GSI1", TABLE):
        changed = {(target, "write"): replace(settings[target, "write"], bounds=(3000, 40_000))}
        alone = _run_mode(stack.design, stack.capacity, "provisioned", changed, configured)
        whole = _run_mode(stack.design, stack.capacity, "provisioned", changed, None)
        assert alone.monthly_usd == whole.monthly_usd
        for mine, theirs in zip(alone.day.runs, whole.day.runs, strict=True):
            assert (mine.target, mine.direction) == (theirs.target, theirs.direction)
            assert mine.throttled_units == pytest.approx(theirs.throttled_units)
            assert list(mine.capacity) == list(theirs.capacity)


def _one(write_blueprint, entities: str, patterns: str, name: str = "b.yaml"):
    text = (f"blueprint: scenario\nversion: 1.0.0\nregion: us-east-1\ntable: {{name: scenario}}\n"
            f"entities:\n{entities}access_patterns:\n{patterns}")
    return stack_of(write_blueprint, text, name)


def test_an_unknown_non_identifier_key_part_is_not_assumed_spread(write_blueprint):
    """The leaderboard: `gameId` declared 70% hot, `period` a plain string: the event game's current board
    takes 0.7 x 1 of 1,900 score writes/s, x 3 at the peak = 3,990 WCU on one key value."""
    stack = _one(write_blueprint, """\
  Score:
    attributes:
      gameId: {type: string, hot_key_share: 0.7}
      period: string
      playerId: string
      points: {type: number, width: 10}
    key: {pk: "BOARD#{gameId}#{period}", sk: "{points}#{playerId}"}
    writes: {inserts: 1900}
""", """\
  board: {entity: Score, where: {gameId: "=", period: "="}, order: desc, order_by: points, limit: 10, rps: 1}
""")
    [finding] = _hot(stack)
    assert "3,990 WCU per key" in finding.message
    assert "{period}: cardinality unknown and not an identifier, so judged at its worst" in finding.message
    assert "`cardinality:` (and `hot_key_share:`) or `weights:` on period" in finding.message


def test_a_read_hot_key_is_judged_at_its_peak_and_a_top_n_is_cached_not_sharded(write_blueprint):
    """A chat room read at 1,362 RCU/s on average (x 3 at the peak: 4,086, over a partition's 3,000): sharding
    a top-N multiplies its reads (each shard is asked for the same 50), so only the cache is offered."""
    stack = _one(write_blueprint, """\
  Message:
    attributes:
      roomId: {type: string, hot_key_share: 1.0}
      sentAt: timestamp
      body: string
    key: {pk: "ROOM#{roomId}", sk: "{sentAt}"}
    item_bytes: 450
    item_count: 1000000
""", """\
  latest: {entity: Message, where: {roomId: "="}, order: desc, limit: 50, rps: 454}
""")
    [finding] = _hot(stack)
    # 50 messages x 450 B = 22,500 B: 6 x 4 KB, eventually consistent: 3 RCU a call; 454 calls/s = 1,362.
    assert "4,086 RCU per key" in finding.message
    assert "shard it" not in finding.fix
    assert "serve its reads from a cache" in finding.fix and "removes all" in finding.fix
