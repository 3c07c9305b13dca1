"""A hot key read by batch gets: one BatchGetItem names a primary key at most once (DynamoDB refuses a request
whose keys repeat), so a key value that is a single item is read at most once a call, however large its share of
the template's traffic.

The feed below, by hand (flat day: `peak_factor: 1`): 12,500 BatchGetItem calls/s of 18 posts of 20,000 B, each
rounded up on its own to ceil(20,000 / 4,096) = 5 units of 4 KB, halved (eventually consistent): 2.5 RCU an item,
18 x 2.5 = 45 RCU a call, 562,500 RCU/s. One post takes half the traffic (`hot_key_share: 0.5`):
- the share applied to every key of each call: 562,500 x 0.5 = 281,250 RCU on the post (what lint printed);
- the bound: one item a call, 12,500 x 2.5 = 31,250 RCU (18 x 0.5 = 9 of the post a call is impossible).
"""

from __future__ import annotations

import textwrap

from tablewright.blueprint.load import load_blueprint
from tablewright.lint.engine import lint_design
from tablewright.stacks.stack import build_stacks

FEED = """\
    blueprint: feed
    version: 1.0.0
    region: us-east-1
    table: {name: feed_main, billing: on_demand}
    traffic: {peak_factor: 1}
    entities:
      Post:
        attributes: {postId: {type: string, hot_key_share: 0.5}, body: string}
        key: {pk: "POST#{postId}", sk: POST}
        item_bytes: 20000
        writes: {inserts: 10}
    access_patterns:
      feed_posts: {entity: Post, where: {postId: "="}, batch: 18, rps: 12500}
"""


def _stack(write_blueprint, text: str):
    return build_stacks([load_blueprint(write_blueprint(textwrap.dedent(text)))])[0]


def test_a_single_item_key_gets_at_most_one_item_of_each_batch_call(write_blueprint):
    stack = _stack(write_blueprint, FEED)
    per_item = 5 * 0.5  # ceil(20,000 / 4,096) units of 4 KB, halved
    assert stack.capacity.read("feed_posts").units_per_second == 12_500 * 18 * per_item
    [key] = [k for k in stack.capacity.traffic.hot_keys if k.target == "table"]
    assert stack.capacity.traffic.key_peak(key, "read") == 12_500 * per_item == 31_250
    # the overstated figure was 12,500 x 18 x 2.5 x 0.5 = 281,250: the share applied to every key of a call
    [finding] = [f for f in lint_design(stack.design, stack.capacity) if f.code == "TW103"]
    assert "31,250 RCU per key" in finding.message and "281,250" not in finding.message
    assert "x 0.0556 (a batch get names the key once among its 18 items)" in finding.message  # 1 / 18
    # The writes keep their share: 10 inserts/s x 20 WCU (20,000 B in 1 KB units) x 0.5 = 100 WCU.
    assert stack.capacity.traffic.key_peak(key, "write") == 10 * 20 * 0.5
    # A cache refreshing the post once a second reads it once: 1 x 2.5 RCU, not the whole batch of 18.
    assert "about 2.5 RCU on the key at peak" in finding.fix


def test_the_bound_holds_only_where_a_call_cannot_name_the_key_twice(write_blueprint):
    """A post with 2% of the traffic: 18 x 0.02 = 0.36 of it a call on average, under one: 562,500 x 0.02 =
    11,250 RCU stays as declared. Keyed by the user's organisation, one call's 18 keys may all be of one busy
    organisation: its share stays on every key of the call (562,500 x 0.5 = 281,250 RCU); with the post's key,
    the bound of 31,250."""
    stack = _stack(write_blueprint, FEED.replace("hot_key_share: 0.5", "hot_key_share: 0.02"))
    [key] = [k for k in stack.capacity.traffic.hot_keys if k.target == "table"]
    assert stack.capacity.traffic.key_peak(key, "read") == 12_500 * 18 * 2.5 * 0.02
    stack = _stack(write_blueprint, FEED)
    [key] = [k for k in stack.capacity.traffic.hot_keys if k.target == "table"]
    assert stack.capacity.traffic.key_peak(key, "read") == 12_500 * 2.5
    text = (FEED.replace("{postId: {type: string, hot_key_share: 0.5}, body: string}",
                         "{orgId: {type: string, hot_key_share: 0.5}, postId: string, body: string}")
            .replace('{pk: "POST#{postId}", sk: POST}', '{pk: "ORG#{orgId}", sk: "POST#{postId}"}')
            .replace('where: {postId: "="}', 'where: {orgId: "=", postId: "="}'))
    stack = _stack(write_blueprint, text)
    [key] = [k for k in stack.capacity.traffic.hot_keys if k.target == "table"]
    assert stack.capacity.traffic.key_peak(key, "read") == 12_500 * 18 * 2.5 * 0.5
