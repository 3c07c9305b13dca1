"""One Terraform stack per blueprint: provider, backend, table, autoscaling, Contributor Insights."""

from __future__ import annotations

from modules.constructs.autoscaling import add_autoscaling
from modules.constructs.cdk import App, LocalBackend, Provider, TerraformOutput, TerraformStack
from modules.constructs.insights import add_contributor_insights
from modules.constructs.table import add_table
from modules.design.model import TableDesign

AWS_PROVIDER_SOURCE = "hashicorp/aws"
# 5.100 is the newest 5.x line; `~>` keeps 6.x (with its breaking changes) out until chosen deliberately.
AWS_PROVIDER_CONSTRAINT = "~> 5.100"


def stack_tags(design: TableDesign) -> dict[str, str]:
    return {"tablewright:blueprint": design.blueprint.blueprint, **design.blueprint.tags}


def build_stack(app: App, design: TableDesign, name: str) -> TerraformStack:
    bp = design.blueprint
    stack = TerraformStack(app, name)
    # A relative state path keeps the output identical wherever the repository is checked out.
    LocalBackend(stack, path=f"terraform.{name}.tfstate")
    Provider(stack, "aws", AWS_PROVIDER_SOURCE, AWS_PROVIDER_CONSTRAINT, {"region": bp.region} if bp.region else {})
    tags = stack_tags(design)
    table = add_table(stack, design, tags)
    add_autoscaling(stack, design, table, tags)
    add_contributor_insights(stack, design, table)
    TerraformOutput(stack, "table_name", value=table.ref("name"))
    TerraformOutput(stack, "table_arn", value=table.ref("arn"))
    if bp.table.stream != "off":
        TerraformOutput(stack, "stream_arn", value=table.ref("stream_arn"))
    return stack
