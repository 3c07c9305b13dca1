"""The `tablewright` stack output: what the plan gate must know about the state a plan starts from.

A plan (`terraform show -json`) carries every output's value before and after (`output_changes`), so
the gate reads the prior state's facts from it, whatever the head blueprint now says: whether the
stack was production, and every entity's keys on the table and each index (a changed key is a data
migration even when no resource changes).
"""

from __future__ import annotations

from typing import Any

from modules.design.locked import key_facts, lock_of
from modules.design.model import TableDesign

STACK_OUTPUT = "tablewright"
RECORD_VERSION = 1


def stack_record(design: TableDesign) -> dict[str, Any]:
    keys: dict[str, dict[str, Any]] = {}
    for (entity, index), facts in sorted(key_facts(lock_of(design)).items()):
        keys.setdefault(entity, {})[index] = facts.record()
    return {"version": RECORD_VERSION, "production": design.blueprint.production, "keys": keys}
