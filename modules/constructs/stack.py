"""One Terraform stack per blueprint stack: backend, provider, the table construct and the outputs."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from modules.constructs.cdk import App, FragmentStack, LocalBackend, S3Backend, TerraformStack, add_fragment
from modules.constructs.construct import TablewrightTable
from modules.constructs.naming import logical_id
from modules.constructs.record import GATE_OUTPUT_DESCRIPTION, STACK_OUTPUT
from modules.synth.output import local_state_path

if TYPE_CHECKING:
    from modules.stacks.stack import Stack

AWS_PROVIDER_SOURCE = "hashicorp/aws"


def add_backend(stack: TerraformStack, plan: Stack) -> None:
    blueprint = plan.design.blueprint
    backend = blueprint.terraform.backend
    if backend.type == "local":
        LocalBackend(stack, path=local_state_path(plan.name))
        return
    # `key` was resolved for this stack when the blueprint loaded ({blueprint}, {env}, {stack}).
    assert backend.bucket is not None  # the model requires `bucket` for the s3 backend
    S3Backend(stack, bucket=backend.bucket, key=backend.key, region=backend.region,
              dynamodb_table=backend.dynamodb_table, encrypt=True)


def construct_stack(app: App, plan: Stack) -> FragmentStack:
    blueprint = plan.design.blueprint
    stack = FragmentStack(app, plan.name)
    add_backend(stack, plan)
    table = TablewrightTable(stack, logical_id(blueprint.blueprint), stack=plan)
    outputs = {"table_name": table.table_name, "table_arn": table.table_arn, "stream_arn": table.stream_arn,
               "change_calendar": table.change_calendar, "alarm_topic_arn": table.alarm_topic_arn,
               STACK_OUTPUT: _without_nulls(table.record)}
    # Plain data, not a jsii object each: the JSON the provider and each TerraformOutput write (the gate's as
    # `add_gate_output` writes it), with the entries cdktf adds to the stack's `//` metadata for the outputs.
    names = [name for name, value in outputs.items() if value is not None]
    written: dict[str, Any] = {
        "//": {"outputs": {plan.name: {name: name for name in names}}},
        "output": {name: {"value": outputs[name]} for name in names},
        "provider": {"aws": [{"region": blueprint.region} if blueprint.region else {}]},
        "terraform": {"required_providers": {"aws": {"version": blueprint.terraform.aws_provider,
                                                     "source": AWS_PROVIDER_SOURCE}}},
    }
    written["output"][STACK_OUTPUT]["description"] = GATE_OUTPUT_DESCRIPTION
    add_fragment(stack, "outputs", lambda: written)
    return stack


def _without_nulls(value: Any) -> Any:
    """`value` as jsii hands it to Node.js: a None in an object is a missing key."""
    if isinstance(value, dict):
        return {key: _without_nulls(item) for key, item in value.items() if item is not None}
    if isinstance(value, list):
        return [_without_nulls(item) for item in value]
    return value
