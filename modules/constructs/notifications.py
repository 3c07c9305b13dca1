"""Where alarms and change events go: an encrypted SNS topic this stack creates, or given topic ARNs.

CloudWatch and EventBridge can only publish to an encrypted topic whose KMS key lets them use it,
so the topic gets a customer-managed key (rotated) whose policy admits the account and those two
services; the topic policy lets exactly CloudWatch alarms of this account and this stack's
EventBridge rule publish, nothing else.
"""

from __future__ import annotations

import json

from modules.constructs.cdk import Construct, DataSource, Resource
from modules.constructs.naming import logical_id
from modules.constructs.resources import (
    CallerIdentityData,
    IamPolicyDocumentData,
    KmsKeyWithPolicy,
    PartitionData,
    PolicyCondition,
    PolicyPrincipal,
    PolicyStatement,
    RegionData,
    SnsTopic,
    SnsTopicPolicy,
)
from modules.design.model import TableDesign

PUBLISHERS = ["cloudwatch.amazonaws.com", "events.amazonaws.com"]


def _data(scope: Construct, name: str, arguments) -> str:
    """Declare a data source and return the prefix of its attribute references."""
    DataSource(scope, name, arguments.terraform_type, arguments.arguments())
    return f"data.{arguments.terraform_type}.{name}"


def add_topic(scope: Construct, design: TableDesign, rule_arn: str, tags: dict[str, str]) -> str:
    """Create the encrypted alarm topic; returns its ARN reference."""
    base = logical_id(design.blueprint.blueprint, "alarms")
    account = "${" + _data(scope, "current", CallerIdentityData()) + ".account_id}"
    partition = "${" + _data(scope, "current", PartitionData()) + ".partition}"
    region = "${" + _data(scope, "current", RegionData()) + ".name}"
    key_policy = IamPolicyDocumentData(statement=[
        PolicyStatement(sid="AccountAdministersTheKey", actions=["kms:*"], resources=["*"],
                        principals=[PolicyPrincipal(type="AWS", identifiers=[f"arn:{partition}:iam::{account}:root"])]),
        PolicyStatement(sid="AlarmsAndRulesEncryptMessages", actions=["kms:Decrypt", "kms:GenerateDataKey*"],
                        resources=["*"], principals=[PolicyPrincipal(type="Service", identifiers=PUBLISHERS)]),
    ])
    key_policy_ref = _data(scope, logical_id(base, "key_policy"), key_policy)
    key = KmsKeyWithPolicy(description=f"Encrypts the alarm topic of {design.blueprint.table.name} (Tablewright)",
                           enable_key_rotation=True, deletion_window_in_days=30, policy="${" + key_policy_ref + ".json}",
                           tags=tags or None)
    key_resource = Resource(scope, logical_id(base, "key"), key.terraform_type, key.arguments())
    topic = SnsTopic(name=f"{design.blueprint.table.name}-alarms", kms_master_key_id=key_resource.ref("arn"),
                     tags=tags or None)
    topic_resource = Resource(scope, base, topic.terraform_type, topic.arguments())
    topic_arn = topic_resource.ref("arn")
    topic_policy = IamPolicyDocumentData(statement=[
        PolicyStatement(
            sid="CloudWatchAlarmsOfThisAccount", actions=["sns:Publish"], resources=[topic_arn],
            principals=[PolicyPrincipal(type="Service", identifiers=["cloudwatch.amazonaws.com"])],
            condition=[
                PolicyCondition(test="ArnLike", variable="aws:SourceArn",
                                values=[f"arn:{partition}:cloudwatch:{region}:{account}:alarm:*"]),
                PolicyCondition(test="StringEquals", variable="aws:SourceAccount", values=[account]),
            ]),
        PolicyStatement(
            sid="ChangeRuleOfThisStack", actions=["sns:Publish"], resources=[topic_arn],
            principals=[PolicyPrincipal(type="Service", identifiers=["events.amazonaws.com"])],
            condition=[PolicyCondition(test="ArnEquals", variable="aws:SourceArn", values=[rule_arn])]),
    ])
    policy_ref = _data(scope, logical_id(base, "topic_policy"), topic_policy)
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
