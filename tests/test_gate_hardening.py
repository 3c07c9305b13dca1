"""The gate and the review against the attacks of the security review (issue 11): a pull request that
opens its own maintenance window, moves its stack to another region or state, points TTL at a creation
time, or hides a change behind another. Plans here are hand-made (tests/gate_support.py); the same
attacks through real Terraform plans are in tests/test_review.py."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from modules.blueprint.load import load_blueprints
from modules.errors import PlanError
from modules.review.gate import gate
from tests.gate_support import NOW, TABLE, entry, plan, record, shop

SATURDAYS = {"days": ["SA"], "start": "02:00", "duration": "2h", "timezone": "UTC"}
ALL_DAY = {"days": "daily", "start": "00:00", "duration": "24h", "timezone": "UTC"}
WEDNESDAY_NOON = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)
SATURDAY_0230 = datetime(2026, 12, 5, 2, 30, tzinfo=UTC)
STREAM_ON = entry("aws_dynamodb_table.shop", ["update"], {"name": "shop_main", "stream_enabled": False},
                  {"name": "shop_main", "stream_enabled": True, "stream_view_type": "NEW_AND_OLD_IMAGES"})
CALENDAR_UPDATE = entry("aws_ssm_document.shop_window", ["update"], {"name": "w", "content": "old"},
                        {"name": "w", "content": "new"})


def _gate(tmp_path, the_plan, now, **overlay):
    [loaded] = load_blueprints(shop(tmp_path, **overlay))
    return gate(the_plan, loaded, now)


# --- the maintenance window in force --------------------------------------------------------------


def test_a_pull_request_that_opens_its_window_all_day_is_judged_by_the_recorded_window(tmp_path):
    the_plan = plan(STREAM_ON, CALENDAR_UPDATE, outputs=record(production=True, maintenance_window=SATURDAYS))
    stack, decision = _gate(tmp_path, the_plan, WEDNESDAY_NOON, production=True, maintenance_window=ALL_DAY)
    assert not decision.passed
    assert "outside the maintenance window (SA from 02:00 for 2h (UTC))" in decision.reason
    assert "next opens 2026-12-05T02:00:00+00:00" in decision.reason
    assert stack.window is not None and stack.window.days == ["SA"]
    _, decision = _gate(tmp_path, the_plan, SATURDAY_0230, production=True, maintenance_window=ALL_DAY)
    assert decision.passed


def test_the_calendar_change_itself_waits_for_the_window(tmp_path):
    stack, decision = _gate(tmp_path, plan(TABLE, CALENDAR_UPDATE, outputs=record(maintenance_window=SATURDAYS)),
                            WEDNESDAY_NOON, maintenance_window=ALL_DAY)
    [change] = stack.changes
    assert (change.cls, change.category) == ("window", "change window") and not decision.passed


def test_a_recorded_absence_of_a_window_holds_window_changes(tmp_path):
    _, decision = _gate(tmp_path, plan(STREAM_ON, outputs=record(maintenance_window=False)), NOW)
    assert not decision.passed and "no maintenance window is in force" in decision.reason


def test_without_a_recorded_window_the_blueprints_counts_only_when_the_calendar_stays(tmp_path):
    # A state recorded by an earlier version (no `maintenance_window` in the record).
    _, decision = _gate(tmp_path, plan(STREAM_ON, outputs=record(production=False)), NOW)
    assert decision.passed
    _, decision = _gate(tmp_path, plan(STREAM_ON, CALENDAR_UPDATE, outputs=record(production=False)), NOW)
    assert not decision.passed and "changes the change calendar" in decision.reason


def test_a_recorded_window_that_is_not_a_window_is_refused(tmp_path):
    with pytest.raises(PlanError, match="maintenance window is not valid"):
        _gate(tmp_path, plan(STREAM_ON, outputs=record(maintenance_window={"days": "daily"})), NOW)


def test_the_review_shows_the_window_in_force_and_warns_of_the_new_one(tmp_path, run_cli):
    base = shop(tmp_path, "base.yaml", maintenance_window=SATURDAYS)
    head = shop(tmp_path, "head.yaml", maintenance_window=ALL_DAY)
    code, out, _ = run_cli("review", "--base", base, "--head", head, "--format", "json")
    [stack] = json.loads(out)["stacks"]
    assert code == 0 and json.loads(out)["verdict"] == "window"
    assert stack["maintenance_window"] == "SA from 02:00 for 2h (UTC)"
    assert any("changes to daily from 00:00 for 24h (UTC)" in warning for warning in stack["warnings"])
