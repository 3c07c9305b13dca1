"""On-demand maxima (`max_throughput`) resolved to numbers: the table's and each GSI's."""

from __future__ import annotations

from tablewright.blueprint.throughput import max_throughput_setting
from tablewright.capacity.estimate import CapacityReport, IndexLoad
from tablewright.design.design import TABLE, TableDesign

UNLIMITED = -1  # what the provider takes to remove a maximum
# The least `suggested` sets, per direction: a maximum guards against runaway spend, not against the small
# undeclared traffic every table gets (console lookups, operators' scripts, reads of an index-only table), and
# 100 units a second reached all day costs $1.08 of reads and $5.40 of writes (us-east-1, on demand).
MIN_SUGGESTED_MAXIMUM = 100


def suggested_maximum(load: IndexLoad) -> tuple[int, int]:
    """(read, write) request units per second `max_throughput: suggested` sets: the declared peak at the target
    utilization (the suggested autoscaling maximum), never below MIN_SUGGESTED_MAXIMUM."""
    return (max(MIN_SUGGESTED_MAXIMUM, load.suggested_read[1]), max(MIN_SUGGESTED_MAXIMUM, load.suggested_write[1]))


def on_demand_maxima(design: TableDesign, capacity: CapacityReport) -> dict[str, tuple[int, int]]:
    """(read, write) request units per second for the table (`"table"`) and every GSI that has a setting:
    the numbers given (-1 for a direction left out), the suggested maximum (the declared peak at the target
    utilization, at least MIN_SUGGESTED_MAXIMUM) for `suggested`, or -1 for `unlimited`. Provisioned tables
    and unset targets have no entry."""
    maxima: dict[str, tuple[int, int]] = {}
    for target in [TABLE, *(index.name for index in design.global_indexes)]:
        setting = max_throughput_setting(design.blueprint, None if target == TABLE else target)
        if setting is None:
            continue
        if setting == "unlimited":
            maxima[target] = (UNLIMITED, UNLIMITED)
        elif setting == "suggested":
            maxima[target] = suggested_maximum(capacity.load(target))
        else:
            maxima[target] = (setting.read or UNLIMITED, setting.write or UNLIMITED)
    return maxima
