"""CloudWatch alarms derived from the design: what the table, its GSIs and its access patterns use.

Metric definitions (`metric`, `Query`) are kept apart from the alarm specs built from them, and the
specs (plain data, testable) apart from the Terraform blocks. Defaults are written once in
`DEFAULTS`; `alarms.<kind>` in the blueprint overrides them.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal, TypedDict, cast

from modules.blueprint.model import Blueprint, Operation
from modules.constructs.naming import logical_id
from modules.constructs.resources import (
    CloudwatchMetricAlarm,
    MetricQuery,
    MetricStat,
    Statistic,
    TreatMissingData,
)
from modules.constructs.terraform import Block, resource
from modules.design.model import TableDesign

NAMESPACE = "AWS/DynamoDB"
MAX_METRICS_PER_ALARM = 10  # CloudWatch: a metric math alarm references at most 10 metrics

# p99 SuccessfulRequestLatency thresholds (ms): DynamoDB serves single items in single-digit
# milliseconds; multi-item reads and transactions take longer.
LATENCY_MS: dict[Operation, int] = {"GetItem": 25, "BatchGetItem": 50, "Query": 50, "Scan": 500, "PutItem": 25,
                                    "UpdateItem": 25, "DeleteItem": 25, "TransactWriteItems": 100}


@dataclass(frozen=True)
class Defaults:
    enabled: bool
    threshold: float
    period: int
    evaluation_periods: int
    datapoints: int
    missing: TreatMissingData  # chosen per kind


# No data means no throttles, errors or requests: `notBreaching`. Utilization keeps its last state
# through gaps (`ignore`) so a quiet minute does not flap it to OK.
DEFAULTS = {
    "throttles": Defaults(True, 0, 60, 5, 3, "notBreaching"),
    "key_range_throttles": Defaults(True, 0, 60, 5, 2, "notBreaching"),
    "utilization": Defaults(True, 90, 300, 3, 3, "ignore"),
    "latency": Defaults(True, 0, 300, 3, 3, "notBreaching"),
    "system_errors": Defaults(True, 0, 60, 5, 2, "notBreaching"),
    "conditional_checks": Defaults(True, 100, 300, 3, 3, "notBreaching"),
    "online_index_throttles": Defaults(True, 0, 60, 1, 1, "notBreaching"),
    "user_errors": Defaults(False, 10, 60, 5, 3, "notBreaching"),
    "account_utilization": Defaults(False, 80, 300, 3, 3, "ignore"),
}


@dataclass(frozen=True)
class Query:
    """One entry of a metric math alarm: a metric (`name`, `dimensions`, `stat`) or an expression."""

    id: str
    name: str = ""
    dimensions: tuple[tuple[str, str], ...] = ()
    stat: str = ""
    expression: str = ""
    label: str = ""


@dataclass(frozen=True)
class AlarmSpec:
    kind: str
    logical_id: str
    name: str
    description: str
    settings: Defaults
    metric: Query | None = None  # a single metric, or:
    queries: tuple[Query, ...] = ()  # metric math; the last query is the expression the alarm watches

    @property
    def metric_count(self) -> int:
        return 1 if self.metric else sum(1 for q in self.queries if q.name)


def metric(query_id: str, name: str, stat: str, **dimensions: str) -> Query:
    return Query(query_id, name, tuple(sorted(dimensions.items())), stat)


def settings(bp: Blueprint, kind: str) -> Defaults:
    base = DEFAULTS[kind]
    if kind in ("user_errors", "account_utilization"):
        base = replace(base, enabled=bp.alarms.account_level)
    rule = getattr(bp.alarms, kind)
    overrides = {field: value for field, value in (
        ("enabled", rule.enabled), ("threshold", rule.threshold), ("period", rule.period),
        ("evaluation_periods", rule.evaluation_periods), ("datapoints", rule.datapoints)) if value is not None}
    merged = replace(base, **overrides)
    if merged.datapoints > merged.evaluation_periods:
        merged = replace(merged, datapoints=merged.evaluation_periods)
    return merged


def operations_used(design: TableDesign) -> list[Operation]:
    """The DynamoDB operations the application performs, from the query plans and declared writes."""
    used: set[Operation] = {plan.operation for plan in design.plans}
    used |= {"BatchGetItem" for plan in design.plans if plan.follow_up}
    for entity in design.blueprint.entities.values():
        if entity.writes_per_second > 0:
            used |= {"PutItem", "UpdateItem"}
            if entity.transactional:
                used.add("TransactWriteItems")
    return sorted(used)


def _targets(design: TableDesign) -> list[tuple[str, dict[str, str]]]:
    """(label, extra dimensions) of the table and each GSI."""
    return [("table", {})] + [(index.name, {"GlobalSecondaryIndexName": index.name})
                              for index in design.global_indexes]


def alarm_specs(design: TableDesign, table_ref: str) -> list[AlarmSpec]:
    """Every alarm of the design; `table_ref` is the table name (a Terraform reference in synthesis)."""
    bp = design.blueprint
    table = bp.table.name
    base = logical_id(bp.blueprint)
    specs: list[AlarmSpec] = []

    def add(kind: str, key: str, title: str, description: str, *, metric: Query | None = None,
            queries: tuple[Query, ...] = ()) -> None:
        rule = settings(bp, kind)
        if rule.enabled:
            specs.append(AlarmSpec(kind, logical_id(base, key), f"{table}-{title}", description, rule,
                                   metric=metric, queries=queries))

    for label, extra in _targets(design):
        where = f"the table {table}" if label == "table" else f"GSI {label} of {table}"
        for direction in ("read", "write"):
            noun = direction.capitalize()
            suffix = "" if label == "table" else f"{label}-"
            add("throttles", f"{label}_{direction}_throttles", f"{suffix}{direction}-throttles",
                f"{noun} requests to {where} exceed its {direction} capacity ({noun}ThrottleEvents). First check "
                f"whether autoscaling reached its maximum (Provisioned{noun}CapacityUnits) and raise "
                f"capacity.{direction}.max; if capacity is below the maximum, read the key-range alarm: a hot key.",
                metric=metric("m1", f"{noun}ThrottleEvents", "Sum", TableName=table_ref, **extra))
            add("key_range_throttles", f"{label}_{direction}_key_range_throttles",
                f"{suffix}{direction}-hot-key",
                f"One partition of {where} is over its per-partition limit (3,000 RCU / 1,000 WCU per key): a hot "
                f"key ({noun}KeyRangeThroughputThrottleEvents). First open CloudWatch Contributor Insights for "
                f"{where} to find the key, then apply the hot-partition fixes: shard the key (`shards:`), spread "
                "its values, or cache hot reads; `python main.py lint` computes the shard count.",
                metric=metric("m1", f"{noun}KeyRangeThroughputThrottleEvents", "Sum", TableName=table_ref, **extra))
            capacity = design.capacity[label]
            if capacity.billing == "provisioned":
                threshold = settings(bp, "utilization").threshold
                add("utilization", f"{label}_{direction}_utilization", f"{suffix}{direction}-utilization",
                    f"{where} consumes over {threshold:g}% of its provisioned {direction} capacity while autoscaling "
                    f"targets {capacity.scaling(direction).target}%: it is at its maximum or cannot keep up. First "
                    f"compare Provisioned{noun}CapacityUnits with capacity.{direction}.max and raise the maximum.",
                    queries=(
                        metric("consumed", f"Consumed{noun}CapacityUnits", "Sum", TableName=table_ref, **extra),
                        metric("provisioned", f"Provisioned{noun}CapacityUnits", "Average", TableName=table_ref,
                               **extra),
                        Query("utilization", expression="100 * (consumed / PERIOD(consumed)) / provisioned",
                              label=f"{direction} capacity used, %"),
                    ))
        if label != "table":
            add("online_index_throttles", f"{label}_online_index_throttles", f"{label}-index-build-throttles",
                f"Building GSI {label} of {table} is being throttled (OnlineIndexThrottleEvents), so the index "
                "takes longer to become ACTIVE. First check the table's write capacity and the GSI's partition key "
                "for a hot key; the build resumes on its own.",
                metric=metric("m1", "OnlineIndexThrottleEvents", "Sum", TableName=table_ref, **extra))

    operations = operations_used(design)
    latency = settings(bp, "latency")
    for operation in operations:
        threshold = bp.alarms.latency.operations.get(operation) or latency.threshold or LATENCY_MS[operation]
        rule = replace(latency, threshold=threshold)
        if rule.enabled:
            specs.append(AlarmSpec(
                "latency", logical_id(base, operation, "latency"), f"{table}-{operation}-latency-p99",
                f"p99 latency of successful {operation} requests on {table} is above {threshold:g} ms "
                "(SuccessfulRequestLatency, server side). First look for larger items or more items per request "
                "(ReturnedItemCount), then for throttling, which retries and queues requests.",
                rule, metric=metric("m1", "SuccessfulRequestLatency", "p99", TableName=table_ref, Operation=operation)))
    for number, start in enumerate(range(0, len(operations), MAX_METRICS_PER_ALARM), start=1):
        chunk = operations[start:start + MAX_METRICS_PER_ALARM]
        part = f"-{number}" if len(operations) > MAX_METRICS_PER_ALARM else ""
        queries = tuple(metric(f"m{i}", "SystemErrors", "Sum", TableName=table_ref, Operation=op)
                        for i, op in enumerate(chunk, start=1))
        add("system_errors", f"system_errors{part.replace('-', '_')}", f"system-errors{part}",
            f"DynamoDB answered HTTP 500 to {', '.join(chunk)} on {table} (SystemErrors, summed over these "
            "operations). SDKs retry them; persistent errors reach the application. First check the AWS Health "
            "Dashboard for DynamoDB in this region, then open a support case with the request ids.",
            queries=(*queries, Query("errors", expression=" + ".join(q.id for q in queries), label="system errors")))
    add("conditional_checks", "conditional_check_failed", "conditional-check-failed",
        f"Conditional writes on {table} failed more than usual (ConditionalCheckFailedRequests): business conflicts "
        "such as concurrent updates of the same items, not service errors. First look for a retry storm or a "
        "change in how the application writes.",
        metric=metric("m1", "ConditionalCheckFailedRequests", "Sum", TableName=table_ref))
    add("user_errors", "account_user_errors", "account-user-errors",
        "DynamoDB requests in this account and region returned HTTP 400 (UserErrors: validation errors, missing "
        "tables, bad signatures; not throttles or failed conditions). First find the caller in CloudTrail.",
        metric=metric("m1", "UserErrors", "Sum"))
    for direction in ("read", "write"):
        noun = direction.capitalize()
        add("account_utilization", f"account_{direction}_utilization", f"account-{direction}-utilization",
            f"Provisioned {direction} capacity in this account and region is near the account quota "
            f"(AccountProvisioned{noun}CapacityUtilization). First request a quota increase in Service Quotas.",
            metric=metric("m1", f"AccountProvisioned{noun}CapacityUtilization", "Maximum"))
    return specs


def _stat(query: Query, period: int) -> MetricStat:
    return MetricStat(metric_name=query.name, namespace=NAMESPACE, period=period, stat=query.stat,
                      dimensions=dict(query.dimensions) or None)


class _AlarmCommon(TypedDict):
    """The arguments every alarm has, single-metric or metric math."""

    alarm_name: str
    alarm_description: str
    comparison_operator: Literal["GreaterThanThreshold"]
    threshold: float
    evaluation_periods: int
    datapoints_to_alarm: int
    treat_missing_data: TreatMissingData
    alarm_actions: list[str]
    ok_actions: list[str]
    tags: dict[str, str] | None


def alarm_arguments(spec: AlarmSpec, actions: list[str], tags: dict[str, str]) -> CloudwatchMetricAlarm:
    rule = spec.settings
    common = _AlarmCommon(
        alarm_name=spec.name, alarm_description=spec.description, comparison_operator="GreaterThanThreshold",
        threshold=rule.threshold, evaluation_periods=rule.evaluation_periods, datapoints_to_alarm=rule.datapoints,
        treat_missing_data=rule.missing, alarm_actions=actions, ok_actions=actions, tags=tags or None,
    )
    if spec.metric is not None:
        percentile = spec.metric.stat.startswith("p")
        return CloudwatchMetricAlarm(
            **common, metric_name=spec.metric.name, namespace=NAMESPACE, period=rule.period,
            # Not a percentile: one of CloudWatch's statistic names (the model validates it).
            statistic=None if percentile else cast("Statistic", spec.metric.stat),
            extended_statistic=spec.metric.stat if percentile else None,
            dimensions=dict(spec.metric.dimensions) or None,
        )
    queries = [
        MetricQuery(id=q.id, metric=_stat(q, rule.period)) if q.name
        else MetricQuery(id=q.id, expression=q.expression, label=q.label, return_data=True)
        for q in spec.queries
    ]
    return CloudwatchMetricAlarm(**common, metric_query=queries)


def alarms(design: TableDesign, table_name: str, actions: list[str], tags: dict[str, str]) -> list[Block]:
    """Every alarm of the design, notifying `actions`; `table_name` is a reference to the table's name."""
    if not design.blueprint.alarms.enabled:
        return []
    return [resource(alarm_arguments(spec, actions, tags), spec.logical_id) for spec in alarm_specs(design, table_name)]
