"""Which throughput settings apply to the table and to each GSI (an index inherits the table's maximum)."""

from __future__ import annotations

from tablewright.blueprint.language import Blueprint, MaxThroughput, WarmThroughput


def max_throughput_setting(blueprint: Blueprint, index: str | None = None) -> MaxThroughput | None:
    """The on-demand maximum that applies to the table (`index` None) or a GSI: the index's own setting, else
    the table's. None on provisioned tables and when nothing is set."""
    if blueprint.table.billing != "on_demand":
        return None
    spec = blueprint.indexes.get(index) if index else None
    own = spec.max_throughput if spec else None
    return own if own is not None else blueprint.table.max_throughput


def has_maximum(blueprint: Blueprint, index: str | None = None) -> bool:
    """A maximum (numbers or `suggested`) caps the table or GSI, so its throttle events can occur."""
    setting = max_throughput_setting(blueprint, index)
    return setting is not None and setting != "unlimited"


def warm_throughput_setting(blueprint: Blueprint, index: str | None = None) -> WarmThroughput | None:
    """Warm throughput is set where it is written (an index does not inherit the table's)."""
    if index is None:
        return blueprint.table.warm_throughput
    spec = blueprint.indexes.get(index)
    return spec.warm_throughput if spec else None
