"""Where alarms and change events go: an encrypted SNS topic this stack creates, or given topic ARNs.

CloudWatch and EventBridge can only publish to an encrypted topic whose KMS key lets them use it,
so the topic gets a customer-managed key (rotated) whose policy admits the account and those two
services; the topic policy lets exactly CloudWatch alarms of this account and this stack's
EventBridge rule publish, nothing else.
"""

from __future__ import annotations

from tablewright.constructs.keys import ACCOUNT, key_ref, kms_key
from tablewright.constructs.naming import logical_id, physical_name
from tablewright.constructs.resources import (
    IamPolicyDocumentData,
    PolicyCondition,
    PolicyPrincipal,
    PolicyStatement,
    SnsTopic,
    SnsTopicPolicy,
)
from tablewright.constructs.terraform import Block, data_source, reference, resource
from tablewright.design.design import TableDesign

PUBLISHERS = ["cloudwatch.amazonaws.com", "events.amazonaws.com"]


def _base(design: TableDesign) -> str:
    return logical_id(design.blueprint.blueprint, "alarms")


def topic_arn(design: TableDesign) -> str:
    """The ARN reference of the alarm topic `alarm_topic` creates."""
    return reference(f"{SnsTopic.terraform_type}.{_base(design)}", "arn")


def alarm_topic(design: TableDesign, rule_arn: str, tags: dict[str, str]) -> list[Block]:
    """The encrypted alarm topic, its key and its policy (publishers: this account's alarms, `rule_arn`)."""
    base = _base(design)
    publishers_use_key = PolicyStatement(
        sid="AlarmsAndRulesEncryptMessages", actions=["kms:Decrypt", "kms:GenerateDataKey*"], resources=["*"],
        principals=[PolicyPrincipal(type="Service", identifiers=PUBLISHERS)])
    key = kms_key(base, f"Encrypts the alarm topic of {design.blueprint.table.name} (Tablewright)", tags,
                  [publishers_use_key], design.blueprint.production)
    topic = resource(SnsTopic(name=physical_name(design.blueprint.table.name, "-alarms"),
                              kms_master_key_id=key_ref(base, "arn"), tags=tags or None), base)
    arn = topic.ref("arn")
    topic_policy = data_source(IamPolicyDocumentData(statement=[
        PolicyStatement(
            sid="CloudWatchAlarmsOfThisAccount", actions=["sns:Publish"], resources=[arn],
            principals=[PolicyPrincipal(type="Service", identifiers=["cloudwatch.amazonaws.com"])],
            condition=[
                PolicyCondition(test="ArnLike", variable="aws:SourceArn",
                                values=[f"arn:{ACCOUNT.partition}:cloudwatch:{ACCOUNT.region}:{ACCOUNT.id}:alarm:*"]),
                PolicyCondition(test="StringEquals", variable="aws:SourceAccount", values=[ACCOUNT.id]),
            ]),
        PolicyStatement(
            sid="ChangeRuleOfThisStack", actions=["sns:Publish"], resources=[arn],
            principals=[PolicyPrincipal(type="Service", identifiers=["events.amazonaws.com"])],
            condition=[PolicyCondition(test="ArnEquals", variable="aws:SourceArn", values=[rule_arn])]),
    ]), logical_id(base, "topic_policy"))
    policy = resource(SnsTopicPolicy(arn=arn, policy=topic_policy.ref("json")), logical_id(base, "policy"))
    return [*key, topic, topic_policy, policy]
