"""TW330: Contributor Insights in accessed and throttled keys mode noted when it costs more than 10% of the
throughput bill (it failed before the rule: lint was clean whatever it cost)."""

from __future__ import annotations

from tablewright.blueprint.load import load_blueprints
from tablewright.stacks.stack import build_stacks

# One entity on a table with a sort key, on demand in us-east-1: 100 inserts/s of a 100-byte item (1 WRU) and 100
# GetItem/s (eventually consistent: 0.5 RRU).
CI = """\
blueprint: ci
version: 1.0.0
region: us-east-1
table: {name: cidemo, billing: on_demand}
contributor_insights: MODE
traffic: {peak_factor: 1}
entities:
  Order:
    attributes: {orderId: string}
    key: {pk: "ORDER#{orderId}", sk: "ORDER"}
    item_bytes: BYTES
    writes_per_second: 100
access_patterns:
  order_by_id: {entity: Order, where: {orderId: "="}, rps: 100}
"""
SECONDS = 730 * 3600  # a month, as AWS prices it
MILLION = 1_000_000


def notes(write_blueprint, mode: str = "accessed_and_throttled_keys", item_bytes: int = 100) -> list[str]:
    path = write_blueprint(CI.replace("MODE", mode).replace("BYTES", str(item_bytes)), "ci.yaml")
    [stack] = build_stacks(load_blueprints(path))
    return [f.finding.message for f in stack.lint.findings if f.finding.code == "TW330"]


def test_insights_above_a_tenth_of_the_throughput_bill_is_noted(write_blueprint):
    # Events (two per item: the table has a sort key): 100 GetItem x 2 + 100 writes x 2 = 400 a second, $0.03 per
    # million, and 4 rules (PKC, PKT, SKC, SKT) at $0.50. Throughput: 50 RRU/s at $0.125 per million, 100 WRU/s at
    # $0.625 per million.
    insights = round(400 * SECONDS / MILLION * 0.03, 2) + 4 * 0.50  # 31.54 + 2.00 = 33.54
    throughput = round(50 * SECONDS / MILLION * 0.125, 2) + round(100 * SECONDS / MILLION * 0.625, 2)  # 180.68
    assert notes(write_blueprint) == [
        f"Contributor Insights (accessed and throttled keys) costs ~${insights:,.2f} a month, "
        f"{insights / throughput:.0%} of the ~${throughput:,.2f} throughput bill in us-east-1"]
    # 33.54 / 180.68: 19%


def test_insights_under_a_tenth_or_off_is_not_noted(write_blueprint):
    # 9 KB items: 9 WRU a write, 900 WRU/s = $1,478.25 a month; the events do not grow: 33.54 is 2% of it.
    assert notes(write_blueprint, item_bytes=9 * 1024) == []
    assert notes(write_blueprint, mode='"off"') == []
