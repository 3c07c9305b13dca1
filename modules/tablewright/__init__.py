"""Tablewright: DynamoDB single-table blueprints to reviewed, tested Terraform, synthesized with CDK for Terraform.

The command is `tablewright` (`tablewright.cli`). For a cdktf app of your own, the construct:

    from tablewright import TablewrightTable

    TablewrightTable.from_blueprint(stack, "orders", "blueprints/orders.yaml", env="prod")

For application tests, a local AWS with a blueprint's tables: `tablewright.testing`.
"""

from __future__ import annotations

from typing import Any

__all__ = ["TablewrightTable"]


def __getattr__(name: str) -> Any:
    # Imported on first use: `import tablewright` (every command starts with it) does not start cdktf.
    if name == "TablewrightTable":
        from tablewright.constructs.construct import TablewrightTable

        return TablewrightTable
    raise AttributeError(name)
