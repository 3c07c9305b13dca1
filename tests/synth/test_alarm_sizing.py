"""The conditional-check alarm sized from the declared failures (modules/tablewright/monitoring/sizing.py), against
figures computed by hand from the rule in docs/guides/observability.md:

    threshold = max(100, ceil(2 x failures per second at the declared peak x period))

where an entity's failures per second at its peak are (sum of rate x failing share over its kinds) / its writes
per second x its peak write rate (daily curve or peak factor, events included), added over the entities.
"""

from __future__ import annotations

import json

import pytest

from tablewright.blueprint.load import load_blueprint
from tablewright.monitoring.alarms import AlarmSpec, alarm_specs
from tablewright.monitoring.sizing import conditional_checks
from tablewright.stacks.stack import build_stacks
from tablewright.synth.synth import synthesize
from tests.support.design_helpers import blueprint, designed
from tests.support.terraform_support import terraform_environment, validate

ATTRIBUTES = {"playerId": "string", "score": "number"}
KEY = {"pk": "PLAYER#{playerId}", "sk": "SCORE"}
DEFAULT_TEXT_END = "First look for a retry storm or a change in how the application writes."


def score(writes: dict, **extra) -> dict:
    return {"attributes": ATTRIBUTES, "key": KEY, "writes": writes, **extra}


def checks_alarm(entities: dict, **extra) -> AlarmSpec:
    [spec] = [s for s in alarm_specs(designed(entities, {}, **extra), "t") if s.kind == "conditional_checks"]
    return spec


# The design: a leaderboard's "only if higher" updates, 200 a second on average, 55% failing, under a
# peak factor of 4. At the peak: 200 x 0.55 x 4 = 440 failures a second, x 300 s = 132,000 in one five-minute
# period, while the alarm fired above 100: in ALARM all day.
LEADERBOARD = {"Score": score({"updates": 200, "failing": {"updates": 0.55}})}


def test_the_threshold_is_twice_the_declared_failures_at_the_peak():
    spec = checks_alarm(LEADERBOARD, traffic={"peak_factor": 4})
    # 2 x 200 x 0.55 x 4 x 300 = 2 x 132,000 = 264,000 (was 100).
    assert spec.settings.threshold == 264_000
    assert (spec.settings.period, spec.settings.evaluation_periods, spec.settings.datapoints) == (300, 3, 3)
    assert spec.description.endswith("up to 132,000 fail per 300 seconds; threshold 264,000.")


def test_a_shorter_period_scales_the_threshold():
    spec = checks_alarm(LEADERBOARD, traffic={"peak_factor": 4}, alarms={"conditional_checks": {"period": 60}})
    # 2 x 440 failures/s x 60 s = 52,800 (was 100).
    assert (spec.settings.period, spec.settings.threshold) == (60, 52_800)


def test_the_daily_curve_and_events_set_the_peak_and_entities_add_up():
    # Entry: 50 inserts + 150 updates a second, 40% of the updates failing: 60 of its 200 writes a second fail,
    # a share of 0.3. Its own daily curve 1 at 00:00 rising to 3 at 12:00 (and back) averages 2, so it is scaled
    # by 1/2: at most 1.5 x 200 = 300 writes a second; its `sale` event writes 1,000 a second, the higher peak:
    # 0.3 x 1,000 = 300 failures a second.
    entry = score({"inserts": 50, "updates": 150, "failing": {"updates": 0.4}}, traffic={
        "daily": {"00:00": 1, "12:00": 3},
        "events": [{"name": "sale", "start": "20:00", "duration": "10m", "rate": 1000}]})
    # Seat: 10 inserts a second, 90% failing; the blueprint's peak factor 3 from 18:00 to 19:00, and its own
    # `rush` doubling the rate from 18:00: 10 x 3 x 2 = 60 writes, 0.9 x 60 = 54 failures a second.
    seat = {"attributes": {"seatId": "string"}, "key": {"pk": "SEAT#{seatId}", "sk": "SEAT"},
            "writes": {"inserts": 10, "failing": {"inserts": 0.9}},
            "traffic": {"events": [{"name": "rush", "start": "18:00", "duration": "30m", "factor": 2}]}}
    spec = checks_alarm({"Entry": entry, "Seat": seat})
    # (300 + 54) x 300 s = 106,200 expected (peaks added as if they coincided); x 2 = 212,400.
    assert spec.settings.threshold == 212_400
    assert "up to 106,200 fail per 300 seconds" in spec.description


def test_an_events_rate_is_spread_over_inserts_updates_and_deletes_not_expiries():
    # 10 inserts a second, half failing, and 10 free TTL expiries; `launch` writes 1,000 a second: all inserts
    # (expiries are not the application's writes), 500 failing. 500 x 300 s = 150,000; x 2 = 300,000
    # (counting the expiries in the mix would halve it: 150,000).
    entity = score({"inserts": 10, "expiries": 10, "failing": {"inserts": 0.5}},
                   traffic={"events": [{"name": "launch", "start": "09:00", "duration": "1h", "rate": 1000}]})
    assert checks_alarm({"Score": entity}).settings.threshold == 300_000


def test_a_design_without_declared_failures_keeps_the_default():
    spec = checks_alarm({"Score": score({"updates": 200})}, traffic={"peak_factor": 4})
    assert spec.settings.threshold == 100
    assert spec.description.endswith(DEFAULT_TEXT_END)  # and its text as before


def test_few_declared_failures_keep_the_default_floor():
    # 0.5 updates a second, 20% failing, peak factor 3: 0.5 x 0.2 x 3 x 300 = 90 a period; 2 x 90 = 180 > 100.
    # 0.2 updates a second instead: 0.2 x 0.2 x 3 x 300 = 36; 2 x 36 = 72 < 100: the floor.
    assert checks_alarm({"Score": score({"updates": 0.5, "failing": {"updates": 0.2}})}).settings.threshold == 180
    spec = checks_alarm({"Score": score({"updates": 0.2, "failing": {"updates": 0.2}})})
    assert spec.settings.threshold == 100
    assert spec.description.endswith("up to 36 fail per 300 seconds; threshold 100.")


def test_the_blueprints_threshold_wins():
    spec = checks_alarm(LEADERBOARD, traffic={"peak_factor": 4}, alarms={"conditional_checks": {"threshold": 500}})
    assert spec.settings.threshold == 500
    sizing = conditional_checks(blueprint(LEADERBOARD, {}, traffic={"peak_factor": 4}), 300, 100)
    assert (sizing.expected, sizing.threshold, sizing.derived) == (pytest.approx(132_000), 264_000, True)


LEADERBOARD_YAML = """\
blueprint: leaderboard
version: 1.0.0
table: {name: leaderboard_main}
traffic: {peak_factor: 4}
entities:
  Score:
    attributes: {playerId: string, score: number}
    key: {pk: "PLAYER#{playerId}", sk: SCORE}
    writes: {updates: 200, failing: {updates: 0.55}}
"""


def synthesized(write_blueprint, tmp_path):
    [written] = synthesize(build_stacks([load_blueprint(write_blueprint(LEADERBOARD_YAML, "leaderboard.yaml"))]),
                           tmp_path / "out")
    return written


def test_the_synthesized_alarm_carries_the_sized_threshold(write_blueprint, tmp_path):
    alarms = json.loads(synthesized(write_blueprint, tmp_path).read_text())["resource"]["aws_cloudwatch_metric_alarm"]
    [alarm] = [a for name, a in alarms.items() if name.endswith("conditional_check_failed")]
    assert alarm["threshold"] == 264_000 and alarm["comparison_operator"] == "GreaterThanThreshold"
    assert [q["metric"]["metric_name"] for q in alarm["metric_query"] if "metric" in q] == [
        "ConditionalCheckFailedRequests"]


@pytest.mark.terraform
def test_the_sized_alarm_is_valid_terraform(write_blueprint, tmp_path):
    written = synthesized(write_blueprint, tmp_path)
    validate(written.parent, terraform_environment(tmp_path))
