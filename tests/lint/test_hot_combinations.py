"""Hot-key fixes tried together (TW103): a key no single fix cures is offered the set that does, simulated.

DynamoDB's rule: a partition, and so one partition-key value, serves at most 3,000 RCU and 1,000 WCU a second,
or a linear combination of them (reads / 3,000 + writes / 1,000 <= 1), whatever the table has
(https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/bp-partition-key-design.html,
https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/burst-adaptive-capacity.html). Above it the
simulator turns away 1 - 1 / load of the key's units each second.

The viral post below, by hand (flat day: `peak_factor: 1`; one post takes half the reads and likes):
- reads: 24,000 GetItem/s x 0.5 x 0.5 RCU (eventually consistent, 200 B) = 6,000 RCU on the key;
- writes: 4,000 like updates/s x 0.5 x 1 WCU = 2,000 WCU on the key;
- load 6,000 / 3,000 + 2,000 / 1,000 = 4: 1 - 1/4 = 75% of 8,000 units/s throttle: 6,000/s, 518,400,000 a day.
Alone, each fix falls short:
- a cache (one refresh a second: the key read 1 x 0.5 RCU/s) leaves the 2,000 WCU: load 0.5/3,000 + 2;
- a split counter into ceil(2,000 / (1,000 x 0.5 warning)) = 4 items: 500 WCU each, but every read reads all 4,
  so each item still takes 6,000 RCU: load 2.5, worse than before (not offered).
Together: each item 500 WCU and 0.5 RCU: 0.5 / 3,000 + 500 / 1,000 < 1: nothing throttles.
"""

from __future__ import annotations

from tablewright.lint.engine import lint_design
from tests.support.simulate_support import stack_of

SECONDS = 86_400
VIRAL = """\
blueprint: social
version: 1.0.0
region: us-east-1
table: {name: social_main, billing: on_demand}
traffic: {peak_factor: 1}
entities:
  Post:
    attributes: {postId: {type: string, hot_key_share: 0.5}, likes: {type: number}, writer: string}
    key: {pk: "POST#{postId}", sk: POST}
    item_bytes: 200
    writes: {updates: 4000, changes: [likes]}
access_patterns:
  post: {entity: Post, where: {postId: "="}, rps: 24000}
"""


def _hot(stack):
    return [f for f in lint_design(stack.design, stack.capacity) if f.code == "TW103"]


def _throttled(reads: float, writes: float) -> float:
    """Units a key turns away each second at a steady load (the partition limit's linear combination)."""
    load = reads / 3000 + writes / 1000
    return (reads + writes) * (1 - 1 / load) if load > 1 else 0.0


def test_no_single_fix_cures_the_viral_post_and_cache_with_a_split_counter_does(write_blueprint):
    [finding] = _hot(stack_of(write_blueprint, VIRAL))
    reads, writes = 24_000 * 0.5 * 0.5, 4_000 * 0.5 * 1
    before = _throttled(reads, writes) * SECONDS
    assert before == 518_400_000
    assert f"simulated over a day: {before:,.0f} units throttled in 86,400 s" in finding.message
    cached = _throttled(1 * 0.5, writes) * SECONDS  # the cache alone: 86,428,801 a day remain
    assert f"simulated: {cached:,.0f} throttled units a day remain of {before:,.0f}" in finding.fix
    assert "no fix tried" not in finding.fix
    assert finding.fix.count("split the item into 4 counter items") == 1  # only inside the pair: alone it is worse
    assert _throttled(reads, writes / 4) * 4 > _throttled(reads, writes)
    pair = finding.fix.split("; or ")[-1]
    assert pair.startswith("cache + split counter together: split the item into 4 counter items")
    assert "serve its reads from a cache refreshed 1 time(s) a second" in pair
    assert "together about 500 WCU and 0.5 RCU on each of the 4 values at peak" in pair  # 2,000 / 4; 1 x 0.5
    assert _throttled(0.5, writes / 4) == 0
    assert pair.endswith(f"(simulated: removes all {before:,.0f} throttled units a day)")
    # The pair applied in two steps on the blueprint: with the counter split into 4 items (`shards: 4` by
    # `writer`) each item takes 500 WCU and still 6,000 RCU; its cache, simulated, removes all of that.
    split = VIRAL.replace("sk: POST}", "sk: POST, shards: 4, shard_by: [writer]}")
    [finding] = _hot(stack_of(write_blueprint, split, "split.yaml"))
    assert "6,000 RCU per key" in finding.message
    remaining = _throttled(6_000, 500) * 4 * SECONDS  # each of the 4 items
    assert f"removes all {remaining:,.0f} throttled units a day" in finding.fix
    assert finding.fix.startswith("serve its reads from a cache")


def test_a_pair_is_tried_only_when_no_single_fix_cures_and_a_key_no_set_cures_says_so(write_blueprint):
    """300,000 likes/s: 150,000 WCU on the key; split into the most counter items (100) each takes 1,500 WCU,
    over a partition's 1,000 even with the reads cached: the pair reduces the throttling, none removes it.
    1,000 likes/s: 500 WCU on the key, under a partition's 1,000 once the cache takes the reads: no pair."""
    [finding] = _hot(stack_of(write_blueprint, VIRAL.replace("updates: 4000", "updates: 300000"), "many.yaml"))
    assert _throttled(0.5, 300_000 * 0.5 / 100) > 0
    assert "cache + split counter together: split the item into 100 counter items" in finding.fix
    assert finding.fix.endswith("no fix tried, alone or together, removes the throttling")
    [finding] = _hot(stack_of(write_blueprint, VIRAL.replace("updates: 4000", "updates: 1000"), "few.yaml"))
    assert _throttled(0.5, 1_000 * 0.5) == 0
    assert finding.fix.startswith("serve its reads from a cache") and "removes all" in finding.fix
    assert "together" not in finding.fix


ROOM = """\
blueprint: chat
version: 1.0.0
region: us-east-1
table: {name: chat_main, billing: on_demand}
traffic: {peak_factor: 1}
entities:
  Message:
    attributes: {roomId: {type: string, hot_key_share: 1.0}, sentAt: timestamp, body: string}
    key: {pk: "ROOM#{roomId}", sk: "{sentAt}"}
    item_bytes: 450
    item_count: 1000000
    writes: {inserts: 3000}
access_patterns:
  latest: {entity: Message, where: {roomId: "="}, order: desc, limit: 50, rps: 2000}
"""


def test_a_busy_room_is_cured_by_shards_with_a_cache(write_blueprint):
    """One room takes every message: 3,000 inserts/s x 1 WCU (450 B) and 2,000 reads/s of the latest 50 (50 x 450 B
    = 22,500 B: ceil(22,500 / 4,096) = 6 units of 4 KB, halved: 3 RCU a call): 6,000 RCU and 3,000 WCU, load
    6,000 / 3,000 + 3,000 / 1,000 = 5: 80% of 9,000 units/s throttle. The cache alone leaves the writes (load
    3 / 3,000 + 3 > 1); shards alone ask each of them for the 50 (not offered). Sharded into
    ceil(3,000 / (1,000 x 0.5)) = 6 with the reads cached, each shard takes 500 WCU and one refresh's 3 RCU a
    second: 3 / 3,000 + 500 / 1,000 < 1."""
    [finding] = _hot(stack_of(write_blueprint, ROOM))
    before = _throttled(6_000, 3_000) * SECONDS
    assert before == 622_080_000 and f"{before:,.0f} units throttled in 86,400 s" in finding.message
    assert f"{_throttled(3, 3_000) * SECONDS:,.0f} throttled units a day remain" in finding.fix  # the cache alone
    pair = finding.fix.split("; or ")[-1]
    assert pair.startswith("cache + shards together: shard it into 6: set `entities.Message.key.shards: 6`")
    assert "together about 500 WCU and 3.0 RCU on each of the 6 values at peak" in pair
    assert _throttled(3, 3_000 / 6) == 0 and pair.endswith(f"(simulated: removes all {before:,.0f} throttled "
                                                           "units a day)")
