"""The classes of a table's changes: replacement, indexes, billing, stream, TTL, protection, throughput."""

from __future__ import annotations

from typing import Any

from tablewright.review.changes import ResourceChange, lowered
from tablewright.review.classified import Change, short
from tablewright.review.table_facets import IndexFacets, TableFacets, table_facets, unrecognised_arguments


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
        changes.append(_unapplied(
            address, "index", f"{table}: local indexes",
            f"{_lsi_text(before.local_indexes)} -> {_lsi_text(after.local_indexes)}: the provider "
            "tells local indexes apart by name only and never applies this, so the deployed index "
            "keeps its sort key and projection. A local index changes only with a new table: keep "
            "it as it is, or give it a new name (the table is replaced: --allow-destroy, after "
            "exporting the items)"
        ))
    if before.key_types != after.key_types:
        changes.append(_unapplied(
            address, "table", f"{table}: key attribute types",
            f"{before.key_types} -> {after.key_types}: the provider never changes the type of a "
            "key attribute (and DynamoDB cannot): keep the types, or create a new table and copy "
            "the items"
        ))
    return changes


def _unapplied(address: str, category: str, subject: str, reason: str) -> Change:
    """An update the provider plans but never applies: blocked, the reason saying what to do instead."""
    return Change(address=address, action="update", category=category, subject=subject, cls="blocked", reason=reason)


def _lsi_text(indexes: tuple[tuple[str, str, str, tuple[str, ...]], ...]) -> str:
    return "; ".join(f"{name} {sort_key or '-'}, {kind}{' [' + ', '.join(kept) + ']' if kept else ''}"
                     for name, sort_key, kind, kept in indexes) or "none"


def table_change(change: ResourceChange, production: bool) -> list[Change]:
    address = change.address
    if change.action == "create":
        name = table_facets(change.after or {}).name
        return [Change(
            address=address, action="create", category="table", subject=f"table {name}", cls="safe",
            reason="a new, empty table"
        )]
    if change.action == "delete":
        name = table_facets(change.before or {}).name
        return [Change(address=address, action="delete", category="table", subject=f"table {name}", cls="blocked",
                       reason="deleting the table deletes every item in it", unblocked_by="destroy")]
    if change.action not in ("update", "replace"):
        name = table_facets(change.before or change.after or {}).name
        return [Change(address=address, action=change.action, category="table", subject=f"table {name}", cls="blocked",
                       reason=f"Terraform plans `{change.action}` for the table: it leaves Terraform's management (no "
                       "protection, alarms or change rules follow it)", unblocked_by="destroy")]
    before, after = table_facets(change.before or {}), table_facets(change.after or {})
    if change.action == "replace":
        reasons = _replacement_reasons(before, after) or [f"Terraform replaces it: {', '.join(change.replace_paths)}"]
        return [Change(
            address=address, action="replace", category="table", subject=f"table {before.name}", cls="blocked",
            reason="replacing the table deletes every item in it: " + "; ".join(reasons), unblocked_by="destroy"
        )]
    table = f"table {after.name}"
    changes = _never_applied(address, table, before, after) + _table_updates(address, before, after, production)
    both = frozenset(before.global_indexes.keys() & after.global_indexes.keys())
    changes += _recovery_period(address, table, before, after) + _replicas(address, table, before, after)
    changes += _unrecognised_changes(address, table, change.before or {}, change.after or {}, both)
    return changes or [Change(
        address=address, action="update", category="table", subject=f"{table}: other arguments", cls="window",
        reason="Terraform updates the table, yet no argument Tablewright compares changes: "
        "review it by hand"
    )]


def _index_changes(address: str, before: TableFacets, after: TableFacets) -> list[Change]:
    changes = []
    for name in sorted(before.global_indexes.keys() | after.global_indexes.keys()):
        old, new = before.global_indexes.get(name), after.global_indexes.get(name)
        subject = f"GSI {name}"
        if old is None:
            assert new is not None  # the name is on one side at least
            changes.append(Change(address=address, action="create", category="index", subject=subject, cls="window",
                                  reason=f"DynamoDB builds the index ({_index_label(new)}) by backfilling every item: "
                                  "minutes to hours, one index at a time"))
        elif new is None:
            changes.append(Change(address=address, action="delete", category="index", subject=subject, cls="window",
                                  reason="queries on the index fail from the moment it starts deleting"))
        elif (old.keys, old.key_types, old.projection) != (new.keys, new.key_types, new.projection):
            changes.append(Change(
                address=address, action="replace", category="index", subject=subject, cls="window",
                reason=f"{_index_label(old)} -> {_index_label(new)}: a GSI's keys and projection cannot "
                "change in place, so it is deleted and rebuilt; queries on it fail until the "
                "new one is ACTIVE"
            ))

        else:
            if old.capacity != new.capacity and before.billing_mode == after.billing_mode:
                changes.append(Change(
                    address=address, action="update", category="capacity", subject=f"{subject} capacity", cls="safe",
                    reason=f"read/write {old.capacity[0]}/{old.capacity[1]} -> "
                    f"{new.capacity[0]}/{new.capacity[1]}"
                ))
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
        changes.append(Change(
            address=address, action="update", category="capacity", subject=f"{subject} on-demand maximum", cls="safe",
            reason=f"read/write {_limit(old[0])} -> {_limit(new[0])}: requests above it are throttled"
        ))
    if old[1] != new[1] and new[1] != (None, None):
        changes.append(Change(
            address=address, action="update", category="capacity", subject=f"{subject} warm throughput", cls="safe",
            reason=f"read/write {_limit(old[1])} -> {_limit(new[1])}"
        ))
    return changes


def _protection(address: str, subject: str, was: bool | None, now: bool | None, production: bool,
                loss: str) -> list[Change]:
    """Protection turned off is blocked in every environment: the plan alone cannot tell a table that
    matters from one that does not, and the acknowledgement costs one flag. A value known only after
    apply counts as off: the plan cannot show that the protection stays."""
    if was == now or (was is False and now is None):
        return []
    if now:
        return [Change(
            address=address, action="update", category="table", subject=f"{subject} on", cls="safe",
            reason="adds protection"
        )]
    where = "production table: " if production else ""
    if now is None:
        return [Change(
            address=address, action="update", category="table", subject=f"{subject} unknown until apply", cls="blocked",
            reason=f"{where}the plan cannot show it stays on, and if it goes off: {loss}", unblocked_by="unprotect"
        )]
    return [Change(
        address=address, action="update", category="table", subject=f"{subject} off", cls="blocked",
        reason=f"{where}{loss}", unblocked_by="unprotect"
    )]


def _recovery_period(address: str, table: str, before: TableFacets, after: TableFacets) -> list[Change]:
    """Fewer days of point-in-time recovery drop the older restore points: blocked like PITR turned off."""
    if before.recovery_days == after.recovery_days or not (before.point_in_time_recovery
                                                           and after.point_in_time_recovery):
        return []
    was, now = (35 if days is None else days for days in (before.recovery_days, after.recovery_days))
    subject = f"{table}: point-in-time recovery {was} -> {now} days"
    if isinstance(was, int) and isinstance(now, int) and now > was:
        return [Change(
            address=address, action="update", category="table", subject=subject, cls="safe", reason="adds protection"
        )]
    return [Change(address=address, action="update", category="table", subject=subject, cls="blocked",
                   reason="restore points older than the new period are deleted (or the period is known only after "
                   "apply)", unblocked_by="unprotect")]


def _replicas(address: str, table: str, before: TableFacets, after: TableFacets) -> list[Change]:
    """Replicas (global tables) are not Tablewright's: each copies every item to another region."""
    if before.replicas == after.replicas:
        return []
    return [Change(
        address=address, action="update", category="table",
        subject=f"{table}: replicas {', '.join(before.replicas) or 'none'} -> "
        f"{', '.join(after.replicas) or 'none'}",
        cls="blocked",
        reason="a replica copies every item to another region (data residency), and removing one deletes "
        "that copy; Tablewright writes no replicas and manages none",
        unblocked_by="foreign"
    )]


def _unrecognised_changes(address: str, table: str, before: dict[str, Any], after: dict[str, Any],
                          indexes: frozenset[str]) -> list[Change]:
    old, new = unrecognised_arguments(before, indexes), unrecognised_arguments(after, indexes)
    changed = sorted(name for name in old.keys() | new.keys() if old.get(name) != new.get(name))
    return [Change(address=address, action="update", category="table", subject=f"{table}: {name}", cls="window",
                   reason=f"{short(old.get(name))} -> {short(new.get(name))}: an argument Tablewright does not "
                   "recognise, applied in the window; review it by hand") for name in changed]


def _ttl_change(address: str, table: str, before: tuple[bool, str], after: tuple[bool, str],
                production: bool) -> Change:
    """TTL turned on or pointed at another attribute deletes every item whose value there is in the past:
    blocked in production (`--allow-destroy`). Turning it off waits for the window."""
    subject = f"{table}: TTL {before[1] or 'off'} -> {after[1] or 'off'}"
    processing = "takes up to an hour to process, and no other TTL change is accepted meanwhile"
    if not after[0]:
        return Change(
            address=address, action="update", category="table", subject=subject, cls="window", reason=processing
        )
    loss = (f"DynamoDB deletes every item whose `{after[1]}` holds a time in the past, within days, and turning TTL "
            "off does not bring them back: make sure that attribute holds when each item expires")
    if production:
        return Change(
            address=address, action="update", category="table", subject=subject, cls="blocked",
            reason=f"production table: {loss}", unblocked_by="destroy"
        )
    return Change(
        address=address, action="update", category="table", subject=subject, cls="window",
        reason=f"{loss}; {processing}"
    )


def _setting_update(address: str, table: str, setting: str, old: str, new: str, reason: str) -> Change:
    """A table setting DynamoDB changes in place, with work of its own (the reason): it waits for the window."""
    return Change(address=address, action="update", category="table", subject=f"{table}: {setting} {old} -> {new}",
                  cls="window", reason=reason)


def _table_updates(address: str, before: TableFacets, after: TableFacets, production: bool) -> list[Change]:
    table = f"table {after.name}"
    changes = _index_changes(address, before, after)
    if before.billing_mode != after.billing_mode:
        limit = (" (at most four times in 24 hours)" if after.billing_mode == "PAY_PER_REQUEST" else "")
        changes.append(_setting_update(
            address, table, "billing", before.billing_mode, after.billing_mode,
            f"DynamoDB restructures the table's partitions for several minutes{limit}"
        ))
    if before.stream != after.stream:
        changes.append(_setting_update(
            address, table, "stream", before.stream[1] or "off", after.stream[1] or "off",
            "stream consumers (Lambda triggers, pipes, replication) lose or change their stream"
        ))
    if before.ttl != after.ttl:
        changes.append(_ttl_change(address, table, before.ttl, after.ttl, production))
    if before.table_class != after.table_class:
        changes.append(_setting_update(address, table, "class", before.table_class, after.table_class,
                                       "DynamoDB migrates the table's storage"))
    if before.encryption != after.encryption:
        changes.append(_setting_update(
            address, table, "encryption", _encryption_label(before.encryption), _encryption_label(after.encryption),
            f"DynamoDB re-encrypts the table with the new key ({after.encryption[1] or 'aws/dynamodb'})"
            if after.encryption[0] else "DynamoDB re-encrypts the table with an AWS owned key"
        ))
    changes += _protection(address, f"{table}: point-in-time recovery", before.point_in_time_recovery,
                           after.point_in_time_recovery, production,
                           "turning it off deletes the continuous backups (up to 35 days of restore points)")
    changes += _protection(address, f"{table}: deletion protection", before.deletion_protection,
                           after.deletion_protection, production, "the table can then be deleted by any caller")
    if before.tags != after.tags:
        changed = sorted(k for k in before.tags.keys() | after.tags.keys() if before.tags.get(k) != after.tags.get(k))
        changes.append(Change(
            address=address, action="update", category="tags", subject=f"{table}: tags {', '.join(changed)}",
            cls="safe", reason="metadata only"
        ))
    if before.capacity != after.capacity and before.billing_mode == after.billing_mode:
        changes.append(Change(
            address=address, action="update", category="capacity", subject=f"{table}: capacity", cls="safe",
            reason=f"read/write {before.capacity[0]}/{before.capacity[1]} -> "
            f"{after.capacity[0]}/{after.capacity[1]}"
        ))
    changes += _throughput_changes(address, f"{table}:", before.throughput, after.throughput)
    return changes
