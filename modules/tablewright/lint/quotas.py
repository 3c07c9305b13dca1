"""DynamoDB's throughput quotas, as every fix that sets a capacity checks them (TW105, TW308, TW310, TW313).

Table-level: at most 40,000 read and 40,000 write units per second for any table or any of its GSIs, provisioned or
on demand (`simulation.table_quota`); account-level: at most 80,000 provisioned read and write capacity units per
region, summed over every table and GSI of the account, and the table with all its GSIs must fit under it
(`simulation.account_quota`). Both are defaults AWS raises on request (Service Quotas).
https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ServiceQuotas.html#default-limits-throughput

The simulator serves at most the table-level quota, so a fix above it is simulated within the quota; the only
other tables known are none, so the account-level quota is checked only when this design alone exceeds it.
"""

from __future__ import annotations

from tablewright.blueprint.language import Simulation


def beyond_quota(simulation: Simulation, direction: str, units: int, design_total: int = 0,
                 smoothing: str = "the event") -> str:
    """"" when `units` (one table's or GSI's capacity, or an on-demand maximum) and `design_total` (the table's and
    its GSIs' provisioned capacity together) fit the quotas; else which quota they exceed, the figure to request
    and the alternatives, as a sentence to follow a fix."""
    over_table = units > simulation.table_quota
    over_account = design_total > simulation.account_quota
    if not over_table and not over_account:
        return ""
    why, ask = [], []
    if over_table:
        why.append(f"{units:,} is above the table-level {direction} throughput quota of "
                   f"{simulation.table_quota:,} units/s (`simulation.table_quota`)")
        ask.append(f"table-level {direction} throughput to at least {units:,}")
    if over_account:
        why.append(f"the table and its GSIs would hold {design_total:,} {direction} capacity units, above the "
                   f"account-level {direction} throughput quota of {simulation.account_quota:,} per region "
                   "(`simulation.account_quota`)")
        ask.append(f"account-level {direction} throughput to at least {design_total:,} plus what the region's other "
                   "tables hold")
    return (f"; but {' and '.join(why)}: DynamoDB serves no more than the quota, so first request a quota increase "
            f"(Service Quotas, Amazon DynamoDB: {'; '.join(ask)}), or split the workload across tables, or put "
            f"{smoothing} through a queue that feeds it to the table at what the quota serves")


def quota_mark(simulation: Simulation, units: int) -> str:
    """A fix's figure beyond the table-level quota, in a word (the finding says what to do about it once)."""
    over = units > simulation.table_quota
    return f"; {units:,} is above the {simulation.table_quota:,} units/s table-level quota" if over else ""
