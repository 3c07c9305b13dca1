"""Every resource change gets a class:

- blocked: the table is deleted or replaced (its data is lost); production, `prevent_destroy`,
  point-in-time recovery or deletion protection turned off; a customer-managed key
  deleted in production; TTL turned on or pointed at another attribute in production (it deletes
  every item whose value there is in the past); anything Tablewright does not write (IAM, resource
  policies) and any policy that admits a wildcard principal. Each names the acknowledgement that
  lifts it (`--allow-destroy`, `--allow-unprotect`, `--allow-foreign`); acknowledged, it waits for
  the maintenance window.
- window: changes DynamoDB carries out on the live table for minutes to hours, or that consumers
  feel: GSI create, delete or rebuild, billing-mode switch, stream, TTL, table class, encryption key,
  a KMS key deleted outside production, a policy changed, the maintenance window itself changed or
  removed, an action Terraform plans that Tablewright does not know. Applied only in the maintenance
  window (the one in force before the change).
- safe: capacity bounds, autoscaling, alarms, tags, Contributor Insights, the change rule, a new change
  calendar.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
from typing import Any, Literal

from modules.review.changes import (
    UNKNOWN,
    ResourceChange,
    StackSettings,
    lowered,
    nested_block,
    nested_blocks,
    warm_units,
)

Class = Literal["blocked", "window", "safe"]
CLASSES: tuple[Class, ...] = ("blocked", "window", "safe")
# The acknowledgements that lift blocked changes, and the command-line flag that gives each.
ACKNOWLEDGEMENTS = {"destroy": "--allow-destroy", "unprotect": "--allow-unprotect", "foreign": "--allow-foreign"}
Acknowledgement = Literal["destroy", "unprotect", "foreign"]

# The resource types a Tablewright stack holds; anything else in a plan was not written by it.
WRITTEN_TYPES = frozenset({
    "aws_dynamodb_table", "aws_dynamodb_contributor_insights", "aws_appautoscaling_target",
    "aws_appautoscaling_policy", "aws_cloudwatch_metric_alarm", "aws_cloudwatch_event_rule",
    "aws_cloudwatch_event_target", "aws_sns_topic", "aws_sns_topic_policy", "aws_kms_key", "aws_kms_alias",
    "aws_ssm_document",
})
# Arguments holding an IAM-style policy document, per resource type.
POLICY_ARGUMENTS = {"aws_kms_key": "policy", "aws_sns_topic": "policy", "aws_sns_topic_policy": "policy"}


@dataclass(frozen=True)
class Change:
    """One classified change: a resource, or one aspect of the table (a GSI, the billing mode...)."""

    address: str
    action: str  # create | update | delete | replace
    category: str  # table, index, autoscaling, alarms, ...
    subject: str
    cls: Class
    reason: str
    unblocked_by: Acknowledgement | None = None  # blocked changes only: what lets them through


def acknowledge(changes: list[Change], acknowledged: frozenset[str]) -> list[Change]:
    """Blocked changes whose acknowledgement was given wait for the window instead, saying so."""
    return [replace(change, cls="window", reason=f"acknowledged ({ACKNOWLEDGEMENTS[change.unblocked_by]}): "
                                                 f"{change.reason}")
            if change.cls == "blocked" and change.unblocked_by in acknowledged else change
            for change in changes]


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


def _unrecognised(body: dict[str, Any], indexes: frozenset[str]) -> dict[str, Any]:
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


def _encryption_label(encryption: tuple[bool, str]) -> str:
    enabled, key = encryption
    if not enabled:
        return "AWS owned key"
    return "customer managed key" if key else "AWS managed key"


def _index_label(index: IndexFacets) -> str:
    kind, attributes = index.projection
    projection = f"{kind} [{', '.join(attributes)}]" if attributes else kind
    return f"{index.keys[0]}/{index.keys[1] or '-'}, projection {projection}"


def _replacement_reasons(before: TableFacets, after: TableFacets) -> list[str]:
    reasons = []
    if before.name != after.name:
        reasons.append(f"name {before.name} -> {after.name}")
    if before.keys != after.keys or before.key_types != after.key_types:
        reasons.append(f"key schema {before.keys}/{before.key_types} -> {after.keys}/{after.key_types}")
    if {lsi[0] for lsi in before.local_indexes} != {lsi[0] for lsi in after.local_indexes}:
        reasons.append("local secondary indexes added, removed or renamed (they exist only from table creation)")
    warm_lowered = lowered(before.throughput[1], after.throughput[1])
    if warm_lowered:
        reasons.append(f"warm throughput lowered ({', '.join(warm_lowered)}): the provider creates a new table for it")
    return reasons


def _never_applied(address: str, table: str, before: TableFacets, after: TableFacets) -> list[Change]:
    """Changes the AWS provider never applies, so the table stays as it was while the design says otherwise: it
    tells local indexes and attribute definitions apart by name only (a local index's sort key or projection,
    a key attribute's type), and DynamoDB could not change them on a live table anyway."""
    changes = []
    if before.local_indexes != after.local_indexes:
        changes.append(Change(address, "update", "index", f"{table}: local indexes", "blocked",
                              f"{_lsi_text(before.local_indexes)} -> {_lsi_text(after.local_indexes)}: the provider "
                              "tells local indexes apart by name only and never applies this, so the deployed index "
                              "keeps its sort key and projection. A local index changes only with a new table: keep "
                              "it as it is, or give it a new name (the table is replaced: --allow-destroy, after "
                              "exporting the items)"))
    if before.key_types != after.key_types:
        changes.append(Change(address, "update", "table", f"{table}: key attribute types", "blocked",
                              f"{before.key_types} -> {after.key_types}: the provider never changes the type of a "
                              "key attribute (and DynamoDB cannot): keep the types, or create a new table and copy "
                              "the items"))
    return changes


def _lsi_text(indexes: tuple[tuple[str, str, str, tuple[str, ...]], ...]) -> str:
    return "; ".join(f"{name} {sort_key or '-'}, {kind}{' [' + ', '.join(kept) + ']' if kept else ''}"
                     for name, sort_key, kind, kept in indexes) or "none"


def _table_change(change: ResourceChange, production: bool) -> list[Change]:
    address = change.address
    if change.action == "create":
        name = table_facets(change.after or {}).name
        return [Change(address, "create", "table", f"table {name}", "safe", "a new, empty table")]
    if change.action == "delete":
        name = table_facets(change.before or {}).name
        return [Change(address, "delete", "table", f"table {name}", "blocked",
                       "deleting the table deletes every item in it", "destroy")]
    if change.action not in ("update", "replace"):
        name = table_facets(change.before or change.after or {}).name
        return [Change(address, change.action, "table", f"table {name}", "blocked",
                       f"Terraform plans `{change.action}` for the table: it leaves Terraform's management (no "
                       "protection, alarms or change rules follow it)", "destroy")]
    before, after = table_facets(change.before or {}), table_facets(change.after or {})
    if change.action == "replace":
        reasons = _replacement_reasons(before, after) or [f"Terraform replaces it: {', '.join(change.replace_paths)}"]
        return [Change(address, "replace", "table", f"table {before.name}", "blocked",
                       "replacing the table deletes every item in it: " + "; ".join(reasons), "destroy")]
    table = f"table {after.name}"
    changes = _never_applied(address, table, before, after) + _table_updates(address, before, after, production)
    both = frozenset(before.global_indexes.keys() & after.global_indexes.keys())
    changes += _recovery_period(address, table, before, after) + _replicas(address, table, before, after)
    changes += _unrecognised_changes(address, table, change.before or {}, change.after or {}, both)
    return changes or [Change(address, "update", "table", f"{table}: other arguments", "window",
                              "Terraform updates the table, yet no argument Tablewright compares changes: "
                              "review it by hand")]


def _index_changes(address: str, before: TableFacets, after: TableFacets) -> list[Change]:
    changes = []
    for name in sorted(before.global_indexes.keys() | after.global_indexes.keys()):
        old, new = before.global_indexes.get(name), after.global_indexes.get(name)
        subject = f"GSI {name}"
        if old is None:
            assert new is not None  # the name is on one side at least
            changes.append(Change(address, "create", "index", subject, "window",
                                  f"DynamoDB builds the index ({_index_label(new)}) by backfilling every item: "
                                  "minutes to hours, one index at a time"))
        elif new is None:
            changes.append(Change(address, "delete", "index", subject, "window",
                                  "queries on the index fail from the moment it starts deleting"))
        elif (old.keys, old.key_types, old.projection) != (new.keys, new.key_types, new.projection):
            changes.append(Change(address, "replace", "index", subject, "window",
                                  f"{_index_label(old)} -> {_index_label(new)}: a GSI's keys and projection cannot "
                                  "change in place, so it is deleted and rebuilt; queries on it fail until the "
                                  "new one is ACTIVE"))

        else:
            if old.capacity != new.capacity and before.billing_mode == after.billing_mode:
                changes.append(Change(address, "update", "capacity", f"{subject} capacity", "safe",
                                      f"read/write {old.capacity[0]}/{old.capacity[1]} -> "
                                      f"{new.capacity[0]}/{new.capacity[1]}"))
            changes += _throughput_changes(address, subject, old.throughput, new.throughput)
    return changes


def _limit(pair: tuple[Any, Any]) -> str:
    return "none" if pair == (None, None) else f"{pair[0]}/{pair[1]}"


def _throughput_changes(address: str, subject: str, old: tuple[tuple[Any, Any], tuple[Any, Any]],
                        new: tuple[tuple[Any, Any], tuple[Any, Any]]) -> list[Change]:
    """The on-demand maximum and warm throughput change in place, without touching the data (a lower warm
    throughput replaces the table: Terraform plans that as a replace, blocked above)."""
    changes = []
    if old[0] != new[0]:
        changes.append(Change(address, "update", "capacity", f"{subject} on-demand maximum", "safe",
                              f"read/write {_limit(old[0])} -> {_limit(new[0])}: requests above it are throttled"))
    if old[1] != new[1] and new[1] != (None, None):
        changes.append(Change(address, "update", "capacity", f"{subject} warm throughput", "safe",
                              f"read/write {_limit(old[1])} -> {_limit(new[1])}"))
    return changes


def _protection(address: str, subject: str, was: bool | None, now: bool | None, production: bool,
                loss: str) -> list[Change]:
    """Protection turned off is blocked in every environment: the plan alone cannot tell a table that
    matters from one that does not, and the acknowledgement costs one flag. A value known only after
    apply counts as off: the plan cannot show that the protection stays."""
    if was == now or (was is False and now is None):
        return []
    if now:
        return [Change(address, "update", "table", f"{subject} on", "safe", "adds protection")]
    where = "production table: " if production else ""
    if now is None:
        return [Change(address, "update", "table", f"{subject} unknown until apply", "blocked",
                       f"{where}the plan cannot show it stays on, and if it goes off: {loss}", "unprotect")]
    return [Change(address, "update", "table", f"{subject} off", "blocked", f"{where}{loss}", "unprotect")]


def _recovery_period(address: str, table: str, before: TableFacets, after: TableFacets) -> list[Change]:
    """Fewer days of point-in-time recovery drop the older restore points: blocked like PITR turned off."""
    if before.recovery_days == after.recovery_days or not (before.point_in_time_recovery
                                                           and after.point_in_time_recovery):
        return []
    was, now = (35 if days is None else days for days in (before.recovery_days, after.recovery_days))
    subject = f"{table}: point-in-time recovery {was} -> {now} days"
    if isinstance(was, int) and isinstance(now, int) and now > was:
        return [Change(address, "update", "table", subject, "safe", "adds protection")]
    return [Change(address, "update", "table", subject, "blocked",
                   "restore points older than the new period are deleted (or the period is known only after "
                   "apply)", "unprotect")]


def _replicas(address: str, table: str, before: TableFacets, after: TableFacets) -> list[Change]:
    """Replicas (global tables) are not Tablewright's: each copies every item to another region."""
    if before.replicas == after.replicas:
        return []
    return [Change(address, "update", "table", f"{table}: replicas {', '.join(before.replicas) or 'none'} -> "
                   f"{', '.join(after.replicas) or 'none'}", "blocked",
                   "a replica copies every item to another region (data residency), and removing one deletes "
                   "that copy; Tablewright writes no replicas and manages none", "foreign")]


def _unrecognised_changes(address: str, table: str, before: dict[str, Any], after: dict[str, Any],
                          indexes: frozenset[str]) -> list[Change]:
    old, new = _unrecognised(before, indexes), _unrecognised(after, indexes)
    changed = sorted(name for name in old.keys() | new.keys() if old.get(name) != new.get(name))
    return [Change(address, "update", "table", f"{table}: {name}", "window",
                   f"{_short(old.get(name))} -> {_short(new.get(name))}: an argument Tablewright does not "
                   "recognise, applied in the window; review it by hand") for name in changed]


def _ttl_change(address: str, table: str, before: tuple[bool, str], after: tuple[bool, str],
                production: bool) -> Change:
    """TTL turned on or pointed at another attribute deletes every item whose value there is in the past:
    blocked in production (`--allow-destroy`). Turning it off waits for the window."""
    subject = f"{table}: TTL {before[1] or 'off'} -> {after[1] or 'off'}"
    processing = "takes up to an hour to process, and no other TTL change is accepted meanwhile"
    if not after[0]:
        return Change(address, "update", "table", subject, "window", processing)
    loss = (f"DynamoDB deletes every item whose `{after[1]}` holds a time in the past, within days, and turning TTL "
            "off does not bring them back: make sure that attribute holds when each item expires")
    if production:
        return Change(address, "update", "table", subject, "blocked", f"production table: {loss}", "destroy")
    return Change(address, "update", "table", subject, "window", f"{loss}; {processing}")


def _table_updates(address: str, before: TableFacets, after: TableFacets, production: bool) -> list[Change]:
    table = f"table {after.name}"
    changes = _index_changes(address, before, after)
    if before.billing_mode != after.billing_mode:
        limit = (" (at most four times in 24 hours)" if after.billing_mode == "PAY_PER_REQUEST" else "")
        changes.append(Change(address, "update", "table", f"{table}: billing {before.billing_mode} -> "
                              f"{after.billing_mode}", "window",
                              f"DynamoDB restructures the table's partitions for several minutes{limit}"))
    if before.stream != after.stream:
        changes.append(Change(address, "update", "table", f"{table}: stream {before.stream[1] or 'off'} -> "
                              f"{after.stream[1] or 'off'}", "window",
                              "stream consumers (Lambda triggers, pipes, replication) lose or change their stream"))
    if before.ttl != after.ttl:
        changes.append(_ttl_change(address, table, before.ttl, after.ttl, production))
    if before.table_class != after.table_class:
        changes.append(Change(address, "update", "table", f"{table}: class {before.table_class} -> "
                              f"{after.table_class}", "window", "DynamoDB migrates the table's storage"))
    if before.encryption != after.encryption:
        changes.append(Change(address, "update", "table", f"{table}: encryption {_encryption_label(before.encryption)}"
                              f" -> {_encryption_label(after.encryption)}", "window",
                              "DynamoDB re-encrypts the table with the new key "
                              f"({after.encryption[1] or 'aws/dynamodb'})"
                              if after.encryption[0] else "DynamoDB re-encrypts the table with an AWS owned key"))
    changes += _protection(address, f"{table}: point-in-time recovery", before.point_in_time_recovery,
                           after.point_in_time_recovery, production,
                           "turning it off deletes the continuous backups (up to 35 days of restore points)")
    changes += _protection(address, f"{table}: deletion protection", before.deletion_protection,
                           after.deletion_protection, production, "the table can then be deleted by any caller")
    if before.tags != after.tags:
        changed = sorted(k for k in before.tags.keys() | after.tags.keys() if before.tags.get(k) != after.tags.get(k))
        changes.append(Change(address, "update", "tags", f"{table}: tags {', '.join(changed)}", "safe",
                              "metadata only"))
    if before.capacity != after.capacity and before.billing_mode == after.billing_mode:
        changes.append(Change(address, "update", "capacity", f"{table}: capacity", "safe",
                              f"read/write {before.capacity[0]}/{before.capacity[1]} -> "
                              f"{after.capacity[0]}/{after.capacity[1]}"))
    changes += _throughput_changes(address, f"{table}:", before.throughput, after.throughput)
    return changes


CATEGORIES = {
    "aws_appautoscaling_target": "autoscaling",
    "aws_appautoscaling_policy": "autoscaling",
    "aws_cloudwatch_metric_alarm": "alarms",
    "aws_dynamodb_contributor_insights": "contributor insights",
    "aws_sns_topic": "notifications",
    "aws_sns_topic_policy": "notifications",
    "aws_kms_key": "encryption keys",
    "aws_kms_alias": "encryption keys",
    "aws_ssm_document": "change window",
    "aws_cloudwatch_event_rule": "change window",
    "aws_cloudwatch_event_target": "change window",
}


def _short(value: Any) -> str:
    text = json.dumps(value, sort_keys=True) if isinstance(value, (dict, list)) else str(value)
    return text if len(text) <= 60 else text[:57] + "..."


TAGS = frozenset({"tags", "tags_all"})


def _changed_arguments(change: ResourceChange) -> set[str]:
    before, after = change.before or {}, change.after or {}
    return {k for k in before.keys() | after.keys() if before.get(k) != after.get(k)}


# Resource types whose `arn` argument is an input (where notifications go, which topic a policy guards),
# not the resource's own computed ARN.
ARN_INPUTS = frozenset({"aws_cloudwatch_event_target", "aws_sns_topic_policy"})
# Arguments naming where notifications go, per resource type.
NOTIFY_ARGUMENTS = {"aws_cloudwatch_metric_alarm": ("alarm_actions", "ok_actions", "insufficient_data_actions"),
                    "aws_cloudwatch_event_target": ("arn",)}
_ARN_ACCOUNT = re.compile(r"arn:[a-z-]+:[a-z0-9-]+:[a-z0-9-]*:([0-9]{12}):", re.ASCII)


def _argument_changes(kind: str, before: dict[str, Any], after: dict[str, Any]) -> str:
    hidden = {"tags_all", "id"} | (set() if kind in ARN_INPUTS else {"arn"})
    changed = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k) and k not in hidden)
    return "; ".join(f"{k} {_short(before.get(k))} -> {_short(after.get(k))}" for k in changed) or "computed values"


def _accounts(body: dict[str, Any], arguments: tuple[str, ...]) -> set[str]:
    """The AWS accounts of the ARNs in `arguments` (a reference to a resource of the stack names none)."""
    values = [body.get(argument) for argument in arguments]
    texts = [v for value in values for v in (value if isinstance(value, list) else [value]) if isinstance(v, str)]
    return {match.group(1) for text in texts if (match := _ARN_ACCOUNT.match(text))}


def _notification_change(change: ResourceChange, category: str, subject: str) -> Change | None:
    """Alarms and change events sent to an account none of them went to before: someone else reads them."""
    arguments = NOTIFY_ARGUMENTS.get(change.type)
    if arguments is None or change.action != "update":
        return None
    added = _accounts(change.after or {}, arguments) - _accounts(change.before or {}, arguments)
    if not added:
        return None
    return Change(change.address, change.action, category, subject, "window",
                  f"notifications now go to account {', '.join(sorted(added))}, which received none before: "
                  "check who reads them (change events carry the caller's identity)")


class _DuplicateKey(ValueError):
    pass


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """JSON objects as AWS reads them: a key given twice is refused, not resolved to the last one."""
    keys = [key for key, _ in pairs]
    if len(set(keys)) != len(keys):
        raise _DuplicateKey(sorted({key for key in keys if keys.count(key) > 1})[0])
    return dict(pairs)


def parsed_policy(policy: Any) -> dict[str, Any] | None:
    """An IAM-style policy document (JSON text or parsed), or None when it cannot be read: known only after
    apply, not JSON, or with a key given twice (which parsers resolve differently)."""
    if isinstance(policy, str):
        try:
            policy = json.loads(policy, object_pairs_hook=_no_duplicates)
        except (json.JSONDecodeError, RecursionError, _DuplicateKey):
            return None
    return policy if isinstance(policy, dict) else None


def wildcard_principal(policy: dict[str, Any]) -> bool:
    """Whether a policy grants anything to `*`: a wildcard principal, or `NotPrincipal` (everyone but some)."""
    statements = policy.get("Statement")
    for statement in statements if isinstance(statements, list) else [statements]:
        if not isinstance(statement, dict) or statement.get("Effect", "Allow") != "Allow":
            continue
        if "NotPrincipal" in statement:
            return True
        principal = statement.get("Principal")
        values = principal.values() if isinstance(principal, dict) else [principal]
        if any(value == "*" or (isinstance(value, list) and "*" in value) for value in values):
            return True
    return False


def _policy_change(change: ResourceChange, category: str, subject: str) -> Change | None:
    argument = POLICY_ARGUMENTS.get(change.type)
    if argument is None or change.action == "delete":
        return None
    before, after = (change.before or {}).get(argument), (change.after or {}).get(argument)
    if before == after:
        return None
    if isinstance(after, str) and after.startswith("${data.aws_iam_policy_document."):
        policy = None  # a synthesis: the document Tablewright writes itself, read by Terraform at plan time
    else:
        policy = parsed_policy(after)
        if policy is None:
            return Change(change.address, change.action, category, subject, "window",
                          "the policy is known only after apply, or is not a JSON document Tablewright can read "
                          "(a key given twice): nobody has checked who it admits, so review it by hand")
        if wildcard_principal(policy):
            return Change(change.address, change.action, category, subject, "blocked",
                          "the policy grants access to any principal (`*`, or everyone but a `NotPrincipal`)",
                          "foreign")
    if change.action == "create":
        return None  # a new resource with its policy: nothing had access before
    return Change(change.address, change.action, category, subject, "window",
                  "a policy changes who may use this resource: review the statements by hand")


def _other_change(change: ResourceChange, production: bool) -> Change:
    category = CATEGORIES.get(change.type, "other")
    subject = f"{category}: {change.address.split('.', 1)[1] if '.' in change.address else change.address}"
    if change.action not in ("create", "update", "delete", "replace"):
        return Change(change.address, change.action, category, subject, "window",
                      f"Terraform plans `{change.action}`, which Tablewright does not classify: review it by hand")
    if change.type not in WRITTEN_TYPES:
        return Change(change.address, change.action, "foreign", f"{change.type}: {subject.split(': ', 1)[1]}",
                      "blocked", f"Tablewright does not write {change.type}: a change it cannot vouch for "
                                 "(IAM, resource policies and the like need their own review)", "foreign")
    if change.type == "aws_kms_key" and change.action in ("delete", "replace"):
        loss = ("a deleted key can no longer decrypt what it encrypted (backups included) once its deletion "
                "window ends")
        if production:
            return Change(change.address, change.action, category, subject, "blocked", f"production: {loss}",
                          "destroy")
        return Change(change.address, change.action, category, subject, "window", loss)
    policy = _policy_change(change, category, subject) or _notification_change(change, category, subject)
    if policy is not None:
        return policy
    if change.type == "aws_ssm_document" and change.action != "create" and _changed_arguments(change) - TAGS:
        return Change(change.address, change.action, category, subject, "window",
                      "the maintenance window (its change calendar) changes or goes: the gate judges this plan by "
                      "the window in force before it, and the new one applies from the next plan on")
    if change.action == "update":
        what = _argument_changes(change.type, change.before or {}, change.after or {})
    elif change.action == "replace":
        what = "re-created: " + ", ".join(change.replace_paths)
    else:
        what = {"create": "added", "delete": "removed"}[change.action]
    return Change(change.address, change.action, category, subject, "safe", what)


def production_change(before: bool, after: bool) -> list[Change]:
    """Production status itself (prevent_destroy on the table and its keys, the defaults of protection)."""
    if before and not after:
        return [Change("stack", "update", "protection", "production off", "blocked",
                       "the stack stops being production: `prevent_destroy` leaves the table and its keys, and "
                       "protection defaults no longer apply", "unprotect")]
    if after and not before:
        return [Change("stack", "update", "protection", "production on", "safe", "adds protection")]
    return []


def classify(changes: list[ResourceChange], production: bool) -> list[Change]:
    classified: list[Change] = []
    for change in changes:
        if change.type == "aws_dynamodb_table":
            classified += _table_change(change, production)
        else:
            classified.append(_other_change(change, production))
    return classified


def settings_changes(before: StackSettings, after: StackSettings) -> list[Change]:
    """The provider's region, the state backend and the provider version: invisible in the resources, yet a
    changed region or backend makes Terraform lose the table it manages and plan an empty one in its place."""
    changes = []
    if before.region != after.region:
        regions = f"{before.region or 'AWS_REGION'} -> {after.region or 'AWS_REGION'}"
        changes.append(Change("provider.aws", "update", "stack", f"region {regions}", "blocked",
                              "Terraform looks for every resource in the new region: the table there is a new, empty "
                              "one, and the current table (its items, alarms and protection) is left unmanaged where "
                              "it is", "destroy"))
    if before.backend != after.backend:
        changes.append(Change("terraform.backend", "update", "stack", "state backend", "blocked",
                              f"{_short(json.loads(before.backend))} -> {_short(json.loads(after.backend))}: "
                              "Terraform reads its state from the new backend; unless the state is moved there first "
                              "(`terraform init -migrate-state`), it plans an empty table beside the current one, "
                              "which it no longer manages", "destroy"))
    if before.provider != after.provider:
        changes.append(Change("terraform.required_providers", "update", "stack",
                              f"AWS provider {before.provider} -> {after.provider}", "window",
                              "another provider version can plan every resource differently (6.0 changed many): "
                              "read the plan before applying"))
    return changes


def counts(changes: list[Change]) -> dict[str, int]:
    return {cls: sum(1 for c in changes if c.cls == cls) for cls in CLASSES}


def gsi_builds(changes: list[Change]) -> list[str]:
    """Indexes created, deleted or rebuilt: DynamoDB runs these one UpdateTable at a time."""
    return sorted({c.subject for c in changes if c.category == "index"})


