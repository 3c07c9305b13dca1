"""Synthesis: the Terraform a blueprint produces, its determinism, and the real provider's verdict."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest
import yaml

from tablewright.blueprint.load import load_blueprint, load_blueprints
from tablewright.stacks.stack import build_stacks
from tablewright.synth.synth import synthesize
from tests.conftest import BUNDLED, ROOT, bundled_stacks
from tests.support.terraform_support import missing_tool, terraform_environment, validate


def synth_one(path: Path, out: Path, environment: str = "prod") -> dict:
    [written] = synthesize(build_stacks([load_blueprint(path, environment)]), out)
    return json.loads(written.read_text())


@pytest.fixture(scope="module")
def bundled_out(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("bundled") / "cdktf.out"
    synthesize(build_stacks(bundled_stacks()), out)
    return out


def stack(out: Path, name: str) -> dict:
    return json.loads((out / "stacks" / name / "cdk.tf.json").read_text())


def test_provisioned_table_resources(bundled_out):
    config = stack(bundled_out, "crm-prod")
    resources = config["resource"]
    table = resources["aws_dynamodb_table"]["crm"]
    assert table["name"] == "prod-crm_main"
    indexes = [gsi["name"] for gsi in table["global_secondary_index"]]
    assert indexes == ["GSI1", "GSI2"]
    # Only key attributes are declared.
    assert sorted(a["name"] for a in table["attribute"]) == ["GSI1PK", "GSI1SK", "GSI2PK", "GSI2SK", "PK", "SK"]
    assert table["point_in_time_recovery"] == {"enabled": True}
    assert table["deletion_protection_enabled"] is True
    assert table["ttl"] == {"attribute_name": "expiresAt", "enabled": True}
    assert table["lifecycle"] == {"ignore_changes": ["read_capacity", "write_capacity"], "prevent_destroy": True}
    # GSI capacity follows what the autoscaler set (see constructs/table.py), starting at the minimum.
    assert all("local.crm_live_gsis" in gsi["read_capacity"] for gsi in table["global_secondary_index"])

    targets = resources["aws_appautoscaling_target"]
    policies = resources["aws_appautoscaling_policy"]
    expected = {f"crm{part}_{d}" for part in ("", "_gsi1", "_gsi2") for d in ("read", "write")}
    assert set(targets) == expected and set(policies) == expected
    assert targets["crm_gsi2_write"]["resource_id"] == "table/${aws_dynamodb_table.crm.name}/index/GSI2"
    assert targets["crm_gsi2_write"]["scalable_dimension"] == "dynamodb:index:WriteCapacityUnits"
    assert (targets["crm_read"]["min_capacity"], targets["crm_read"]["max_capacity"]) == (1800, 5400)
    # GSIs take their own bounds from `indexes.<name>.capacity`.
    assert (targets["crm_gsi2_write"]["min_capacity"], targets["crm_gsi2_write"]["max_capacity"]) == (10, 100)
    policy = policies["crm_read"]
    assert policy["policy_type"] == "TargetTrackingScaling"
    assert policy["resource_id"] == "${aws_appautoscaling_target.crm_read.resource_id}"
    tracking = policy["target_tracking_scaling_policy_configuration"]
    assert tracking == {
        "target_value": 70,
        "predefined_metric_specification": {"predefined_metric_type": "DynamoDBReadCapacityUtilization"},
    }

    insights = resources["aws_dynamodb_contributor_insights"]
    assert insights["crm"] == {"//": insights["crm"]["//"], "table_name": "${aws_dynamodb_table.crm.name}"}
    assert insights["crm_gsi1"]["index_name"] == "GSI1"
    assert set(insights) == {"crm", "crm_gsi1", "crm_gsi2"}


def test_on_demand_table_has_no_autoscaling(bundled_out):
    resources = stack(bundled_out, "orders-prod")["resource"]
    table = resources["aws_dynamodb_table"]["orders"]
    assert table["billing_mode"] == "PAY_PER_REQUEST"
    assert "read_capacity" not in table
    assert table["lifecycle"] == {"prevent_destroy": True}  # production: Terraform refuses to destroy it
    assert all("read_capacity" not in gsi for gsi in table["global_secondary_index"])
    assert "aws_appautoscaling_target" not in resources
    assert table["stream_enabled"] is True and table["stream_view_type"] == "NEW_AND_OLD_IMAGES"


def test_bundled_gsis_are_never_projected_all(bundled_out):
    for loaded in bundled_stacks():
        table = next(iter(stack(bundled_out, loaded.stack_name)["resource"]["aws_dynamodb_table"].values()))
        assert {gsi["projection_type"] for gsi in table.get("global_secondary_index", [])} <= {"INCLUDE", "KEYS_ONLY"}


@pytest.mark.terraform
def test_customer_managed_key_is_created_with_rotation(write_blueprint, tmp_path):
    text = (BUNDLED[0].read_text()
            .replace("  ttl_attribute: expiresAt", "  ttl_attribute: expiresAt\n  encryption: customer_managed"))
    config = synth_one(write_blueprint(text), tmp_path / "out")
    key = config["resource"]["aws_kms_key"]["crm_key"]
    assert key["enable_key_rotation"] is True
    assert key["policy"] == "${data.aws_iam_policy_document.crm_key_policy.json}"
    [statement] = config["data"]["aws_iam_policy_document"]["crm_key_policy"]["statement"]
    assert statement["principals"][0]["identifiers"] == [
        "arn:${data.aws_partition.current.partition}:iam::${data.aws_caller_identity.current.account_id}:root"]
    # The alarm topic's key shares the account data sources, declared once.
    assert set(config["data"]["aws_iam_policy_document"]) == {
        "crm_key_policy", "crm_alarms_key_policy", "crm_alarms_topic_policy"}
    table = config["resource"]["aws_dynamodb_table"]["crm"]
    assert table["server_side_encryption"] == {"enabled": True, "kms_key_arn": "${aws_kms_key.crm_key.arn}"}
    validate(tmp_path / "out" / "stacks" / "crm-prod", terraform_environment(tmp_path))


def test_synthesis_is_byte_identical_across_runs(tmp_path):
    first, second = tmp_path / "one", tmp_path / "two"
    synthesize(build_stacks(bundled_stacks()), first)
    synthesize(build_stacks(bundled_stacks()), second)
    for path in sorted(first.rglob("*")):
        if path.is_file():
            assert path.read_bytes() == (second / path.relative_to(first)).read_bytes(), path


def _reversed_yaml(data):
    if isinstance(data, dict):
        return {key: _reversed_yaml(value) for key, value in reversed(list(data.items()))}
    return data


@pytest.mark.parametrize("path", BUNDLED, ids=[p.stem for p in BUNDLED])
def test_reordering_the_yaml_changes_nothing(path, tmp_path, write_blueprint):
    original = synth_one(path, tmp_path / "a")
    reordered = tmp_path / path.name
    reordered.write_text(yaml.safe_dump(_reversed_yaml(yaml.safe_load(path.read_text())), sort_keys=False))
    assert synth_one(reordered, tmp_path / "b") == original


def test_failed_synthesis_leaves_the_previous_output(tmp_path, write_blueprint, run_cli):
    out = tmp_path / "cdktf.out"
    code, _, _ = run_cli("synth", BUNDLED[0], "--out", out)
    assert code == 0
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    bad = write_blueprint(BUNDLED[0].read_text().replace("order: desc", "order: newest", 1), "bad.yaml")
    code, _, _ = run_cli("synth", bad, "--out", out)
    assert code == 2
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.yaml", "cdktf.out", "shared"]


def test_successful_synthesis_replaces_the_output(tmp_path, run_cli):
    out = tmp_path / "cdktf.out"
    assert run_cli("synth", BUNDLED[1], "--out", out)[0] == 0
    (out / "stacks" / "stale").mkdir()
    code, stdout, _ = run_cli("synth", BUNDLED[0], "--out", out)
    assert code == 0 and "cdk.tf.json" in stdout
    assert sorted(p.name for p in (out / "stacks").iterdir()) == ["crm-dev", "crm-prod"]


@pytest.mark.terraform
@pytest.mark.parametrize("name", [s.stack_name for s in bundled_stacks()])
def test_terraform_validate_accepts_every_bundled_stack(name, bundled_out, tmp_path):
    env = terraform_environment(tmp_path)
    work = tmp_path / name
    shutil.copytree(bundled_out / "stacks" / name, work)
    validate(work, env)


@pytest.mark.terraform
def test_terraform_validate_accepts_every_optional_setting(write_blueprint, tmp_path):
    text = (BUNDLED[0].read_text()
            .replace("  ttl_attribute: expiresAt", "  ttl_attribute: expiresAt\n  encryption: customer_managed\n"
                     "  stream: keys_only\n  table_class: standard_infrequent_access\n  deletion_protection: false\n"
                     "  point_in_time_recovery_days: 14")
            .replace("tags:", "region: eu-west-1\nchange_rules: {trail: create}\nenvironments: {dev: {alarms: "
                              "{notify: [arn:aws:sns:eu-west-1:111122223333:dev]}}}\ntags:")
            .replace("  GSI2:\n", "  GSI2:\n    projection: keys_only\n"))
    out = tmp_path / "out"
    config = synth_one(write_blueprint(text), out)
    assert config["provider"]["aws"] == [{"region": "eu-west-1"}]
    assert config["resource"]["aws_cloudtrail"]["crm_trail"]["is_multi_region_trail"] is False
    assert config["resource"]["aws_dynamodb_table"]["crm"]["point_in_time_recovery"] == {
        "enabled": True, "recovery_period_in_days": 14}
    validate(out / "stacks" / "crm-prod", terraform_environment(tmp_path))


@pytest.mark.terraform
def test_terraform_validate_accepts_on_demand_maxima_of_every_kind(write_blueprint, tmp_path):
    """Numbers on the table, `suggested` on one GSI, `unlimited` (-1) on the other, Standard-IA."""
    text = (BUNDLED[0].read_text()
            .replace("  billing: provisioned", "  billing: on_demand\n  table_class: standard_infrequent_access\n"
                                               "  max_throughput: {read: 3000, write: 900}")
            .replace("  GSI1:\n", "  GSI1:\n    max_throughput: suggested\n")
            .replace("  GSI2:\n", "  GSI2:\n    max_throughput: unlimited\n"))
    text = text[:text.index("  capacity:  ")] + text[text.index("  ttl_attribute:"):]
    out = tmp_path / "out"
    config = synth_one(write_blueprint(text), out)
    table = config["resource"]["aws_dynamodb_table"]["crm"]
    assert table["billing_mode"] == "PAY_PER_REQUEST"
    assert table["on_demand_throughput"] == {"max_read_request_units": 3000, "max_write_request_units": 900}
    limits = {g["name"]: g["on_demand_throughput"] for g in table["global_secondary_index"]}
    assert limits["GSI2"] == {"max_read_request_units": -1, "max_write_request_units": -1}
    assert limits["GSI1"]["max_read_request_units"] > 0
    validate(out / "stacks" / "crm-prod", terraform_environment(tmp_path))


def test_cdktf_app_entry_synthesizes_every_blueprint_under_blueprints(tmp_path):
    """`cdktf synth` runs `python3 main.py` with no arguments and CDKTF_OUTDIR set; cdktf.json lists no blueprints,
    so every blueprint under blueprints/ is synthesized (the shared base is none)."""
    out = tmp_path / "cli-out"
    env = dict(os.environ, CDKTF_OUTDIR=str(out))
    subprocess.run([sys.executable, "main.py"], cwd=ROOT, env=env, check=True, capture_output=True)
    assert "blueprints" not in json.loads((ROOT / "cdktf.json").read_text()).get("context", {})
    stacks = sorted(p.name for p in (out / "stacks").iterdir())
    assert stacks == sorted(s.stack_name for path in BUNDLED for s in load_blueprints(path))
    assert (out / "manifest.json").exists()


@pytest.mark.terraform
def test_the_cdktf_cli_synthesizes_what_python_main_py_synth_writes(tmp_path):
    """The npm `cdktf-cli` (pinned to the cdktf version, `npm ci`) runs the app of cdktf.json."""
    cli = ROOT / "node_modules" / ".bin" / "cdktf"
    if not cli.exists():
        missing_tool("the cdktf CLI is not installed (run `npm ci`)")
    pinned = json.loads((ROOT / "node_modules" / "cdktf-cli" / "package.json").read_text())["version"]
    assert pinned == version("cdktf")

    env = terraform_environment(tmp_path)  # the CLI runs `terraform version`: keep it offline
    # `python3` in cdktf.json's app must be this interpreter, whose environment has Tablewright installed.
    env.update(PATH=f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}", CI="1")
    cli_out = tmp_path / "cdktf-cli.out"
    result = subprocess.run([str(cli), "synth", "--output", str(cli_out)], cwd=ROOT, env=env,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr

    python_out = tmp_path / "python.out"
    synthesize(build_stacks(bundled_stacks()), python_out)
    python_stacks = sorted(p.name for p in (python_out / "stacks").iterdir())
    assert sorted(p.name for p in (cli_out / "stacks").iterdir()) == python_stacks
    for name in python_stacks:
        cli_json = (cli_out / "stacks" / name / "cdk.tf.json").read_bytes()
        assert cli_json == (python_out / "stacks" / name / "cdk.tf.json").read_bytes(), name
