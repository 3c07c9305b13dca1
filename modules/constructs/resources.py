"""Typed arguments of the Terraform resources we emit, named exactly as the AWS provider names them.

Each model validates what we put in before synthesis; `terraform validate` against the real provider
schema (in the tests) checks that the names and shapes are right. Values may be Terraform
expressions (`${...}`) where a reference or function is needed, hence `int | str` in places.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

Number = int | float | str


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


class LocalSecondaryIndex(Block):
    name: str
    range_key: str
    projection_type: Literal["KEYS_ONLY", "INCLUDE", "ALL"]
    non_key_attributes: list[str] | None = None


class PointInTimeRecovery(Block):
    enabled: bool


class ServerSideEncryption(Block):
    enabled: bool
    kms_key_arn: str | None = None


class Ttl(Block):
    attribute_name: str
    enabled: bool


class DynamodbTable(ResourceArguments):
    terraform_type: ClassVar[str] = "aws_dynamodb_table"
    name: str
    billing_mode: Literal["PROVISIONED", "PAY_PER_REQUEST"]
    hash_key: str
    range_key: str
    read_capacity: int | None = None
    write_capacity: int | None = None
    attribute: list[TableAttribute]
    global_secondary_index: list[GlobalSecondaryIndex] | None = None
    local_secondary_index: list[LocalSecondaryIndex] | None = None
    point_in_time_recovery: PointInTimeRecovery
    server_side_encryption: ServerSideEncryption | None = None
    ttl: Ttl | None = None
    deletion_protection_enabled: bool
    stream_enabled: bool
    stream_view_type: Literal["KEYS_ONLY", "NEW_IMAGE", "OLD_IMAGE", "NEW_AND_OLD_IMAGES"] | None = None
    table_class: Literal["STANDARD", "STANDARD_INFREQUENT_ACCESS"]
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
    scalable_dimension: Literal[
        "dynamodb:table:ReadCapacityUnits",
        "dynamodb:table:WriteCapacityUnits",
        "dynamodb:index:ReadCapacityUnits",
        "dynamodb:index:WriteCapacityUnits",
    ]
    min_capacity: int = Field(ge=1)
    max_capacity: int = Field(ge=1)
    tags: dict[str, str] | None = None


class PredefinedMetricSpecification(Block):
    predefined_metric_type: Literal["DynamoDBReadCapacityUtilization", "DynamoDBWriteCapacityUtilization"]


class TargetTrackingConfiguration(Block):
    target_value: float = Field(ge=20, le=90)
    predefined_metric_specification: PredefinedMetricSpecification


class AppautoscalingPolicy(ResourceArguments):
    terraform_type: ClassVar[str] = "aws_appautoscaling_policy"
    name: str
    policy_type: Literal["TargetTrackingScaling"] = "TargetTrackingScaling"
    service_namespace: str
    resource_id: str
    scalable_dimension: str
    target_tracking_scaling_policy_configuration: TargetTrackingConfiguration
