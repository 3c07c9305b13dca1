"""`calibrate --print-queries`: the `aws cloudwatch get-metric-data` command, with its queries, whose output
`calibrate --metrics` reads for one stack. Every series is labelled so that it can be traced back to its table
or GSI (`modules/tablewright/calibrate/metrics.py`); one call answers up to 500 queries.
https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/API_GetMetricData.html
"""

from __future__ import annotations

import json
import shlex
from typing import Any

from tablewright.calibrate.metrics import METRICS, metric_label
from tablewright.stacks.stack import Stack

PERIOD = 60  # one datapoint a minute: the resolution DynamoDB publishes at


def metric_queries(stack: Stack, period: int = PERIOD) -> list[dict[str, Any]]:
    table = stack.design.blueprint.table.name
    provisioned = stack.design.blueprint.table.billing == "provisioned"
    queries: list[dict[str, Any]] = []
    for index in [None, *(index.name for index in stack.design.global_indexes)]:
        dimensions = [{"Name": "TableName", "Value": table}]
        if index is not None:
            dimensions.append({"Name": "GlobalSecondaryIndexName", "Value": index})
        for metric, (kind, _, stat) in METRICS.items():
            if kind == "provisioned" and not provisioned:
                continue
            queries.append({"Id": f"m{len(queries)}", "Label": metric_label(table, index, metric, period),
                            "MetricStat": {"Metric": {"Namespace": "AWS/DynamoDB", "MetricName": metric,
                                                      "Dimensions": dimensions},
                                           "Period": period, "Stat": stat},
                            "ReturnData": True})
    return queries


# The rules come from the account at run time: each name is read as one line (no word splitting, no globbing) and
# used only when it is one DynamoDB gives (`DynamoDBContributorInsights-`, then letters, digits, `.`, `_`, `-`: no
# `/`, no leading `.` or `-`), so `insights/<rule>.json` stays inside `insights/`, and `--rule-name=...` keeps it a
# value. Any other name is skipped, said on stderr with its other characters shown as `?` (`None`, silently: what
# `--output text` prints for a table without rules).
INSIGHTS_COMMAND = """\
aws dynamodb describe-contributor-insights{where} {table}{index} \\
    --query 'ContributorInsightsRuleList[]' --output text | tr '\\t' '\\n' |
while IFS= read -r rule || [ -n "$rule" ]; do
  case "$rule" in
    ''|None) continue ;;
    DynamoDBContributorInsights-*[!A-Za-z0-9._-]*) ;;
    DynamoDBContributorInsights-*)
      aws cloudwatch get-insight-rule-report{where} --rule-name="$rule" --period 60 --max-contributor-count 100 \\
        --start-time "$START" --end-time "$END" --output json < /dev/null > "insights/$rule.json"
      continue ;;
  esac
  printf 'skipped the rule name %s: not one DynamoDB gives\\n' "$(printf '%s' "$rule" | tr -c 'A-Za-z0-9._-' '?')" >&2
done
"""


def option(name: str, value: str) -> str:
    """`--name=value`, quoted for the shell: a value that starts with `-` (a table named `--endpoint-url`) stays
    the option's value."""
    return shlex.quote(f"--{name}={value}")


def insight_commands(stack: Stack, where: str) -> str:
    """The reports of every Contributor Insights rule of the table and its GSIs, each in `insights/<rule>.json`
    (the report does not name its rule; `calibrate --insights` reads it from the file name)."""
    table = option("table-name", stack.design.blueprint.table.name)
    indexes = [None, *(index.name for index in stack.design.global_indexes)]
    return "".join(INSIGHTS_COMMAND.format(where=where, table=table,
                                           index="" if index is None else " " + option("index-name", index))
                   for index in indexes)


def print_queries(stack: Stack) -> str:
    """A shell script: the queries written to a file, the call over the last day, then the rule reports. Every
    name from the blueprint reaches `aws` as `--option=value`, quoted."""
    name = stack.name
    queries = json.dumps(metric_queries(stack), indent=2, sort_keys=True)
    region = stack.design.blueprint.region
    where = " " + option("region", region) if region else ""
    file, metrics = shlex.quote(f"queries-{name}.json"), shlex.quote(f"metrics-{name}.json")
    read = option("metric-data-queries", f"file://queries-{name}.json")
    return (f"# {name}: consumed capacity and throttles of its table and GSIs, one datapoint a minute, last day\n"
            "START=\"$(date -u -d '1 day ago' +%Y-%m-%dT%H:%M:00Z)\" END=\"$(date -u +%Y-%m-%dT%H:%M:00Z)\"\n"
            f"cat > {file} <<'QUERIES'\n{queries}\nQUERIES\n"
            f"aws cloudwatch get-metric-data{where} {read} \\\n"
            f"  --start-time \"$START\" --end-time \"$END\" --output json > {metrics}\n"
            "# the busiest and throttled keys (Contributor Insights), one report per rule\n"
            "mkdir -p insights\n" + insight_commands(stack, where))
