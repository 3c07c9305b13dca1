"""CloudWatch alarms derived from the design: what the table, its GSIs and its access patterns use.

Every alarm is metric math. DynamoDB publishes throttle, error and request metrics only for periods in
which something happened, and alarms on AWS/DynamoDB metrics ignore missing data whatever
`treat_missing_data` says (PutMetricAlarm reference), so an alarm on the bare metric can stay in ALARM
after the throttling stopped. Each alarm therefore watches `FILL(m, 0)`: a period without data counts
as zero and the alarm returns to OK. Periods follow the granularity at which DynamoDB publishes each
metric (one minute for throttles, errors, latency and consumed capacity; five minutes for provisioned
capacity, index builds and account utilization: `PUBLISHED_EVERY`).

Specs are plain data (testable, and counted by the cost model); `modules/tablewright/constructs/alarms.py` turns
them into Terraform. Defaults are written once in `DEFAULTS`; `alarms.<kind>` in the blueprint
overrides them. The conditional-check threshold is sized from the failures the design declares
(`monitoring/sizing.py`): never below its default, and the blueprint's own threshold wins.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Literal

from tablewright.blueprint.language import Blueprint, Operation
from tablewright.blueprint.throughput import has_maximum, max_throughput_setting
from tablewright.blueprint.traffic import entity_profile
from tablewright.design.design import TableDesign
from tablewright.monitoring.sizing import Sizing, conditional_checks

NAMESPACE = "AWS/DynamoDB"
MAX_METRICS_PER_ALARM = 10  # CloudWatch: a metric math alarm references at most 10 metrics
# The per-partition limits DynamoDB throttles at, whatever the table's capacity (Developer Guide).
PARTITION_READ_UNITS, PARTITION_WRITE_UNITS = 3_000, 1_000

TreatMissingData = Literal["breaching", "notBreaching", "ignore", "missing"]
DIRECTIONS: tuple[Literal["read", "write"], ...] = ("read", "write")

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
    missing: TreatMissingData  # when the expression itself returns nothing (FILL makes that rare)


# Throttles, errors and latency are filled with 0, so `notBreaching` only matters if the expression returns
# nothing at all. Utilization divides by the provisioned capacity: without it there is no value, and the
# alarm keeps its state (`ignore`). Online index throttles are off: DynamoDB now documents that metric as
# 0 during index builds.
DEFAULTS = {
    "throttles": Defaults(True, 0, 60, 5, 3, "notBreaching"),
    "key_range_throttles": Defaults(True, 0, 60, 5, 2, "notBreaching"),
    "max_throughput_throttles": Defaults(True, 0, 60, 5, 2, "notBreaching"),
    "utilization": Defaults(True, 90, 300, 3, 3, "ignore"),
    "latency": Defaults(True, 0, 300, 3, 3, "notBreaching"),
    "system_errors": Defaults(True, 0, 60, 5, 2, "notBreaching"),
    "conditional_checks": Defaults(True, 100, 300, 3, 3, "notBreaching"),
    "online_index_throttles": Defaults(False, 0, 300, 1, 1, "notBreaching"),
    "user_errors": Defaults(False, 10, 60, 5, 3, "notBreaching"),
    "account_utilization": Defaults(False, 80, 300, 3, 3, "notBreaching"),
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
    key: str  # names the Terraform resource (`<blueprint>_<key>`), unique within the table
    name: str
    description: str
    settings: Defaults
    queries: tuple[Query, ...]  # metrics, then the expression the alarm watches (the last query)

    @property
    def metric_count(self) -> int:
        """Metrics the alarm reads (CloudWatch charges per alarm metric; expressions are free)."""
        return sum(1 for q in self.queries if q.name)

    @property
    def expression(self) -> str:
        return self.queries[-1].expression


def metric(query_id: str, name: str, stat: str, **dimensions: str) -> Query:
    return Query(query_id, name, tuple(sorted(dimensions.items())), stat)


def filled(measured: Query, label: str) -> tuple[Query, ...]:
    """A metric DynamoDB publishes only when non-zero, read as 0 in periods without data."""
    return measured, Query("filled", expression=f"FILL({measured.id}, 0)", label=label)


def settings(blueprint: Blueprint, kind: str) -> Defaults:
    base = DEFAULTS[kind]
    if kind in ("user_errors", "account_utilization"):
        base = replace(base, enabled=blueprint.alarms.account_level)
    rule = getattr(blueprint.alarms, kind)
    overrides = {field: value for field, value in (
        ("enabled", rule.enabled), ("threshold", rule.threshold), ("period", rule.period),
        ("evaluation_periods", rule.evaluation_periods), ("datapoints", rule.datapoints)) if value is not None}
    merged = replace(base, **overrides)
    if merged.datapoints > merged.evaluation_periods:
        merged = replace(merged, datapoints=merged.evaluation_periods)
    return merged


def operations_used(design: TableDesign) -> list[Operation]:
    """The DynamoDB operations the application performs, from the query plans and declared writes."""
    used: set[Operation] = {plan.sent_operation for plan in design.plans}
    used |= {"BatchGetItem" for plan in design.plans if plan.follow_up}
    for name, entity in design.blueprint.entities.items():
        # an entity whose only writes are an event's (`rate:`) writes too (capacity/traffic.py `entity_writes`)
        if entity.writes_per_second > 0 or any(surge.rate for surge in entity_profile(design.blueprint, name).surges):
            used |= {"PutItem", "UpdateItem"}
            if entity.transactional:
                used.add("TransactWriteItems")
    return sorted(used)


def targets(design: TableDesign) -> list[tuple[str, dict[str, str]]]:
    """(label, extra dimensions) of the table and each GSI."""
    return [("table", {})] + [(index.name, {"GlobalSecondaryIndexName": index.name})
                              for index in design.global_indexes]


def _throttle_text(blueprint: Blueprint, where: str, direction: str) -> str:
    noun = direction.capitalize()
    head = (f"{noun} requests to {where} were throttled ({noun}ThrottleEvents, every cause; periods without "
            "data count as 0). ")
    if blueprint.table.billing == "provisioned":
        return head + (f"First check whether autoscaling reached its maximum (Provisioned{noun}CapacityUnits "
                       f"against capacity.{direction}.max) and raise it; if capacity is below the maximum, read "
                       "the key-range alarm: a hot partition.")
    return head + ("On demand, the causes are the maximum set in `max_throughput` (its own alarm), one partition's "
                   "limit (the key-range alarm) or traffic rising past twice its previous peak within 30 minutes. "
                   "First read those two alarms; if neither fired, smooth the client's ramp-up.")


def _key_range_text(where: str, direction: str) -> str:
    noun = direction.capitalize()
    limit = f"{PARTITION_READ_UNITS:,} read units" if direction == "read" else f"{PARTITION_WRITE_UNITS:,} write units"
    return (f"{noun} requests to {where} were throttled because one partition went over its limit of {limit} "
            f"per second ({noun}KeyRangeThroughputThrottleEvents; the limit holds per partition, whatever the "
            "table's capacity or billing): a hot key or key range. First open CloudWatch Contributor Insights for "
            f"{where} to find the key, then shard it (`shards:`), spread its values, or cache hot reads; "
            "`tablewright lint` computes the shard count.")


def _max_text(where: str, direction: str, setting: str, suggested: bool, maximum: int | None) -> str:
    noun = direction.capitalize()
    cap = f"of {maximum:,} {direction} request units per second" if maximum else "set for it"
    raise_it = (f"set `{setting}` to numbers above it (it is `suggested`, from the declared rates)" if suggested
                else f"raise `{setting}.{direction}`")
    return (f"{noun} requests to {where} were throttled at its on-demand maximum {cap} "
            f"({noun}MaxOnDemandThroughputThrottleEvents): the cost guard `{setting}` is turning traffic away. "
            f"First check whether the traffic is expected (a launch, a backfill) and {raise_it}; otherwise find "
            "the client sending it.")


def alarm_specs(design: TableDesign, table_ref: str,
                maxima: Mapping[str, tuple[int, int]] | None = None) -> list[AlarmSpec]:
    """Every alarm of the design; `table_ref` is the table name (a Terraform reference in synthesis);
    `maxima`: the on-demand maxima (read, write) per target ("table" or a GSI), named in the alarm texts."""
    blueprint = design.blueprint
    table = blueprint.table.name
    rules = {kind: settings(blueprint, kind) for kind in DEFAULTS}
    checks = conditional_checks(blueprint, rules["conditional_checks"].period, DEFAULTS["conditional_checks"].threshold)
    rules["conditional_checks"] = replace(rules["conditional_checks"], threshold=checks.threshold)
    operations = operations_used(design)
    per_target = [alarm for label, extra in targets(design)
                  for alarm in _target_alarms(design, _Target.of(table, table_ref, label, extra), maxima)]
    return [*_enabled(per_target, rules, table), *_latency_alarms(blueprint, table_ref, operations),
            *_enabled([*_error_alarms(table, table_ref, operations, checks, rules["conditional_checks"].period),
                       *_account_alarms(blueprint)], rules, table)]


@dataclass(frozen=True)
class _Alarm:
    """An alarm before its rule: kept, with the rule's settings, when its kind is enabled."""

    kind: str
    key: str
    title: str  # its name after `<table>-`
    description: str
    queries: tuple[Query, ...]


def _enabled(alarms: list[_Alarm], rules: Mapping[str, Defaults], table: str) -> list[AlarmSpec]:
    return [AlarmSpec(alarm.kind, alarm.key, f"{table}-{alarm.title}", alarm.description, rules[alarm.kind],
                      alarm.queries) for alarm in alarms if rules[alarm.kind].enabled]


@dataclass(frozen=True)
class _Target:
    """The table or one GSI, as its alarms name and measure it."""

    label: str  # "table" or the GSI's name
    where: str  # in the descriptions
    dimensions: dict[str, str]  # of its metrics

    @staticmethod
    def of(table: str, table_ref: str, label: str, extra: dict[str, str]) -> _Target:
        where = f"the table {table}" if label == "table" else f"GSI {label} of {table}"
        return _Target(label, where, {"TableName": table_ref, **extra})

    @property
    def index(self) -> str | None:
        return None if self.label == "table" else self.label

    @property
    def prefix(self) -> str:
        """Of its alarms' names: none for the table, the GSI's name for a GSI."""
        return "" if self.label == "table" else f"{self.label}-"


def _target_alarms(design: TableDesign, target: _Target, maxima: Mapping[str, tuple[int, int]] | None) -> list[_Alarm]:
    """The throttle, hot-key, on-demand maximum and utilization alarms of the table or a GSI in each direction, then
    a GSI's index build."""
    alarms: list[_Alarm] = []
    for position, direction in enumerate(DIRECTIONS):
        maximum = maxima[target.label][position] if maxima and target.label in maxima else None
        alarms += _throttle_alarms(design.blueprint, target, direction, maximum)
        capacity = design.capacity[target.label]
        if capacity.billing == "provisioned":
            alarms.append(_utilization_alarm(design.blueprint, target, direction, capacity.scaling(direction).target))
    if target.index is not None:
        alarms.append(_Alarm(
            "online_index_throttles", f"{target.label}_online_index_throttles", f"{target.label}-index-build-throttles",
            f"Building {target.where} was throttled (OnlineIndexThrottleEvents, published every five "
            "minutes; DynamoDB now documents it as 0 during builds). First check the table's write capacity and "
            "the GSI's partition key for a hot key; the build resumes on its own.",
            filled(metric("m1", "OnlineIndexThrottleEvents", "Sum", **target.dimensions),
                   "index build throttle events")))
    return alarms


def _throttle_alarms(blueprint: Blueprint, target: _Target, direction: str, maximum: int | None) -> list[_Alarm]:
    """Throttles of every cause, those of a partition's limit, and (set) those of the on-demand maximum."""
    label, prefix, where, noun = target.label, target.prefix, target.where, direction.capitalize()
    alarms = [
        _Alarm("throttles", f"{label}_{direction}_throttles", f"{prefix}{direction}-throttles",
               _throttle_text(blueprint, where, direction),
               filled(metric("m1", f"{noun}ThrottleEvents", "Sum", **target.dimensions),
                      f"{direction} throttle events")),
        _Alarm("key_range_throttles", f"{label}_{direction}_key_range_throttles",
               f"{prefix}{direction}-hot-key", _key_range_text(where, direction),
               filled(metric("m1", f"{noun}KeyRangeThroughputThrottleEvents", "Sum", **target.dimensions),
                      f"{direction} requests over a partition's limit")),
    ]
    index = target.index
    if has_maximum(blueprint, index) and (maximum is None or maximum > 0):  # not a direction left without one
        indexes = blueprint.indexes
        own = index is not None and index in indexes and indexes[index].max_throughput is not None
        setting = f"indexes.{index}.max_throughput" if own else "table.max_throughput"
        alarms.append(_Alarm(
            "max_throughput_throttles", f"{label}_{direction}_max_throughput_throttles",
            f"{prefix}{direction}-max-throughput",
            _max_text(where, direction, setting, max_throughput_setting(blueprint, index) == "suggested", maximum),
            filled(metric("m1", f"{noun}MaxOnDemandThroughputThrottleEvents", "Sum", **target.dimensions),
                   f"{direction} requests over the on-demand maximum")))
    return alarms


def _utilization_alarm(blueprint: Blueprint, target: _Target, direction: str, scaling_target: int) -> _Alarm:
    """Consumed over the threshold of provisioned capacity, while autoscaling aims at `scaling_target` percent."""
    noun = direction.capitalize()
    threshold = settings(blueprint, "utilization").threshold
    return _Alarm(
        "utilization", f"{target.label}_{direction}_utilization", f"{target.prefix}{direction}-utilization",
        f"{target.where} consumes over {threshold:g}% of its provisioned {direction} capacity while autoscaling "
        f"targets {scaling_target}%: it is at its maximum or cannot keep up. First "
        f"compare Provisioned{noun}CapacityUnits with capacity.{direction}.max and raise the maximum.",
        (metric("consumed", f"Consumed{noun}CapacityUnits", "Sum", **target.dimensions),
         metric("provisioned", f"Provisioned{noun}CapacityUnits", "Average", **target.dimensions),
         Query("utilization", expression="100 * (FILL(consumed, 0) / PERIOD(consumed)) / provisioned",
               label=f"{direction} capacity used, %")))


def _latency_alarms(blueprint: Blueprint, table_ref: str, operations: list[Operation]) -> list[AlarmSpec]:
    """p99 latency of each operation the application performs, at the operation's own threshold."""
    table = blueprint.table.name
    latency = settings(blueprint, "latency")
    specs = []
    for operation in operations:
        threshold = blueprint.alarms.latency.operations.get(operation) or latency.threshold or LATENCY_MS[operation]
        rule = replace(latency, threshold=threshold)
        if rule.enabled:
            specs.append(AlarmSpec(
                "latency", f"{operation}_latency", f"{table}-{operation}-latency-p99",
                f"p99 latency of successful {operation} requests on {table} is above {threshold:g} ms "
                "(SuccessfulRequestLatency, server side; 0 in periods without requests). First look for larger "
                "items or more items per request (ReturnedItemCount), then for throttling, which retries and "
                "queues requests.",
                rule, filled(metric("m1", "SuccessfulRequestLatency", "p99", TableName=table_ref,
                                    Operation=operation), f"{operation} p99 latency, ms")))
    return specs


def _error_alarms(table: str, table_ref: str, operations: list[Operation], checks: Sizing,
                  period: int) -> list[_Alarm]:
    """System errors (one alarm per MAX_METRICS_PER_ALARM operations) and failed conditional writes (sized from
    the declared failures: `monitoring/sizing.py`)."""
    alarms = []
    for number, start in enumerate(range(0, len(operations), MAX_METRICS_PER_ALARM), start=1):
        chunk = operations[start:start + MAX_METRICS_PER_ALARM]
        part = f"-{number}" if len(operations) > MAX_METRICS_PER_ALARM else ""
        queries = tuple(metric(f"m{i}", "SystemErrors", "Sum", TableName=table_ref, Operation=op)
                        for i, op in enumerate(chunk, start=1))
        alarms.append(_Alarm(
            "system_errors", f"system_errors{part.replace('-', '_')}", f"system-errors{part}",
            f"DynamoDB answered HTTP 500 to {', '.join(chunk)} on {table} (SystemErrors, summed over these "
            "operations; periods without data count as 0). SDKs retry them; persistent errors reach the "
            "application. First check the AWS Health Dashboard for DynamoDB in this region, then open a support "
            "case with the request ids.",
            (*queries, Query("errors", expression=" + ".join(f"FILL({q.id}, 0)" for q in queries),
                             label="system errors"))))
    alarms.append(_Alarm(
        "conditional_checks", "conditional_check_failed", "conditional-check-failed",
        f"Conditional writes on {table} failed more than usual (ConditionalCheckFailedRequests): business conflicts "
        "such as concurrent updates of the same items, not service errors. First look for a retry storm or a "
        "change in how the application writes." + _expected_text(checks, period),
        filled(metric("m1", "ConditionalCheckFailedRequests", "Sum", TableName=table_ref),
               "conditional checks failed")))
    return alarms


def _expected_text(checks: Sizing, period: int) -> str:
    """What the design declares, for a design that declares failing writes (none: the text stays as it was)."""
    if not checks.expected:
        return ""
    return (f" As declared (`writes.failing` at the peak rates and events), up to {checks.expected:,.0f} fail per "
            f"{period} seconds; threshold {checks.threshold:,.0f}.")


def _account_alarms(blueprint: Blueprint) -> list[_Alarm]:
    """The account's user errors and, for a provisioned table, its provisioned capacity against the quota."""
    alarms = [_Alarm(
        "user_errors", "account_user_errors", "account-user-errors",
        "DynamoDB requests in this account and region returned HTTP 400 (UserErrors: validation errors, missing "
        "tables, bad signatures; not throttles or failed conditions). First find the caller in CloudTrail.",
        filled(metric("m1", "UserErrors", "Sum"), "user errors"))]
    if blueprint.table.billing == "provisioned":  # provisioned capacity against the account quota: nothing on demand
        for direction in ("read", "write"):
            noun = direction.capitalize()
            alarms.append(_Alarm(
                "account_utilization", f"account_{direction}_utilization", f"account-{direction}-utilization",
                f"Provisioned {direction} capacity in this account and region is near the account quota "
                f"(AccountProvisioned{noun}CapacityUtilization, published every five minutes). First request a "
                "quota increase in Service Quotas.",
                filled(metric("m1", f"AccountProvisioned{noun}CapacityUtilization", "Maximum"),
                       f"account {direction} capacity used, %")))
    return alarms
