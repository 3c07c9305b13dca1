"""The strongly consistent GetItem the client sends before an update (capacity/requests.py) in TW103's fixes: a
cache never serves it (it reads the item it is about to write), and a split item or a shard takes the share of it
that its writes take (each update reads the one item it writes).

By hand (peak factor 3): Config, one item of 4,000 B; `config` reads it 5,000 times a second (eventually consistent:
0.5 RCU), 100 updates/s change `owner`, part of GSI1's key with `seenAt`, so each first reads the item strongly
consistent: 1 RCU (4,000 B <= 4 KB), 100 x 3 = 300 RCU/s at peak on the key. A cache refreshed once a second: 1 x
0.5 RCU of pattern reads, and the 300 RCU the updates' reads still take: 300.5. With a split into 3 items, each
takes a third of the updates, and of their reads: 300 / 3 + 0.5 = 100.5 RCU per item.
"""

from __future__ import annotations

from tablewright.lint.engine import lint_design
from tests.support.simulate_support import stack_of

CONFIG = """\
blueprint: c
version: 1.0.0
region: us-east-1
table: {name: c_main, billing: on_demand}
entities:
  Config:
    attributes: {name: {type: string, cardinality: 1}, owner: string, seenAt: timestamp}
    key: {pk: "CONFIG#{name}", sk: META}
    index_keys:
      GSI1: {pk: "OWNER#{owner}", sk: "{seenAt}"}
    writes: {updates: 100, changes: [owner]}
    item_bytes: 4000
    item_count: 1
access_patterns:
  config: {entity: Config, where: {name: "="}, rps: 5000}
  by_owner: {entity: Config, where: {owner: "="}, rps: 1, limit: 5}
"""


def test_a_cache_never_serves_the_read_an_update_makes_first_and_a_split_divides_it(write_blueprint):
    stack = stack_of(write_blueprint, CONFIG)
    (finding,) = [f for f in lint_design(stack.design, stack.capacity)
                  if f.code == "TW103" and f.message.startswith("the table")]
    assert "Config reads before its updates 100.0 RCU/s on average, 300.0 at peak" in finding.message
    cache, together = finding.fix.split("; or ")
    assert "a cache (DAX or the application's) or a materialised top-N refreshed 1 time(s) a second: about 300 RCU " \
           "on the key at peak" in cache
    assert "together about 400 WCU and 100.5 RCU on each of the 3 values at peak" in together
