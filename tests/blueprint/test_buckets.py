"""Time buckets in partition keys: `{at:month}`, `{at:week}` (ISO 8601 week), `{at:day}`, `{at:hour}`, all UTC."""

from __future__ import annotations

import json
import textwrap
from datetime import UTC, date, datetime

import pytest

from tablewright.blueprint.encoding import bucket_range, bucket_value
from tablewright.blueprint.language import AttributeSpec

TIMESTAMP = AttributeSpec(type="timestamp")


@pytest.mark.parametrize(("moment", "bucket", "text"), [
    (datetime(2024, 3, 1, 9, 30, tzinfo=UTC), "month", "2024-03"),
    (datetime(2024, 3, 1, 9, 30, tzinfo=UTC), "day", "2024-03-01"),
    (datetime(2024, 3, 1, 9, 30, tzinfo=UTC), "hour", "2024-03-01T09"),
    # ISO 8601: weeks start on Monday, and week 1 holds the year's first Thursday. 2024-03-01 is the Friday of
    # the week of Monday 26 February: week 9.
    (datetime(2024, 3, 1, 9, 30, tzinfo=UTC), "week", "2024-W09"),
    # Monday 30 December 2024 begins the week of Thursday 2 January 2025: 2025's week 1.
    (datetime(2024, 12, 30, tzinfo=UTC), "week", "2025-W01"),
    # Sunday 3 January 2021 ends the week of Thursday 31 December 2020: 2020 has 53 weeks.
    (datetime(2021, 1, 3, 23, 59, tzinfo=UTC), "week", "2020-W53"),
    (date(2021, 1, 4), "week", "2021-W01"),
    # An offset is converted to UTC first: 01:30 at +02:00 is 23:30 the day before.
    (datetime.fromisoformat("2024-03-04T01:30:00+02:00"), "week", "2024-W09"),
    (datetime.fromisoformat("2024-03-04T01:30:00+02:00"), "hour", "2024-03-03T23"),
])
def test_a_bucket_is_the_utc_period_holding_the_time(moment, bucket, text):
    assert bucket_value(TIMESTAMP, moment, bucket) == text


def test_bucket_ranges_cover_every_period_from_the_first_to_the_last():
    start, end = datetime(2024, 12, 28, 18, tzinfo=UTC), datetime(2025, 1, 7, 2, tzinfo=UTC)
    assert bucket_range(TIMESTAMP, start, end, "week") == ["2024-W52", "2025-W01", "2025-W02"]
    assert bucket_range(TIMESTAMP, datetime(2024, 3, 1, 9, 30, tzinfo=UTC), datetime(2024, 3, 1, 11, 5, tzinfo=UTC),
                        "hour") == ["2024-03-01T09", "2024-03-01T10", "2024-03-01T11"]
    assert bucket_range(TIMESTAMP, datetime(2024, 11, 30, 23, tzinfo=UTC), datetime(2025, 1, 1, tzinfo=UTC),
                        "month") == ["2024-11", "2024-12", "2025-01"]
    assert len(bucket_range(TIMESTAMP, datetime(2024, 2, 28, 22, tzinfo=UTC), datetime(2024, 3, 1, 1, tzinfo=UTC),
                            "hour")) == 2 + 24 + 2  # 2024 is a leap year: 29 February has 24 hours too


def test_week_and_hour_buckets_pass_verify_and_the_client_checks(write_blueprint, run_cli):
    path = write_blueprint(textwrap.dedent("""\
        blueprint: metrics
        version: 1.0.0
        table: {name: metrics_main}
        entities:
          Visit:
            attributes: {siteId: string, at: timestamp, path: string}
            key: {pk: "SITE#{siteId}#{at:week}", sk: "{at}"}
          Ping:
            attributes: {hostId: string, at: timestamp}
            key: {pk: "HOST#{hostId}#{at:hour}", sk: "{at}"}
        access_patterns:
          visits: {entity: Visit, where: {siteId: "=", at: between}, limit: 8}
          visits_at: {entity: Visit, where: {siteId: "=", at: "="}}
          pings: {entity: Ping, where: {hostId: "=", at: between}, order: desc}
    """))
    code, out, err = run_cli("verify", str(path), "--client", "--format", "json")
    assert code == 0, out + err
    code, out, _ = run_cli("explain", str(path), "--format", "json")
    parameters = {(pattern["name"], parameter["name"]): parameter["encoding"]
                  for pattern in json.loads(out)[0]["patterns"] for parameter in pattern["parameters"]}
    assert parameters[("visits_at", "at:week")] == "the week of at (UTC, YYYY-Www, ISO week)"
    assert parameters[("pings", "at:hour")] == "each hour from at.from to at.to"


def test_an_hour_bucket_of_a_date_is_refused(write_blueprint, run_cli):
    path = write_blueprint(textwrap.dedent("""\
        blueprint: days
        version: 1.0.0
        table: {name: days_main}
        entities:
          Shift:
            attributes: {teamId: string, on: date}
            key: {pk: "TEAM#{teamId}#{on:hour}", sk: "{on}"}
        access_patterns:
          shifts: {entity: Shift, where: {teamId: "=", on: "="}}
    """))
    code, _, err = run_cli("lint", str(path))
    assert code == 2 and "buckets `on` by hour, but a date has no time of day" in err and "blueprint.yaml:7:" in err
    assert "write {on:day}" in err
