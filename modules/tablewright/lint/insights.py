"""What Contributor Insights costs beside the throughput it watches.

In accessed and throttled keys mode Contributor Insights for DynamoDB bills every request it sees as events
(CloudWatch: $0.03 per million events matched, plus $0.50 per rule a month; one PKC and one PKT rule per table
and GSI, two more each with a sort key): on a busy table that is a large share of the bill, which throttled keys
mode (events only for throttled requests) avoids.
https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/contributorinsights_HowItWorks.html
https://aws.amazon.com/cloudwatch/pricing/ (Contributor Insights for DynamoDB)
The figures are the lines `capacity` prints (capacity/cost.py), at the prices of the blueprint's region.
"""

from __future__ import annotations

from collections.abc import Iterator

from tablewright.blueprint.provider import insights_mode
from tablewright.capacity.cost import insights_share
from tablewright.lint.findings import Context, Issue, rule

INSIGHTS_SHARE = 0.10  # Contributor Insights above this share of the throughput bill is noted


@rule("TW330", "Contributor Insights costs a large share of the throughput bill",
      "Set `contributor_insights: throttled_keys` (events only for throttled requests: the hot keys that throttle "
      "are still named; it needs hashicorp/aws >= 6.11), or `off`, turning accessed-keys mode on only while "
      "investigating a hot key.",
      why="Contributor Insights in accessed and throttled keys mode bills events for every request (one per Query, "
          "one or two per item read by key or written; capacity/cost.py counts them): "
          f"above {INSIGHTS_SHARE:.0%} of the throughput bill, a cost nobody declared",
      severity="info")
def insights_cost(ctx: Context) -> Iterator[Issue]:
    if insights_mode(ctx.design.blueprint) != "accessed_and_throttled_keys":
        return
    insights, throughput = insights_share(ctx.design, ctx.capacity)
    if not throughput or insights <= INSIGHTS_SHARE * throughput:
        return
    yield Issue(
        "info",
        f"Contributor Insights (accessed and throttled keys) costs ~${insights:,.2f} a month, "
        f"{insights / throughput:.0%} of the ~${throughput:,.2f} throughput bill in {ctx.design.blueprint.region}",
        "set `contributor_insights: throttled_keys` (hashicorp/aws >= 6.11) to bill only throttled requests as "
        "events, or `off`, enabling accessed-keys mode only while investigating",
        # where to set it: its own line, else the table's (the mode is the environment's default)
        ("contributor_insights",) if "contributor_insights" in ctx.design.blueprint.model_fields_set else ("table",),
    )
