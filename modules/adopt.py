"""`adopt`: a blueprint that reproduces a DynamoDB table that exists already, from what the AWS CLI says.

Input is the JSON of `aws dynamodb describe-table`, and optionally `describe-time-to-live`,
`describe-continuous-backups`, `describe-contributor-insights`, `list-tags-of-resource` and
`aws application-autoscaling describe-scalable-targets` / `describe-scaling-policies` (one file each,
or several merged into one object). Each file is recognised by its top-level keys.

The blueprint keeps the table's own key attribute names and types, its index names and keys,
projections, billing, autoscaling (bounds, targets, cooldowns, live policy names), TTL, PITR, stream,
table class, encryption, deletion protection and tags, so that the synthesized stack imports the table,
its scalable targets and its policies and changes none of them. Entities and access patterns are left
as a TODO block: only the team knows what the items are.
"""

from __future__ import annotations

import json
import re
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from modules.blueprint.load import load_blueprint
from modules.blueprint.model import TableName
from modules.blueprint.yamlsource import load_yaml
from modules.catalog import create_new_file
from modules.design.model import place
from modules.errors import MAX_REPORTED, BlueprintError, ErrorList, TablewrightError, render_path
from modules.stack import build_stack

# --- what the AWS CLI prints (only the fields adopt reads; everything else is ignored) --------------


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
    return BlueprintError(f"{file}: {message}" if file else message, code="E800", hint=hint)


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


@dataclass
class Adoption:
    """The blueprint text, and what the inputs did not say (each line a warning)."""

    text: str
    name: str
    warnings: list[str] = field(default_factory=list)


TYPES = {"S": "string", "N": "number", "B": "binary"}
# Point-in-time recovery keeps 35 days unless told otherwise (UpdateContinuousBackups, RecoveryPeriodInDays:
# https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_PointInTimeRecoverySpecification.html).
DEFAULT_RECOVERY_DAYS = 35
DIMENSION = re.compile(r"dynamodb:(table|index):(Read|Write)CapacityUnits")


def blueprint_name(table: str) -> str:
    """`Orders_Live.v2` -> `orders-live-v2`: the default blueprint (and stack) name of an adopted table."""
    name = re.sub(r"[^a-z0-9]+", "-", table.lower()).strip("-")[:63].strip("-")
    return name if re.match(r"[a-z]", name) else f"t-{name}"[:63].strip("-")


def adopted_blueprint(described: Description, name: str | None = None, schema: str | None = None) -> Adoption:
    """The blueprint of the described table (`schema`: the JSON Schema's path relative to the blueprint)."""
    table = described.Table
    if table.Replicas:
        raise adopt_error(f"table {table.TableName} is a global table ({len(table.Replicas)} replicas)",
                          "Tablewright manages single-region tables; adopt one without replicas")
    adoption = Adoption("", name or blueprint_name(table.TableName))
    types: dict[str, str] = {a.AttributeName: a.AttributeType for a in table.AttributeDefinitions}
    keys = _keys(table.KeySchema, types, f"table {table.TableName}")
    _check_scaling_described(described)
    scaling = _scaling(described, table.TableName)
    lines = [f"# yaml-language-server: $schema={schema}"] if schema else []
    lines += [
        f"# Adopted from the existing DynamoDB table {table.TableName} by `python main.py adopt`. The first",
        "# `terraform plan` imports the table, its scalable targets and its scaling policies and changes none of",
        "# them; what Tablewright adds (alarms, their topic, the change calendar and rule) are additions.",
        f"blueprint: {adoption.name}",
        "version: 1.0.0",
        f"description: {_quote(f'The existing table {table.TableName}, adopted.')}",
    ]
    region = _region(table.TableArn)
    if region:
        lines.append(f"region: {region}")
    lines.append("production: true   # TODO(adopt): false for a table that serves no production traffic")
    lines += _tags(described, adoption)
    lines.append("table:")
    lines.append(f"  name: {_quote(table.TableName)}")
    if keys != "{pk: \"PK\", sk: \"SK\"}":
        lines.append(f"  keys: {keys}")
    lines += _billing(table, scaling, adoption, "  ")
    lines += _ttl(described, adoption)
    lines += _pitr(described, adoption)
    lines.append(f"  deletion_protection: {_bool(table.DeletionProtectionEnabled)}")
    lines += _encryption(table)
    stream = table.StreamSpecification
    if stream is not None and stream.StreamEnabled and stream.StreamViewType is not None:
        lines.append(f"  stream: {stream.StreamViewType.lower()}")
    if table.TableClassSummary is not None and table.TableClassSummary.TableClass == "STANDARD_INFREQUENT_ACCESS":
        lines.append("  table_class: standard_infrequent_access")
    lines += _indexes(table, types, scaling, adoption)
    lines += _adopted(scaling)
    lines += _insights(described)
    lines += [
        "maintenance_window:   # TODO(adopt): when index builds and other disruptive changes may be applied",
        "  days: [SU]",
        "  start: \"03:00\"",
        "  duration: 2h",
        "  timezone: UTC",
        "",
        *_todo(table, types),
    ]
    adoption.text = "\n".join(lines) + "\n"
    return adoption


def _quote(text: str) -> str:
    """A YAML double-quoted scalar (JSON's string syntax is a subset of it)."""
    return json.dumps(text)


def _bool(value: bool) -> str:
    return "true" if value else "false"


def _region(arn: str | None) -> str | None:
    match = re.fullmatch(r"arn:aws[a-z-]*:dynamodb:([a-z]{2}(?:-[a-z]+)+-[0-9]{1,2}):[0-9]{12}:table/.+", arn or "")
    return match.group(1) if match else None


def _keys(schema: list[KeyElement], types: dict[str, str], owner: str) -> str:
    def attribute(element: KeyElement) -> str:
        if element.AttributeName not in types:
            raise adopt_error(f"key attribute `{element.AttributeName}` has no AttributeDefinitions entry",
                              "pass describe-table's output unchanged")
        kind = types[element.AttributeName]
        return _quote(element.AttributeName) if kind == "S" else (
            f"{{name: {_quote(element.AttributeName)}, type: {TYPES[kind]}}}")

    kinds = [element.KeyType for element in schema]
    if kinds.count("HASH") != 1 or len({element.AttributeName for element in schema}) != len(schema):
        raise adopt_error(f"the KeySchema of {owner} is {', '.join(f'{e.AttributeName} {e.KeyType}' for e in schema)}"
                          ": DynamoDB keys are one HASH attribute and at most one RANGE attribute besides it",
                          "pass describe-table's output unchanged")
    parts = {element.KeyType: attribute(element) for element in schema}
    text = f"pk: {parts['HASH']}" + (f", sk: {parts['RANGE']}" if "RANGE" in parts else "")
    return "{" + text + "}"


Scalable = TypeVar("Scalable", ScalableTarget, ScalingPolicy)
# (table or index, read or write) -> the live scalable target and its target-tracking policy
Scaling = dict[tuple[str, str], tuple[ScalableTarget, ScalingPolicy | None]]


def _scaling(described: Description, table: str) -> Scaling:
    prefix = f"table/{table}"
    found: Scaling = {}
    for target in _of_table(described.ScalableTargets or [], prefix):
        owner, direction = _dimension_of(target.ServiceNamespace, target.ResourceId, target.ScalableDimension, prefix)
        found[(owner, direction)] = (target, None)
    for policy in _of_table(described.ScalingPolicies or [], prefix):
        owner, direction = _dimension_of(policy.ServiceNamespace, policy.ResourceId, policy.ScalableDimension, prefix)
        where = f"{place(owner)} {direction} capacity"
        tracking = policy.TargetTrackingScalingPolicyConfiguration
        metric = tracking.PredefinedMetricSpecification if tracking else None
        expected = f"DynamoDB{direction.capitalize()}CapacityUtilization"
        if policy.PolicyType != "TargetTrackingScaling" or metric is None or metric.PredefinedMetricType != expected:
            raise adopt_error(f"policy {policy.PolicyName!r} on {where} is not a target-tracking policy on "
                              f"{expected}", "Tablewright manages exactly that policy; delete or convert this one")
        if (owner, direction) not in found:
            raise adopt_error(f"policy {policy.PolicyName!r} on {where} has no scalable target among the inputs",
                              "pass describe-scalable-targets' output with describe-scaling-policies'")
        target, earlier = found[(owner, direction)]
        if earlier is not None:
            raise adopt_error(f"{where} has two scaling policies ({earlier.PolicyName!r}, {policy.PolicyName!r})",
                              "Tablewright manages one target-tracking policy per dimension; delete the other")
        found[(owner, direction)] = (target, policy)
    return found


def _check_scaling_described(described: Description) -> None:
    """A provisioned table's capacity is adopted only with its autoscaling described: without it adopt cannot
    tell autoscaled capacity from fixed, and today's capacity written as fixed bounds stops the autoscaler."""
    billing = described.Table.BillingModeSummary
    if billing is not None and billing.BillingMode == "PAY_PER_REQUEST":
        return
    missing = [command for command, given in (("describe-scalable-targets", described.ScalableTargets),
                                              ("describe-scaling-policies", described.ScalingPolicies))
               if given is None]
    if missing:
        table = described.Table.TableName
        raise adopt_error(
            f"table {table} is provisioned, and its autoscaling is not described (no {' or '.join(missing)} "
            "output): adopt cannot tell autoscaled capacity from fixed, and writing today's capacity as fixed bounds "
            "would stop the autoscaler when the plan is applied",
            f"run `aws application-autoscaling describe-scalable-targets --service-namespace dynamodb "
            f"--resource-ids table/{table} > targets.json` and `aws application-autoscaling "
            "describe-scaling-policies --service-namespace dynamodb > policies.json`, and pass both")


def _of_table(entries: Sequence[Scalable], prefix: str) -> list[Scalable]:
    """The targets or policies of this table (describe-scalable-targets lists the whole account's)."""
    return [entry for entry in entries if entry.ResourceId == prefix or entry.ResourceId.startswith(prefix + "/")]


def _dimension_of(namespace: str, resource: str, dimension: str, prefix: str) -> tuple[str, str]:
    match = DIMENSION.fullmatch(dimension)
    index = re.fullmatch(re.escape(prefix) + r"(?:/index/(.+))?", resource)
    if namespace != "dynamodb" or match is None or index is None or (match.group(1) == "index") != bool(
            index.group(1)):
        raise adopt_error(f"{namespace} {resource} {dimension} is not a scalable dimension of {prefix}",
                          f"pass only the scalable targets and policies of {prefix} (`--resource-ids {prefix}`)")
    return index.group(1) or "table", match.group(2).lower()


def _billing(table: TableDescription, scaling: Scaling, adoption: Adoption, indent: str,
             index: IndexDescription | None = None) -> list[str]:
    """Billing and capacity of the table (`index` None) or of one GSI: autoscaling bounds, targets and cooldowns
    when provisioned, the on-demand maximum when on demand."""
    owner = "table" if index is None else index.IndexName
    on_demand = table.BillingModeSummary is not None and table.BillingModeSummary.BillingMode == "PAY_PER_REQUEST"
    if on_demand:
        limit = (table if index is None else index).OnDemandThroughput
        lines = [f"{indent}billing: on_demand"] if index is None else []
        maxima = [] if limit is None else [f"{direction}: {units}" for direction, units in
                                            (("read", limit.MaxReadRequestUnits),
                                             ("write", limit.MaxWriteRequestUnits)) if units > 0]
        if maxima:  # -1 (or nothing) in a direction: no maximum there
            lines.append(f"{indent}max_throughput: {{{', '.join(maxima)}}}")
        return lines
    current = (index.ProvisionedThroughput if index is not None else table.ProvisionedThroughput) or Throughput()
    directions = {}
    pinned: list[tuple[str, int]] = []
    for direction, units in (("read", current.ReadCapacityUnits), ("write", current.WriteCapacityUnits)):
        live = scaling.get((owner, direction))
        if live is None:  # no autoscaling there: Tablewright's target keeps the capacity where it is
            directions[direction] = f"{{min: {max(units, 1)}, max: {max(units, 1)}}}"
            pinned.append((direction, max(units, 1)))
            continue
        target, policy = live
        settings = [f"min: {target.MinCapacity}", f"max: {target.MaxCapacity}"]
        tracking = policy.TargetTrackingScalingPolicyConfiguration if policy else None
        if tracking is not None:
            if tracking.TargetValue != int(tracking.TargetValue) or not 20 <= tracking.TargetValue <= 90:
                raise adopt_error(f"the {direction} target of {owner} is {tracking.TargetValue:g}%",
                                  "Tablewright writes whole percents from 20 to 90: change the policy first")
            settings.append(f"target_utilization: {int(tracking.TargetValue)}")
            settings += [f"{name}: {value}" for name, value in (("scale_in_cooldown", tracking.ScaleInCooldown),
                                                                 ("scale_out_cooldown", tracking.ScaleOutCooldown))
                         if value is not None]
            if tracking.DisableScaleIn:
                settings.append("disable_scale_in: true")
        directions[direction] = "{" + ", ".join(settings) + "}"
    lines = [f"{indent}billing: provisioned"] if owner == "table" else []
    where = place(owner)
    if pinned:
        directions_pinned = " and ".join(direction for direction, _ in pinned)
        units_pinned = [f"{direction} {units}" for direction, units in pinned]
        adoption.warnings.append(f"{where} has no autoscaling for {directions_pinned} capacity: the blueprint pins it "
                                 f"where it is ({', '.join(units_pinned)} units, min = max), and the stack registers "
                                 "a scalable target at that capacity; raise `max` to let it scale")
        lines.append(f"{indent}# TODO(adopt): no autoscaling on {where} for {' and '.join(units_pinned)} units today: "
                     "pinned (min = max); raise `max` to let it scale")
    lines += [f"{indent}capacity:", f"{indent}  read: {directions['read']}", f"{indent}  write: {directions['write']}"]
    return lines


def _ttl(described: Description, adoption: Adoption) -> list[str]:
    ttl = described.TimeToLiveDescription
    if ttl is None:
        adoption.warnings.append("no describe-time-to-live output: the blueprint says the table has no TTL; if it "
                                 "has, the first plan turns TTL off")
        return ["  # TODO(adopt): TTL not described (`aws dynamodb describe-time-to-live`): none assumed"]
    if ttl.TimeToLiveStatus in ("ENABLED", "ENABLING") and ttl.AttributeName:
        return [f"  ttl_attribute: {_quote(ttl.AttributeName)}"]
    return []


def _pitr(described: Description, adoption: Adoption) -> list[str]:
    backups = described.ContinuousBackupsDescription
    if backups is None or backups.PointInTimeRecoveryDescription is None:
        adoption.warnings.append("no describe-continuous-backups output: point-in-time recovery is assumed ON; if "
                                 "the table has it off, the first plan turns it on")
        return ["  point_in_time_recovery: true   # TODO(adopt): not described; check "
                "`aws dynamodb describe-continuous-backups`"]
    recovery = backups.PointInTimeRecoveryDescription
    enabled = recovery.PointInTimeRecoveryStatus == "ENABLED"
    days = recovery.RecoveryPeriodInDays
    custom = enabled and days is not None and days != DEFAULT_RECOVERY_DAYS
    kept = [f"  point_in_time_recovery_days: {days}"] if custom else []
    return [f"  point_in_time_recovery: {_bool(enabled)}", *kept]


def _encryption(table: TableDescription) -> list[str]:
    sse = table.SSEDescription
    if sse is None or sse.Status not in ("ENABLED", "UPDATING") or sse.SSEType != "KMS":
        return []  # an AWS owned key: the default
    if sse.KMSMasterKeyArn is None:
        return ["  encryption: aws_managed"]
    return ["  encryption: customer_managed   # TODO(adopt): `aws_managed` if this is the aws/dynamodb key "
            "(both plan no change)", f"  kms_key_arn: {_quote(sse.KMSMasterKeyArn)}"]


def _tags(described: Description, adoption: Adoption) -> list[str]:
    if described.Tags is None:
        adoption.warnings.append("no list-tags-of-resource output: the blueprint sets no tags; if the table has "
                                 "tags, the first plan removes them")
        return ["# TODO(adopt): tags not described (`aws dynamodb list-tags-of-resource`): none assumed"]
    tags = sorted((tag.Key, tag.Value) for tag in described.Tags if not tag.Key.startswith("aws:"))
    if not tags:
        return []
    return ["tags:", *(f"  {_quote(key)}: {_quote(value)}" for key, value in tags)]


def _indexes(table: TableDescription, types: dict[str, str], scaling: Scaling, adoption: Adoption) -> list[str]:
    indexes = [(index, "global") for index in table.GlobalSecondaryIndexes]
    indexes += [(index, "local") for index in table.LocalSecondaryIndexes]
    if not indexes:
        return []
    lines = ["indexes:"]
    for index, kind in sorted(indexes, key=lambda item: item[0].IndexName):
        lines.append(f"  {_quote(index.IndexName)}:")
        if kind == "local":
            lines.append("    type: local")
        lines.append(f"    keys: {_keys(index.KeySchema, types, f'index {index.IndexName}')}")
        lines.append(f"    projection: {_projection(index.Projection)}")
        lines += _billing(table, scaling, adoption, "    ", index) if kind == "global" else []
    return lines


def _projection(projection: ProjectionDescription) -> str:
    if projection.ProjectionType == "INCLUDE":
        return "[" + ", ".join(_quote(name) for name in sorted(projection.NonKeyAttributes)) + "]"
    return "all" if projection.ProjectionType == "ALL" else "keys_only"


def _adopted(scaling: Scaling) -> list[str]:
    lines = ["adopted:", "  scaling:   # the live scalable targets (imported) and their policies' names"
             if scaling else "  scaling: {}"]
    for owner in sorted({owner for owner, _ in scaling}):
        entries = [f"{direction}: {_quote(policy.PolicyName) if policy else 'null'}"
                   for direction in ("read", "write") if (owner, direction) in scaling
                   for _, policy in [scaling[(owner, direction)]]]
        lines.append(f"    {_quote(owner)}: {{{', '.join(entries)}}}")
    return lines


def _insights(described: Description) -> list[str]:
    status = described.ContributorInsightsStatus
    if status is None:
        return []
    if status in ("ENABLED", "ENABLING"):
        mode = (described.ContributorInsightsMode or "ACCESSED_AND_THROTTLED_KEYS").lower()
        if mode == "throttled_keys":  # the provider writes `mode` from 6.11 on
            return [f"contributor_insights: {mode}", "terraform:", "  aws_provider: \">= 6.11\""]
        return [f"contributor_insights: {mode}"]
    return ["contributor_insights: \"off\"   # as the table has it; remove this line for Tablewright's default"]


def _todo(table: TableDescription, types: dict[str, str]) -> list[str]:
    """Guidance for the part only the team can write: which items the table holds and how they are read."""
    keys = {element.KeyType: element.AttributeName for element in table.KeySchema}
    typed = sorted(name for name in [*keys.values()] if types.get(name) != "S")
    lines = [
        "# TODO(adopt): describe the items this table holds and how the application reads them. Until then",
        "# Tablewright manages the table, its autoscaling and its alarms, but cannot check, cost or verify the",
        "# design (`python main.py lint` says so: TW312). For each kind of item, an entity:",
        "#",
        "# entities:",
        "#   Order:",
        "#     attributes: {orderId: string, customerId: string, placedAt: timestamp}",
        "#     key: {pk: \"ORDER#{orderId}\"" + (", sk: \"DETAILS\"}" if "RANGE" in keys else "}")
        + f"   # written to {', '.join(keys[k] for k in ('HASH', 'RANGE') if k in keys)}",
        "#     item_count: 1000000",
        "#     writes: {inserts: 10, updates: 5}",
        "# access_patterns:",
        "#   order_by_id: {entity: Order, where: {orderId: \"=\"}, rps: 100}",
    ]
    if typed:
        lines.append(f"# ({', '.join(typed)} hold numbers or binary: entities need string keys, so this table is "
                     "managed without them)")
    return [*lines, "entities: {}"]


def write_blueprint(adoption: Adoption, path: Path | None) -> None:
    """Write the blueprint to `path` (a new file; None: only check it) once it loads and designs as any
    other blueprint would: a description the language cannot express is an error now, not in the user's
    next command."""
    with tempfile.TemporaryDirectory(prefix="tablewright-adopt-") as scratch:
        staged = Path(scratch) / "adopted.yaml"  # never a path from the input
        staged.write_text(adoption.text)
        try:
            build_stack(load_blueprint(staged))
        except TablewrightError as error:
            raise adopt_error(f"the table cannot be described as a blueprint: {error.message}",
                              error.hint or "report this description to the Tablewright maintainers") from None
    if path is not None:
        create_new_file(path, adoption.text)
