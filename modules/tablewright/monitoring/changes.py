"""The change rule: which CloudTrail events about the table reach the alarm topic, and which do not.

EventBridge receives CloudTrail management events on the default bus ("AWS API Call via CloudTrail")
only while a trail logs management events in the region, and never the read-only calls (List, Get,
Describe). The pattern matches:

- the table's management calls that carry `requestParameters.tableName`, by name or by ARN (the API
  accepts either: `suffix :table/NAME` matches the ARN in any partition, region and account, and
  not `xNAME`), or that name it in `responseElements.tableDescription.tableName` (AWS's UpdateTable
  sample carries it only there);
- the calls that carry `requestParameters.resourceArn` (tags and resource policies), on the table's
  ARN or on one of its streams' (`.../table/NAME/stream/LABEL`);

made by anyone but Application Auto Scaling. The autoscaler calls UpdateTable through its
service-linked role (AWSServiceRoleForApplicationAutoScaling_DynamoDBTable, path
/aws-service-role/dynamodb.application-autoscaling.amazonaws.com/, which no other role can have), so
its calls carry that role as `userIdentity.sessionContext.sessionIssuer.arn`. `anything-but` does not
match a missing field, so a second branch keeps callers without a session issuer (IAM users, the root
user, AWS services): only the autoscaler's calls are left out.
"""

from __future__ import annotations

from typing import Any

from tablewright.blueprint.language import Blueprint

AUTOSCALER_ROLE = "AWSServiceRoleForApplicationAutoScaling_DynamoDBTable"
AUTOSCALER_PRINCIPAL = "dynamodb.application-autoscaling.amazonaws.com"
# The role's ARN in any partition and account (the path is reserved for service-linked roles).
AUTOSCALER_ROLE_ARN = f"arn:aws*:iam::*:role/aws-service-role/{AUTOSCALER_PRINCIPAL}/{AUTOSCALER_ROLE}"

# Management calls that change a table and name it in requestParameters.tableName.
TABLE_EVENTS = [
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
# Management calls that change a table (or its stream) and name it in requestParameters.resourceArn.
RESOURCE_EVENTS = ["DeleteResourcePolicy", "PutResourcePolicy", "TagResource", "UntagResource"]


def event_pattern(table_name: str) -> dict[str, Any]:
    """The EventBridge pattern of CloudTrail calls that change `table_name` (a physical name), the
    autoscaler's excepted."""
    table_arn = f":table/{table_name}"
    return {
        "source": ["aws.dynamodb"],
        "detail-type": ["AWS API Call via CloudTrail"],
        "detail": {
            "eventSource": ["dynamodb.amazonaws.com"],
            "userIdentity": {"$or": [
                {"sessionContext": {"sessionIssuer": {"arn": [{"anything-but": {"wildcard": AUTOSCALER_ROLE_ARN}}]}}},
                {"sessionContext": {"sessionIssuer": {"arn": [{"exists": False}]}}},
            ]},
            "$or": [
                {"eventName": TABLE_EVENTS, "requestParameters": {"tableName": [table_name, {"suffix": table_arn}]}},
                # AWS's own UpdateTable sample names the table only in its response: match there too.
                {"eventName": TABLE_EVENTS, "responseElements": {"tableDescription": {"tableName": [table_name]}}},
                {"eventName": RESOURCE_EVENTS, "requestParameters": {"resourceArn": [
                    {"suffix": table_arn}, {"wildcard": f"*{table_arn}/stream/*"}]}},
            ],
        },
    }


def trail_name(table_name: str) -> str:
    """A CloudTrail trail name for the table: letters, digits and single dashes, starting and ending with
    a letter or digit (CloudTrail's naming rules)."""
    clean = "-".join(part for part in "".join(c if c.isalnum() else "-" for c in table_name).split("-") if part)
    return f"tablewright-{clean}-changes"[:128].rstrip("-")


def watched(blueprint: Blueprint) -> list[str]:
    """What the change rule watches and needs, in words (`explain` prints them)."""
    table = blueprint.table.name
    region = blueprint.region or "the stack's region"
    trail = (f"this stack creates the trail `{trail_name(table)}` (management write events, {region} only, logs "
             "in its own S3 bucket)" if blueprint.change_rules.trail == "create" else
             "`change_rules.trail: existing`: the account must already have one; "
             "Terraform cannot check it (hashicorp/aws 5.x has no trail data source)")
    notify = blueprint.alarms.notify
    topics = "the alarm topic this stack creates" if notify == "create" else ", ".join(notify)
    return [
        f"Watches CloudTrail API calls on {table}, by name or ARN: {', '.join(TABLE_EVENTS)}; and "
        f"{', '.join(RESOURCE_EVENTS)} on the table's ARN or its stream's.",
        f"Ignores Application Auto Scaling's capacity changes (UpdateTable by the service-linked role "
        f"{AUTOSCALER_ROLE}) and read-only calls (EventBridge receives no List, Get or Describe calls).",
        f"Needs a CloudTrail trail logging management events in {region}: {trail}.",
        f"Notifies {topics}.",
    ]
