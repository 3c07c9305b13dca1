"""The CloudWatch alarms of a table as Terraform: one `aws_cloudwatch_metric_alarm` per spec of
`modules/tablewright/monitoring/alarms.py` (every alarm metric math, its metrics filled with 0 where DynamoDB
publishes nothing)."""

from __future__ import annotations

from collections.abc import Mapping

from tablewright.constructs.naming import logical_id
from tablewright.constructs.resources import CloudwatchMetricAlarm, MetricQuery, MetricStat
from tablewright.constructs.terraform import Block, resource
from tablewright.design.design import TableDesign
from tablewright.monitoring.alarms import NAMESPACE, AlarmSpec, Query, alarm_specs


def _stat(query: Query, period: int) -> MetricStat:
    return MetricStat(metric_name=query.name, namespace=NAMESPACE, period=period, stat=query.stat,
                      dimensions=dict(query.dimensions) or None)


def alarm_arguments(spec: AlarmSpec, actions: list[str], tags: dict[str, str]) -> CloudwatchMetricAlarm:
    rule = spec.settings
    last = len(spec.queries) - 1
    queries = [
        MetricQuery(id=q.id, metric=_stat(q, rule.period)) if q.name
        else MetricQuery(id=q.id, expression=q.expression, label=q.label, return_data=True if i == last else None)
        for i, q in enumerate(spec.queries)
    ]
    return CloudwatchMetricAlarm(
        alarm_name=spec.name, alarm_description=spec.description, comparison_operator="GreaterThanThreshold",
        threshold=rule.threshold, evaluation_periods=rule.evaluation_periods, datapoints_to_alarm=rule.datapoints,
        treat_missing_data=rule.missing, alarm_actions=actions, ok_actions=actions, tags=tags or None,
        metric_query=queries,
    )


def alarms(design: TableDesign, table_name: str, actions: list[str], tags: dict[str, str],
           maxima: Mapping[str, tuple[int, int]] | None = None) -> list[Block]:
    """Every alarm of the design, notifying `actions`; `table_name` is a reference to the table's name;
    `maxima`: the on-demand maxima (read, write) per target, quoted in the alarm texts."""
    if not design.blueprint.alarms.enabled:
        return []
    base = logical_id(design.blueprint.blueprint)
    return [resource(alarm_arguments(spec, actions, tags), logical_id(base, spec.key))
            for spec in alarm_specs(design, table_name, maxima)]
