"""The classes of changes to the stack's other resources: autoscaling, alarms, notifications, keys, the change
window, and resources Tablewright does not write."""

from __future__ import annotations

import re
from typing import Any

from tablewright.review.changes import ResourceChange
from tablewright.review.classified import Change, short
from tablewright.review.policies import policy_change

# The resource types a Tablewright stack holds; anything else in a plan was not written by it.
WRITTEN_TYPES = frozenset({
    "aws_dynamodb_table", "aws_dynamodb_contributor_insights", "aws_appautoscaling_target",
    "aws_appautoscaling_policy", "aws_cloudwatch_metric_alarm", "aws_cloudwatch_event_rule",
    "aws_cloudwatch_event_target", "aws_sns_topic", "aws_sns_topic_policy", "aws_kms_key", "aws_kms_alias",
    "aws_ssm_document",
})
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
    return "; ".join(f"{k} {short(before.get(k))} -> {short(after.get(k))}" for k in changed) or "computed values"


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
    return Change(address=change.address, action=change.action, category=category, subject=subject, cls="window",
                  reason=f"notifications now go to account {', '.join(sorted(added))}, which received none before: "
                  "check who reads them (change events carry the caller's identity)")


def other_change(change: ResourceChange, production: bool) -> Change:
    category = CATEGORIES.get(change.type, "other")
    subject = f"{category}: {change.address.split('.', 1)[1] if '.' in change.address else change.address}"
    if change.action not in ("create", "update", "delete", "replace"):
        return Change(
            address=change.address, action=change.action, category=category, subject=subject, cls="window",
            reason=f"Terraform plans `{change.action}`, which Tablewright does not classify: review it by hand"
        )
    if change.type not in WRITTEN_TYPES:
        return Change(
            address=change.address, action=change.action, category="foreign",
            subject=f"{change.type}: {subject.split(': ', 1)[1]}", cls="blocked",
            reason=f"Tablewright does not write {change.type}: a change it cannot vouch for "
            "(IAM, resource policies and the like need their own review)",
            unblocked_by="foreign"
        )
    if change.type == "aws_kms_key" and change.action in ("delete", "replace"):
        loss = ("a deleted key can no longer decrypt what it encrypted (backups included) once its deletion "
                "window ends")
        if production:
            return Change(
                address=change.address, action=change.action, category=category, subject=subject, cls="blocked",
                reason=f"production: {loss}", unblocked_by="destroy"
            )
        return Change(
            address=change.address, action=change.action, category=category, subject=subject, cls="window", reason=loss
        )
    policy = policy_change(change, category, subject) or _notification_change(change, category, subject)
    if policy is not None:
        return policy
    if change.type == "aws_ssm_document" and change.action != "create" and _changed_arguments(change) - TAGS:
        return Change(
            address=change.address, action=change.action, category=category, subject=subject, cls="window",
            reason="the maintenance window (its change calendar) changes or goes: the gate judges this plan by "
            "the window in force before it, and the new one applies from the next plan on"
        )
    if change.action == "update":
        what = _argument_changes(change.type, change.before or {}, change.after or {})
    elif change.action == "replace":
        what = "re-created: " + ", ".join(change.replace_paths)
    else:
        what = {"create": "added", "delete": "removed"}[change.action]
    return Change(
        address=change.address, action=change.action, category=category, subject=subject, cls="safe", reason=what
    )
