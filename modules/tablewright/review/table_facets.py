"""What the classification reads of an aws_dynamodb_table body, with the provider's defaults filled in."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tablewright.review.changes import UNKNOWN, nested_block, nested_blocks, warm_units


@dataclass(frozen=True)
class IndexFacets:
    keys: tuple[str | None, str | None]
    key_types: tuple[str | None, str | None]
    projection: tuple[str, tuple[str, ...]]
    capacity: tuple[Any, Any]
    throughput: tuple[tuple[Any, Any], tuple[Any, Any]] = ((None, None), (None, None))  # on-demand max, warm


# Arguments of aws_dynamodb_table the facets below read, and per nested block the keys they read (None:
# all of it). A plan that changes anything else is an unrecognised change, never hidden by a recognised one.
RECOGNISED_TABLE_ARGUMENTS: dict[str, frozenset[str] | None] = {
    "name": None, "hash_key": None, "range_key": None, "attribute": None, "billing_mode": None,
    "stream_enabled": None, "stream_view_type": None, "table_class": None, "deletion_protection_enabled": None,
    "tags": None, "read_capacity": None, "write_capacity": None, "replica": None, "on_demand_throughput": None,
    "warm_throughput": None,
    "point_in_time_recovery": frozenset({"enabled", "recovery_period_in_days"}),
    "ttl": frozenset({"enabled", "attribute_name"}),
    "server_side_encryption": frozenset({"enabled", "kms_key_arn"}),
    "global_secondary_index": frozenset({"name", "hash_key", "range_key", "projection_type", "non_key_attributes",
                                         "read_capacity", "write_capacity", "on_demand_throughput",
                                         "warm_throughput"}),
    "local_secondary_index": frozenset({"name", "range_key", "projection_type", "non_key_attributes"}),
}
# Values the provider computes from the others (never configured): they change when those do.
COMPUTED_TABLE_ARGUMENTS = frozenset({"arn", "id", "tags_all", "stream_arn", "stream_label"})


def _flag(value: Any) -> bool | None:
    """A boolean argument: None when known only after apply (a plan cannot show it stays on)."""
    return None if value == UNKNOWN else value is True


def unrecognised_arguments(body: dict[str, Any], indexes: frozenset[str]) -> dict[str, Any]:
    """The arguments (`point_in_time_recovery.x`, `global_secondary_index[GSI1].x`) no facet reads, by name;
    of the global indexes only those in `indexes` (the ones on both sides: a new or deleted index is one
    change as a whole)."""
    found: dict[str, Any] = {}
    for key, value in body.items():
        if key in COMPUTED_TABLE_ARGUMENTS:
            continue
        if key not in RECOGNISED_TABLE_ARGUMENTS:
            found[key] = value
            continue
        read = RECOGNISED_TABLE_ARGUMENTS[key]
        if read is None:
            continue
        if key == "global_secondary_index":
            for block in nested_blocks(value):
                if block.get("name") in indexes:
                    found |= {f"{key}[{block['name']}].{sub}": block[sub] for sub in block.keys() - read}
        elif key != "local_secondary_index":  # a changed local index replaces the table anyway
            found |= {f"{key}.{sub}": item for sub, item in nested_block(value).items() if sub not in read}
    return found


@dataclass(frozen=True)
class TableFacets:
    """What the classification looks at, with the provider's defaults filled in."""

    name: str
    keys: tuple[str | None, str | None]
    key_types: tuple[str | None, str | None]
    local_indexes: tuple[tuple[str, str, str, tuple[str, ...]], ...]
    global_indexes: dict[str, IndexFacets]
    billing_mode: str
    stream: tuple[bool, str]
    ttl: tuple[bool, str]
    table_class: str
    encryption: tuple[bool, str]
    point_in_time_recovery: bool | None  # None: known only after apply
    recovery_days: Any  # point_in_time_recovery.recovery_period_in_days (None: the provider's default, 35)
    deletion_protection: bool | None
    replicas: tuple[str, ...]
    tags: dict[str, str]
    capacity: tuple[Any, Any]
    throughput: tuple[tuple[Any, Any], tuple[Any, Any]] = ((None, None), (None, None))  # on-demand max, warm


def _throughput(body: dict[str, Any]) -> tuple[tuple[Any, Any], tuple[Any, Any]]:
    """The on-demand maximum (read, write) and the warm throughput (read, write) of a table or GSI block;
    a maximum of 0 (how the provider reads back a removed one) is none."""
    limit = nested_block(body.get("on_demand_throughput"))
    maximum = tuple(None if limit.get(k) in (0, -1) else limit.get(k)
                    for k in ("max_read_request_units", "max_write_request_units"))
    return (maximum[0], maximum[1]), warm_units(body)


def table_facets(body: dict[str, Any]) -> TableFacets:
    types = {a.get("name"): a.get("type") for a in nested_blocks(body.get("attribute"))}

    def key_types(hash_key: str | None, range_key: str | None) -> tuple[str | None, str | None]:
        return types.get(hash_key), types.get(range_key)

    def projection(index: dict[str, Any]) -> tuple[str, tuple[str, ...]]:
        return index.get("projection_type") or "ALL", tuple(sorted(index.get("non_key_attributes") or []))

    gsis = {
        gsi["name"]: IndexFacets((gsi.get("hash_key"), gsi.get("range_key")),
                                 key_types(gsi.get("hash_key"), gsi.get("range_key")), projection(gsi),
                                 (gsi.get("read_capacity"), gsi.get("write_capacity")), _throughput(gsi))
        for gsi in nested_blocks(body.get("global_secondary_index"))
    }
    lsis = tuple(sorted((lsi["name"], lsi.get("range_key") or "", *projection(lsi))
                        for lsi in nested_blocks(body.get("local_secondary_index"))))
    stream_enabled = bool(body.get("stream_enabled"))
    ttl, sse = nested_block(body.get("ttl")), nested_block(body.get("server_side_encryption"))
    return TableFacets(
        name=body.get("name", ""),
        keys=(body.get("hash_key"), body.get("range_key")),
        key_types=key_types(body.get("hash_key"), body.get("range_key")),
        local_indexes=lsis,
        global_indexes=gsis,
        billing_mode=body.get("billing_mode") or "PROVISIONED",
        stream=(stream_enabled, (body.get("stream_view_type") or "") if stream_enabled else ""),
        ttl=(bool(ttl.get("enabled")), ttl.get("attribute_name") or "") if ttl.get("enabled") else (False, ""),
        table_class=body.get("table_class") or "STANDARD",
        encryption=(bool(sse.get("enabled")), sse.get("kms_key_arn") or "") if sse.get("enabled") else (False, ""),
        point_in_time_recovery=_flag(nested_block(body.get("point_in_time_recovery")).get("enabled")),
        recovery_days=nested_block(body.get("point_in_time_recovery")).get("recovery_period_in_days"),
        deletion_protection=_flag(body.get("deletion_protection_enabled")),
        replicas=(UNKNOWN,) if body.get("replica") == UNKNOWN else
        tuple(sorted(str(r.get("region_name")) for r in nested_blocks(body.get("replica")))),
        tags=dict(body.get("tags") or {}),
        capacity=(body.get("read_capacity"), body.get("write_capacity")),
        throughput=_throughput(body),
    )
