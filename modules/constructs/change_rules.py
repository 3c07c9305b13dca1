"""Change rules around the maintenance window: the SSM Change Calendar that says when changes may be
applied (the single source of truth pipelines query), and an EventBridge rule that reports every
change made to the table through the API, in or out of the window, to the alarm topic."""

from __future__ import annotations

from modules.constructs.cdk import Construct, Resource
from modules.constructs.naming import logical_id
from modules.constructs.notifications import event_pattern
from modules.constructs.resources import CloudwatchEventRule, CloudwatchEventTarget, SsmDocument
from modules.design.model import TableDesign
from modules.window import calendar_text

# Management API calls that change a table and name it in requestParameters.tableName.
CHANGE_EVENTS = [
    "DeleteTable",
    "DisableKinesisStreamingDestination",
    "EnableKinesisStreamingDestination",
    "UpdateContinuousBackups",
    "UpdateContributorInsights",
    "UpdateKinesisStreamingDestination",
    "UpdateTable",
    "UpdateTableReplicaAutoScaling",
    "UpdateTimeToLive",
]


def calendar_name(design: TableDesign) -> str:
    return f"{design.blueprint.table.name}-maintenance-window"


def add_change_rule(scope: Construct, design: TableDesign, tags: dict[str, str]) -> Resource:
    table = design.blueprint.table.name
    arguments = CloudwatchEventRule(
        name=f"{table}-changes"[:64],
        description=f"API changes to DynamoDB table {table} (CloudTrail), in or out of the maintenance window",
        event_pattern=event_pattern(table, CHANGE_EVENTS),
        tags=tags or None,
    )
    return Resource(scope, logical_id(design.blueprint.blueprint, "changes"), arguments.terraform_type,
                    arguments.arguments())


def add_rule_targets(scope: Construct, design: TableDesign, rule: Resource, topic_arns: list[str]) -> None:
    for number, arn in enumerate(topic_arns, start=1):
        arguments = CloudwatchEventTarget(rule=rule.ref("name"), target_id=f"alarm-topic-{number}", arn=arn)
        Resource(scope, logical_id(design.blueprint.blueprint, "changes", f"target_{number}"),
                 arguments.terraform_type, arguments.arguments())


def add_change_calendar(scope: Construct, design: TableDesign, tags: dict[str, str]) -> Resource | None:
    window = design.blueprint.maintenance_window
    if window is None:
        return None
    arguments = SsmDocument(name=calendar_name(design), content=calendar_text(window, design.blueprint.table.name),
                            tags=tags or None)
    return Resource(scope, logical_id(design.blueprint.blueprint, "window"), arguments.terraform_type,
                    arguments.arguments())
