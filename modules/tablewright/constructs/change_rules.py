"""Change rules around the maintenance window: the SSM Change Calendar that says when changes may be
applied (the single source of truth pipelines query), an EventBridge rule that reports every change
made to the table through the API, in or out of the window, to the alarm topic (the autoscaler's
capacity changes excepted: `modules/tablewright/monitoring/changes.py`), and, with `change_rules.trail: create`,
the CloudTrail trail the rule needs."""

from __future__ import annotations

import json

from tablewright.constructs.keys import ACCOUNT, ACCOUNT_DATA
from tablewright.constructs.naming import logical_id
from tablewright.constructs.resources import (
    Cloudtrail,
    CloudwatchEventRule,
    CloudwatchEventTarget,
    EventSelector,
    IamPolicyDocumentData,
    PolicyCondition,
    PolicyPrincipal,
    PolicyStatement,
    S3Bucket,
    S3BucketPolicy,
    S3BucketPublicAccessBlock,
    SsmDocument,
)
from tablewright.constructs.terraform import Block, data_source, reference, resource
from tablewright.design.design import TableDesign
from tablewright.monitoring.changes import event_pattern, trail_name
from tablewright.monitoring.window import calendar_text

CLOUDTRAIL = "cloudtrail.amazonaws.com"


def calendar_name(design: TableDesign) -> str:
    return f"{design.blueprint.table.name}-maintenance-window"


def change_rule(design: TableDesign, tags: dict[str, str]) -> Block:
    table = design.blueprint.table.name
    return resource(CloudwatchEventRule(
        name=f"{table}-changes"[:64],
        description=f"API changes to DynamoDB table {table} (CloudTrail), in or out of the maintenance window; "
                    "not the autoscaler's",
        event_pattern=json.dumps(event_pattern(table), sort_keys=True),
        tags=tags or None,
    ), logical_id(design.blueprint.blueprint, "changes"))


def rule_targets(design: TableDesign, rule: Block, topic_arns: list[str]) -> list[Block]:
    return [
        resource(CloudwatchEventTarget(rule=rule.ref("name"), target_id=f"alarm-topic-{number}", arn=arn),
                 logical_id(design.blueprint.blueprint, "changes", f"target_{number}"))
        for number, arn in enumerate(topic_arns, start=1)
    ]


def trail(design: TableDesign, tags: dict[str, str]) -> list[Block]:
    """`change_rules.trail: create`: a single-region trail of management write events, logging to a private
    bucket of its own whose policy admits CloudTrail for this trail only (AWS's bucket policy for trails,
    with `aws:SourceArn`). Nothing without it."""
    blueprint = design.blueprint
    if blueprint.change_rules.trail != "create" or not blueprint.alarms.enabled:
        return []
    base = logical_id(blueprint.blueprint, "trail")
    name = trail_name(blueprint.table.name)
    table = name.removeprefix("tablewright-").removesuffix("-changes").lower()
    prefix = "tw-trail-" + "".join(c for c in table if c.isalnum() or c == "-")
    bucket = resource(S3Bucket(bucket_prefix=prefix[:36].rstrip("-") + "-", tags=tags or None), base)
    private = resource(S3BucketPublicAccessBlock(bucket=bucket.ref("id")), logical_id(base, "private"))
    trail_arn = f"arn:{ACCOUNT.partition}:cloudtrail:{ACCOUNT.region}:{ACCOUNT.id}:trail/{name}"
    this_trail = PolicyCondition(test="StringEquals", variable="aws:SourceArn", values=[trail_arn])
    cloudtrail = [PolicyPrincipal(type="Service", identifiers=[CLOUDTRAIL])]
    document = data_source(IamPolicyDocumentData(statement=[
        PolicyStatement(sid="AWSCloudTrailAclCheck", actions=["s3:GetBucketAcl"], resources=[bucket.ref("arn")],
                        principals=cloudtrail, condition=[this_trail]),
        PolicyStatement(sid="AWSCloudTrailWrite", actions=["s3:PutObject"],
                        resources=[f"{bucket.ref('arn')}/AWSLogs/{ACCOUNT.id}/*"], principals=cloudtrail,
                        condition=[PolicyCondition(test="StringEquals", variable="s3:x-amz-acl",
                                                   values=["bucket-owner-full-control"]), this_trail]),
    ]), logical_id(base, "bucket_policy"))
    policy = resource(S3BucketPolicy(bucket=bucket.ref("id"), policy=document.ref("json")), logical_id(base, "policy"))
    logging = resource(Cloudtrail(
        name=name, s3_bucket_name=bucket.ref("id"), include_global_service_events=False, is_multi_region_trail=False,
        enable_log_file_validation=True,
        event_selector=[EventSelector(read_write_type="WriteOnly", include_management_events=True)],
        tags=tags or None,
    ), base, depends_on=[policy])  # CloudTrail checks that it may write to the bucket when the trail is created
    return [*ACCOUNT_DATA, bucket, private, document, policy, logging]


def calendar_ref(design: TableDesign, attribute: str) -> str:
    return reference(f"{SsmDocument.terraform_type}.{logical_id(design.blueprint.blueprint, 'window')}", attribute)


def change_calendar(design: TableDesign, tags: dict[str, str]) -> list[Block]:
    """The SSM Change Calendar of the maintenance window; none without a window."""
    window = design.blueprint.maintenance_window
    if window is None:
        return []
    return [resource(SsmDocument(name=calendar_name(design), content=calendar_text(window, design.blueprint.table.name),
                                 tags=tags or None), logical_id(design.blueprint.blueprint, "window"))]
