"""The `tablewright` stack output: what the plan gate must know about the state a plan starts from.

A plan (`terraform show -json`) carries every output's value before and after (`output_changes`), so
the gate reads the prior state's facts from it, whatever the head blueprint now says: whether the
stack was production, the maintenance window in force (a pull request that widens its own window is
still judged by the old one), and every entity's keys on the table and each index (a changed key is a
data migration even when no resource changes).
"""

from __future__ import annotations

from typing import Any

from tablewright.design.design import TableDesign
from tablewright.design.locked import key_facts, lock_of

STACK_OUTPUT = "tablewright"
GATE_OUTPUT_DESCRIPTION = "What the plan gate reads from a plan's prior state (Tablewright)"
RECORD_VERSION = 2


def stack_record(design: TableDesign) -> dict[str, Any]:
    keys: dict[str, dict[str, Any]] = {}
    for (entity, index), facts in sorted(key_facts(lock_of(design)).items()):
        keys.setdefault(entity, {})[index] = facts.record()
    window = design.blueprint.maintenance_window
    # `false` for no window: Terraform outputs drop nulls, and an absent window must not read as "not recorded".
    return {"version": RECORD_VERSION, "production": design.blueprint.production,
            "maintenance_window": window.model_dump(mode="json") if window else False, "keys": keys}
