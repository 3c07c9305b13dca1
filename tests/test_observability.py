"""Alarms, Contributor Insights modes, the alarm topic, the change rule and the change calendar."""

from __future__ import annotations

import copy
import json
import textwrap
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from dateutil.rrule import rrulestr
from icalendar import Calendar

from modules.blueprint.load import load_blueprint
from modules.blueprint.model import MaintenanceWindow
from modules.constructs import alarms as alarm_module
from modules.design.plan import design
from modules.stack import build_stacks
from modules.synth import synthesize
from modules.window import calendar_text, is_open, next_opening
from tests.conftest import BUNDLED

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


def synth_config(path: Path, tmp_path: Path, environment: str | None = "prod") -> dict:
    [written] = synthesize(build_stacks([load_blueprint(path, environment)]), tmp_path / "out")
    return json.loads(written.read_text())


def metrics_of(alarm: dict) -> list[tuple[str, dict, str]]:
    """(metric name, dimensions, statistic) of every metric an alarm reads."""
    if "metric_name" in alarm:
        return [(alarm["metric_name"], alarm.get("dimensions", {}),
                 alarm.get("statistic") or alarm.get("extended_statistic"))]
    return [(q["metric"]["metric_name"], q["metric"].get("dimensions", {}), q["metric"]["stat"])
            for q in alarm["metric_query"] if "metric" in q]


@pytest.fixture(scope="module")
def crm_prod(tmp_path_factory) -> dict:
    return synth_config(BUNDLED[0], tmp_path_factory.mktemp("crm"))


def test_every_alarm_uses_documented_metrics_dimensions_and_statistics(crm_prod):
    alarms = crm_prod["resource"]["aws_cloudwatch_metric_alarm"]
    for name, alarm in alarms.items():
        assert alarm["treat_missing_data"] in ("notBreaching", "ignore"), name
        assert "First" in alarm["alarm_description"], name
        assert alarm["alarm_actions"] == ["${aws_sns_topic.crm_alarms.arn}"] == alarm["ok_actions"]
        metrics = metrics_of(alarm)
        assert 1 <= len(metrics) <= 10, name
        for metric, dimensions, stat in metrics:
            assert set(dimensions) <= DIMENSIONS[metric], (name, metric)
            if "TableName" in DIMENSIONS[metric]:
                assert dimensions["TableName"] == "${aws_dynamodb_table.crm.name}", name
            assert stat in STATISTICS.get(metric, {"Sum"}), (name, metric, stat)
        if "metric_query" in alarm:
            assert all(q.get("metric", {}).get("namespace", "AWS/DynamoDB") == "AWS/DynamoDB"
                       for q in alarm["metric_query"])
            assert sum(1 for q in alarm["metric_query"] if q.get("return_data")) == 1
        else:
            assert alarm["namespace"] == "AWS/DynamoDB"


def test_the_alarm_set_of_the_crm_production_stack(crm_prod):
    alarms = crm_prod["resource"]["aws_cloudwatch_metric_alarm"]
    targets = ["table", "gsi1", "gsi2"]
    expected = {f"crm_{t}_{d}_{kind}" for t in targets for d in ("read", "write")
                for kind in ("throttles", "key_range_throttles", "utilization")}
    expected |= {"crm_gsi1_online_index_throttles", "crm_gsi2_online_index_throttles"}
    expected |= {f"crm_{op}_latency" for op in ("getitem", "query", "putitem", "updateitem")}
    expected |= {"crm_system_errors", "crm_conditional_check_failed"}
    assert set(alarms) == expected
    hot = alarms["crm_gsi1_write_key_range_throttles"]
    assert (hot["metric_name"], hot["dimensions"]["GlobalSecondaryIndexName"]) == (
        "WriteKeyRangeThroughputThrottleEvents", "GSI1")
    assert "Contributor Insights" in hot["alarm_description"] and "hot key" in hot["alarm_description"]
    latency = alarms["crm_query_latency"]
    assert (latency["extended_statistic"], latency["dimensions"]["Operation"], latency["threshold"]) == (
        "p99", "Query", 50)
    errors = alarms["crm_system_errors"]
    operations = sorted(q["metric"]["dimensions"]["Operation"] for q in errors["metric_query"] if "metric" in q)
    assert operations == ["GetItem", "PutItem", "Query", "UpdateItem"]
    expression = next(q for q in errors["metric_query"] if "expression" in q)
    assert expression["expression"] == "m1 + m2 + m3 + m4"
    utilization = next(q for q in alarms["crm_table_read_utilization"]["metric_query"] if "expression" in q)
    assert utilization["expression"] == "100 * (consumed / PERIOD(consumed)) / provisioned"


def test_on_demand_tables_have_no_utilization_alarms(tmp_path):
    alarms = synth_config(BUNDLED[1], tmp_path)["resource"]["aws_cloudwatch_metric_alarm"]
    assert not [name for name in alarms if "utilization" in name]
    assert "orders_batchgetitem_latency" not in alarms  # no follow-up reads in this design


def test_system_errors_split_at_ten_metrics(monkeypatch):
    monkeypatch.setattr(alarm_module, "MAX_METRICS_PER_ALARM", 3)
    bundled = design(load_blueprint(BUNDLED[0], "prod").model)
    specs = [s for s in alarm_module.alarm_specs(bundled, "t") if s.kind == "system_errors"]
    assert [s.name for s in specs] == ["prod-crm_main-system-errors-1", "prod-crm_main-system-errors-2"]
    assert [s.metric_count for s in specs] == [3, 1]


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
    assert (throttles["threshold"], throttles["period"], throttles["evaluation_periods"],
            throttles["datapoints_to_alarm"]) == (5, 120, 4, 2)
    assert alarms["crm_getitem_latency"]["threshold"] == 12
    assert "crm_conditional_check_failed" not in alarms
    user_errors = alarms["crm_account_user_errors"]
    assert (user_errors["metric_name"], "dimensions" in user_errors) == ("UserErrors", False)
    assert alarms["crm_account_write_utilization"]["statistic"] == "Maximum"


def test_alarms_route_to_given_topics_without_creating_one(tmp_path):
    config = synth_config(BUNDLED[0], tmp_path, "dev")
    topic = "arn:aws:sns:us-east-1:111122223333:dev-dynamodb-alarms"
    assert "aws_sns_topic" not in config["resource"]
    assert all(alarm["alarm_actions"] == [topic]
               for alarm in config["resource"]["aws_cloudwatch_metric_alarm"].values())
    assert not [n for n in config["resource"]["aws_cloudwatch_metric_alarm"] if n.endswith("_latency")]
    [target] = config["resource"]["aws_cloudwatch_event_target"].values()
    assert target["arn"] == topic


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


# --- change detection --------------------------------------------------------------------------------


def test_change_rule_matches_cloudtrail_updates_of_this_table_only(crm_prod):
    from moto.events.models import EventPattern

    rule = crm_prod["resource"]["aws_cloudwatch_event_rule"]["crm_changes"]
    pattern = EventPattern.load(rule["event_pattern"])
    event = json.loads((Path(__file__).parent / "data" / "cloudtrail-updatetable.json").read_text())
    assert pattern.matches_event(event)
    other_table = copy.deepcopy(event)
    other_table["detail"]["requestParameters"]["tableName"] = "prod-orders_main"
    assert not pattern.matches_event(other_table)
    read = copy.deepcopy(event)
    read["detail"]["eventName"] = "DescribeTable"
    assert not pattern.matches_event(read)
    [target] = crm_prod["resource"]["aws_cloudwatch_event_target"].values()
    assert (target["rule"], target["arn"]) == ("${aws_cloudwatch_event_rule.crm_changes.name}",
                                               "${aws_sns_topic.crm_alarms.arn}")


def test_production_tables_are_protected_from_destroy(crm_prod, tmp_path):
    assert crm_prod["resource"]["aws_dynamodb_table"]["crm"]["lifecycle"]["prevent_destroy"] is True
    dev = synth_config(BUNDLED[0], tmp_path, "dev")
    assert "prevent_destroy" not in dev["resource"]["aws_dynamodb_table"]["crm"].get("lifecycle", {})
