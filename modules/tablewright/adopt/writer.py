"""The blueprint text of a described table, and writing it once it loads and designs."""

from __future__ import annotations

import json
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from tablewright.adopt.describe import Description, KeyElement, ProjectionDescription, TableDescription, adopt_error
from tablewright.adopt.scaling import Scaling, billing_lines, check_scaling_described, live_scaling
from tablewright.blueprint.load import load_blueprint
from tablewright.errors import TablewrightError
from tablewright.files import create_new_file
from tablewright.stacks.stack import build_stack


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
    check_scaling_described(described)
    scaling = live_scaling(described, table.TableName)
    lines = [f"# yaml-language-server: $schema={schema}"] if schema else []
    lines += [
        f"# Adopted from the existing DynamoDB table {table.TableName} by `tablewright adopt`. The first",
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
    lines += billing_lines(table, scaling, adoption.warnings, "  ")
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
        lines += billing_lines(table, scaling, adoption.warnings, "    ", index) if kind == "global" else []
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
        "# design (`tablewright lint` says so: TW312). For each kind of item, an entity:",
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
