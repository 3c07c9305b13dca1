"""Review and plan gate: every corpus change classified from two syntheses; the same classification from
real Terraform plans (the base applied to the emulator, tests/support/plans.py); the gate's decision on both
sides of the maintenance window and across time-zone changes; the Markdown a reviewer reads."""

from __future__ import annotations

import json
import shutil
import subprocess
from datetime import datetime
from pathlib import Path

import pytest

from tablewright.blueprint.load import load_blueprint
from tablewright.review.changes import from_plan
from tablewright.review.classify import classify
from tablewright.review.gate import decide, gate, plan_changes, window_in_force
from tablewright.review.review import build_review
from tests.conftest import ROOT
from tests.support.emulator import Emulator
from tests.support.plans import PlanBuilder
from tests.support.review_corpus import BASE, CASES, Case, write_case
from tests.support.terraform_support import uses_terraform

REAL = [case for case in CASES if case.real_plan]


def case_named(name: str) -> Case:
    return next(case for case in CASES if case.name == name)


def attention(changes) -> list[tuple[str, str, str]]:
    return sorted((c.cls, c.action, c.subject) for c in changes if c.cls != "safe")


def assert_expected(case: Case, changes) -> None:
    found = attention(changes)
    assert len(found) == len(case.expected), found
    for (cls, action, words), (got_cls, got_action, subject) in zip(sorted(case.expected), found, strict=True):
        assert (got_cls, got_action) == (cls, action) and words in subject, (case.name, found)
    categories = {c.category for c in changes if c.cls == "safe"}
    assert case.safe <= categories, (case.name, categories)


def test_the_corpus_is_large_and_covers_every_class():
    assert len(CASES) >= 15
    assert {case.verdict for case in CASES} == {"blocked", "window", "safe"}
    assert {case.verdict for case in REAL} == {"blocked", "window", "safe"}


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_review_classifies_each_corpus_change(case, tmp_path):
    head = write_case(case, tmp_path)
    review = build_review(str(BASE), str(head))
    [stack] = review.stacks
    assert review.verdict == case.verdict
    assert_expected(case, stack.changes)
    assert [(d.entity, d.index, d.breaking) for d in stack.data] == list(case.data)
    assert bool(stack.warnings) == case.warns


def test_an_unchanged_blueprint_reviews_as_no_change():
    review = build_review(str(BASE), str(BASE))
    assert review.verdict == "safe" and review.changes == [] and review.stacks[0].data == []


def test_allow_destroy_turns_blocked_into_window(tmp_path):
    head = write_case(case_named("rename_table"), tmp_path)
    assert build_review(str(BASE), str(head), acknowledged=frozenset({"destroy"})).verdict == "window"


# Real plans --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
@uses_terraform
def plans(tmp_path_factory) -> dict[str, dict]:
    """`terraform show -json` of each real-plan case against the base applied to the emulator."""
    emulator = Emulator()
    try:
        work = tmp_path_factory.mktemp("plans")
        builder = PlanBuilder(emulator, work, BASE)
        return builder.plan_all({"unchanged": BASE, **{case.name: write_case(case, work) for case in REAL}})
    finally:
        emulator.stop()


@pytest.mark.terraform
@pytest.mark.parametrize("case", REAL, ids=lambda case: case.name)
def test_a_real_plan_gets_the_same_classification(case, plans, tmp_path):
    _, from_terraform = plan_changes(plans[case.name], load_blueprint(write_case(case, tmp_path)))
    assert_expected(case, from_terraform)
    review = build_review(str(BASE), str(write_case(case, tmp_path)))
    synthesized = {(c.cls, c.action, c.category, c.subject) for c in review.changes}
    assert {(c.cls, c.action, c.category, c.subject) for c in from_terraform} == synthesized


@pytest.mark.terraform
def test_a_real_plan_of_the_unchanged_base_has_nothing_to_gate(plans):
    assert from_plan(plans["unchanged"]) == []


# The gate ----------------------------------------------------------------------------------------


def decision_at(plans, case_name: str, now: str, tmp_path: Path, allow_destroy: bool = False, **window) -> bool:
    """The gate's decision; `window` is the one in force: the blueprint's, and the one the applied state records
    (the plan is edited as if the base had been applied with it)."""
    case = case_named(case_name)
    overlay = {**case.overlay, "maintenance_window": window} if window else case.overlay
    loaded = load_blueprint(write_case(Case(case.name, overlay, case.verdict), tmp_path))
    plan = plans[case_name]
    if window:
        plan["output_changes"]["tablewright"]["before"]["maintenance_window"] = {"days": "daily", **window}
    _, decision = gate(plan, loaded, datetime.fromisoformat(now),
                       frozenset({"destroy"}) if allow_destroy else frozenset())
    return decision.passed


@pytest.mark.terraform
@pytest.mark.parametrize("now, passes", [
    ("2026-12-01T01:59:59+00:00", False),
    ("2026-12-01T02:00:00+00:00", True),
    ("2026-12-01T03:59:59+00:00", True),
    ("2026-12-01T04:00:00+00:00", False),
    ("2026-12-01T10:00:00+08:00", True),  # 02:00 UTC, written in another offset
])
def test_a_window_change_passes_only_inside_the_window(plans, tmp_path, now, passes):
    assert decision_at(plans, "stream_on", now, tmp_path) is passes


@pytest.mark.terraform
def test_the_window_follows_the_blueprints_time_zone(plans, tmp_path):
    # 18:30 UTC is 02:30 the next day in Shanghai: inside a Shanghai 02:00 window, outside a UTC one.
    shanghai = {"days": "daily", "start": "02:00", "duration": "2h", "timezone": "Asia/Shanghai"}
    assert decision_at(plans, "stream_on", "2026-12-01T18:30:00+00:00", tmp_path, **shanghai) is True
    assert decision_at(plans, "stream_on", "2026-12-01T18:30:00+00:00", tmp_path) is False


@pytest.mark.terraform
def test_the_window_follows_daylight_saving_time(plans, tmp_path):
    # New York 01:00 for 2h: on 8 March 2026 clocks jump from 02:00 to 03:00, so the window is
    # 06:00-08:00 UTC that day and 05:00-07:00 UTC the day after (EDT).
    new_york = {"days": "daily", "start": "01:00", "duration": "2h", "timezone": "America/New_York"}
    assert decision_at(plans, "stream_on", "2026-03-08T07:30:00+00:00", tmp_path, **new_york) is True
    assert decision_at(plans, "stream_on", "2026-03-09T07:30:00+00:00", tmp_path, **new_york) is False
    assert decision_at(plans, "stream_on", "2026-03-09T05:00:00+00:00", tmp_path, **new_york) is True


@pytest.mark.terraform
def test_weekly_windows_close_on_other_days(plans, tmp_path):
    saturdays = {"days": ["SA"], "start": "02:00", "duration": "2h", "timezone": "UTC"}
    assert decision_at(plans, "stream_on", "2026-12-05T02:30:00+00:00", tmp_path, **saturdays) is True  # Saturday
    assert decision_at(plans, "stream_on", "2026-12-06T02:30:00+00:00", tmp_path, **saturdays) is False


@pytest.mark.terraform
def test_blocked_changes_fail_unless_allowed_and_then_wait_for_the_window(plans, tmp_path):
    inside, outside = "2026-12-01T02:30:00+00:00", "2026-12-01T12:00:00+00:00"
    assert decision_at(plans, "rename_table", inside, tmp_path) is False
    assert decision_at(plans, "rename_table", inside, tmp_path, allow_destroy=True) is True
    assert decision_at(plans, "rename_table", outside, tmp_path, allow_destroy=True) is False
    assert decision_at(plans, "pitr_off_in_production", inside, tmp_path) is False


@pytest.mark.terraform
def test_safe_changes_pass_at_any_time(plans, tmp_path):
    assert decision_at(plans, "change_capacity", "2026-12-01T12:00:00+00:00", tmp_path) is True
    assert decision_at(plans, "add_alarm", "2026-12-01T12:00:00+00:00", tmp_path) is True


@pytest.mark.terraform
def test_no_window_in_force_means_window_changes_wait(plans, tmp_path):
    plan = plans["stream_on"]
    plan["output_changes"]["tablewright"]["before"]["maintenance_window"] = False
    in_force = window_in_force(plan, load_blueprint(write_case(case_named("stream_on"), tmp_path)).blueprint
                               .maintenance_window)
    assert in_force.window is None
    decision = decide(classify(from_plan(plan), False), in_force, datetime.fromisoformat("2026-12-01T02:30:00+00:00"))
    assert decision.passed is False and "no maintenance window is in force" in decision.reason


@pytest.mark.terraform
def test_a_pull_request_that_widens_its_window_waits_for_the_old_one(plans, tmp_path, run_cli):
    """The head opens the window all day and turns a stream on: judged by the applied window (02:00-04:00 UTC)."""
    plan_file = tmp_path / "plan.json"
    plan_file.write_text(json.dumps(plans["widen_maintenance_window"]))
    head = write_case(case_named("widen_maintenance_window"), tmp_path)
    code, out, _ = run_cli("gate", "--plan", plan_file, "--blueprint", head, "--now", "2026-12-01T12:00:00Z")
    assert code == 1 and "outside the maintenance window (daily from 02:00 for 2h (UTC))" in out, out
    assert "change window" in out and "next opens 2026-12-02T02:00:00+00:00" in out
    code, out, _ = run_cli("gate", "--plan", plan_file, "--blueprint", head, "--now", "2026-12-01T02:30:00Z")
    assert code == 0, out


@pytest.mark.terraform
def test_gate_command_exit_codes(plans, tmp_path, run_cli):
    plan_file = tmp_path / "plan.json"
    plan_file.write_text(json.dumps(plans["stream_on"]))
    head = write_case(case_named("stream_on"), tmp_path)
    code, out, _ = run_cli("gate", "--plan", plan_file, "--blueprint", head, "--now", "2026-12-01T12:00:00Z")
    assert code == 1 and "outside the maintenance window" in out and "next opens 2026-12-02T02:00:00+00:00" in out
    code, out, _ = run_cli("gate", "--plan", plan_file, "--blueprint", head, "--now", "2026-12-01T02:00:00Z",
                           "--format", "json")
    assert code == 0 and json.loads(out)["passed"] is True


@pytest.mark.parametrize("content, expected", [
    ("not json", "is not valid JSON at the top level: lexical error: invalid string in json text. near `not json`"),
    ('{"resource": {}}', "not a Terraform plan"),
])
def test_gate_rejects_what_is_not_a_plan(tmp_path, run_cli, content, expected):
    plan_file = tmp_path / "plan.json"
    plan_file.write_text(content)
    code, out, err = run_cli("gate", "--plan", plan_file, "--blueprint", BASE)
    assert code == 2 and out == "" and expected in err and "terraform show -json" in err
    assert "Traceback" not in err


@pytest.mark.terraform
def test_gate_rejects_a_time_without_zone(plans, tmp_path, run_cli):
    plan_file = tmp_path / "plan.json"
    plan_file.write_text(json.dumps(plans["stream_on"]))
    code, _, err = run_cli("gate", "--plan", plan_file, "--blueprint", BASE, "--now", "2026-12-01T02:00:00")
    assert code == 2 and "no time zone" in err and "2026-12-01T02:00:00Z" in err


# Review output -----------------------------------------------------------------------------------


def test_review_against_a_git_revision(tmp_path, run_cli, monkeypatch):
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "shop.yaml").write_text(BASE.read_text())
    git = lambda *args: subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)  # noqa: E731
    git("init", "-q")
    git("-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "base", "--allow-empty")
    git("add", "shop.yaml")
    git("-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "shop")
    write_case(case_named("stream_on"), repo).rename(repo / "shop.yaml")
    monkeypatch.chdir(repo)
    code, out, _ = run_cli("review", "--base", "HEAD:shop.yaml", "--head", "shop.yaml", "--format", "json")
    assert code == 0
    data = json.loads(out)
    assert data["verdict"] == "window" and data["counts"]["window"] == 1


def test_review_json_has_the_markdown_content(tmp_path, run_cli):
    head = write_case(case_named("change_key_template"), tmp_path)
    code, out, _ = run_cli("review", "--base", BASE, "--head", head, "--format", "json")
    [stack] = json.loads(out)["stacks"]
    assert code == 0 and stack["data_changes"][0]["breaking"] is True
    assert {"changes", "lint", "capacity", "design", "warnings", "maintenance_window"} <= stack.keys()
    assert stack["capacity"]["before"]["total"] > 0 and stack["design"]["table"] == "shop_main"
    assert stack["capacity"]["before"]["region"] == "us-east-1" and stack["capacity"]["before"]["lines"]
    assert any(f["code"] == "TW401" for f in stack["lint"])


def test_review_of_a_bad_head_names_the_side_and_the_line(tmp_path, run_cli):
    head = tmp_path / "head.yaml"
    head.write_text(BASE.read_text().replace("billing: provisioned", "billing: reserved"))
    code, out, err = run_cli("review", "--base", BASE, "--head", head)
    assert code == 2 and out == ""
    assert err.startswith(f"error: {head}:13:") and "table.billing: in the head blueprint" in err
    assert "fix: use one of" in err


@pytest.mark.terraform
def test_gate_names_the_environments_it_cannot_choose_between(plans, tmp_path, run_cli):
    plan_file = tmp_path / "plan.json"
    plan_file.write_text(json.dumps(plans["stream_on"]))  # a plan of shop_main, not of a CRM table
    crm = ROOT / "blueprints" / "crm.yaml"
    code, out, err = run_cli("gate", "--plan", plan_file, "--blueprint", crm)
    assert code == 2 and out == ""
    assert "the plan manages shop_main, which is not the table of one stack of this blueprint" in err
    assert "(crm-dev (dev-crm_main), crm-prod (prod-crm_main))" in err and "[E701]" in err
    code, out, err = run_cli("gate", "--plan", plan_file, "--blueprint", crm, "--env", "staging")
    assert code == 2 and out == "" and "has no environment `staging`" in err and "dev, prod" in err


@pytest.mark.terraform
@pytest.mark.parametrize("case", REAL, ids=lambda case: case.name)
def test_the_gate_json_of_every_real_plan_follows_its_schema_and_the_policy(case, plans, tmp_path, run_cli):
    """schema/gate.schema.json and examples/policy/tablewright.rego on real plans, inside and outside the window."""
    from jsonschema import Draft202012Validator

    from tests.end_to_end.test_gate_json import GATE_SCHEMA, POLICY, evaluate, strict

    plan_file = tmp_path / "plan.json"
    plan_file.write_text(json.dumps(plans[case.name]))
    head = write_case(case, tmp_path)
    for now in ("2026-12-01T02:30:00Z", "2026-12-01T12:00:00Z"):
        code, out, err = run_cli("gate", "--plan", plan_file, head, "--now", now, "--format", "json",
                                 "--detailed-exitcode")
        document = json.loads(out)
        Draft202012Validator(strict(GATE_SCHEMA)).validate(document)
        assert code == {"apply": 0, "hold": 1, "wait": 4}[document["decision"]], err
        assert document["verdict"] == case.verdict
        assert (evaluate(POLICY, document)["deny"] == []) is document["passed"]
def test_a_changed_on_demand_maximum_is_a_safe_capacity_change(tmp_path):
    """Raising the cost guard, or lifting it on a GSI, changes no data: safe, named for what it is."""
    shutil.copytree(ROOT / "blueprints" / "shared", tmp_path / "shared")
    head = tmp_path / "orders.yaml"
    head.write_text((ROOT / "blueprints" / "orders.yaml").read_text()
                    .replace("max_throughput: {read: 1600, write: 600}", "max_throughput: {read: 3200, write: 600}")
                    .replace("access_patterns:", "indexes: {GSI1: {max_throughput: unlimited}}\naccess_patterns:"))
    review = build_review(str(ROOT / "blueprints" / "orders.yaml"), str(head))
    [prod] = [stack for stack in review.stacks if stack.stack == "orders-prod"]
    found = sorted((c.cls, c.category, c.subject, c.reason) for c in prod.changes if c.category == "capacity")
    assert found == [
        ("safe", "capacity", "GSI GSI1 on-demand maximum", "read/write 1600/600 -> none: requests above it are "
                                                           "throttled"),
        ("safe", "capacity", "table prod-orders_main: on-demand maximum", "read/write 1600/600 -> 3200/600: "
                                                                          "requests above it are throttled"),
    ]
    alarms = {c.subject: c.reason for c in prod.changes if c.category == "alarms"}
    assert alarms["alarms: orders_gsi1_read_max_throughput_throttles"] == "removed"  # nothing left to alarm on
    assert review.verdict == "safe"
