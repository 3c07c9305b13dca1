"""Tablewright's cdktf constructs.

`TablewrightTable` (in `construct.py`) is the public construct: a blueprint's table with its
autoscaling, Contributor Insights, alarms, alarm topic and change rules, for any cdktf stack:

    from tablewright.constructs import TablewrightTable

    TablewrightTable.from_blueprint(stack, "orders", "blueprints/orders.yaml", env="prod")

The other modules build that Terraform as plain data, one concern each (`table`, `autoscaling`,
`insights`, `alarms`, `notifications` and `keys`, `change_rules`), with arguments validated by the
models in `resources`; `stack` is how `tablewright synth` puts the same Terraform in a stack with its provider
and backend (one cdktf stack and its backend per blueprint stack, the rest plain data merged into the file
cdktf writes); `cdk` is the only module that imports cdktf; `halves` completes a fleet's files on two CPUs.
"""

from __future__ import annotations

from typing import Any

__all__ = ["TablewrightTable"]


def __getattr__(name: str) -> Any:
    # Imported on first use: the plain-data modules (alarm specs, blocks) work without starting cdktf.
    if name == "TablewrightTable":
        from tablewright.constructs.construct import TablewrightTable

        return TablewrightTable
    raise AttributeError(name)
