"""One Terraform stack per blueprint stack: backend, provider, the table construct and the outputs."""

from __future__ import annotations

from typing import TYPE_CHECKING

from modules.constructs.cdk import (
    App,
    FragmentStack,
    LocalBackend,
    Provider,
    S3Backend,
    TerraformFragment,
    TerraformStack,
)
from modules.constructs.construct import TablewrightTable
from modules.constructs.naming import logical_id
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
    Provider(stack, "aws", AWS_PROVIDER_SOURCE, blueprint.terraform.aws_provider,
             {"region": blueprint.region} if blueprint.region else {})
    table = TablewrightTable(stack, logical_id(blueprint.blueprint), stack=plan)
    outputs = {"table_name": table.table_name, "table_arn": table.table_arn, "stream_arn": table.stream_arn,
               "change_calendar": table.change_calendar, "alarm_topic_arn": table.alarm_topic_arn}
    # One element for the references, not one jsii object each: the JSON a TerraformOutput writes, with the
    # entry cdktf adds to the stack's `//` metadata for it.
    names = [name for name, value in outputs.items() if value is not None]
    written = {"//": {"outputs": {plan.name: {name: name for name in names}}},
               "output": {name: {"value": outputs[name]} for name in names}}
    TerraformFragment(stack, "outputs", lambda: written)
    table.add_gate_output()
    return stack
