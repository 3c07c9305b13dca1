"""Resource policies: reading an IAM-style document, and the class of a changed one."""

from __future__ import annotations

import json
from typing import Any

from tablewright.review.changes import ResourceChange
from tablewright.review.classified import Change

# Arguments holding an IAM-style policy document, per resource type.
POLICY_ARGUMENTS = {"aws_kms_key": "policy", "aws_sns_topic": "policy", "aws_sns_topic_policy": "policy"}


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


def policy_change(change: ResourceChange, category: str, subject: str) -> Change | None:
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
            return Change(
                address=change.address, action=change.action, category=category, subject=subject, cls="window",
                reason="the policy is known only after apply, or is not a JSON document Tablewright can read "
                "(a key given twice): nobody has checked who it admits, so review it by hand"
            )
        if wildcard_principal(policy):
            return Change(
                address=change.address, action=change.action, category=category, subject=subject, cls="blocked",
                reason="the policy grants access to any principal (`*`, or everyone but a `NotPrincipal`)",
                unblocked_by="foreign"
            )
    if change.action == "create":
        return None  # a new resource with its policy: nothing had access before
    return Change(address=change.address, action=change.action, category=category, subject=subject, cls="window",
                  reason="a policy changes who may use this resource: review the statements by hand")
