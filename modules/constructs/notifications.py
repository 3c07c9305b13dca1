"""Where alarms and change events go: an encrypted SNS topic this stack creates, or given topic ARNs.

CloudWatch and EventBridge can only publish to an encrypted topic whose KMS key lets them use it,
so the topic gets a customer-managed key (rotated) whose policy admits the account and those two
services; the topic policy lets exactly CloudWatch alarms of this account and this stack's
EventBridge rule publish, nothing else.
"""

from __future__ import annotations

import json

from modules.constructs.cdk import Construct, Resource
from modules.constructs.keys import add_key, current_account, data_source
from modules.constructs.naming import logical_id
from modules.constructs.resources import (
    IamPolicyDocumentData,
    PolicyCondition,
    PolicyPrincipal,
    PolicyStatement,
    SnsTopic,
    SnsTopicPolicy,
)
from modules.design.model import TableDesign

PUBLISHERS = ["cloudwatch.amazonaws.com", "events.amazonaws.com"]


def add_topic(scope: Construct, design: TableDesign, rule_arn: str, tags: dict[str, str]) -> str:
    """Create the encrypted alarm topic; returns its ARN reference."""
    base = logical_id(design.blueprint.blueprint, "alarms")
    account = current_account(scope)
    publishers_use_key = PolicyStatement(
        sid="AlarmsAndRulesEncryptMessages", actions=["kms:Decrypt", "kms:GenerateDataKey*"], resources=["*"],
        principals=[PolicyPrincipal(type="Service", identifiers=PUBLISHERS)])
    key = add_key(scope, base, f"Encrypts the alarm topic of {design.blueprint.table.name} (Tablewright)", tags,
                  [publishers_use_key])
    topic = SnsTopic(name=f"{design.blueprint.table.name}-alarms", kms_master_key_id=key.ref("arn"),
                     tags=tags or None)
    topic_resource = Resource(scope, base, topic.terraform_type, topic.arguments())
    topic_arn = topic_resource.ref("arn")
    topic_policy = IamPolicyDocumentData(statement=[
        PolicyStatement(
            sid="CloudWatchAlarmsOfThisAccount", actions=["sns:Publish"], resources=[topic_arn],
            principals=[PolicyPrincipal(type="Service", identifiers=["cloudwatch.amazonaws.com"])],
            condition=[
                PolicyCondition(test="ArnLike", variable="aws:SourceArn",
                                values=[f"arn:{account.partition}:cloudwatch:{account.region}:{account.id}:alarm:*"]),
                PolicyCondition(test="StringEquals", variable="aws:SourceAccount", values=[account.id]),
            ]),
        PolicyStatement(
            sid="ChangeRuleOfThisStack", actions=["sns:Publish"], resources=[topic_arn],
            principals=[PolicyPrincipal(type="Service", identifiers=["events.amazonaws.com"])],
            condition=[PolicyCondition(test="ArnEquals", variable="aws:SourceArn", values=[rule_arn])]),
    ])
    policy_ref = data_source(scope, logical_id(base, "topic_policy"), topic_policy)
    policy = SnsTopicPolicy(arn=topic_arn, policy="${" + policy_ref + ".json}")
    Resource(scope, logical_id(base, "policy"), policy.terraform_type, policy.arguments())
    return topic_arn


def event_pattern(table_name: str, event_names: list[str]) -> str:
    """EventBridge pattern for CloudTrail management events that change this table."""
    return json.dumps({
        "source": ["aws.dynamodb"],
        "detail-type": ["AWS API Call via CloudTrail"],
        "detail": {
            "eventSource": ["dynamodb.amazonaws.com"],
            "eventName": event_names,
            "requestParameters": {"tableName": [table_name]},
        },
    }, sort_keys=True)
