"""Typed arguments of the Terraform resources we emit, named exactly as the AWS provider names them.

Each model validates what we put in before synthesis; `terraform validate` against the real provider
schema (in the tests) checks that the names and shapes are right. Values may be Terraform
expressions (`${...}`) where a reference or function is needed, hence `int | str` in places.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

Number = int | float | str

# Values the constructs compute (from blueprint settings) rather than write out literally.
StreamViewType = Literal["KEYS_ONLY", "NEW_IMAGE", "OLD_IMAGE", "NEW_AND_OLD_IMAGES"]
TableClass = Literal["STANDARD", "STANDARD_INFREQUENT_ACCESS"]
ScalableDimension = Literal[
    "dynamodb:table:ReadCapacityUnits",
    "dynamodb:table:WriteCapacityUnits",
    "dynamodb:index:ReadCapacityUnits",
    "dynamodb:index:WriteCapacityUnits",
]
PredefinedMetricType = Literal["DynamoDBReadCapacityUtilization", "DynamoDBWriteCapacityUtilization"]
InsightsMode = Literal["ACCESSED_AND_THROTTLED_KEYS", "THROTTLED_KEYS"]
TreatMissingData = Literal["breaching", "notBreaching", "ignore", "missing"]
ReadWriteType = Literal["All", "ReadOnly", "WriteOnly"]
Statistic = Literal["Sum", "Average", "Maximum", "Minimum", "SampleCount"]


class Block(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    def arguments(self) -> dict[str, Any]:
        return self.model_dump(exclude_none=True, by_alias=True)


class ResourceArguments(Block):
    terraform_type: ClassVar[str]


# aws_dynamodb_table -------------------------------------------------------------------------------


class TableAttribute(Block):
    name: str
    type: Literal["S", "N", "B"]


class GlobalSecondaryIndex(Block):
    name: str
    hash_key: str
    range_key: str | None = None
    projection_type: Literal["KEYS_ONLY", "INCLUDE", "ALL"]
    non_key_attributes: list[str] | None = None
    read_capacity: Number | None = None
    write_capacity: Number | None = None
    on_demand_throughput: OnDemandThroughput | None = None
    warm_throughput: WarmThroughputBlock | None = None


class OnDemandThroughput(Block):
    """hashicorp/aws >= 5.72: the most request units per second an on-demand table or GSI serves; -1 removes it."""

    max_read_request_units: int = Field(ge=-1)
    max_write_request_units: int = Field(ge=-1)


class WarmThroughputBlock(Block):
    """hashicorp/aws >= 6.13: throughput kept ready without scaling up first."""

    read_units_per_second: int = Field(ge=12_000)
    write_units_per_second: int = Field(ge=4_000)


class LocalSecondaryIndex(Block):
    name: str
    range_key: str
    projection_type: Literal["KEYS_ONLY", "INCLUDE", "ALL"]
    non_key_attributes: list[str] | None = None


class PointInTimeRecovery(Block):
    enabled: bool
    recovery_period_in_days: int | None = None  # hashicorp/aws 5.100 has it (checked by `terraform validate`)


class ServerSideEncryption(Block):
    enabled: bool
    kms_key_arn: str | None = None


class Ttl(Block):
    attribute_name: str | None = None
    enabled: bool


class DynamodbTable(ResourceArguments):
    terraform_type: ClassVar[str] = "aws_dynamodb_table"
    name: str
    billing_mode: Literal["PROVISIONED", "PAY_PER_REQUEST"]
    hash_key: str
    range_key: str | None = None
    read_capacity: int | None = None
    write_capacity: int | None = None
    attribute: list[TableAttribute]
    global_secondary_index: list[GlobalSecondaryIndex] | None = None
    local_secondary_index: list[LocalSecondaryIndex] | None = None
    point_in_time_recovery: PointInTimeRecovery
    server_side_encryption: ServerSideEncryption | None = None
    ttl: Ttl
    deletion_protection_enabled: bool
    stream_enabled: bool
    stream_view_type: StreamViewType | None = None
    table_class: TableClass
    on_demand_throughput: OnDemandThroughput | None = None
    warm_throughput: WarmThroughputBlock | None = None
    tags: dict[str, str] | None = None


class DynamodbTablesData(ResourceArguments):
    terraform_type: ClassVar[str] = "aws_dynamodb_tables"


class DynamodbTableData(ResourceArguments):
    terraform_type: ClassVar[str] = "aws_dynamodb_table"
    name: str


class DynamodbContributorInsights(ResourceArguments):
    terraform_type: ClassVar[str] = "aws_dynamodb_contributor_insights"
    table_name: str
    index_name: str | None = None


# KMS ------------------------------------------------------------------------------------------------


class KmsKey(ResourceArguments):
    terraform_type: ClassVar[str] = "aws_kms_key"
    description: str
    enable_key_rotation: bool
    deletion_window_in_days: int = Field(ge=7, le=30)
    policy: str
    tags: dict[str, str] | None = None


class KmsAlias(ResourceArguments):
    terraform_type: ClassVar[str] = "aws_kms_alias"
    name: str
    target_key_id: str


# Application Auto Scaling ----------------------------------------------------------------------------


class AppautoscalingTarget(ResourceArguments):
    terraform_type: ClassVar[str] = "aws_appautoscaling_target"
    service_namespace: Literal["dynamodb"] = "dynamodb"
    resource_id: str
    scalable_dimension: ScalableDimension
    min_capacity: int = Field(ge=1)
    max_capacity: int = Field(ge=1)
    tags: dict[str, str] | None = None


class ScalableTargetAction(Block):
    min_capacity: int = Field(ge=1)
    max_capacity: int = Field(ge=1)


class AppautoscalingScheduledAction(ResourceArguments):
    terraform_type: ClassVar[str] = "aws_appautoscaling_scheduled_action"
    name: str
    service_namespace: str
    resource_id: str
    scalable_dimension: str
    schedule: str
    timezone: Literal["UTC"] = "UTC"
    scalable_target_action: ScalableTargetAction


class PredefinedMetricSpecification(Block):
    predefined_metric_type: PredefinedMetricType


class TargetTrackingConfiguration(Block):
    target_value: float = Field(ge=20, le=90)
    predefined_metric_specification: PredefinedMetricSpecification
    scale_in_cooldown: int | None = Field(default=None, ge=0)
    scale_out_cooldown: int | None = Field(default=None, ge=0)
    disable_scale_in: bool | None = None


class AppautoscalingPolicy(ResourceArguments):
    terraform_type: ClassVar[str] = "aws_appautoscaling_policy"
    name: str
    policy_type: Literal["TargetTrackingScaling"] = "TargetTrackingScaling"
    service_namespace: str
    resource_id: str
    scalable_dimension: str
    target_tracking_scaling_policy_configuration: TargetTrackingConfiguration


class DynamodbContributorInsightsWithMode(DynamodbContributorInsights):
    """hashicorp/aws >= 6.11 only: `mode` selects which keys are recorded."""

    mode: InsightsMode


# CloudWatch alarms -----------------------------------------------------------------------------------


class MetricStat(Block):
    metric_name: str
    namespace: str
    period: int
    stat: str
    dimensions: dict[str, str] | None = None


class MetricQuery(Block):
    id: str = Field(pattern=r"^[a-z][A-Za-z0-9_]*$")
    expression: str | None = None
    label: str | None = None
    return_data: bool | None = None
    metric: MetricStat | None = None


class CloudwatchMetricAlarm(ResourceArguments):
    terraform_type: ClassVar[str] = "aws_cloudwatch_metric_alarm"
    alarm_name: str = Field(max_length=255)
    alarm_description: str = Field(max_length=1024)
    comparison_operator: Literal["GreaterThanThreshold", "GreaterThanOrEqualToThreshold", "LessThanThreshold"]
    threshold: float
    evaluation_periods: int = Field(ge=1)
    datapoints_to_alarm: int = Field(ge=1)
    treat_missing_data: TreatMissingData
    metric_name: str | None = None
    namespace: str | None = None
    period: int | None = None
    statistic: Statistic | None = None
    extended_statistic: str | None = None
    dimensions: dict[str, str] | None = None
    metric_query: list[MetricQuery] | None = Field(default=None, max_length=20)
    alarm_actions: list[str]
    ok_actions: list[str]
    tags: dict[str, str] | None = None


# Notifications, change detection, change calendar ----------------------------------------------------


class SnsTopic(ResourceArguments):
    terraform_type: ClassVar[str] = "aws_sns_topic"
    name: str
    kms_master_key_id: str
    tags: dict[str, str] | None = None


class SnsTopicPolicy(ResourceArguments):
    terraform_type: ClassVar[str] = "aws_sns_topic_policy"
    arn: str
    policy: str


class PolicyPrincipal(Block):
    type: Literal["AWS", "Service"]
    identifiers: list[str]


class PolicyCondition(Block):
    test: str
    variable: str
    values: list[str]


class PolicyStatement(Block):
    sid: str = Field(pattern=r"^[A-Za-z0-9]+$")  # IAM: a Sid holds letters and digits only
    effect: Literal["Allow", "Deny"] = "Allow"
    actions: list[str]
    resources: list[str]
    principals: list[PolicyPrincipal] | None = None  # none in an identity policy (a role's)
    condition: list[PolicyCondition] | None = None


class IamPolicyDocumentData(ResourceArguments):
    terraform_type: ClassVar[str] = "aws_iam_policy_document"
    statement: list[PolicyStatement]


class CallerIdentityData(ResourceArguments):
    terraform_type: ClassVar[str] = "aws_caller_identity"


class PartitionData(ResourceArguments):
    terraform_type: ClassVar[str] = "aws_partition"


class RegionData(ResourceArguments):
    terraform_type: ClassVar[str] = "aws_region"


class CloudwatchEventRule(ResourceArguments):
    terraform_type: ClassVar[str] = "aws_cloudwatch_event_rule"
    name: str = Field(max_length=64, pattern=r"^[\.\-_A-Za-z0-9]+$")
    description: str
    event_pattern: str
    tags: dict[str, str] | None = None


class EventSelector(Block):
    read_write_type: ReadWriteType
    include_management_events: bool


class Cloudtrail(ResourceArguments):
    terraform_type: ClassVar[str] = "aws_cloudtrail"
    name: str = Field(pattern=r"^[A-Za-z0-9]+(-[A-Za-z0-9]+)*$", min_length=3, max_length=128)
    s3_bucket_name: str
    include_global_service_events: bool
    is_multi_region_trail: bool
    enable_log_file_validation: bool
    event_selector: list[EventSelector]
    tags: dict[str, str] | None = None


class S3Bucket(ResourceArguments):
    terraform_type: ClassVar[str] = "aws_s3_bucket"
    bucket_prefix: str = Field(pattern=r"^[a-z0-9][a-z0-9-]{0,36}$")
    tags: dict[str, str] | None = None


class S3BucketPublicAccessBlock(ResourceArguments):
    terraform_type: ClassVar[str] = "aws_s3_bucket_public_access_block"
    bucket: str
    block_public_acls: bool = True
    block_public_policy: bool = True
    ignore_public_acls: bool = True
    restrict_public_buckets: bool = True


class S3BucketPolicy(ResourceArguments):
    terraform_type: ClassVar[str] = "aws_s3_bucket_policy"
    bucket: str
    policy: str


class CloudwatchEventTarget(ResourceArguments):
    terraform_type: ClassVar[str] = "aws_cloudwatch_event_target"
    rule: str
    target_id: str
    arn: str


class SsmDocument(ResourceArguments):
    terraform_type: ClassVar[str] = "aws_ssm_document"
    name: str = Field(pattern=r"^[a-zA-Z0-9_\-.]{3,128}$")
    document_type: Literal["ChangeCalendar"] = "ChangeCalendar"
    document_format: Literal["TEXT"] = "TEXT"
    content: str
    tags: dict[str, str] | None = None


GlobalSecondaryIndex.model_rebuild()
