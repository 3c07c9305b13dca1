"""Alarms, Contributor Insights modes, the alarm topic, the change rule and the change calendar."""

from __future__ import annotations

import json
import re
import shutil
import textwrap
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from dateutil.rrule import rrulestr
from icalendar import Calendar

from tablewright.blueprint.language import MaintenanceWindow
from tablewright.blueprint.load import load_blueprint
from tablewright.design.designer import design
from tablewright.monitoring import alarms as alarm_module
from tablewright.monitoring.window import calendar_text, is_open, next_opening
from tablewright.stacks.stack import build_stacks
from tablewright.synth.synth import synthesize
from tests.conftest import BUNDLED, ROOT

# Dimensions of each metric, from the DynamoDB developer guide ("DynamoDB metrics and dimensions").
TABLE_OR_INDEX = {"TableName", "GlobalSecondaryIndexName"}
DIMENSIONS = {
    "ReadThrottleEvents": TABLE_OR_INDEX,
    "WriteThrottleEvents": TABLE_OR_INDEX,
    "ReadKeyRangeThroughputThrottleEvents": TABLE_OR_INDEX,
    "WriteKeyRangeThroughputThrottleEvents": TABLE_OR_INDEX,
    "ConsumedReadCapacityUnits": TABLE_OR_INDEX,
    "ConsumedWriteCapacityUnits": TABLE_OR_INDEX,
    "ProvisionedReadCapacityUnits": TABLE_OR_INDEX,
    "ProvisionedWriteCapacityUnits": TABLE_OR_INDEX,
    "OnlineIndexThrottleEvents": TABLE_OR_INDEX,
    "ReadMaxOnDemandThroughputThrottleEvents": TABLE_OR_INDEX,
    "WriteMaxOnDemandThroughputThrottleEvents": TABLE_OR_INDEX,
    "SuccessfulRequestLatency": {"TableName", "Operation"},
    "SystemErrors": {"TableName", "Operation"},
    "ConditionalCheckFailedRequests": {"TableName"},
    "UserErrors": set(),
    "AccountProvisionedReadCapacityUtilization": set(),
    "AccountProvisionedWriteCapacityUtilization": set(),
}
STATISTICS = {"SuccessfulRequestLatency": {"p99"}, "ProvisionedReadCapacityUnits": {"Average"},
              "ProvisionedWriteCapacityUnits": {"Average"}, "AccountProvisionedReadCapacityUtilization": {"Maximum"},
              "AccountProvisionedWriteCapacityUtilization": {"Maximum"}}
# The metrics DynamoDB publishes every minute (Developer Guide, "DynamoDB metrics and dimensions"); all
# others every five minutes, so an alarm period on them is a multiple of 300 seconds.
PER_MINUTE = {"ConditionalCheckFailedRequests", "ConsumedReadCapacityUnits", "ConsumedWriteCapacityUnits",
              "ReadKeyRangeThroughputThrottleEvents", "ReadMaxOnDemandThroughputThrottleEvents", "ReadThrottleEvents",
              "SuccessfulRequestLatency", "SystemErrors", "UserErrors", "WriteKeyRangeThroughputThrottleEvents",
              "WriteMaxOnDemandThroughputThrottleEvents", "WriteThrottleEvents"}
# Metrics DynamoDB publishes only for periods in which something happened: every alarm reads them filled.
SPARSE = PER_MINUTE - {"ConsumedReadCapacityUnits", "ConsumedWriteCapacityUnits"}


def synth_config(path: Path, tmp_path: Path, environment: str | None = "prod") -> dict:
    [written] = synthesize(build_stacks([load_blueprint(path, environment)]), tmp_path / "out")
    return json.loads(written.read_text())


def metrics_of(alarm: dict) -> list[tuple[str, dict, str]]:
    """(metric name, dimensions, statistic) of every metric an alarm reads."""
    return [(q["metric"]["metric_name"], q["metric"].get("dimensions", {}), q["metric"]["stat"])
            for q in alarm["metric_query"] if "metric" in q]


def watched(alarm: dict) -> str:
    """The expression an alarm evaluates (the query that returns data)."""
    [expression] = [q["expression"] for q in alarm["metric_query"] if q.get("return_data")]
    return expression


@pytest.fixture(scope="module")
def crm_prod(tmp_path_factory) -> dict:
    return synth_config(BUNDLED[0], tmp_path_factory.mktemp("crm"))


@pytest.mark.parametrize("environment", ["prod", "dev"])
def test_every_alarm_is_metric_math_over_documented_metrics_filled_where_sparse(environment, tmp_path):
    for path in BUNDLED:
        config = synth_config(path, tmp_path / path.stem / environment, environment)
        table = next(iter(config["resource"]["aws_dynamodb_table"]))
        alarms = config["resource"]["aws_cloudwatch_metric_alarm"]
        for name, alarm in alarms.items():
            assert "metric_name" not in alarm and alarm["metric_query"], name  # metric math, always
            assert alarm["treat_missing_data"] in ("notBreaching", "ignore"), name
            assert "First" in alarm["alarm_description"], name
            assert alarm["alarm_actions"] == alarm["ok_actions"], name
            metrics = metrics_of(alarm)
            assert 1 <= len(metrics) <= 10, name
            expression = watched(alarm)
            for query in (q for q in alarm["metric_query"] if "metric" in q):
                metric, dimensions, stat = (query["metric"]["metric_name"], query["metric"].get("dimensions", {}),
                                            query["metric"]["stat"])
                assert query["metric"]["namespace"] == "AWS/DynamoDB", name
                assert set(dimensions) <= DIMENSIONS[metric], (name, metric)
                if "TableName" in DIMENSIONS[metric]:
                    assert dimensions["TableName"] == f"${{aws_dynamodb_table.{table}.name}}", name
                assert stat in STATISTICS.get(metric, {"Sum"}), (name, metric, stat)
                assert query["metric"]["period"] % (60 if metric in PER_MINUTE else 300) == 0, (name, metric)
                # A metric published only when non-zero is read as 0 where DynamoDB sent nothing.
                assert (f"FILL({query['id']}, 0)" in expression) == (metric in SPARSE or metric.startswith("Consumed")
                                                                     or metric.startswith("Account")), (name, metric)
            assert sum(1 for q in alarm["metric_query"] if q.get("return_data")) == 1


def test_throttle_and_error_alarms_return_to_ok(crm_prod):
    """Every throttle and error alarm watches FILL(metric, 0): a period without data evaluates 0, below
    every threshold, so the alarm leaves ALARM when the throttling stops (CloudWatch ignores missing data
    of AWS/DynamoDB metrics whatever treat_missing_data says)."""
    alarms = crm_prod["resource"]["aws_cloudwatch_metric_alarm"]
    kinds = [a for n, a in alarms.items() if re.search(r"throttles$|system_errors$|conditional_check_failed$", n)]
    assert len(kinds) == 3 * 2 * 2 + 2
    for alarm in kinds:
        ids = [q["id"] for q in alarm["metric_query"] if "metric" in q]
        assert watched(alarm) == " + ".join(f"FILL({i}, 0)" for i in ids)
        assert alarm["threshold"] >= 0 and alarm["comparison_operator"] == "GreaterThanThreshold"


def test_the_alarm_set_of_the_crm_production_stack(crm_prod):
    alarms = crm_prod["resource"]["aws_cloudwatch_metric_alarm"]
    targets = ["table", "gsi1", "gsi2"]
    expected = {f"crm_{t}_{d}_{kind}" for t in targets for d in ("read", "write")
                for kind in ("throttles", "key_range_throttles", "utilization")}
    expected |= {f"crm_{op}_latency" for op in ("getitem", "query", "putitem", "updateitem")}
    expected |= {"crm_system_errors", "crm_conditional_check_failed"}
    assert set(alarms) == expected  # online index throttles are off by default; no max throughput when provisioned
    hot = alarms["crm_gsi1_write_key_range_throttles"]
    assert [(m, d["GlobalSecondaryIndexName"]) for m, d, _ in metrics_of(hot)] == [
        ("WriteKeyRangeThroughputThrottleEvents", "GSI1")]
    text = hot["alarm_description"]
    assert "one partition went over its limit of 1,000 write units per second" in text and "per key" not in text
    assert "Contributor Insights" in text and "hot key" in text
    assert "3,000 read units" in alarms["crm_table_read_key_range_throttles"]["alarm_description"]
    latency = alarms["crm_query_latency"]
    assert metrics_of(latency) == [("SuccessfulRequestLatency", {"Operation": "Query",
                                                                 "TableName": "${aws_dynamodb_table.crm.name}"}, "p99")]
    assert latency["threshold"] == 50 and watched(latency) == "FILL(m1, 0)"
    errors = alarms["crm_system_errors"]
    operations = sorted(d["Operation"] for _, d, _ in metrics_of(errors))
    assert operations == ["GetItem", "PutItem", "Query", "UpdateItem"]
    assert watched(errors) == "FILL(m1, 0) + FILL(m2, 0) + FILL(m3, 0) + FILL(m4, 0)"
    utilization = alarms["crm_table_read_utilization"]
    assert watched(utilization) == "100 * (FILL(consumed, 0) / PERIOD(consumed)) / provisioned"
    assert {q["metric"]["period"] for q in utilization["metric_query"] if "metric" in q} == {300}


def test_on_demand_tables_get_max_throughput_alarms_and_no_provisioned_ones(write_blueprint, tmp_path):
    text = BUNDLED[1].read_text().replace("access_patterns:", "alarms: {account_level: true}\naccess_patterns:")
    config = synth_config(write_blueprint(text, "orders.yaml"), tmp_path)
    alarms = config["resource"]["aws_cloudwatch_metric_alarm"]
    assert not [name for name in alarms if "utilization" in name]  # nor the account's provisioned capacity
    assert "orders_account_user_errors" in alarms
    assert "orders_batchgetitem_latency" not in alarms  # no follow-up reads in this design
    guards = {name: alarm for name, alarm in alarms.items() if name.endswith("max_throughput_throttles")}
    assert sorted(guards) == [f"orders_{t}_{d}_max_throughput_throttles" for t in ("gsi1", "table")
                              for d in ("read", "write")]
    table_read = guards["orders_table_read_max_throughput_throttles"]
    assert metrics_of(table_read)[0][0] == "ReadMaxOnDemandThroughputThrottleEvents"
    assert watched(table_read) == "FILL(m1, 0)"
    assert "on-demand maximum of 1,600 read request units per second" in table_read["alarm_description"]
    gsi_write = guards["orders_gsi1_write_max_throughput_throttles"]
    assert metrics_of(gsi_write)[0][1] == {"GlobalSecondaryIndexName": "GSI1",
                                           "TableName": "${aws_dynamodb_table.orders.name}"}
    table = config["resource"]["aws_dynamodb_table"]["orders"]
    assert table["on_demand_throughput"] == {"max_read_request_units": 1600, "max_write_request_units": 600}
    assert [g["on_demand_throughput"] for g in table["global_secondary_index"]] == [table["on_demand_throughput"]]


def test_max_throughput_suggested_numbers_and_unlimited(write_blueprint, tmp_path, run_cli):
    def synthesized(table_setting: str, index_setting: str = "") -> dict:
        text = BUNDLED[1].read_text().replace("max_throughput: {read: 1600, write: 600}", table_setting)
        if index_setting:
            text = text.replace("access_patterns:", f"indexes: {{GSI1: {{max_throughput: {index_setting}}}}}\n"
                                                    "access_patterns:")
        return synth_config(write_blueprint(text, "orders.yaml"), tmp_path / str(len(list(tmp_path.iterdir()))))

    suggested = synthesized("max_throughput: suggested")
    _, out, _ = run_cli("capacity", BUNDLED[1], "--env", "prod", "--format", "json")
    loads = {load["index"]: load for load in json.loads(out)[0]["loads"]}
    table = suggested["resource"]["aws_dynamodb_table"]["orders"]
    assert table["on_demand_throughput"] == {"max_read_request_units": loads["table"]["suggested_read"][1],
                                             "max_write_request_units": loads["table"]["suggested_write"][1]}
    [gsi] = table["global_secondary_index"]
    assert gsi["on_demand_throughput"]["max_read_request_units"] == loads["GSI1"]["suggested_read"][1]
    text = suggested["resource"]["aws_cloudwatch_metric_alarm"]["orders_gsi1_write_max_throughput_throttles"][
        "alarm_description"]
    assert f"on-demand maximum of {loads['GSI1']['suggested_write'][1]:,} write request units" in text
    assert "set `table.max_throughput` to numbers above it (it is `suggested`" in text
    # The GSI's own setting wins over the table's; `unlimited` writes -1, the provider's way to remove one.
    own = synthesized("max_throughput: {read: 5000, write: 2000}", "unlimited")
    table = own["resource"]["aws_dynamodb_table"]["orders"]
    assert table["on_demand_throughput"] == {"max_read_request_units": 5000, "max_write_request_units": 2000}
    assert table["global_secondary_index"][0]["on_demand_throughput"] == {"max_read_request_units": -1,
                                                                          "max_write_request_units": -1}
    alarms = own["resource"]["aws_cloudwatch_metric_alarm"]
    assert "orders_table_read_max_throughput_throttles" in alarms
    assert "orders_gsi1_read_max_throughput_throttles" not in alarms  # nothing to be throttled at
    # Without a setting: no block (a maximum set before stays: the README says to write `unlimited`).
    none = synthesized("")
    table = none["resource"]["aws_dynamodb_table"]["orders"]
    assert "on_demand_throughput" not in table and "on_demand_throughput" not in table["global_secondary_index"][0]
    assert not [n for n in none["resource"]["aws_cloudwatch_metric_alarm"] if "max_throughput" in n]


def test_max_throughput_suggested_has_a_floor_of_100_units(write_blueprint, tmp_path, run_cli):
    """A table read only through a GSI declares no table reads: its peak at the target is 1 unit, which as a
    maximum would throttle nearly any base-table read. `suggested` never goes below 100 per direction."""
    path = write_blueprint("""\
        blueprint: feed
        version: 1.0.0
        table: {name: feed_main, billing: on_demand, max_throughput: suggested}
        entities:
          Post:
            attributes: {postId: string, authorId: string, at: timestamp}
            key: {pk: "POST#{postId}", sk: POST}
            item_bytes: 500
            writes_per_second: 1
        access_patterns:
          by_author: {entity: Post, where: {authorId: "="}, order_by: at, items: 1, rps: 2000}
        """, "feed.yaml")
    config = synth_config(path, tmp_path, None)
    table = config["resource"]["aws_dynamodb_table"]["feed"]
    # Table: no reads (peak 0 -> 1 unit), 1 WCU/s x 3 / 0.7 = 5 write units: both raised to 100.
    assert table["on_demand_throughput"] == {"max_read_request_units": 100, "max_write_request_units": 100}
    # GSI1: 2,000 reads/s x 0.5 RCU = 1,000 RCU/s, x 3 / 0.7 = 4,286 (over the floor: kept); writes 5 -> 100.
    [gsi] = table["global_secondary_index"]
    assert gsi["on_demand_throughput"] == {"max_read_request_units": 4286, "max_write_request_units": 100}
    _, out, _ = run_cli("capacity", path)
    assert "table: max_throughput read 100, write 100; suggested read 100, write 100" in out
    [report] = json.loads(run_cli("capacity", path, "--format", "json")[1])
    assert report["loads"][0]["suggested_read"] == [1, 1]  # the autoscaling suggestion itself is unchanged


def test_system_errors_split_at_ten_metrics(monkeypatch):
    monkeypatch.setattr(alarm_module, "MAX_METRICS_PER_ALARM", 3)
    bundled = design(load_blueprint(BUNDLED[0], "prod").blueprint)
    specs = [s for s in alarm_module.alarm_specs(bundled, "t") if s.kind == "system_errors"]
    assert [s.name for s in specs] == ["prod-crm_main-system-errors-1", "prod-crm_main-system-errors-2"]
    assert [s.metric_count for s in specs] == [3, 1]
    assert [s.expression for s in specs] == ["FILL(m1, 0) + FILL(m2, 0) + FILL(m3, 0)", "FILL(m1, 0)"]


def test_alarm_settings_override_defaults_and_account_alarms_are_opt_in(write_blueprint, tmp_path):
    text = BUNDLED[0].read_text().replace("indexes:                          # planned", textwrap.dedent("""\
        alarms:
          account_level: true
          throttles: {threshold: 5, period: 120, evaluation_periods: 4, datapoints: 2}
          latency: {operations: {GetItem: 12}}
          conditional_checks: {enabled: false}
        indexes:                          # planned"""))
    alarms = synth_config(write_blueprint(text, "crm.yaml"), tmp_path)["resource"]["aws_cloudwatch_metric_alarm"]
    throttles = alarms["crm_table_read_throttles"]
    assert (throttles["threshold"], throttles["metric_query"][0]["metric"]["period"], throttles["evaluation_periods"],
            throttles["datapoints_to_alarm"]) == (5, 120, 4, 2)
    assert alarms["crm_getitem_latency"]["threshold"] == 12
    assert "crm_conditional_check_failed" not in alarms
    user_errors = alarms["crm_account_user_errors"]
    assert metrics_of(user_errors) == [("UserErrors", {}, "Sum")] and watched(user_errors) == "FILL(m1, 0)"
    assert metrics_of(alarms["crm_account_write_utilization"])[0][2] == "Maximum"
    assert {q["metric"]["period"] for q in alarms["crm_account_write_utilization"]["metric_query"]
            if "metric" in q} == {300}


@pytest.mark.parametrize("kind, period", [("online_index_throttles", 60), ("utilization", 120),
                                          ("account_utilization", 540)])
def test_five_minute_metrics_refuse_shorter_periods(kind, period, write_blueprint, run_cli, tmp_path):
    anchor = "indexes:                          # planned"
    text = BUNDLED[0].read_text().replace(anchor, f"alarms:\n  {kind}: {{period: {period}}}\n{anchor}")
    path = write_blueprint(text, "crm.yaml")
    code, _, stderr = run_cli("synth", path, "--out", tmp_path / "out")
    line = text.splitlines().index(f"  {kind}: {{period: {period}}}") + 1
    assert code == 2 and stderr.startswith(f"error: {path}:{line}:")
    assert "DynamoDB publishes" in stderr and "every 300 seconds" in stderr and "fix: use a multiple of 300" in stderr


def test_online_index_throttles_are_opt_in_at_five_minutes(write_blueprint, tmp_path):
    text = BUNDLED[0].read_text().replace("indexes:                          # planned",
                                          "alarms: {online_index_throttles: {enabled: true}}\n"
                                          "indexes:                          # planned")
    alarms = synth_config(write_blueprint(text, "crm.yaml"), tmp_path)["resource"]["aws_cloudwatch_metric_alarm"]
    build = alarms["crm_gsi1_online_index_throttles"]
    assert metrics_of(build)[0][0] == "OnlineIndexThrottleEvents"
    assert build["metric_query"][0]["metric"]["period"] == 300 and watched(build) == "FILL(m1, 0)"


def test_alarms_route_to_given_topics_without_creating_one(tmp_path):
    config = synth_config(BUNDLED[0], tmp_path, "dev")
    topic = "arn:aws:sns:us-east-1:210987654321:dev-dynamodb-alarms"
    assert config["provider"]["aws"] == [{"region": "us-east-1"}]  # the topic's region is the stack's
    assert "aws_sns_topic" not in config["resource"]
    assert all(alarm["alarm_actions"] == [topic]
               for alarm in config["resource"]["aws_cloudwatch_metric_alarm"].values())
    assert not [n for n in config["resource"]["aws_cloudwatch_metric_alarm"] if n.endswith("_latency")]
    [target] = config["resource"]["aws_cloudwatch_event_target"].values()
    assert target["arn"] == topic


@pytest.mark.parametrize("region, words, fix", [
    ("eu-west-1", "the topic arn:aws:sns:us-east-1:210987654321:dev-dynamodb-alarms is in us-east-1, the stack in "
                  "eu-west-1", "fix: use a topic in eu-west-1"),
    (None, "alarms.notify names a topic in us-east-1, but the blueprint sets no `region`",
     "fix: set `region: us-east-1`"),
])
def test_a_notify_topic_in_another_region_is_refused(region, words, fix, write_blueprint, run_cli, tmp_path):
    base = (write_blueprint("", "unused.yaml").parent / "shared" / "platform-base.yaml")
    text = base.read_text().replace("region: us-east-1\n", f"region: {region}\n" if region else "")
    base.write_text(text)
    path = write_blueprint(BUNDLED[0].read_text(), "crm.yaml")
    code, _, stderr = run_cli("synth", path, "--out", tmp_path / "out")
    line = text.splitlines().index('      notify: ["arn:aws:sns:us-east-1:210987654321:dev-dynamodb-alarms"]') + 1
    assert code == 2 and stderr.startswith(f"error: {base}:{line}:"), stderr  # where the topic is named
    assert "alarms.notify[0]" in stderr and words in stderr and fix in stderr and "[E204]" in stderr


def test_the_created_topic_is_encrypted_and_only_cloudwatch_and_eventbridge_publish(crm_prod):
    topic = crm_prod["resource"]["aws_sns_topic"]["crm_alarms"]
    assert topic["kms_master_key_id"] == "${aws_kms_key.crm_alarms_key.arn}"
    key = crm_prod["resource"]["aws_kms_key"]["crm_alarms_key"]
    assert key["enable_key_rotation"] is True
    documents = crm_prod["data"]["aws_iam_policy_document"]
    publishers = [s for s in documents["crm_alarms_topic_policy"]["statement"]]
    assert [s["principals"][0]["identifiers"] for s in publishers] == [["cloudwatch.amazonaws.com"],
                                                                       ["events.amazonaws.com"]]
    assert all(s["actions"] == ["sns:Publish"] and s["resources"] == ["${aws_sns_topic.crm_alarms.arn}"]
               for s in publishers)
    assert publishers[1]["condition"][0]["values"] == ["${aws_cloudwatch_event_rule.crm_changes.arn}"]
    key_statements = documents["crm_alarms_key_policy"]["statement"]
    assert key_statements[1]["principals"][0]["identifiers"] == ["cloudwatch.amazonaws.com", "events.amazonaws.com"]
    policy = crm_prod["resource"]["aws_sns_topic_policy"]["crm_alarms_policy"]
    assert policy["policy"] == "${data.aws_iam_policy_document.crm_alarms_topic_policy.json}"


# --- Contributor Insights modes ----------------------------------------------------------------------


def test_insights_mode_is_emitted_only_when_the_provider_guarantees_it(write_blueprint, tmp_path):
    config = synth_config(BUNDLED[0], tmp_path / "a")
    assert all("mode" not in r for r in config["resource"]["aws_dynamodb_contributor_insights"].values())
    text = BUNDLED[0].read_text().replace("maintenance_window:", 'terraform: {aws_provider: ">= 6.11, < 7.0"}\n'
                                                                 "maintenance_window:")
    newer = synth_config(write_blueprint(text, "crm.yaml"), tmp_path / "b")
    insights = newer["resource"]["aws_dynamodb_contributor_insights"]
    assert {r["mode"] for r in insights.values()} == {"THROTTLED_KEYS"}  # the production default
    assert newer["terraform"]["required_providers"]["aws"]["version"] == ">= 6.11, < 7.0"
    dev = synth_config(write_blueprint(text, "crm.yaml"), tmp_path / "c", "dev")
    assert "aws_dynamodb_contributor_insights" not in dev["resource"]  # the platform base turns it off in dev


def test_an_unsupported_mode_is_refused_with_the_fix(write_blueprint, run_cli, tmp_path):
    text = BUNDLED[0].read_text().replace("maintenance_window:", "contributor_insights: throttled_keys\n"
                                                                 "maintenance_window:")
    path = write_blueprint(text, "crm.yaml")
    code, _, stderr = run_cli("synth", path, "--out", tmp_path / "out")
    assert code == 2
    assert f"{path}:" in stderr and "contributor_insights: throttled_keys needs hashicorp/aws >= 6.11" in stderr
    assert 'fix: set `terraform: {aws_provider: ">= 6.11"}`' in stderr


# --- maintenance window ------------------------------------------------------------------------------


def occurrences(text: str, start: datetime, end: datetime) -> list[tuple[datetime, datetime]]:
    """Open intervals of a calendar, expanded with dateutil from what a real parser read back."""
    calendar = Calendar.from_ical(text)
    assert calendar["X-CALENDAR-TYPE"] == "DEFAULT_CLOSED"
    [event] = calendar.walk("VEVENT")
    first = event.decoded("dtstart")
    duration = event.decoded("duration")
    rule = rrulestr(event["rrule"].to_ical().decode(), dtstart=first)
    return [(o.astimezone(UTC), o.astimezone(UTC) + duration) for o in rule.between(start, end, inc=True)]


def test_calendar_opens_exactly_the_window_across_daylight_saving(tmp_path):
    window = MaintenanceWindow(days=["SA", "SU"], start="22:00", duration="3h", timezone="Europe/Berlin")
    text = calendar_text(window, "prod-crm_main")
    utc = UTC
    opened = occurrences(text, datetime(2025, 3, 20, tzinfo=utc), datetime(2025, 11, 10, tzinfo=utc))
    berlin = ZoneInfo("Europe/Berlin")
    for start, end in opened:
        local = start.astimezone(berlin)
        assert (local.hour, local.minute, local.strftime("%a")) in {(22, 0, "Sat"), (22, 0, "Sun")}
        assert end - start == timedelta(hours=3)
    # Winter (CET, +1): 21:00 UTC; summer (CEST, +2): 20:00 UTC. The switch is on 2025-03-30 and 2025-10-26.
    starts = {s.date().isoformat(): s.strftime("%H:%M") for s, _ in opened}
    assert starts["2025-03-22"] == "21:00" and starts["2025-03-29"] == "21:00"
    assert starts["2025-03-30"] == "20:00" and starts["2025-10-25"] == "20:00"
    assert starts["2025-10-26"] == "21:00"
    # The gate's own check agrees with the calendar every 15 minutes around both switches.
    for week in (datetime(2025, 3, 27, tzinfo=utc), datetime(2025, 10, 23, tzinfo=utc)):
        for step in range(0, 7 * 96):
            at = week + timedelta(minutes=15 * step)
            assert is_open(window, at) == any(s <= at < e for s, e in opened), at


def test_calendar_of_the_bundled_blueprint(crm_prod):
    document = crm_prod["resource"]["aws_ssm_document"]["crm_window"]
    assert (document["document_type"], document["document_format"]) == ("ChangeCalendar", "TEXT")
    assert document["name"] == "prod-crm_main-maintenance-window"
    opened = occurrences(document["content"], datetime(2026, 1, 1, tzinfo=UTC),
                         datetime(2026, 1, 4, tzinfo=UTC))
    # Daily 02:00-04:00 in Asia/Shanghai (UTC+8, no daylight saving): 18:00-20:00 UTC the day before.
    assert [(s.isoformat(), e.isoformat()) for s, e in opened[:2]] == [
        ("2026-01-01T18:00:00+00:00", "2026-01-01T20:00:00+00:00"),
        ("2026-01-02T18:00:00+00:00", "2026-01-02T20:00:00+00:00")]
    assert crm_prod["output"]["change_calendar"]["value"] == "${aws_ssm_document.crm_window.name}"


def test_next_opening_and_a_start_in_a_daylight_saving_gap():
    window = MaintenanceWindow(days="daily", start="02:30", duration="1h", timezone="Europe/Berlin")
    # 2025-03-30 02:30 does not exist in Berlin; like RFC 5545, read it with the offset before the gap.
    gap = next_opening(window, datetime(2025, 3, 29, 12, tzinfo=UTC))
    assert gap.astimezone(UTC) == datetime(2025, 3, 30, 1, 30, tzinfo=UTC)
    assert is_open(window, datetime(2025, 3, 30, 1, 45, tzinfo=UTC))


@pytest.mark.parametrize("field, value, words", [
    ("start", "25:00", "is not a time of day"),
    ("duration", "25h", "is not between 1m and 24h"),
    ("timezone", "Mars/Olympus", "unknown time zone"),
])
def test_bad_windows_are_refused(field, value, words):
    from pydantic import ValidationError

    fields = {"days": "daily", "start": "02:00", "duration": "2h", "timezone": "UTC", field: value}
    with pytest.raises(ValidationError, match=words):
        MaintenanceWindow(**fields)


# --- warm throughput ---------------------------------------------------------------------------------


def test_warm_throughput_needs_provider_6_13(write_blueprint, run_cli, tmp_path):
    text = BUNDLED[1].read_text().replace("  stream: new_and_old_images",
                                          "  stream: new_and_old_images\n  warm_throughput: {read: 15000, write: 5000}")
    path = write_blueprint(text, "orders.yaml")
    code, _, stderr = run_cli("synth", path, "--out", tmp_path / "out")
    line = text.splitlines().index("  warm_throughput: {read: 15000, write: 5000}") + 1
    assert code == 2 and stderr.startswith(f"error: {path}:{line}:")
    assert "table.warm_throughput: warm_throughput needs hashicorp/aws >= 6.13" in stderr and "'~> 5.100'" in stderr
    assert 'fix: set `terraform: {aws_provider: ">= 6.13"}`' in stderr and "[E204]" in stderr
    newer = write_blueprint(text.replace("access_patterns:", 'terraform: {aws_provider: ">= 6.13, < 7.0"}\n'
                                         "indexes: {GSI1: {warm_throughput: {read: 12000, write: 4000}}}\n"
                                         "access_patterns:"), "orders.yaml")
    table = synth_config(newer, tmp_path / "b")["resource"]["aws_dynamodb_table"]["orders"]
    assert table["warm_throughput"] == {"read_units_per_second": 15000, "write_units_per_second": 5000}
    assert table["global_secondary_index"][0]["warm_throughput"] == {"read_units_per_second": 12000,
                                                                     "write_units_per_second": 4000}


def test_warm_throughput_below_the_on_demand_default_is_refused(write_blueprint, run_cli, tmp_path):
    text = BUNDLED[1].read_text().replace("  stream: new_and_old_images",
                                          "  stream: new_and_old_images\n  warm_throughput: {read: 500, write: 5000}")
    code, _, stderr = run_cli("lint", write_blueprint(text, "orders.yaml"))
    assert code == 2 and "table.warm_throughput.read: `read` must be at least 12000, not 500" in stderr


def test_production_tables_are_protected_from_destroy(crm_prod, tmp_path):
    assert crm_prod["resource"]["aws_dynamodb_table"]["crm"]["lifecycle"]["prevent_destroy"] is True
    dev = synth_config(BUNDLED[0], tmp_path, "dev")
    assert "prevent_destroy" not in dev["resource"]["aws_dynamodb_table"]["crm"].get("lifecycle", {})


def test_an_on_demand_maximum_names_at_least_one_direction(tmp_path, run_cli):
    text = ((ROOT / "blueprints") / "orders.yaml").read_text().replace("  max_throughput: {read: 1600, write: 600}",
                                                            "  max_throughput: {}")
    shutil.copytree((ROOT / "blueprints") / "shared", tmp_path / "shared")
    (tmp_path / "orders.yaml").write_text(text)
    code, _, stderr = run_cli("lint", tmp_path / "orders.yaml")
    assert code == 2 and "table.max_throughput: a maximum names `read`, `write` or both [E201]" in stderr, stderr
