"""One Terraform stack per blueprint: provider, backend, table, autoscaling, Contributor Insights."""

from __future__ import annotations

from modules.constructs.alarms import add_alarms
from modules.constructs.autoscaling import add_autoscaling
from modules.constructs.change_rules import add_change_calendar, add_change_rule, add_rule_targets
from modules.constructs.cdk import App, LocalBackend, Provider, S3Backend, TerraformOutput, TerraformStack
from modules.constructs.insights import add_contributor_insights
from modules.constructs.notifications import add_topic
from modules.constructs.table import add_table
from modules.design.model import TableDesign

AWS_PROVIDER_SOURCE = "hashicorp/aws"


def stack_tags(design: TableDesign) -> dict[str, str]:
    return {"tablewright:blueprint": design.blueprint.blueprint, **design.blueprint.tags}


def add_backend(stack: TerraformStack, design: TableDesign, name: str, environment: str | None) -> None:
    backend = design.blueprint.terraform.backend
    if backend.type == "local":
        # A relative state path keeps the output identical wherever the repository is checked out.
        LocalBackend(stack, path=f"terraform.{name}.tfstate")
        return
    key = backend.key.format(blueprint=design.blueprint.blueprint, env=environment or "default", stack=name)
    S3Backend(stack, bucket=backend.bucket, key=key, region=backend.region, dynamodb_table=backend.dynamodb_table,
              encrypt=True)


def build_stack(app: App, design: TableDesign, name: str, environment: str | None = None) -> TerraformStack:
    bp = design.blueprint
    stack = TerraformStack(app, name)
    add_backend(stack, design, name, environment)
    Provider(stack, "aws", AWS_PROVIDER_SOURCE, bp.terraform.aws_provider, {"region": bp.region} if bp.region else {})
    tags = stack_tags(design)
    table = add_table(stack, design, tags)
    add_autoscaling(stack, design, table, tags)
    add_contributor_insights(stack, design, table)
    add_observability(stack, design, table, tags)
    calendar = add_change_calendar(stack, design, tags)
    TerraformOutput(stack, "table_name", value=table.ref("name"))
    TerraformOutput(stack, "table_arn", value=table.ref("arn"))
    if bp.table.stream != "off":
        TerraformOutput(stack, "stream_arn", value=table.ref("stream_arn"))
    if calendar is not None:
        TerraformOutput(stack, "change_calendar", value=calendar.ref("name"))
    return stack


def add_observability(stack: TerraformStack, design: TableDesign, table, tags: dict[str, str]) -> None:
    """Alarms, and the rule that reports out-of-band changes, both delivered to the alarm topic(s)."""
    alarms = design.blueprint.alarms
    if not alarms.enabled:
        return
    rule = add_change_rule(stack, design, tags)
    topics = [add_topic(stack, design, rule.ref("arn"), tags)] if alarms.notify == "create" else list(alarms.notify)
    add_rule_targets(stack, design, rule, topics)
    add_alarms(stack, design, table, topics, tags)
    if alarms.notify == "create":
        TerraformOutput(stack, "alarm_topic_arn", value=topics[0])
