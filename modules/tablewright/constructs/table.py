"""The DynamoDB table: key attributes only, GSIs with their projections, protection and encryption."""

from __future__ import annotations

from collections.abc import Mapping

from tablewright.blueprint.language import TableSpec
from tablewright.blueprint.provider import supports_warm_throughput
from tablewright.blueprint.throughput import warm_throughput_setting
from tablewright.constructs.keys import key_ref, kms_key
from tablewright.constructs.naming import logical_id, physical_name
from tablewright.constructs.resources import (
    DynamodbTable,
    DynamodbTableData,
    DynamodbTablesData,
    GlobalSecondaryIndex,
    KmsAlias,
    LocalSecondaryIndex,
    OnDemandThroughput,
    PointInTimeRecovery,
    ServerSideEncryption,
    StreamViewType,
    TableAttribute,
    TableClass,
    Ttl,
    WarmThroughputBlock,
)
from tablewright.constructs.terraform import Block, data_source, import_block, local, reference, resource
from tablewright.design.design import TABLE, IndexDesign, TableDesign, key_types
from tablewright.design.locked import DESIGN_TAG, design_digest

STREAM_VIEW: dict[str, StreamViewType] = {"keys_only": "KEYS_ONLY", "new_image": "NEW_IMAGE", "old_image": "OLD_IMAGE",
                                          "new_and_old_images": "NEW_AND_OLD_IMAGES"}
TABLE_CLASS: dict[str, TableClass] = {"standard": "STANDARD",
                                      "standard_infrequent_access": "STANDARD_INFREQUENT_ACCESS"}


def table_address(design: TableDesign) -> str:
    """`aws_dynamodb_table.<blueprint>`: the same address in every environment."""
    return f"{DynamodbTable.terraform_type}.{logical_id(design.blueprint.blueprint)}"


def table_ref(design: TableDesign, attribute: str) -> str:
    return reference(table_address(design), attribute)


def table(design: TableDesign, tags: dict[str, str],
          maxima: Mapping[str, tuple[int, int]] | None = None) -> list[Block]:
    """The table, the lookup of its live GSI capacity and its customer-managed key, if any. `maxima`: the
    on-demand maximum (read, write; -1 removes one) of the table (`"table"`) and each GSI that has one."""
    spec = design.blueprint.table
    base = logical_id(design.blueprint.blueprint)
    provisioned = spec.billing == "provisioned"
    blocks: list[Block] = []
    live_gsis = ""
    if provisioned and design.global_indexes:
        lookup, live_gsis = _live_gsi_lookup(base, spec.name)
        blocks += lookup
    encryption, key_blocks = _encryption(base, spec, tags, design.blueprint.production)
    table_keys = design.table_keys
    types = key_types(design.blueprint)
    arguments = DynamodbTable(
        name=spec.name,
        billing_mode="PROVISIONED" if provisioned else "PAY_PER_REQUEST",
        hash_key=table_keys.pk,
        range_key=table_keys.sk,
        read_capacity=spec.capacity.read.min if spec.capacity else None,
        write_capacity=spec.capacity.write.min if spec.capacity else None,
        attribute=[TableAttribute(name=name, type=types.get(name, "S")) for name in sorted(design.key_attributes)],
        global_secondary_index=[_gsi(index, design, live_gsis, maxima or {})
                                for index in design.global_indexes] or None,
        local_secondary_index=[_lsi(index) for index in design.local_indexes] or None,
        point_in_time_recovery=PointInTimeRecovery(enabled=spec.point_in_time_recovery,
                                                   recovery_period_in_days=spec.point_in_time_recovery_days),
        server_side_encryption=encryption,
        # An absent `ttl` block would leave TTL as it is: say `enabled = false`, so removing it turns it off.
        ttl=Ttl(attribute_name=spec.ttl_attribute, enabled=True) if spec.ttl_attribute else Ttl(enabled=False),
        deletion_protection_enabled=spec.deletion_protection,
        stream_enabled=spec.stream != "off",
        stream_view_type=STREAM_VIEW.get(spec.stream),
        table_class=TABLE_CLASS[spec.table_class],
        on_demand_throughput=_on_demand(maxima or {}, TABLE),
        warm_throughput=_warm(design, None),
        tags=_table_tags(design, tags) or None,
    )
    # The autoscaler owns provisioned capacity once the table exists: never set it back.
    # In production, Terraform itself refuses a plan that would destroy the table.
    table_resource = resource(arguments, base,
                              ignore_changes=["read_capacity", "write_capacity"] if provisioned else None,
                              prevent_destroy=True if design.blueprint.production else None)
    blocks.append(table_resource)
    if design.blueprint.adopted is not None:
        blocks.append(import_block(table_resource, spec.name))
    return blocks + key_blocks


def _on_demand(maxima: Mapping[str, tuple[int, int]], target: str) -> OnDemandThroughput | None:
    if target not in maxima:
        return None
    read, write = maxima[target]
    return OnDemandThroughput(max_read_request_units=read, max_write_request_units=write)


def _warm(design: TableDesign, index: str | None) -> WarmThroughputBlock | None:
    """`warm_throughput`, written only when the provider constraint guarantees it (the loader refuses the
    setting otherwise)."""
    setting = warm_throughput_setting(design.blueprint, index)
    if setting is None or not supports_warm_throughput(design.blueprint):
        return None
    return WarmThroughputBlock(read_units_per_second=setting.read, write_units_per_second=setting.write)


def _gsi(index: IndexDesign, design: TableDesign, live_gsis: str,
         maxima: Mapping[str, tuple[int, int]]) -> GlobalSecondaryIndex:
    projection = index.projection
    read = write = None
    policy = design.capacity[index.name]
    if live_gsis and policy.read and policy.write:
        read = _live_capacity(live_gsis, index.name, "read_capacity", policy.read[0])
        write = _live_capacity(live_gsis, index.name, "write_capacity", policy.write[0])
    return GlobalSecondaryIndex(
        name=index.name,
        hash_key=index.keys.pk,
        range_key=index.keys.sk,
        projection_type=projection.type,
        non_key_attributes=list(projection.attributes) if projection.type == "INCLUDE" else None,
        read_capacity=read,
        write_capacity=write,
        on_demand_throughput=_on_demand(maxima, index.name),
        warm_throughput=_warm(design, index.name),
    )


def _lsi(index: IndexDesign) -> LocalSecondaryIndex:
    projection = index.projection
    assert index.keys.sk is not None  # the design gives every local index a sort key
    return LocalSecondaryIndex(
        name=index.name,
        range_key=index.keys.sk,
        projection_type=projection.type,
        non_key_attributes=list(projection.attributes) if projection.type == "INCLUDE" else None,
    )


def _live_gsi_lookup(base: str, table_name: str) -> tuple[list[Block], str]:
    """A Terraform local mapping each existing GSI's name to its live settings, and its address.

    GSIs are a set in the provider schema, so `ignore_changes` cannot single out their capacity
    (ignoring the whole set would also ignore new and changed indexes). Instead the configuration
    reads the capacity the autoscaler set and writes it back unchanged; new indexes start at the
    minimum. The lookup tolerates a table that does not exist yet.
    """
    existing = data_source(DynamodbTablesData(), logical_id(base, "existing_tables"))
    exists = f'${{try(contains({existing.address}.names, "{table_name}"), false) ? 1 : 0}}'
    live = data_source(DynamodbTableData(name=table_name), logical_id(base, "live"), count=exists)
    live_gsis = local(logical_id(base, "live_gsis"),
                      f"${{{{ for g in try({live.address}[0].global_secondary_index, []) : g.name => g }}}}")
    return [existing, live, live_gsis], live_gsis.address


def _live_capacity(lookup: str, index: str, attribute: str, minimum: int) -> str:
    return f'${{max(try({lookup}["{index}"].{attribute}, 0), {minimum})}}'


def _table_tags(design: TableDesign, tags: dict[str, str]) -> dict[str, str]:
    """The stack's tags and the design's digest, which a generated client checks (`check_design()`); an
    adopted table keeps the tags it has, so importing it changes nothing."""
    if design.blueprint.adopted is not None:
        return tags
    return {**tags, DESIGN_TAG: design_digest(design)}


def _encryption(base: str, spec: TableSpec, tags: dict[str, str],
                protect: bool) -> tuple[ServerSideEncryption | None, list[Block]]:
    if spec.encryption == "aws_owned":
        return None, []
    if spec.encryption == "aws_managed":
        return ServerSideEncryption(enabled=True), []
    if spec.kms_key_arn:
        return ServerSideEncryption(enabled=True, kms_key_arn=spec.kms_key_arn), []
    key = kms_key(base, f"Encrypts DynamoDB table {spec.name} (Tablewright)", tags, [], protect)
    alias = KmsAlias(name=f"alias/tablewright/{physical_name(spec.name)}", target_key_id=key_ref(base, "key_id"))
    return ServerSideEncryption(enabled=True, kms_key_arn=key_ref(base, "arn")), [
        *key, resource(alias, logical_id(base, "key_alias"))]
