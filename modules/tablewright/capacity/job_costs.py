"""What a job (`schedule:` on a pattern) costs per run and per month, and what an export to S3 would cost instead.

Each run is priced both ways: on demand, its read request units; provisioned, the capacity that keeps the job's
reads at the target utilization for its window (the ramp-up and scale-in around it, which `simulate` follows
minute by minute, are not counted), as the throughput lines price events. A month has 730 / 24 runs. The
throughput lines of the bill already hold every run.
"""

from __future__ import annotations

from dataclasses import dataclass

from tablewright.blueprint.language.jobs import JobSchedule
from tablewright.blueprint.traffic import OCCURRENCES_PER_MONTH
from tablewright.capacity.cost import GIB, stored_bytes
from tablewright.capacity.jobs import calls_per_run
from tablewright.capacity.loads import CapacityReport
from tablewright.design.design import TableDesign


@dataclass(frozen=True)
class JobCost:
    """One job's reads per run and what a run costs, from its flows (table and GSIs) and the region's prices."""

    pattern: str
    schedule: JobSchedule
    units_per_run: float  # read units one run consumes, every target added
    runs_per_month: float
    on_demand_per_run: float | None  # USD; None: not priced in the region
    provisioned_per_run: float | None
    capacity_hours: float  # RCU-hours one run needs provisioned (at the targets' utilization)

    @property
    def units_per_second(self) -> float:
        """Read units each second of the window."""
        return self.units_per_run / self.schedule.seconds

    def per_month(self, per_run: float | None) -> float | None:
        return None if per_run is None else per_run * self.runs_per_month


def job_costs(design: TableDesign, capacity: CapacityReport) -> list[JobCost]:
    """Each job's reads per run and its price per run in both billing modes, by pattern name."""
    blueprint = design.blueprint
    prices = capacity.prices.table_class(blueprint.region, blueprint.table.table_class)
    found = []
    for pattern in sorted(blueprint.access_patterns):
        schedule = blueprint.access_patterns[pattern].schedule
        if schedule is None:
            continue
        calls = calls_per_run(schedule)
        per_target = [(flow.target, flow.per_request * calls) for flow in capacity.traffic.flows
                      if flow.pattern == pattern]
        units = sum(value for _, value in per_target)
        hours = sum(value / (design.capacity[target].scaling("read").target / 100) for target, value in per_target) \
            / 3600
        found.append(JobCost(pattern, schedule, units, OCCURRENCES_PER_MONTH[schedule.every],
                             None if prices is None else units * prices.on_demand_read_request_unit,
                             None if prices is None else hours * prices.provisioned_rcu_hour, hours))
    return found


@dataclass(frozen=True)
class ExportCost:
    """A full export to S3 of the table (point-in-time recovery on), priced per GB of its size."""

    gigabytes: float  # the table's items and local index entries, as point-in-time recovery backs them up
    per_run: float | None  # USD; None: the region's prices have no export figure


def export_cost(design: TableDesign, capacity: CapacityReport) -> ExportCost:
    book = capacity.prices.region(design.blueprint.region)
    gigabytes = stored_bytes(design, table_only=True) / GIB
    price = book.export if book is not None else None
    return ExportCost(gigabytes, None if price is None else gigabytes * price.gb)
