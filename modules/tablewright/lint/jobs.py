"""Jobs (`schedule:`): a Scan job on a table whose point-in-time recovery lets an export to S3 do the reading.

An export (ExportTableToPointInTime) reads the continuous backup, not the table: "it doesn't affect the read
capacity or the availability of your production tables"
(https://aws.amazon.com/blogs/database/introducing-incremental-export-from-amazon-dynamodb-to-amazon-s3/), and it
needs point-in-time recovery on (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/
S3DataExport_Requesting.html). A full export is priced per GB of the base table's size (its data and local
secondary indexes) at the export time (usage type ExportDataSize-Bytes, AWS Cost and Usage Report guide for
DynamoDB); the figure per GB is the price file's `export.gb`.
"""

from __future__ import annotations

from collections.abc import Iterator

from tablewright.capacity.job_costs import JobCost, export_cost, job_costs
from tablewright.lint.findings import Context, Issue, rule


def _dollars(value: float | None) -> str:
    return "not priced" if value is None else f"${value:,.2f}"


def _scan_cost(job: JobCost) -> str:
    return (f"{_dollars(job.on_demand_per_run)} a run on demand, {_dollars(job.provisioned_per_run)} provisioned; "
            f"{_dollars(job.per_month(job.on_demand_per_run))} / {_dollars(job.per_month(job.provisioned_per_run))} "
            "a month")


@rule("TW320", "Scan job where an export to S3 would read no capacity",
      "Point-in-time recovery is on: export the table to S3 (ExportTableToPointInTime) and read the export, so the "
      "job's reads never compete with the application's; compare the two prices the note gives.",
      why="A scheduled Scan (`schedule:` with `scan: allowed`) on a table with point-in-time recovery: an export "
          "consumes no read capacity and is priced per GB of the table instead",
      severity="info")
def scan_job_could_export(ctx: Context) -> Iterator[Issue]:
    blueprint = ctx.design.blueprint
    if not blueprint.table.point_in_time_recovery:
        return
    scans = {plan.pattern for plan in ctx.design.plans if plan.operation == "Scan"}
    jobs = [job for job in job_costs(ctx.design, ctx.capacity) if job.pattern in scans]
    if not jobs:
        return
    export = export_cost(ctx.design, ctx.capacity)
    for job in jobs:
        schedule = job.schedule
        yield Issue(
            "info",
            f"{job.pattern} scans the whole table every {schedule.every} at {schedule.start} UTC: "
            f"{job.units_per_run:,.0f} RCU a run, {job.units_per_second:,.1f} RCU/s for {schedule.seconds // 60:,} "
            f"min ({_scan_cost(job)}); with point-in-time recovery on, an export to S3 reads no table capacity: "
            f"{export.gigabytes:,.2f} GB, {_dollars(export.per_run)} a run, "
            f"{_dollars(job.per_month(export.per_run))} a month",
            "run an export to S3 (ExportTableToPointInTime) at the job's time and read the export instead of "
            "scanning the table",
            ("access_patterns", job.pattern, "schedule"),
        )
