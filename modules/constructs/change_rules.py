"""Change rules around the maintenance window: the SSM Change Calendar that says when changes may be
applied (the single source of truth pipelines query), and an EventBridge rule that reports every
change made to the table through the API, in or out of the window, to the alarm topic."""

from __future__ import annotations

from modules.constructs.naming import logical_id
from modules.constructs.notifications import event_pattern
from modules.constructs.resources import CloudwatchEventRule, CloudwatchEventTarget, SsmDocument
from modules.constructs.terraform import Block, reference, resource
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


def change_rule(design: TableDesign, tags: dict[str, str]) -> Block:
    table = design.blueprint.table.name
    return resource(CloudwatchEventRule(
        name=f"{table}-changes"[:64],
        description=f"API changes to DynamoDB table {table} (CloudTrail), in or out of the maintenance window",
        event_pattern=event_pattern(table, CHANGE_EVENTS),
        tags=tags or None,
    ), logical_id(design.blueprint.blueprint, "changes"))


def rule_targets(design: TableDesign, rule: Block, topic_arns: list[str]) -> list[Block]:
    return [
        resource(CloudwatchEventTarget(rule=rule.ref("name"), target_id=f"alarm-topic-{number}", arn=arn),
                 logical_id(design.blueprint.blueprint, "changes", f"target_{number}"))
        for number, arn in enumerate(topic_arns, start=1)
    ]


def calendar_ref(design: TableDesign, attribute: str) -> str:
    return reference(f"{SsmDocument.terraform_type}.{logical_id(design.blueprint.blueprint, 'window')}", attribute)


def change_calendar(design: TableDesign, tags: dict[str, str]) -> list[Block]:
    """The SSM Change Calendar of the maintenance window; none without a window."""
    window = design.blueprint.maintenance_window
    if window is None:
        return []
    return [resource(SsmDocument(name=calendar_name(design), content=calendar_text(window, design.blueprint.table.name),
                                 tags=tags or None), logical_id(design.blueprint.blueprint, "window"))]
