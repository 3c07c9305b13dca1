"""On-demand maxima (`max_throughput`) resolved to numbers: the table's and each GSI's."""

from __future__ import annotations

from modules.blueprint.throughput import max_throughput_setting
from modules.capacity.model import CapacityReport
from modules.design.model import TABLE, TableDesign

UNLIMITED = -1  # what the provider takes to remove a maximum


def on_demand_maxima(design: TableDesign, capacity: CapacityReport) -> dict[str, tuple[int, int]]:
    """(read, write) request units per second for the table (`"table"`) and every GSI that has a setting:
    the numbers given, the suggested autoscaling maximum (the declared peak at the target utilization) for
    `suggested`, or -1 for `unlimited`. Provisioned tables and unset targets have no entry."""
    maxima: dict[str, tuple[int, int]] = {}
    for target in [TABLE, *(index.name for index in design.global_indexes)]:
        setting = max_throughput_setting(design.blueprint, None if target == TABLE else target)
        if setting is None:
            continue
        if setting == "unlimited":
            maxima[target] = (UNLIMITED, UNLIMITED)
        elif setting == "suggested":
            load = capacity.load(target)
            maxima[target] = (load.suggested_read[1], load.suggested_write[1])
        else:
            maxima[target] = (setting.read, setting.write)
    return maxima
