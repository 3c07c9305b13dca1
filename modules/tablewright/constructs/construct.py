"""`TablewrightTable`: a blueprint's table and everything that belongs to it, as a cdktf construct.

Embed it in any cdktf stack (the stack owns the provider and the backend):

    from tablewright.constructs import TablewrightTable

    table = TablewrightTable.from_blueprint(stack, "orders", "blueprints/orders.yaml", env="prod")
    TerraformOutput(stack, "orders_table", value=table.table_name)
    table.add_gate_output()  # the `tablewright` output `tablewright gate` reads

It emits exactly the resources, data sources and locals `tablewright synth` writes for that
blueprint stack: the table (and its KMS key), autoscaling, Contributor Insights, the change calendar,
the change rule, the alarm topic and the alarms. Terraform addresses derive from the blueprint's name
(`aws_dynamodb_table.orders`), not from the construct id, so every environment and every embedding
plans the same addresses. The blueprint's `terraform.aws_provider` constraint still decides which
provider arguments are written (Contributor Insights `mode` needs hashicorp/aws >= 6.11): keep the
stack's provider within it.

The whole table is handed to cdktf as one element, whose Terraform JSON is built in Python from the
typed resource models (`resources.py`); its `//` metadata gives each resource the path it would have
as a child of the construct's scope.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tablewright.constructs.access import access_output
from tablewright.constructs.assembly import TableReferences, table_blocks, table_references
from tablewright.constructs.cdk import Construct, TerraformOutput, TerraformStack, add_fragment, path_of, stack_of
from tablewright.constructs.keys import ACCOUNT_DATA
from tablewright.constructs.record import GATE_OUTPUT_DESCRIPTION, STACK_OUTPUT, terraform_record
from tablewright.constructs.terraform import addresses, fragment
from tablewright.errors import ErrorCode, TablewrightError

if TYPE_CHECKING:
    from tablewright.stacks.stack import Stack

# Blocks every table may declare: the same in each, so two tables in one stack share them.
_SHARED = addresses(ACCOUNT_DATA)


class TablewrightTable(Construct):
    """The Terraform of one blueprint stack (`stack`: loaded, designed), without provider or backend."""

    def __init__(self, scope: Construct, id: str, *, stack: Stack) -> None:
        blocks = table_blocks(stack.design, stack.capacity)
        scope_path = path_of(scope)
        self._stack = stack_of(scope)
        _claim(self._stack, addresses(blocks) - _SHARED, f"{scope_path}/{id}")
        super().__init__(scope, id)
        # Kept as text until synthesis: a thousand tables in one app stay small in memory.
        self._terraform = json.dumps(fragment(blocks, scope_path))
        self._references: TableReferences = table_references(stack.design)
        self._record = terraform_record(stack.design)
        self._access = access_output(stack.design)
        add_fragment(self, "terraform", lambda: json.loads(self._terraform), self._stack)

    @classmethod
    def from_blueprint(cls, scope: Construct, id: str, path: str | Path, env: str | None = None, *,
                       allow_lint_errors: bool = False) -> TablewrightTable:
        """Load, design and lint a blueprint file (one environment of it: `env`), as `tablewright synth` does:
        lint errors are refused unless `allow_lint_errors`."""
        from tablewright.blueprint.load import load_blueprint
        from tablewright.stacks.stack import build_stack, lint_errors

        stack = build_stack(load_blueprint(path, env))
        refusal = None if allow_lint_errors else lint_errors(stack, "allow_lint_errors=True")
        if refusal is not None:
            raise refusal
        return cls(scope, id, stack=stack)

    @property
    def record(self) -> dict[str, Any]:
        """The value of the `tablewright` output the plan gate reads (`add_gate_output` writes it)."""
        return self._record

    def add_gate_output(self) -> TerraformOutput:
        """Add the `tablewright` output to the construct's stack, as `tablewright synth` does: the plan gate
        reads from it what the state a plan starts from had (production, the maintenance window in force,
        every entity's keys), so it sees key migrations and a pull request widening its own window. One per
        stack: the gate judges plans that manage one Tablewright table."""
        stack = self._stack
        owner = stack.__dict__.get("_tablewright_gate_output")
        if owner is not None:
            raise TablewrightError(f"{self.node.path}: the stack already has the `{STACK_OUTPUT}` output, of {owner}",
                                   hint="the plan gate judges a stack with one Tablewright table: put each table "
                                        "you gate in a stack of its own",
                                   code=ErrorCode.NAMING)
        stack.__dict__["_tablewright_gate_output"] = self.node.path
        return TerraformOutput(stack, STACK_OUTPUT, value=self.record, description=GATE_OUTPUT_DESCRIPTION)

    @property
    def access_policies(self) -> dict[str, str] | None:
        """Each access pattern's IAM policy JSON (`${data.aws_iam_policy_document....json}`) for the application's
        roles, as `tablewright synth` outputs them (`access_policies`); None unless the blueprint has a `tenant`."""
        return self._access

    @property
    def table_name(self) -> str:
        """`${aws_dynamodb_table.<blueprint>.name}`"""
        return self._references.table_name

    @property
    def table_arn(self) -> str:
        return self._references.table_arn

    @property
    def stream_arn(self) -> str | None:
        """None when the table has no stream."""
        return self._references.stream_arn

    @property
    def change_calendar(self) -> str | None:
        """The SSM Change Calendar's name; None without a maintenance window."""
        return self._references.change_calendar

    @property
    def alarm_topic_arn(self) -> str | None:
        """The alarm topic this table creates (`alarms.notify: create`), else None."""
        return self._references.alarm_topic_arn


def _claim(stack: TerraformStack, owned: set[str], path: str) -> None:
    """Record the Terraform addresses a table declares in its stack; two tables must not share one
    (cdktf would merge their blocks into one)."""
    declared: dict[str, str] = stack.__dict__.setdefault("_tablewright_addresses", {})
    clash = sorted(owned & declared.keys())
    if clash:
        raise TablewrightError(
            f"{path} declares {', '.join(clash[:3])}, as {declared[clash[0]]} does",
            hint="Terraform addresses derive from the blueprint name: one table per blueprint and stack",
            code=ErrorCode.NAMING,
        )
    declared.update(dict.fromkeys(owned, path))
