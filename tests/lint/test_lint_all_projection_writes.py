"""TW304 counts every write that copies an item into the ALL-projected index: updates (two entries when they change
its key), an event's writes (over the month, as often as it recurs), not only `writes_per_second`. Before the fix
both designs below were priced at 0.0 units/s and $0.00.

A 3,000-byte Order is a 3 WCU entry under ALL; projecting what `by_status` returns (its keys, orderId, placedAt)
is a 1 WCU entry: 2 units more per entry written. On demand in us-east-1: $0.625 per million write request units.
"""

from __future__ import annotations

import pytest

from tests.support.lint_support import BY_STATUS, findings, order

SECONDS = 730 * 3600  # a month, as AWS prices it
WRU = 0.625 / 1_000_000


def tw304(entity: dict) -> tuple[float, float]:
    [found] = [f for f in findings({"Order": entity}, BY_STATUS, region="us-east-1",
                                   indexes={"GSI1": {"projection": "all"}}) if f.code == "TW304"]
    units = float(found.message.split("about ")[1].split(" write request units/s")[0])
    dollars = float(found.message.split("~$")[1].split("/month")[0].replace(",", ""))
    return units, dollars


def test_updates_that_change_the_index_key_write_two_entries_each():
    # 10 inserts (one entry each) and 40 updates of `status`, GSI1's partition key (a delete and a put of the entry):
    # 10 + 2 x 40 = 90 entries a second, 2 units more each.
    entity = {**order(size=3000), "writes_per_second": 0,
              "writes": {"inserts": 10, "updates": 40, "changes": ["status"]}}
    assert tw304(entity) == pytest.approx((90 * 2, round(90 * 2 * SECONDS * WRU, 2)))


def test_an_event_only_entity_is_priced_over_the_month():
    # No average rate, a daily 10-minute event at 300 writes/s: 300 x 600 = 180,000 entries a day, 730 / 24 days a
    # month: 5,475,000 entries, 2 units more each.
    event = {"name": "flash", "start": "12:00", "duration": "10m", "every": "day", "rate": 300}
    entity = order(writes=0, size=3000, traffic={"events": [event]})
    entries = 300 * 600 * 730 / 24
    units, dollars = tw304(entity)
    assert round(units, 1) == round(entries / SECONDS * 2, 1) == 4.2
    assert dollars == round(entries * 2 * WRU, 2) == 6.84
