"""The DynamoDB table: key attributes only, GSIs with their projections, protection and encryption."""

from __future__ import annotations

from modules.blueprint.model import TableSpec
from modules.constructs.cdk import Construct, DataSource, Local, Resource, lifecycle
from modules.constructs.keys import add_key
from modules.constructs.naming import logical_id
from modules.constructs.resources import (
    DynamodbTable,
    DynamodbTableData,
    DynamodbTablesData,
    GlobalSecondaryIndex,
    KmsAlias,
    LocalSecondaryIndex,
    PointInTimeRecovery,
    ServerSideEncryption,
    TableAttribute,
    Ttl,
)
from modules.design.model import TABLE, IndexDesign, TableDesign, key_names

STREAM_VIEW = {"keys_only": "KEYS_ONLY", "new_image": "NEW_IMAGE", "old_image": "OLD_IMAGE",
               "new_and_old_images": "NEW_AND_OLD_IMAGES"}


def add_table(scope: Construct, design: TableDesign, tags: dict[str, str]) -> Resource:
    table = design.blueprint.table
    base = logical_id(design.blueprint.blueprint)
    provisioned = table.billing == "provisioned"
    live_gsis = _live_gsi_lookup(scope, base, table.name) if provisioned and design.global_indexes else ""
    table_keys = key_names(TABLE)
    arguments = DynamodbTable(
        name=table.name,
        billing_mode="PROVISIONED" if provisioned else "PAY_PER_REQUEST",
        hash_key=table_keys.pk,
        range_key=table_keys.sk,
        read_capacity=table.capacity.read.min if table.capacity else None,
        write_capacity=table.capacity.write.min if table.capacity else None,
        attribute=[TableAttribute(name=name, type="S") for name in sorted(design.key_attributes)],
        global_secondary_index=[_gsi(index, design, live_gsis) for index in design.global_indexes] or None,
        local_secondary_index=[_lsi(index) for index in design.local_indexes] or None,
        point_in_time_recovery=PointInTimeRecovery(enabled=table.point_in_time_recovery),
        server_side_encryption=_encryption(scope, base, table, tags),
        # An absent `ttl` block would leave TTL as it is: say `enabled = false`, so removing it turns it off.
        ttl=Ttl(attribute_name=table.ttl_attribute, enabled=True) if table.ttl_attribute else Ttl(enabled=False),
        deletion_protection_enabled=table.deletion_protection,
        stream_enabled=table.stream != "off",
        stream_view_type=STREAM_VIEW.get(table.stream),
        table_class=table.table_class.upper(),
        tags=tags or None,
    )
    # The autoscaler owns provisioned capacity once the table exists: never set it back.
    ignore = ["read_capacity", "write_capacity"] if provisioned else None
    # In production, Terraform itself refuses a plan that would destroy the table.
    protect = True if design.blueprint.production else None
    rules = lifecycle(ignore_changes=ignore, prevent_destroy=protect) if ignore or protect else None
    return Resource(scope, base, arguments.terraform_type, arguments.arguments(), rules)


def _gsi(index: IndexDesign, design: TableDesign, live_gsis: str) -> GlobalSecondaryIndex:
    projection = index.projection
    read = write = None
    capacity = design.blueprint.indexes.get(index.name)
    bounds = (capacity.capacity if capacity and capacity.capacity else None) or design.blueprint.table.capacity
    if live_gsis and bounds:
        read = _live_capacity(live_gsis, index.name, "read_capacity", bounds.read.min)
        write = _live_capacity(live_gsis, index.name, "write_capacity", bounds.write.min)
    return GlobalSecondaryIndex(
        name=index.name,
        hash_key=index.keys.pk,
        range_key=index.keys.sk,
        projection_type=projection.type,
        non_key_attributes=list(projection.attributes) if projection.type == "INCLUDE" else None,
        read_capacity=read,
        write_capacity=write,
    )


def _lsi(index: IndexDesign) -> LocalSecondaryIndex:
    projection = index.projection
    return LocalSecondaryIndex(
        name=index.name,
        range_key=index.keys.sk,
        projection_type=projection.type,
        non_key_attributes=list(projection.attributes) if projection.type == "INCLUDE" else None,
    )


def _live_gsi_lookup(scope: Construct, base: str, table_name: str) -> str:
    """A Terraform local mapping each existing GSI's name to its live settings; returns its name.

    GSIs are a set in the provider schema, so `ignore_changes` cannot single out their capacity
    (ignoring the whole set would also ignore new and changed indexes). Instead the configuration
    reads the capacity the autoscaler set and writes it back unchanged; new indexes start at the
    minimum. The lookup tolerates a table that does not exist yet.
    """
    existing_id, live_id, local_id = logical_id(base, "existing_tables"), logical_id(base, "live"), logical_id(base, "live_gsis")
    DataSource(scope, existing_id, DynamodbTablesData.terraform_type, {})
    live = DynamodbTableData(name=table_name)
    exists = f'${{try(contains(data.aws_dynamodb_tables.{existing_id}.names, "{table_name}"), false) ? 1 : 0}}'
    DataSource(scope, live_id, live.terraform_type, live.arguments(), count=exists)
    Local(scope, local_id, f"${{{{ for g in try(data.aws_dynamodb_table.{live_id}[0].global_secondary_index, []) : g.name => g }}}}")
    return f"local.{local_id}"


def _live_capacity(lookup: str, index: str, attribute: str, minimum: int) -> str:
    return f'${{max(try({lookup}["{index}"].{attribute}, 0), {minimum})}}'


def _encryption(scope: Construct, base: str, table: TableSpec, tags: dict[str, str]) -> ServerSideEncryption | None:
    if table.encryption == "aws_owned":
        return None
    if table.encryption == "aws_managed":
        return ServerSideEncryption(enabled=True)
    if table.kms_key_arn:
        return ServerSideEncryption(enabled=True, kms_key_arn=table.kms_key_arn)
    key = add_key(scope, base, f"Encrypts DynamoDB table {table.name} (Tablewright)", tags, [])
    alias = KmsAlias(name=f"alias/tablewright/{table.name}", target_key_id=key.ref("key_id"))
    Resource(scope, logical_id(base, "key_alias"), alias.terraform_type, alias.arguments())
    return ServerSideEncryption(enabled=True, kms_key_arn=key.ref("arn"))
