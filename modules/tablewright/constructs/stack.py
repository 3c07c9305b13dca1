"""One Terraform stack per blueprint stack: backend, provider, the table construct and the outputs."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tablewright.constructs.access import ACCESS_OUTPUT, access_output
from tablewright.constructs.assembly import table_references, table_terraform
from tablewright.constructs.cdk import App, FragmentStack, LocalBackend, S3Backend, TerraformStack, add_fragment
from tablewright.constructs.record import GATE_OUTPUT_DESCRIPTION, STACK_OUTPUT, terraform_record
from tablewright.constructs.state import local_state_path

if TYPE_CHECKING:
    from tablewright.stacks.stack import Stack

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
    if backend.use_lockfile:  # newer than cdktf's S3Backend arguments
        # https://developer.hashicorp.com/terraform/language/backend/s3: `use_lockfile` arrived in Terraform 1.10
        # (generally available since 1.11); an older CLI would fail on it with a generic backend error.
        stack.add_override("terraform.backend.s3.use_lockfile", True)
        stack.add_override("terraform.required_version", ">= 1.10")


def construct_stack(app: App, plan: Stack) -> FragmentStack:
    """The stack and its backend are cdktf's; the table, the provider and the outputs are plain data rendered
    when `synth` writes the stack's file (what `TablewrightTable` emits, without a construct for it: a fleet
    keeps its stacks, not a thousand rendered tables, and makes one jsii object per stack and its backend)."""
    stack = FragmentStack(app, plan.name)
    add_backend(stack, plan)
    add_fragment(stack, "terraform", lambda: table_terraform(plan, stack.path))
    add_fragment(stack, "outputs", lambda: stack_terraform(plan))
    return stack


def stack_terraform(plan: Stack) -> dict[str, Any]:
    """The JSON the provider and each `TerraformOutput` write (the gate's as `add_gate_output` writes it), with
    the entries cdktf adds to the stack's `//` metadata for the outputs."""
    blueprint = plan.design.blueprint
    table = table_references(plan.design)
    outputs = {"table_name": table.table_name, "table_arn": table.table_arn, "stream_arn": table.stream_arn,
               "change_calendar": table.change_calendar, "alarm_topic_arn": table.alarm_topic_arn,
               ACCESS_OUTPUT: access_output(plan.design), STACK_OUTPUT: _without_nulls(terraform_record(plan.design))}
    names = [name for name, value in outputs.items() if value is not None]
    written: dict[str, Any] = {
        "//": {"outputs": {plan.name: {name: name for name in names}}},
        "output": {name: {"value": outputs[name]} for name in names},
        "provider": {"aws": [{"region": blueprint.region} if blueprint.region else {}]},
        "terraform": {"required_providers": {"aws": {"version": blueprint.terraform.aws_provider,
                                                     "source": AWS_PROVIDER_SOURCE}}},
    }
    written["output"][STACK_OUTPUT]["description"] = GATE_OUTPUT_DESCRIPTION
    return written


def _without_nulls(value: Any) -> Any:
    """`value` as jsii hands it to Node.js: a None in an object is a missing key."""
    if isinstance(value, dict):
        return {key: _without_nulls(item) for key, item in value.items() if item is not None}
    if isinstance(value, list):
        return [_without_nulls(item) for item in value]
    return value
