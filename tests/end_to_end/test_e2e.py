"""End to end: every bundled stack applied by the real Terraform CLI and AWS provider to the emulator
(tests/support/emulator.py), then re-planned: no diff after apply, none after the autoscaler moves capacity,
exactly the change after something Terraform owns is edited behind its back. The access patterns are
then verified against the table Terraform created.

Isolation: every applied stack lives in its own account of the emulator. `applied` applies each stack
once and shares it between the tests that leave it as it is (re-plan; verify, which only writes its
own deterministic sample items); a test that changes what was applied takes `own_applied`, a copy
applied for that test alone."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tablewright.blueprint.load import load_blueprint
from tablewright.stacks.stack import Stack, build_stacks
from tablewright.synth.synth import synthesize
from tablewright.verify.verify import verify_table
from tests.conftest import BUNDLED, bundled_stacks
from tests.support.emulator import Emulator
from tests.support.terraform_support import stack_workdir, terraform, terraform_environment

STACKS = build_stacks(bundled_stacks())
NAMES = [s.name for s in STACKS]
PROVISIONED = [s.name for s in STACKS if s.design.blueprint.table.billing == "provisioned"]

pytestmark = pytest.mark.terraform  # the emulator and the Terraform CLI: the slow tier


@dataclass
class AppliedStack:
    stack: Stack
    workdir: Path
    env: dict[str, str]
    config: dict[str, Any]
    emulator: Emulator
    account: str

    def client(self, service: str) -> Any:
        """A boto3 client of the emulator in this stack's account."""
        return self.emulator.client(service, self.account)

    @property
    def table(self) -> str:
        [table] = self.config["resource"]["aws_dynamodb_table"].values()
        return table["name"]

    def plan_changes(self) -> list[dict[str, Any]]:
        """`terraform plan`, as `terraform show -json` reports it: the resource changes that do something."""
        terraform(["plan", "-input=false", "-out=drift.tfplan"], self.workdir, self.env)
        shown = terraform(["show", "-json", "drift.tfplan"], self.workdir, self.env)
        changes = json.loads(shown.stdout).get("resource_changes", [])
        return [c for c in changes if c["change"]["actions"] not in (["no-op"], ["read"])]

    def apply_plan(self) -> None:
        terraform(["apply", "-input=false", "drift.tfplan"], self.workdir, self.env)

    def replan_exit_code(self) -> tuple[int, str]:
        result = terraform(["plan", "-input=false", "-detailed-exitcode"], self.workdir, self.env, check=False)
        return result.returncode, result.stdout + result.stderr


@pytest.fixture(scope="module")
def emulator():
    with Emulator() as emulator:
        yield emulator


@pytest.fixture(scope="module")
def synthesized(tmp_path_factory) -> Path:
    """The synthesis of every bundled stack (read only: each apply works on a copy)."""
    out = tmp_path_factory.mktemp("e2e") / "cdktf.out"
    synthesize(STACKS, out)
    return out


def apply_stack(emulator: Emulator, synthesized: Path, name: str, workdir: Path,
                stacks: list[Stack] = STACKS) -> AppliedStack:
    """Apply a copy of stack `name`'s synthesis (one of `stacks`), from `workdir`, to a fresh account of the
    emulator."""
    account = emulator.new_account()
    workdir = stack_workdir(workdir, name)
    shutil.copytree(synthesized / "stacks" / name, workdir)
    (workdir / "provider_override.tf.json").write_text(json.dumps(emulator.provider_override(account)))
    env = terraform_environment(workdir)
    terraform(["init", "-input=false"], workdir, env)
    terraform(["apply", "-input=false", "-auto-approve"], workdir, env)
    config = json.loads((workdir / "cdk.tf.json").read_text())
    return AppliedStack(next(s for s in stacks if s.name == name), workdir, env, config, emulator, account)


@pytest.fixture(scope="module")
def applied(emulator, synthesized, tmp_path_factory) -> Callable[[str], AppliedStack]:
    """Apply each stack once (on first use) and share it between the tests that do not change it."""
    done: dict[str, AppliedStack] = {}

    def apply(name: str) -> AppliedStack:
        if name not in done:
            done[name] = apply_stack(emulator, synthesized, name, tmp_path_factory.mktemp("shared") / name)
        return done[name]

    return apply


@pytest.fixture
def own_applied(emulator, synthesized, tmp_path) -> Callable[[str], AppliedStack]:
    """A stack applied for this test alone (its own account and directory): change it freely."""
    return lambda name: apply_stack(emulator, synthesized, name, tmp_path / name)


def changed_arguments(change: dict[str, Any]) -> set[str]:
    before, after = change["change"]["before"], change["change"]["after"]
    unknown = change["change"].get("after_unknown", {})
    return {key for key in before.keys() | after.keys() if before.get(key) != after.get(key) or unknown.get(key)}


@pytest.mark.parametrize("name", NAMES)
def test_replan_after_apply_is_empty(name, applied):
    code, output = applied(name).replan_exit_code()
    assert code == 0, output


@pytest.mark.parametrize("name", PROVISIONED)
def test_autoscaler_capacity_changes_are_not_drift(name, own_applied):
    stack = own_applied(name)
    dynamodb = stack.client("dynamodb")
    description = dynamodb.describe_table(TableName=stack.table)["Table"]
    index = description["GlobalSecondaryIndexes"][0]["IndexName"]
    capacity = stack.stack.design.capacity

    def within(owner: str) -> dict[str, int]:
        """Capacity the autoscaler could set: between each direction's bounds, and not where Terraform put it."""
        policy = capacity[owner]
        read, write = policy.bounds("read"), policy.bounds("write")
        assert read is not None and write is not None and read[1] > read[0] and write[1] > write[0]
        return {"ReadCapacityUnits": (read[0] + read[1]) // 2, "WriteCapacityUnits": (write[0] + write[1]) // 2}

    # What Application Auto Scaling does: one UpdateTable per scalable target, within its bounds.
    table_units, index_units = within("table"), within(index)
    dynamodb.update_table(TableName=stack.table, ProvisionedThroughput=table_units)
    dynamodb.update_table(TableName=stack.table, GlobalSecondaryIndexUpdates=[{"Update": {
        "IndexName": index, "ProvisionedThroughput": index_units}}])
    moved = dynamodb.describe_table(TableName=stack.table)["Table"]
    assert moved["ProvisionedThroughput"]["ReadCapacityUnits"] == table_units["ReadCapacityUnits"]
    assert moved["GlobalSecondaryIndexes"][0]["ProvisionedThroughput"]["WriteCapacityUnits"] == (
        index_units["WriteCapacityUnits"])

    code, output = stack.replan_exit_code()
    assert code == 0, output


PUT_ALARM_FIELDS = (
    "AlarmName", "AlarmDescription", "ActionsEnabled", "OKActions", "AlarmActions", "InsufficientDataActions",
    "MetricName", "Namespace", "Statistic", "ExtendedStatistic", "Dimensions", "Period", "Unit",
    "EvaluationPeriods", "DatapointsToAlarm", "Threshold", "ComparisonOperator", "TreatMissingData",
    "EvaluateLowSampleCountPercentile", "Metrics", "ThresholdMetricId",
)


@pytest.mark.parametrize("name", NAMES)
def test_a_tag_and_an_alarm_threshold_changed_behind_terraform_are_the_only_changes(name, own_applied):
    stack = own_applied(name)
    blueprint = stack.stack.design.blueprint.blueprint
    dynamodb, cloudwatch = stack.client("dynamodb"), stack.client("cloudwatch")
    arn = dynamodb.describe_table(TableName=stack.table)["Table"]["TableArn"]
    owner = stack.config["resource"]["aws_dynamodb_table"][blueprint]["tags"]["owner"]
    dynamodb.tag_resource(ResourceArn=arn, Tags=[{"Key": "owner", "Value": "someone-else"}])
    alarm_id = f"{blueprint}_table_read_throttles"
    alarm_name = stack.config["resource"]["aws_cloudwatch_metric_alarm"][alarm_id]["alarm_name"]
    [alarm] = cloudwatch.describe_alarms(AlarmNames=[alarm_name])["MetricAlarms"]
    threshold = alarm["Threshold"]
    cloudwatch.put_metric_alarm(**{**{k: alarm[k] for k in PUT_ALARM_FIELDS if k in alarm}, "Threshold": threshold + 5})

    changes = {change["address"]: change for change in stack.plan_changes()}
    assert sorted(changes) == [f"aws_cloudwatch_metric_alarm.{alarm_id}", f"aws_dynamodb_table.{blueprint}"]
    table, alarm_change = changes[f"aws_dynamodb_table.{blueprint}"], changes[f"aws_cloudwatch_metric_alarm.{alarm_id}"]
    assert table["change"]["actions"] == alarm_change["change"]["actions"] == ["update"]
    assert changed_arguments(table) == {"tags", "tags_all"}
    assert (table["change"]["before"]["tags"]["owner"], table["change"]["after"]["tags"]["owner"]) == (
        "someone-else", owner)
    assert changed_arguments(alarm_change) == {"threshold"}
    assert (alarm_change["change"]["before"]["threshold"], alarm_change["change"]["after"]["threshold"]) == (
        threshold + 5, threshold)

    stack.apply_plan()
    tags = {t["Key"]: t["Value"] for t in dynamodb.list_tags_of_resource(ResourceArn=arn)["Tags"]}
    assert tags["owner"] == owner
    assert cloudwatch.describe_alarms(AlarmNames=[alarm_name])["MetricAlarms"][0]["Threshold"] == threshold
    code, output = stack.replan_exit_code()
    assert code == 0, output


@pytest.mark.parametrize("name", NAMES)
def test_access_patterns_pass_on_the_table_terraform_created(name, applied):
    stack = applied(name)
    result = verify_table(stack.client("dynamodb"), stack.stack.design, stack.config, create=False)
    assert result.table == stack.table
    assert result.results and result.passed, [(r.pattern, r.failure) for r in result.results if not r.passed]


def test_alarms_read_back_as_metric_math_and_on_demand_maxima_as_set(applied):
    """What the emulator holds after the apply: every alarm metric math over filled metrics, and the
    orders table's on-demand maximum on the table and its GSI (the empty re-plan above proves the
    provider reads both back as written)."""
    stack = applied("orders-prod")
    alarms = stack.client("cloudwatch").describe_alarms(AlarmNamePrefix="prod-orders_main-")["MetricAlarms"]
    assert alarms and all("MetricName" not in alarm and alarm["Metrics"] for alarm in alarms)
    for alarm in alarms:
        [watched] = [m for m in alarm["Metrics"] if m.get("ReturnData")]
        assert "FILL(" in watched["Expression"], alarm["AlarmName"]
    table = stack.client("dynamodb").describe_table(TableName=stack.table)["Table"]
    assert table["OnDemandThroughput"] == {"MaxReadRequestUnits": 1600, "MaxWriteRequestUnits": 600}
    assert table["GlobalSecondaryIndexes"][0]["OnDemandThroughput"] == table["OnDemandThroughput"]


def test_a_stack_that_creates_its_trail_applies_and_replans_empty(emulator, tmp_path):
    """`change_rules.trail: create`: the bucket, its policy and the trail apply, and nothing drifts."""
    shutil.copytree(BUNDLED[0].parent / "shared", tmp_path / "blueprints" / "shared")
    path = tmp_path / "blueprints" / "crm.yaml"
    path.write_text(BUNDLED[0].read_text().replace("maintenance_window:", "change_rules: {trail: create}\n"
                                                                          "maintenance_window:"))
    stacks = build_stacks([load_blueprint(path, "dev")])
    synthesize(stacks, tmp_path / "out")
    stack = apply_stack(emulator, tmp_path / "out", "crm-dev", tmp_path / "applied", stacks)
    code, output = stack.replan_exit_code()
    assert code == 0, output
    [trail] = stack.client("cloudtrail").describe_trails()["trailList"]
    assert trail["Name"] == "tablewright-dev-crm-main-changes" and trail["LogFileValidationEnabled"]
    assert trail["S3BucketName"].startswith("tw-trail-dev-crm-main-")
    policy = json.loads(stack.client("s3").get_bucket_policy(Bucket=trail["S3BucketName"])["Policy"])
    assert {statement["Sid"] for statement in policy["Statement"]} == {"AWSCloudTrailAclCheck", "AWSCloudTrailWrite"}
