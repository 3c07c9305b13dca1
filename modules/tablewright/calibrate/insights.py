"""The output of `aws cloudwatch get-insight-rule-report` for the rules Contributor Insights for DynamoDB
creates, each file named after its rule (`<rule>.json`, as `calibrate --print-queries` writes them): the report
itself does not name its rule.

DynamoDB names the rules `DynamoDBContributorInsights-<kind>-<resource>-<creation timestamp>`: kind PKC (most
accessed partition keys), PKT (most throttled partition keys), SKC and SKT (the same by partition and sort key);
the resource is the table's name, or `<table>-<index>` for a GSI.
https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/contributorinsights_HowItWorks.html
A report gives the top contributors (`Keys`, `ApproximateAggregateValue`) and the rule's total over every key
(`AggregateValue`): a key's share of the table's or index's accesses is their ratio. An accessed-keys rule counts
reads and writes together, as `ConsumedThroughputUnits`: 3 x the write units plus the read units (the How it works
page above, "Most accessed items").
https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/API_GetInsightRuleReport.html
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tablewright.calibrate.metrics import MAX_FILES, Source, metrics_error, read_json
from tablewright.design.design import TABLE
from tablewright.errors import BlueprintError, ErrorCode
from tablewright.stacks.stack import Stack

MAX_CONTRIBUTORS = 100  # what `--max-contributor-count` allows at most
RULE = re.compile(r"^DynamoDBContributorInsights-(PKC|PKT|SKC|SKT)-([A-Za-z0-9_.-]+)-([0-9]+)$")


@dataclass(frozen=True)
class Contributor:
    keys: tuple[str, ...]  # the partition key value (and the sort key's, for SKC and SKT)
    value: float


@dataclass(frozen=True)
class RuleReport:
    rule: str
    kind: str  # PKC, PKT, SKC or SKT
    stack: str
    target: str  # "table" or a GSI
    aggregate: float  # the rule's total over every key
    contributors: tuple[Contributor, ...]
    file: str

    @property
    def throttled(self) -> bool:
        return self.kind in ("PKT", "SKT")


def rule_target(rule: str, stacks: Sequence[Stack], file: str) -> tuple[str, str, str]:
    """(kind, stack, table or GSI) of a rule name; an unknown rule is an error."""
    match = RULE.match(rule)
    hint = ("name each report after its rule, as `calibrate --print-queries` writes them "
            "(`DynamoDBContributorInsights-PKC-<table>-<timestamp>.json`)")
    if match is None:
        raise BlueprintError(f"{file}: `{rule}` is not the name of a Contributor Insights rule for DynamoDB",
                             hint=hint, code=ErrorCode.CALIBRATE_INPUT)
    kind, resource = match.group(1), match.group(2)
    for stack in stacks:
        table = stack.design.blueprint.table.name
        if resource == table:
            return kind, stack.name, TABLE
        for index in stack.design.global_indexes:
            if resource == f"{table}-{index.name}":
                return kind, stack.name, index.name
    tables = ", ".join(sorted(stack.design.blueprint.table.name for stack in stacks))
    raise BlueprintError(f"{file}: the rule `{rule}` is for `{resource}`, no table or GSI of the blueprints named "
                         f"(they deploy {tables})", code=ErrorCode.CALIBRATE_INPUT,
                         hint="name the blueprint (and `--env`) of that table, or leave out its reports")


def _number(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, int | float) and math.isfinite(value) and value >= 0


def _report(data: Any, source: Source, rule: str, kind: str, stack: str, target: str) -> RuleReport:
    hint = "pass what `aws cloudwatch get-insight-rule-report --output json` prints, unedited"
    if not isinstance(data, dict) or not isinstance(data.get("Contributors"), list) \
            or not isinstance(data.get("KeyLabels"), list):
        raise metrics_error(f"{source.file} is not the output of `aws cloudwatch get-insight-rule-report` (no "
                            "`KeyLabels` and `Contributors`)", hint, source)
    aggregate = data.get("AggregateValue")
    if not _number(aggregate):
        raise metrics_error("`AggregateValue` is missing or not a non-negative number", hint, source)
    if len(data["Contributors"]) > MAX_CONTRIBUTORS:
        raise metrics_error(f"{len(data['Contributors']):,} contributors: a report lists at most {MAX_CONTRIBUTORS}",
                            hint, source)
    contributors = []
    for number, item in enumerate(data["Contributors"]):
        keys = item.get("Keys") if isinstance(item, dict) else None
        value = item.get("ApproximateAggregateValue") if isinstance(item, dict) else None
        if not isinstance(keys, list) or not keys or not all(isinstance(k, str) for k in keys) or not _number(value):
            raise metrics_error(f"contributor {number + 1} lacks `Keys` (key values) or `ApproximateAggregateValue`",
                                hint, source)
        contributors.append(Contributor(tuple(keys), float(value or 0)))
    contributors.sort(key=lambda c: (-c.value, c.keys))
    return RuleReport(rule, kind, stack, target, float(aggregate or 0), tuple(contributors), source.file)


def read_insights(paths: Sequence[Path], stacks: Sequence[Stack]) -> list[RuleReport]:
    if len(paths) > MAX_FILES:
        raise BlueprintError(f"{len(paths)} rule reports; calibrate reads at most {MAX_FILES}",
                             hint="pass the reports of the stacks named", code=ErrorCode.USAGE)
    found = []
    for path in paths:
        kind, stack, target = rule_target(path.name.removesuffix(".json"), stacks, str(path))
        data, source = read_json(path)
        found.append(_report(data, source, path.name.removesuffix(".json"), kind, stack, target))
    return sorted(found, key=lambda report: report.rule)
