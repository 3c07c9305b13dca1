"""The `tablewright` stack output: what the plan gate must know about the state a plan starts from.

A plan (`terraform show -json`) carries every output's value before and after (`output_changes`), so
the gate reads the prior state's facts from it, whatever the head blueprint now says: whether the
stack was production, the maintenance window in force (a pull request that widens its own window is
still judged by the old one), and every entity's keys on the table and each index (a changed key is a
data migration even when no resource changes), and every entity's stored attributes (a renamed, removed or retyped
attribute is one too).
"""

from __future__ import annotations

from typing import Any

from tablewright.design.design import TableDesign
from tablewright.design.evolution import declarations
from tablewright.design.locked import attribute_facts, key_facts, lock_of, retained_facts

STACK_OUTPUT = "tablewright"
GATE_OUTPUT_DESCRIPTION = "What the plan gate reads from a plan's prior state (Tablewright)"
RECORD_VERSION = 3  # 3: stored attributes (`attributes`), migrations declared (`declared`), `retained` keys


def stack_record(design: TableDesign) -> dict[str, Any]:
    lock = lock_of(design)
    keys: dict[str, dict[str, Any]] = {}
    for (entity, index), facts in sorted(key_facts(lock).items()):
        keys.setdefault(entity, {})[index] = facts.record()
    window = design.blueprint.maintenance_window
    # `false` for no window: Terraform outputs drop nulls, and an absent window must not read as "not recorded".
    return {"version": RECORD_VERSION, "production": design.blueprint.production,
            "maintenance_window": window.model_dump(mode="json") if window else False, "keys": keys,
            "attributes": attribute_facts(lock), "declared": declarations(design.blueprint),
            "retained": {entity: facts.templates for (entity, _), facts in sorted(retained_facts(lock).items())}}


def terraform_record(design: TableDesign) -> dict[str, Any]:
    """`stack_record` as the `tablewright` output's value: every literal `${` and `%{` of it (a timestamp format
    may hold them) escaped as `$${` and `%%{`, so Terraform evaluates nothing and the plan shows the text."""
    return {key: _literal(value) for key, value in stack_record(design).items()}


def _literal(value: Any) -> Any:
    if isinstance(value, str):
        return value.replace("${", "$${").replace("%{", "%%{")
    if isinstance(value, dict):
        return {_literal(key): _literal(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_literal(item) for item in value]
    return value
