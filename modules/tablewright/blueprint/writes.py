"""Checks of `writes:` that need more than the entity's own fields: which attributes an update changes."""

from __future__ import annotations

import re

from tablewright.blueprint.language import Blueprint
from tablewright.blueprint.traits import mutable
from tablewright.errors import BlueprintError, ErrorCode

PLACEHOLDER = re.compile(r"\{([A-Za-z][A-Za-z0-9_]*)")


def check_failing_updates(blueprint: Blueprint) -> None:
    """A failing update that changes the table key: such an update moves the item in a transaction (a delete and
    a put), and what a cancelled transaction consumes is not documented, so it cannot be costed."""
    for name, entity in sorted(blueprint.entities.items()):
        rates = entity.writes
        if rates is None or not rates.failing.get("updates"):
            continue
        key = set(PLACEHOLDER.findall(f"{entity.key.pk}#{entity.key.sk or ''}"))  # malformed ones: reported elsewhere
        changes = rates.changes if rates.changes is not None else [
            attribute for attribute, spec in entity.attributes.items() if mutable(attribute, spec)]
        moving = sorted(key & set(changes))
        if moving:
            raise BlueprintError(
                f"`writes.failing.updates` on {name}, and an update changes `{moving[0]}`, part of the table key: "
                "it moves the item in a transaction, and what a cancelled transaction consumes is not documented",
                path=("entities", name, "writes", "failing", "updates"), code=ErrorCode.CONTRADICTION,
                hint="remove `updates` from `failing`, or list in `writes.changes` what the failing updates change")
