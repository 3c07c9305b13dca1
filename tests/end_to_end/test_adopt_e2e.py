"""`adopt` end to end: a table made with boto3 on the emulator (its own key names, two GSIs with their own
names, provisioned with autoscaling, TTL, PITR, tags) is described as the AWS CLI would, adopted,
synthesized and planned by the real Terraform CLI and AWS provider: the plan imports the table, its
scalable targets and its policies and changes, replaces or destroys nothing (Tablewright's alarms, topic,
calendar and rule are additions); after `apply` the next plan is empty."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tablewright.blueprint.load import load_blueprint
from tablewright.cli import main
from tablewright.stacks.stack import build_stacks
from tablewright.synth.synth import synthesize
from tests.support.emulator import Emulator
from tests.support.terraform_support import stack_workdir, terraform, terraform_environment

pytestmark = pytest.mark.terraform

TABLE = "Accounts.Live"
INDEXES = ("email-index", "by_status")
# What Tablewright adds to an adopted table: nothing of these exists before.
ADDITIONS = {"aws_cloudwatch_metric_alarm", "aws_cloudwatch_event_rule", "aws_cloudwatch_event_target",
             "aws_sns_topic", "aws_sns_topic_policy", "aws_kms_key", "aws_kms_alias", "aws_ssm_document",
             "aws_dynamodb_contributor_insights"}


def _live_table(emulator: Emulator, account: str) -> None:
    dynamodb = emulator.client("dynamodb", account)
    throughput = {"ReadCapacityUnits": 10, "WriteCapacityUnits": 4}
    dynamodb.create_table(
        TableName=TABLE,
        AttributeDefinitions=[{"AttributeName": name, "AttributeType": kind} for name, kind in
                              (("tenant_id", "S"), ("created", "N"), ("email", "S"), ("status", "S"))],
        KeySchema=[{"AttributeName": "tenant_id", "KeyType": "HASH"}, {"AttributeName": "created", "KeyType": "RANGE"}],
        BillingMode="PROVISIONED",
        ProvisionedThroughput=throughput,
        GlobalSecondaryIndexes=[
            {"IndexName": "email-index", "KeySchema": [{"AttributeName": "email", "KeyType": "HASH"}],
             "Projection": {"ProjectionType": "KEYS_ONLY"}, "ProvisionedThroughput": throughput},
            {"IndexName": "by_status", "KeySchema": [{"AttributeName": "status", "KeyType": "HASH"},
                                                     {"AttributeName": "created", "KeyType": "RANGE"}],
             "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["plan", "display-name"]},
             "ProvisionedThroughput": throughput},
        ],
        StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"},
        Tags=[{"Key": "team", "Value": "accounts"}, {"Key": "cost center", "Value": "cc-1/2"}],
        DeletionProtectionEnabled=True,
    )
    dynamodb.update_time_to_live(TableName=TABLE, TimeToLiveSpecification={"Enabled": True,
                                                                             "AttributeName": "expires_at"})
    dynamodb.update_continuous_backups(TableName=TABLE, PointInTimeRecoverySpecification={
        "PointInTimeRecoveryEnabled": True})
    scaling = emulator.client("application-autoscaling", account)
    for resource, kind in ((f"table/{TABLE}", "table"), *((f"table/{TABLE}/index/{i}", "index") for i in INDEXES)):
        for direction, (low, high, target) in (("Read", (10, 200, 60)), ("Write", (4, 80, 75))):
            dimension = f"dynamodb:{kind}:{direction}CapacityUnits"
            metric = {"PredefinedMetricType": f"DynamoDB{direction}CapacityUtilization"}
            scaling.register_scalable_target(ServiceNamespace="dynamodb", ResourceId=resource,
                                             ScalableDimension=dimension, MinCapacity=low, MaxCapacity=high)
            # The names the console gives its policies: with ':' and '/', as the import id must carry them.
            scaling.put_scaling_policy(
                PolicyName=f"DynamoDB{direction}CapacityUtilization:{resource}", ServiceNamespace="dynamodb",
                ResourceId=resource, ScalableDimension=dimension, PolicyType="TargetTrackingScaling",
                TargetTrackingScalingPolicyConfiguration={
                    "TargetValue": float(target), "ScaleInCooldown": 120, "ScaleOutCooldown": 30,
                    "PredefinedMetricSpecification": metric})


def _describe(emulator: Emulator, account: str, directory: Path) -> list[Path]:
    """The files an operator would save with the AWS CLI (which prints the same JSON as boto3 returns)."""
    dynamodb = emulator.client("dynamodb", account)
    scaling = emulator.client("application-autoscaling", account)
    table = dynamodb.describe_table(TableName=TABLE)
    outputs: dict[str, Any] = {
        "table.json": table,
        "ttl.json": dynamodb.describe_time_to_live(TableName=TABLE),
        "backups.json": dynamodb.describe_continuous_backups(TableName=TABLE),
        "tags.json": dynamodb.list_tags_of_resource(ResourceArn=table["Table"]["TableArn"]),
        "targets.json": scaling.describe_scalable_targets(ServiceNamespace="dynamodb"),
        "policies.json": scaling.describe_scaling_policies(ServiceNamespace="dynamodb"),
    }
    paths = []
    for name, output in outputs.items():
        output.pop("ResponseMetadata", None)
        path = directory / name
        path.write_text(json.dumps(output, default=str, indent=2))
        paths.append(path)
    return paths


def _plan(workdir: Path, env: dict[str, str]) -> list[dict[str, Any]]:
    terraform(["plan", "-input=false", "-out=adopt.tfplan"], workdir, env)
    return json.loads(terraform(["show", "-json", "adopt.tfplan"], workdir, env).stdout)["resource_changes"]


def test_adopt_imports_the_live_table_and_changes_nothing_of_it(tmp_path, capsys):
    with Emulator() as emulator:
        account = emulator.new_account()
        _live_table(emulator, account)
        blueprint = tmp_path / "blueprints" / "accounts.yaml"
        blueprint.parent.mkdir()
        code = main(["adopt", *map(str, _describe(emulator, account, tmp_path)), "--out", str(blueprint)])
        assert code == 0, capsys.readouterr()
        assert "warning" not in capsys.readouterr().err  # every description was given

        stack = build_stacks([load_blueprint(blueprint)])
        out = tmp_path / "cdktf.out"
        synthesize(stack, out)
        [name] = [path.name for path in (out / "stacks").iterdir()]
        workdir = stack_workdir(tmp_path / "work", name)
        shutil.copytree(out / "stacks" / name, workdir)
        (workdir / "provider_override.tf.json").write_text(json.dumps(emulator.provider_override(account)))
        env = terraform_environment(workdir)
        terraform(["init", "-input=false"], workdir, env)

        changes = _plan(workdir, env)
        imported = {c["address"]: c for c in changes if c["change"].get("importing")}
        assert {c["type"] for c in imported.values()} == {"aws_dynamodb_table", "aws_appautoscaling_target",
                                                          "aws_appautoscaling_policy"}
        assert len([a for a in imported if a.startswith("aws_appautoscaling_target.")]) == 6  # table + 2 GSIs, r/w
        assert len([a for a in imported if a.startswith("aws_appautoscaling_policy.")]) == 6
        for address, change in imported.items():
            assert change["change"]["actions"] == ["no-op"], (address, change["change"])
        others = [c for c in changes if not c["change"].get("importing") and c["change"]["actions"] != ["no-op"]]
        assert others, "Tablewright's alarms and change rule are added"
        for change in others:
            if change["mode"] == "data":  # read at apply time (they depend on what is created)
                assert change["change"]["actions"] == ["read"], change["address"]
                continue
            assert change["change"]["actions"] == ["create"], (change["address"], change["change"])
            assert change["type"] in ADDITIONS, change["address"]

        terraform(["apply", "-input=false", "adopt.tfplan"], workdir, env)
        replan = terraform(["plan", "-input=false", "-detailed-exitcode"], workdir, env, check=False)
        assert replan.returncode == 0, replan.stdout + replan.stderr
        live = emulator.client("dynamodb", account).describe_table(TableName=TABLE)["Table"]
        assert [k["AttributeName"] for k in live["KeySchema"]] == ["tenant_id", "created"]
        assert sorted(i["IndexName"] for i in live["GlobalSecondaryIndexes"]) == sorted(INDEXES)
