"""The gate and the review against the attacks of the security review (issue 11): a pull request that
opens its own maintenance window, moves its stack to another region or state, points TTL at a creation
time, or hides a change behind another. Plans here are hand-made (tests/support/gate_support.py); the same
attacks through real Terraform plans are in tests/review/test_review.py."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from tablewright.blueprint.load import load_blueprints
from tablewright.errors import PlanError
from tablewright.review.gate import gate
from tests.support.gate_support import NOW, OUTSIDE, TABLE, entry, plan, record, shop

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


# --- region, backend and provider: invisible in the resources -------------------------------------


def _review(run_cli, tmp_path, base: dict, head: dict, *flags: str) -> dict:
    code, out, err = run_cli("review", "--base", shop(tmp_path, "base.yaml", **base),
                             "--head", shop(tmp_path, "head.yaml", **head), "--format", "json", *flags)
    assert code == 0, err
    return json.loads(out)


def _attention(review: dict) -> list[tuple[str, str]]:
    return sorted((c["cls"], c["subject"]) for c in review["stacks"][0]["changes"] if c["cls"] != "safe")


@pytest.mark.parametrize("base_region, head_region, subject", [
    ("eu-west-1", "us-east-1", "region eu-west-1 -> us-east-1"),
    (None, "us-east-1", "region AWS_REGION -> us-east-1"),  # the pipeline's region may be another one
])
def test_moving_a_production_stack_to_another_region_is_blocked(tmp_path, run_cli, base_region, head_region,
                                                                  subject):
    own_topic = {"alarms": {"notify": "create"}}  # a topic in the stack's own region (alarms notify no other)
    base = {"production": True, **own_topic, "region": base_region}  # None: no region (the pipeline's)
    head = {"production": True, **own_topic, "region": head_region}
    review = _review(run_cli, tmp_path, base, head)
    assert review["verdict"] == "blocked" and _attention(review) == [("blocked", subject)]
    acknowledged = _review(run_cli, tmp_path, base, head, "--allow-destroy")
    assert acknowledged["verdict"] == "window"


def test_a_new_state_backend_is_blocked_and_a_provider_upgrade_waits_for_the_window(tmp_path, run_cli):
    s3 = {"backend": {"type": "s3", "bucket": "acme-state", "region": "eu-west-1",
                      "key": "tablewright/{blueprint}/terraform.tfstate"}}
    review = _review(run_cli, tmp_path, {}, {"terraform": s3})
    assert _attention(review) == [("blocked", "state backend")]
    review = _review(run_cli, tmp_path, {}, {"terraform": {"aws_provider": ">= 6.11"}})
    assert review["verdict"] == "window" and _attention(review) == [("window", "AWS provider ~> 5.100 -> >= 6.11")]


def test_an_unchanged_stack_has_no_setting_changes(tmp_path, run_cli):
    in_ireland = {"region": "eu-west-1", "alarms": {"notify": "create"}}
    review = _review(run_cli, tmp_path, in_ireland, in_ireland)
    assert review["verdict"] == "safe" and review["counts"] == {"blocked": 0, "safe": 0, "window": 0}


SHOP_TABLE = {"name": "shop_main", "hash_key": "PK", "range_key": "SK", "deletion_protection_enabled": True,
              "point_in_time_recovery": [{"enabled": True}]}
CREATE_TABLE = entry("aws_dynamodb_table.shop", ["create"], None, SHOP_TABLE)
TABLE_GONE = {"resource_drift": [entry("aws_dynamodb_table.shop", ["delete"], SHOP_TABLE, None)]}


def test_a_table_that_drifted_away_and_is_created_again_is_blocked(tmp_path):
    """A changed region: the refresh finds nothing, the drift deletes the table, the plan creates an empty one."""
    stack, decision = _gate(tmp_path, plan(CREATE_TABLE, outputs=record(production=True), **TABLE_GONE), NOW,
                            production=True)
    blocked = sorted((c.action, c.subject) for c in stack.changes if c.cls == "blocked")
    assert blocked == [("create", "table shop_main"), ("delete", "table shop_main")]
    assert not decision.passed and "--allow-destroy" in decision.reason


def test_a_table_created_in_a_stack_that_exists_is_blocked_and_in_a_new_one_safe(tmp_path):
    stack, decision = _gate(tmp_path, plan(CREATE_TABLE, outputs=record(production=False)), NOW)
    assert [c.cls for c in stack.changes] == ["blocked"] and not decision.passed
    stack, decision = _gate(tmp_path, plan(CREATE_TABLE), NOW)  # no state yet: nothing recorded
    assert [c.cls for c in stack.changes] == ["safe"] and decision.passed


def test_a_table_that_leaves_the_state_is_blocked(tmp_path):
    forget = entry("aws_dynamodb_table.shop", ["forget"], SHOP_TABLE, None)
    stack, decision = _gate(tmp_path, plan(forget), NOW)
    [change] = stack.changes
    assert (change.cls, change.unblocked_by) == ("blocked", "destroy") and not decision.passed


@pytest.mark.parametrize("address, mode", [
    ("aws_dynamodb_table.shop", "data"),  # a deletion relabelled as a data source
    ("data.aws_dynamodb_table.shop", "managed"),
    ("aws_dynamodb_table.shop", "imported"),
])
def test_a_mode_that_does_not_match_the_address_is_refused(tmp_path, run_cli, address, mode):
    deletion = entry(address, ["delete"], SHOP_TABLE, None, mode=mode)
    (tmp_path / "plan.json").write_text(json.dumps(plan(TABLE, deletion)))
    code, out, err = run_cli("gate", "--plan", tmp_path / "plan.json", "--blueprint", shop(tmp_path),
                             "--now", NOW.isoformat())
    assert code == 2 and out == "" and "[E700]" in err and "mode" in err and "Traceback" not in err


# --- TTL pointed at another attribute -------------------------------------------------------------

CREATED_AT = {"entities": {"Order": {"attributes": {"createdAt": {"type": "timestamp", "format": "epoch_seconds",
                                                                  "expiry": True}}}}}


def test_pointing_ttl_at_another_attribute_is_blocked_in_production(tmp_path, run_cli):
    head = {"production": True, **CREATED_AT, "table": {"ttl_attribute": "createdAt"}}
    review = _review(run_cli, tmp_path, {"production": True, **CREATED_AT}, head)
    assert _attention(review) == [("blocked", "table shop_main: TTL expiresAt -> createdAt")]
    [change] = [c for c in review["stacks"][0]["changes"] if c["cls"] == "blocked"]
    assert "deletes every item whose `createdAt` holds a time in the past" in change["reason"]
    assert change["unblocked_by"] == "destroy"
    outside = _review(run_cli, tmp_path, CREATED_AT, {**CREATED_AT, "table": {"ttl_attribute": "createdAt"}})
    assert _attention(outside) == [("window", "table shop_main: TTL expiresAt -> createdAt")]
    turned_off = _review(run_cli, tmp_path, {"production": True},
                         {"production": True, "table": {"ttl_attribute": None}})
    assert _attention(turned_off) == [("window", "table shop_main: TTL expiresAt -> off")]


def test_the_gate_blocks_ttl_turned_on_in_production(tmp_path):
    ttl_on = entry("aws_dynamodb_table.shop", ["update"], {"name": "shop_main", "ttl": [{"enabled": False}]},
                   {"name": "shop_main", "ttl": [{"enabled": True, "attribute_name": "createdAt"}]})
    stack, decision = _gate(tmp_path, plan(ttl_on), NOW, production=True)
    assert [(c.cls, c.subject) for c in stack.changes] == [("blocked", "table shop_main: TTL off -> createdAt")]
    assert not decision.passed


def test_lint_refuses_ttl_on_a_creation_time(tmp_path, run_cli):
    created = {"entities": {"Order": {"attributes": {"createdAt": {"type": "timestamp", "format": "epoch_seconds"}}}},
               "table": {"ttl_attribute": "createdAt"}}
    code, out, _ = run_cli("lint", shop(tmp_path, **created))
    assert code == 1 and "TW501" in out and "createdAt" in out


# --- every changed argument is classified ---------------------------------------------------------

PROTECTED = {"name": "shop_main", "tags": {"service": "shop"}, "deletion_protection_enabled": True,
             "point_in_time_recovery": [{"enabled": True, "recovery_period_in_days": 35}], "replica": [],
             "on_demand_throughput": [], "global_secondary_index": [
                 {"name": "GSI1", "hash_key": "GSI1PK", "projection_type": "KEYS_ONLY", "warm_throughput": []}]}
RETAGGED = {**PROTECTED, "tags": {"service": "shop", "team": "x"}}


def _updated(tmp_path, after: dict, after_unknown: dict | None = None):
    table = entry("aws_dynamodb_table.shop", ["update"], PROTECTED, after, after_unknown)
    stack, decision = _gate(tmp_path, plan(table), NOW, production=True)
    return sorted((c.cls, c.subject) for c in stack.changes), decision


@pytest.mark.parametrize("after, unknown, expected", [
    ({**RETAGGED, "point_in_time_recovery": [{"enabled": True, "recovery_period_in_days": 1}]}, None,
     ("blocked", "table shop_main: point-in-time recovery 35 -> 1 days")),
    ({**RETAGGED, "replica": [{"region_name": "ap-south-1"}]}, None,
     ("blocked", "table shop_main: replicas none -> ap-south-1")),
    (RETAGGED, {"deletion_protection_enabled": True},
     ("blocked", "table shop_main: deletion protection unknown until apply")),
    (RETAGGED, {"point_in_time_recovery": [{"enabled": True}]},
     ("blocked", "table shop_main: point-in-time recovery unknown until apply")),
    ({**RETAGGED, "restore_date_time": "2026-11-01T00:00:00Z"}, None,
     ("window", "table shop_main: restore_date_time")),
    ({**RETAGGED, "on_demand_throughput": [{"max_read_request_units": 1}]}, None,
     ("safe", "table shop_main: on-demand maximum")),
    ({**RETAGGED, "global_secondary_index": [{**PROTECTED["global_secondary_index"][0],
                                              "warm_throughput": [{"read_units_per_second": 9}]}]}, None,
     ("safe", "GSI GSI1 warm throughput")),
])
def test_a_tag_change_does_not_hide_another_change_of_the_table(tmp_path, after, unknown, expected):
    changes, decision = _updated(tmp_path, after, unknown)
    assert changes == sorted([("safe", "table shop_main: tags team"), expected])
    assert not decision.passed if expected[0] == "blocked" else decision.passed  # NOW is inside the window
    _, outside = _gate(tmp_path, plan(entry("aws_dynamodb_table.shop", ["update"], PROTECTED, after, unknown)),
                       OUTSIDE, production=True)
    assert outside.passed is (expected[0] == "safe")


def test_a_longer_recovery_period_and_an_unchanged_table_are_safe(tmp_path):
    longer = {**PROTECTED, "point_in_time_recovery": [{"enabled": True, "recovery_period_in_days": 35}]}
    shorter = {**PROTECTED, "point_in_time_recovery": [{"enabled": True, "recovery_period_in_days": 7}]}
    table = entry("aws_dynamodb_table.shop", ["update"], shorter, longer)
    stack, decision = _gate(tmp_path, plan(table), OUTSIDE, production=True)
    assert [(c.cls, c.subject) for c in stack.changes] == [
        ("safe", "table shop_main: point-in-time recovery 7 -> 35 days")] and decision.passed
    only_computed = entry("aws_dynamodb_table.shop", ["update"], {**PROTECTED, "arn": "a"}, {**PROTECTED, "arn": "b"})
    stack, _ = _gate(tmp_path, plan(only_computed), OUTSIDE)
    assert [(c.cls, c.subject) for c in stack.changes] == [("window", "table shop_main: other arguments")]


# --- which table the plan is for -------------------------------------------------------------------


@pytest.mark.parametrize("second", [
    entry("module.x.aws_dynamodb_table.y", ["create"], None, {}, {"name": True}),  # a name known after apply
    entry("module.x.aws_dynamodb_table.shop", ["delete"], {"name": "shop_main"}, None),  # the same name elsewhere
])
def test_a_plan_with_a_second_table_is_refused(tmp_path, run_cli, second):
    (tmp_path / "plan.json").write_text(json.dumps(plan(TABLE, second)))
    code, out, err = run_cli("gate", "--plan", tmp_path / "plan.json", "--blueprint", shop(tmp_path),
                             "--now", NOW.isoformat())
    assert code == 2 and out == "" and "[E701]" in err and "Traceback" not in err


# --- policies and notification targets ------------------------------------------------------------

ONE_ACCOUNT = {"AWS": "arn:aws:iam::123456789012:root"}


def _policy(statement: dict) -> str:
    return json.dumps({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "sns:*", **statement}]})


def _topic_policy(actions: list[str], policy: object, unknown: dict | None = None) -> dict:
    before = {"arn": "arn:aws:sns:us-east-1:111122223333:shop-alarms", "policy": _policy({"Principal": ONE_ACCOUNT})}
    return entry("aws_sns_topic_policy.shop_alarms_policy", actions, None if actions == ["create"] else before,
                 {**before, "policy": policy}, unknown)


def _classified(tmp_path, *entries, now=OUTSIDE):
    stack, decision = _gate(tmp_path, plan(TABLE, *entries, outputs=record(maintenance_window=False)), now)
    return [(c.cls, c.reason) for c in stack.changes], decision


@pytest.mark.parametrize("actions", [["create"], ["update"]])
def test_not_principal_is_a_grant_to_everyone_but_some(tmp_path, actions):
    changes, decision = _classified(tmp_path, _topic_policy(actions, _policy({"NotPrincipal": ONE_ACCOUNT})))
    assert changes == [("blocked", "the policy grants access to any principal (`*`, or everyone but a "
                                   "`NotPrincipal`)")]
    assert not decision.passed


@pytest.mark.parametrize("policy, unknown", [
    ("", {"policy": True}),  # known only after apply
    ('{"Statement": [{"Effect": "Allow", "Principal": "*", "Action": "sns:*"}], "Statement": []}', None),
    ("not json", None),
])
def test_a_new_policy_nobody_can_read_waits_for_the_window(tmp_path, policy, unknown):
    changes, decision = _classified(tmp_path, _topic_policy(["create"], policy, unknown))
    assert [cls for cls, _ in changes] == ["window"] and "review it by hand" in changes[0][1]
    assert not decision.passed  # and no window is in force
    readable, decision = _classified(tmp_path, _topic_policy(["create"], _policy({"Principal": ONE_ACCOUNT})))
    assert readable == [("safe", "added")] and decision.passed


def test_notifications_sent_to_another_account_wait_for_the_window(tmp_path):
    def alarm(*topics: str) -> dict:
        return {"alarm_name": "x", "alarm_actions": list(topics), "ok_actions": list(topics)}

    mine, theirs = "arn:aws:sns:eu-west-1:111122223333:oncall", "arn:aws:sns:eu-west-1:999999999999:attacker"
    moved = entry("aws_cloudwatch_metric_alarm.shop_throttles", ["update"], alarm(mine), alarm(theirs))
    target = entry("aws_cloudwatch_event_target.shop_changes_target_1", ["update"], {"arn": mine, "rule": "r"},
                   {"arn": theirs, "rule": "r"})
    changes, decision = _classified(tmp_path, moved, target)
    assert [cls for cls, _ in changes] == ["window", "window"] and not decision.passed
    assert all("account 999999999999" in reason for _, reason in changes)
    same_account = entry("aws_cloudwatch_metric_alarm.shop_throttles", ["update"], alarm(mine),
                         alarm(mine.replace("oncall", "oncall-2")))
    changes, decision = _classified(tmp_path, same_account)
    assert changes == [("safe", f"alarm_actions {json.dumps([mine])} -> "
                                f"{json.dumps([mine.replace('oncall', 'oncall-2')])}; ok_actions "
                                f"{json.dumps([mine])} -> {json.dumps([mine.replace('oncall', 'oncall-2')])}")]
    assert decision.passed


def test_the_event_target_shows_where_it_sends(tmp_path):
    target = entry("aws_cloudwatch_event_target.shop_changes_target_1", ["update"], {"arn": "a", "rule": "r"},
                   {"arn": "b", "rule": "r"})
    changes, _ = _classified(tmp_path, target)
    assert changes == [("safe", "arn a -> b")]


def test_a_new_stack_is_judged_by_the_blueprints_window(tmp_path):
    """Nothing is deployed yet: the topic policy, unknown until the topic exists, waits for the blueprint's window."""
    created = [CREATE_TABLE, _topic_policy(["create"], "", {"policy": True}),
               entry("aws_ssm_document.shop_window", ["create"], None, {"name": "w", "content": "c"})]
    _, decision = _gate(tmp_path, plan(*created), NOW)
    assert decision.passed and "inside the maintenance window" in decision.reason
    _, decision = _gate(tmp_path, plan(*created), OUTSIDE)
    assert not decision.passed



# --- what the gate says to do about each kind of blocked change -----------------------------------

NEW_ORDER_KEY = {"pk": "CUSTOMER#{customerId}", "sk": "ORDER#{placedAt}#{orderId}"}
OLD_ORDER_KEY = {"pk": "CUSTOMER#{customerId}", "sk": "ORDER#{orderId}"}


def _key_migration_plan(tmp_path) -> dict:
    """No resource changes; the `tablewright` record's keys change from the base's to the re-keyed head's
    (designed against the base's lock, so only the table's keys change)."""
    from tablewright.constructs.record import stack_record
    from tablewright.stacks.stack import build_stacks
    from tablewright.synth.synth import write_locks

    (tmp_path / "base").mkdir(exist_ok=True)
    (tmp_path / "head").mkdir(exist_ok=True)
    [base] = build_stacks(load_blueprints(shop(tmp_path / "base")))
    write_locks([base])
    (tmp_path / "head" / "shop.lock.json").write_text((tmp_path / "base" / "shop.lock.json").read_text())
    [head] = build_stacks(load_blueprints(shop(tmp_path / "head", entities={"Order": {"key": NEW_ORDER_KEY}})))
    before, after = stack_record(base.design), stack_record(head.design)
    assert before["keys"] != after["keys"]
    return plan(TABLE, outputs={"tablewright": {"actions": ["update"], "before": before, "after": after}})


def test_an_undeclared_key_migration_says_to_declare_it(tmp_path):
    stack, decision = _gate(tmp_path, _key_migration_plan(tmp_path), NOW, entities={"Order": {"key": NEW_ORDER_KEY}})
    assert [(c.category, c.cls) for c in stack.changes if c.cls == "blocked"] == [("data", "blocked")]
    assert not decision.passed and decision.outcome == "hold"
    assert "1 undeclared data migration(s)" in decision.reason
    assert "declare each under `migrations:` in the blueprint" in decision.reason
    assert "window change" in decision.reason and "no flag lets it through" in decision.reason
    assert "pass nothing" not in decision.reason and "--allow-" not in decision.reason


def test_a_declared_key_migration_is_a_window_change(tmp_path):
    migration = {"entity": "Order", "from": OLD_ORDER_KEY, "to": NEW_ORDER_KEY, "reason": "orders sort by time"}
    overlay = {"entities": {"Order": {"key": NEW_ORDER_KEY}}, "migrations": [migration]}
    stack, decision = _gate(tmp_path, _key_migration_plan(tmp_path), NOW, **overlay)
    assert [(c.category, c.cls) for c in stack.changes] == [("data", "window")]
    assert decision.passed and "inside the maintenance window" in decision.reason
    _, outside = _gate(tmp_path, _key_migration_plan(tmp_path), OUTSIDE, **overlay)
    assert not outside.passed and outside.outcome == "wait"


def test_each_kind_of_blocked_change_gets_its_own_fix(tmp_path):
    """A deleted table (--allow-destroy), protection off (--allow-unprotect) and a resource Tablewright does
    not write (--allow-foreign), each named with its count and flag, and nothing else."""
    unprotect = entry("aws_dynamodb_table.shop", ["update"], {**SHOP_TABLE, "deletion_protection_enabled": True},
                      {**SHOP_TABLE, "deletion_protection_enabled": False})
    role = entry("aws_iam_role.app", ["create"], None, {"name": "app"})
    _, decision = _gate(tmp_path, plan(unprotect, role, outputs=record(production=True)), NOW, production=True)
    assert decision.reason.startswith("2 blocked change(s): ")
    assert "1 turn protection off: pass --allow-unprotect only when that is intended" in decision.reason
    assert "1 are not Tablewright's to vouch for" in decision.reason and "pass --allow-foreign" in decision.reason
    assert "--allow-destroy" not in decision.reason and "migrations:" not in decision.reason
    _, decision = _gate(tmp_path, plan(CREATE_TABLE, outputs=record(production=True), **TABLE_GONE), NOW,
                        production=True)
    assert decision.reason.startswith("2 blocked change(s): 2 would delete items or the table")
    assert "pass --allow-destroy" in decision.reason and "--allow-unprotect" not in decision.reason
