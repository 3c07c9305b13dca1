"""A classified change: its class (blocked, window, safe), why, and the acknowledgement that lifts a block."""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any, Literal

Class = Literal["blocked", "window", "safe"]
CLASSES: tuple[Class, ...] = ("blocked", "window", "safe")
# The acknowledgements that lift blocked changes, and the command-line flag that gives each.
ACKNOWLEDGEMENTS = {"destroy": "--allow-destroy", "unprotect": "--allow-unprotect", "foreign": "--allow-foreign"}
Acknowledgement = Literal["destroy", "unprotect", "foreign"]


@dataclass(frozen=True, kw_only=True)
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


def short(value: Any) -> str:
    """A value as a change's reason shows it, cut to 60 characters."""
    text = json.dumps(value, sort_keys=True) if isinstance(value, (dict, list)) else str(value)
    return text if len(text) <= 60 else text[:57] + "..."


def counts(changes: list[Change]) -> dict[str, int]:
    return {cls: sum(1 for c in changes if c.cls == cls) for cls in CLASSES}


def gsi_builds(changes: list[Change]) -> list[str]:
    """Indexes created, deleted or rebuilt: DynamoDB runs these one UpdateTable at a time."""
    return sorted({c.subject for c in changes if c.category == "index"})
