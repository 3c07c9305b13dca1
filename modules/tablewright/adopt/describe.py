"""What the AWS CLI prints about a table (only the fields adopt reads), merged from its output files."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from tablewright.blueprint.language import TableName
from tablewright.blueprint.yamlsource import load_yaml
from tablewright.errors import MAX_REPORTED, BlueprintError, ErrorCode, ErrorList, TablewrightError, render_path


class Aws(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True, strict=True)


class KeyElement(Aws):
    AttributeName: str
    KeyType: Literal["HASH", "RANGE"]


class AttributeDefinition(Aws):
    AttributeName: str
    AttributeType: Literal["S", "N", "B"]


class Throughput(Aws):
    ReadCapacityUnits: int = 0
    WriteCapacityUnits: int = 0


class ProjectionDescription(Aws):
    ProjectionType: Literal["KEYS_ONLY", "INCLUDE", "ALL"] = "ALL"
    NonKeyAttributes: list[str] = Field(default_factory=list)


class OnDemandMaximum(Aws):
    MaxReadRequestUnits: int = -1  # -1: none
    MaxWriteRequestUnits: int = -1


class IndexDescription(Aws):
    IndexName: str
    KeySchema: list[KeyElement] = Field(min_length=1, max_length=2)
    Projection: ProjectionDescription
    ProvisionedThroughput: Throughput | None = None
    OnDemandThroughput: OnDemandMaximum | None = None


class BillingMode(Aws):
    BillingMode: Literal["PROVISIONED", "PAY_PER_REQUEST"] = "PROVISIONED"


class Stream(Aws):
    StreamEnabled: bool = False
    StreamViewType: Literal["KEYS_ONLY", "NEW_IMAGE", "OLD_IMAGE", "NEW_AND_OLD_IMAGES"] | None = None


class Encryption(Aws):
    Status: Literal["ENABLING", "ENABLED", "DISABLING", "DISABLED", "UPDATING"] | None = None
    SSEType: Literal["AES256", "KMS"] | None = None
    KMSMasterKeyArn: str | None = None


class TableClass(Aws):
    TableClass: Literal["STANDARD", "STANDARD_INFREQUENT_ACCESS"] = "STANDARD"


class TableDescription(Aws):
    TableName: TableName
    TableArn: str | None = None
    KeySchema: list[KeyElement] = Field(min_length=1, max_length=2)
    AttributeDefinitions: list[AttributeDefinition]
    BillingModeSummary: BillingMode | None = None
    ProvisionedThroughput: Throughput | None = None
    GlobalSecondaryIndexes: list[IndexDescription] = Field(default_factory=list)
    LocalSecondaryIndexes: list[IndexDescription] = Field(default_factory=list)
    StreamSpecification: Stream | None = None
    SSEDescription: Encryption | None = None
    TableClassSummary: TableClass | None = None
    DeletionProtectionEnabled: bool = False
    Replicas: list[dict[str, Any]] = Field(default_factory=list)
    OnDemandThroughput: OnDemandMaximum | None = None


class TtlDescription(Aws):
    TimeToLiveStatus: Literal["ENABLED", "ENABLING", "DISABLED", "DISABLING"]
    AttributeName: str | None = None


class PitrDescription(Aws):
    PointInTimeRecoveryStatus: Literal["ENABLED", "DISABLED"]
    RecoveryPeriodInDays: int | None = None


class BackupsDescription(Aws):
    PointInTimeRecoveryDescription: PitrDescription | None = None


class ScalableTarget(Aws):
    ServiceNamespace: str
    ResourceId: str
    ScalableDimension: str
    MinCapacity: int
    MaxCapacity: int


class MetricSpecification(Aws):
    PredefinedMetricType: str


class TargetTracking(Aws):
    TargetValue: float
    PredefinedMetricSpecification: MetricSpecification | None = None
    ScaleInCooldown: int | None = None
    ScaleOutCooldown: int | None = None
    DisableScaleIn: bool = False


class ScalingPolicy(Aws):
    PolicyName: str
    ServiceNamespace: str
    ResourceId: str
    ScalableDimension: str
    PolicyType: str
    TargetTrackingScalingPolicyConfiguration: TargetTracking | None = None


class Tag(Aws):
    Key: str
    Value: str


class Description(Aws):
    """Everything the input files say, merged."""

    Table: TableDescription
    TimeToLiveDescription: TtlDescription | None = None
    ContinuousBackupsDescription: BackupsDescription | None = None
    ContributorInsightsStatus: Literal["ENABLING", "ENABLED", "DISABLING", "DISABLED", "FAILED"] | None = None
    ContributorInsightsMode: Literal["ACCESSED_AND_THROTTLED_KEYS", "THROTTLED_KEYS"] | None = None
    ScalableTargets: list[ScalableTarget] | None = None
    ScalingPolicies: list[ScalingPolicy] | None = None
    Tags: list[Tag] | None = None


# Top-level keys each AWS CLI command prints; a file may hold any of them (and merged outputs).
KNOWN_KEYS = {
    "Table": "aws dynamodb describe-table",
    "TimeToLiveDescription": "aws dynamodb describe-time-to-live",
    "ContinuousBackupsDescription": "aws dynamodb describe-continuous-backups",
    "ContributorInsightsStatus": "aws dynamodb describe-contributor-insights",
    "ScalableTargets": "aws application-autoscaling describe-scalable-targets",
    "ScalingPolicies": "aws application-autoscaling describe-scaling-policies",
    "Tags": "aws dynamodb list-tags-of-resource",
}
# Keys that come along with those above and are not needed.
IGNORED_KEYS = {"TableName", "IndexName", "ContributorInsightsRuleList", "LastUpdateDateTime", "FailureException",
                "ContributorInsightsMode", "NextToken", "ResponseMetadata"}
MAX_INPUT_FILES = 10


def adopt_error(message: str, hint: str, file: str | None = None) -> BlueprintError:
    return BlueprintError(f"{file}: {message}" if file else message, code=ErrorCode.ADOPT_INPUT, hint=hint)


def _read_file(path: Path, merged: dict[str, Any], origin: dict[str, str]) -> None:
    """Add what one AWS CLI output file says to `merged` (refusing what no such output holds)."""
    data, _ = load_yaml(path)  # JSON is YAML: the same bounded, located reader as blueprints
    if not isinstance(data, dict):
        raise adopt_error("not a JSON object", "pass the output of an AWS CLI describe command", str(path))
    known = [key for key in data if key in KNOWN_KEYS]
    unknown = sorted(set(data) - set(KNOWN_KEYS) - IGNORED_KEYS)
    if unknown or not known:
        raise adopt_error(f"unrecognised top-level key `{unknown[0] if unknown else next(iter(data), '')}`",
                          "adopt reads the JSON of: " + "; ".join(sorted(set(KNOWN_KEYS.values()))), str(path))
    for key in data:
        if key in merged and key in KNOWN_KEYS:
            raise adopt_error(f"`{key}` is also in {origin[key]}", "pass each description once", str(path))
    for key, value in data.items():
        if key in KNOWN_KEYS or key == "ContributorInsightsMode":
            merged[key], origin[key] = value, str(path)


def read_description(paths: Sequence[Path]) -> Description:
    """Merge the AWS CLI outputs in `paths` (each recognised by its top-level keys) and validate them; every
    file's problem is reported at once."""
    if len(paths) > MAX_INPUT_FILES:
        raise adopt_error(f"{len(paths)} input files; adopt reads at most {MAX_INPUT_FILES}",
                          "pass describe-table and the optional descriptions, one file each")
    merged: dict[str, Any] = {}
    origin: dict[str, str] = {}
    errors: list[TablewrightError] = []
    for path in paths:
        try:
            _read_file(path, merged, origin)
        except TablewrightError as error:
            errors.append(error)
    if "Table" not in merged and not any("Table" in error.message for error in errors):
        errors.append(adopt_error("no `aws dynamodb describe-table` output among the inputs",
                                  "run `aws dynamodb describe-table --table-name NAME > table.json` and pass "
                                  "table.json"))
    if errors:
        raise ErrorList(errors) if len(errors) > 1 else errors[0]
    try:
        return Description.model_validate(merged)
    except ValidationError as error:
        problems = []
        for detail in error.errors()[:MAX_REPORTED]:
            where = render_path([step for step in detail["loc"] if isinstance(step, (str, int))])
            file = origin.get(str(detail["loc"][0]), "") if detail["loc"] else ""
            problems.append(adopt_error(f"`{where}`: {detail['msg']}", "pass the AWS CLI's JSON output unchanged",
                                        file))
        raise (ErrorList(problems) if len(problems) > 1 else problems[0]) from None


# --- the blueprint ---------------------------------------------------------------------------------
