"""The `tablewright` stack output: what the plan gate must know about the state a plan starts from.

A plan (`terraform show -json`) carries every output's value before and after (`output_changes`), so
the gate reads the prior state's facts from it, whatever the head blueprint now says.
"""

from __future__ import annotations

from typing import Any

from modules.design.model import TableDesign

STACK_OUTPUT = "tablewright"
RECORD_VERSION = 1


def stack_record(design: TableDesign) -> dict[str, Any]:
    return {"version": RECORD_VERSION, "production": design.blueprint.production}
