"""`TablewrightTable` in a user's own cdktf app: the same resources `main.py synth` writes, beside the
user's provider, backend and resources, valid for Terraform."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

# A user's app imports cdktf itself (Tablewright keeps its own cdktf imports in modules/tablewright/constructs/cdk.py).
from cdktf import App, S3Backend, TerraformOutput, TerraformResource, TerraformStack

from tablewright import TablewrightTable
from tablewright.blueprint.load import load_blueprint
from tablewright.constructs.cdk import Provider
from tablewright.errors import TablewrightError
from tablewright.stacks.stack import build_stacks
from tablewright.synth.synth import synthesize
from tests.conftest import ROOT
from tests.support.design_helpers import OVERSIZED_ITEM
from tests.support.terraform_support import terraform_environment, validate

CRM = ROOT / "blueprints" / "crm.yaml"
ORDERS = ROOT / "blueprints" / "orders.yaml"


def user_app(out: Path, name: str, tables: list[tuple[str, Path, str]], gate_output: bool = False) -> dict:
    """The README's example: a stack with its own backend, provider and bucket, plus Tablewright tables
    (`gate_output`: the first with the output the plan gate reads)."""
    app = App(outdir=str(out), stack_traces=False)
    stack = TerraformStack(app, name)
    S3Backend(stack, bucket="acme-terraform-state", key=f"{name}/terraform.tfstate", region="eu-west-1")
    Provider(stack, "aws", "hashicorp/aws", "~> 5.100", {"region": "eu-west-1"})  # or the prebuilt AwsProvider
    bucket = TerraformResource(stack, "exports", terraform_resource_type="aws_s3_bucket")
    bucket.add_override("bucket", "acme-orders-exports")
    for position, (construct_id, path, env) in enumerate(tables):
        table = TablewrightTable.from_blueprint(stack, construct_id, path, env=env)
        TerraformOutput(stack, f"{construct_id}_table", value=table.table_name)
        if gate_output and position == 0:
            table.add_gate_output()
    app.synth()
    return json.loads((out / "stacks" / name / "cdk.tf.json").read_text())


def synth_main(path: Path, env: str, out: Path) -> dict:
    [written] = synthesize(build_stacks([load_blueprint(path, env)]), out)
    return json.loads(written.read_text())


def moved_to(config: dict, stack: str) -> dict:
    """`config`'s resources, data sources and locals with the `//` paths cdktf would give them in `stack`."""
    moved = {key: copy.deepcopy(config.get(key, {})) for key in ("resource", "data", "locals")}
    for kind in ("resource", "data"):
        for blocks in moved[kind].values():
            for body in blocks.values():
                metadata = body["//"]["metadata"]
                metadata["path"] = f"{stack}/{metadata['path'].split('/', 1)[1]}"
    return moved


def test_the_construct_in_a_users_stack_writes_what_synth_writes(tmp_path):
    expected = synth_main(CRM, "prod", tmp_path / "main")
    user = user_app(tmp_path / "user", "shop", [("crm", CRM, "prod")])

    bucket = user["resource"].pop("aws_s3_bucket")
    assert bucket["exports"]["bucket"] == "acme-orders-exports"
    assert {key: user.get(key, {}) for key in ("resource", "data", "locals")} == moved_to(expected, "shop")
    # The user's stack owns the backend and the provider; the table's references are Terraform expressions.
    assert user["terraform"]["backend"] == {"s3": {"bucket": "acme-terraform-state", "key": "shop/terraform.tfstate",
                                                   "region": "eu-west-1"}}
    assert user["provider"] == {"aws": [{"region": "eu-west-1"}]}
    assert user["output"] == {"crm_table": {"value": "${aws_dynamodb_table.crm.name}"}}


def test_with_the_same_stack_name_the_blocks_are_byte_for_byte_those_of_synth(tmp_path):
    expected = synth_main(ORDERS, "prod", tmp_path / "main")
    user = user_app(tmp_path / "user", "orders-prod", [("orders", ORDERS, "prod")])
    user["resource"].pop("aws_s3_bucket")
    for key in ("resource", "data", "locals"):
        assert json.dumps(user.get(key), sort_keys=True) == json.dumps(expected.get(key), sort_keys=True), key


def test_the_construct_exposes_references_to_what_it_creates(tmp_path):
    app = App(outdir=str(tmp_path))
    stack = TerraformStack(app, "refs")
    crm = TablewrightTable.from_blueprint(stack, "crm", CRM, env="prod")
    orders = TablewrightTable.from_blueprint(stack, "orders", ORDERS, env="dev")
    assert (crm.table_name, crm.table_arn) == ("${aws_dynamodb_table.crm.name}", "${aws_dynamodb_table.crm.arn}")
    assert crm.alarm_topic_arn == "${aws_sns_topic.crm_alarms.arn}" and crm.stream_arn is None
    assert crm.change_calendar == "${aws_ssm_document.crm_window.name}"
    assert orders.stream_arn == "${aws_dynamodb_table.orders.stream_arn}"
    assert orders.alarm_topic_arn is None  # development notifies a given topic
    assert [child.node.id for child in crm.node.children] == ["terraform"]  # one cdktf element per table


def test_two_tables_of_one_blueprint_cannot_share_a_stack(tmp_path):
    stack = TerraformStack(App(outdir=str(tmp_path)), "twice")
    TablewrightTable.from_blueprint(stack, "prod", CRM, env="prod")
    with pytest.raises(TablewrightError, match=r"aws_cloudwatch_event_rule.crm_changes") as error:
        TablewrightTable.from_blueprint(stack, "dev", CRM, env="dev")
    assert error.value.code == "E402"
    assert [child.node.id for child in stack.node.children] == ["prod"]


def test_a_blueprint_with_environments_needs_one_named(tmp_path):
    stack = TerraformStack(App(outdir=str(tmp_path)), "which")
    with pytest.raises(TablewrightError, match="environments") as error:
        TablewrightTable.from_blueprint(stack, "crm", CRM)
    assert error.value.code == "E607"


def test_from_blueprint_refuses_lint_errors_unless_allowed(tmp_path, write_blueprint):
    path = write_blueprint(OVERSIZED_ITEM)
    stack = TerraformStack(App(outdir=str(tmp_path / "out")), "traps")
    with pytest.raises(TablewrightError, match="lint TW303") as error:
        TablewrightTable.from_blueprint(stack, "refused", path)
    assert "allow_lint_errors=True" in error.value.hint and error.value.location.line == 8
    table = TablewrightTable.from_blueprint(stack, "allowed", path, allow_lint_errors=True)
    assert table.table_name == "${aws_dynamodb_table.traps.name}"


@pytest.mark.terraform
def test_terraform_validates_a_users_stack_with_two_tables(tmp_path):
    user = user_app(tmp_path / "user", "shop", [("crm", CRM, "prod"), ("orders", ORDERS, "prod")])
    assert {"crm", "orders", "exports"} <= {name for blocks in user["resource"].values() for name in blocks}
    assert set(user["data"]["aws_caller_identity"]) == {"current"}  # the account data sources are shared
    validate(tmp_path / "user" / "stacks" / "shop", terraform_environment(tmp_path))


# --- the plan gate on a user's stack ---------------------------------------------------------------


def test_the_gate_output_is_the_one_synth_writes(tmp_path):
    expected = synth_main(ORDERS, "prod", tmp_path / "main")
    user = user_app(tmp_path / "user", "shop", [("orders", ORDERS, "prod")], gate_output=True)
    assert user["output"]["tablewright"] == expected["output"]["tablewright"]
    assert set(user["output"]) == {"orders_table", "tablewright"}


def test_one_gate_output_per_stack(tmp_path):
    stack = TerraformStack(App(outdir=str(tmp_path)), "two")
    TablewrightTable.from_blueprint(stack, "crm", CRM, env="prod").add_gate_output()
    orders = TablewrightTable.from_blueprint(stack, "orders", ORDERS, env="prod")
    with pytest.raises(TablewrightError, match="already has the `tablewright` output, of two/crm") as error:
        orders.add_gate_output()
    assert error.value.code == "E402" and "a stack of its own" in (error.value.hint or "")


def test_the_gate_reads_a_users_stack_and_holds_its_other_resources_as_foreign(tmp_path):
    """The README's app planned: the table unchanged, the user's bucket created. The gate reads the
    `tablewright` output, and blocks the bucket (not Tablewright's) unless `--allow-foreign`."""
    from tablewright.review.gate import gate
    from tests.support.gate_support import NOW, entry, plan

    user = user_app(tmp_path / "user", "shop", [("orders", ORDERS, "prod")], gate_output=True)
    record = user["output"]["tablewright"]["value"]
    table = entry("aws_dynamodb_table.orders", ["no-op"], {"name": "prod-orders_main"}, {"name": "prod-orders_main"})
    bucket = entry("aws_s3_bucket.exports", ["create"], None, {"bucket": "acme-orders-exports"})
    the_plan = plan(table, bucket, outputs={"tablewright": {"actions": ["no-op"], "before": record, "after": record}})
    loaded = load_blueprint(ORDERS, "prod")
    stack, decision = gate(the_plan, loaded, NOW)
    assert [(c.address, c.cls, c.unblocked_by) for c in stack.changes] == [
        ("aws_s3_bucket.exports", "blocked", "foreign")]
    assert not decision.passed and "pass --allow-foreign" in decision.reason
    stack, decision = gate(the_plan, loaded, NOW, frozenset({"foreign"}))
    assert [c.cls for c in stack.changes] == ["window"] and decision.passed  # inside the recorded window
