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

from tablewright.review.changes import ResourceChange, StackSettings
from tablewright.review.classified import Change, short
from tablewright.review.resources import other_change
from tablewright.review.table_rules import table_change


def production_change(before: bool, after: bool) -> list[Change]:
    """Production status itself (prevent_destroy on the table and its keys, the defaults of protection)."""
    if before and not after:
        return [Change(address="stack", action="update", category="protection", subject="production off", cls="blocked",
                       reason="the stack stops being production: `prevent_destroy` leaves the table and its keys, and "
                       "protection defaults no longer apply", unblocked_by="unprotect")]
    if after and not before:
        return [Change(
            address="stack", action="update", category="protection", subject="production on", cls="safe",
            reason="adds protection"
        )]
    return []


def classify(changes: list[ResourceChange], production: bool) -> list[Change]:
    classified: list[Change] = []
    for change in changes:
        if change.type == "aws_dynamodb_table":
            classified += table_change(change, production)
        else:
            classified.append(other_change(change, production))
    return classified


def settings_changes(before: StackSettings, after: StackSettings) -> list[Change]:
    """The provider's region, the state backend and the provider version: invisible in the resources, yet a
    changed region or backend makes Terraform lose the table it manages and plan an empty one in its place."""
    changes = []
    if before.region != after.region:
        regions = f"{before.region or 'AWS_REGION'} -> {after.region or 'AWS_REGION'}"
        changes.append(Change(
            address="provider.aws", action="update", category="stack", subject=f"region {regions}", cls="blocked",
            reason="Terraform looks for every resource in the new region: the table there is a new, empty "
            "one, and the current table (its items, alarms and protection) is left unmanaged where "
            "it is",
            unblocked_by="destroy"
        ))
    if before.backend != after.backend:
        changes.append(Change(
            address="terraform.backend", action="update", category="stack", subject="state backend", cls="blocked",
            reason=f"{short(json.loads(before.backend))} -> {short(json.loads(after.backend))}: "
            "Terraform reads its state from the new backend; unless the state is moved there first "
            "(`terraform init -migrate-state`), it plans an empty table beside the current one, "
            "which it no longer manages",
            unblocked_by="destroy"
        ))
    if before.provider != after.provider:
        changes.append(Change(address="terraform.required_providers", action="update", category="stack",
                              subject=f"AWS provider {before.provider} -> {after.provider}", cls="window",
                              reason="another provider version can plan every resource differently (6.0 changed many): "
                              "read the plan before applying"))
    return changes
