"""Target-tracking autoscaling for the table and every GSI, read and write.

`resource_id` is built from a reference to the table, so Terraform (and graph-based checks) see
that the scaling targets belong to it and create them after it.
"""

from __future__ import annotations

import datetime
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from tablewright.blueprint.language import ScheduledMinimum
from tablewright.blueprint.language.tables import WEEKDAYS
from tablewright.constructs.naming import logical_id
from tablewright.constructs.resources import (
    AppautoscalingPolicy,
    AppautoscalingScheduledAction,
    AppautoscalingTarget,
    PredefinedMetricSpecification,
    PredefinedMetricType,
    ScalableDimension,
    ScalableTargetAction,
    TargetTrackingConfiguration,
)
from tablewright.constructs.terraform import Block, import_block, resource
from tablewright.design.design import TABLE, CapacityPolicy, TableDesign

# (table or index, read or write) -> the scalable dimension
DIMENSIONS: dict[tuple[str, str], ScalableDimension] = {
    ("table", "read"): "dynamodb:table:ReadCapacityUnits",
    ("table", "write"): "dynamodb:table:WriteCapacityUnits",
    ("index", "read"): "dynamodb:index:ReadCapacityUnits",
    ("index", "write"): "dynamodb:index:WriteCapacityUnits",
}
DIRECTIONS: tuple[Literal["read", "write"], ...] = ("read", "write")
METRICS: dict[str, PredefinedMetricType] = {
    "read": "DynamoDBReadCapacityUtilization",
    "write": "DynamoDBWriteCapacityUtilization",
}


def autoscaling(design: TableDesign, table_name: str, tags: dict[str, str]) -> list[Block]:
    """Scaling targets and policies; `table_name` is a reference to the table's name. The targets and
    policies an adopted table has already are imported under their live names."""
    blueprint = design.blueprint
    base = logical_id(blueprint.blueprint)
    blocks: list[Block] = []
    targets: list[tuple[str, str, str, Literal["table", "index"]]] = [(TABLE, logical_id(base), "", "table")]
    targets += [(index.name, logical_id(base, index.name), f"/index/{index.name}", "index")
                for index in design.global_indexes]
    for index, name, suffix, kind in targets:
        policy = design.capacity[index]
        if policy.billing != "provisioned":
            continue
        for direction in DIRECTIONS:
            scalable = Scalable(f"{name}_{direction}", f"table/{blueprint.table.name}{suffix}", kind, direction)
            live_policy = blueprint.adopted.policy(index, direction) if blueprint.adopted else None
            owner = blueprint.table.name + (f"-{index}" if index != TABLE else "")
            policy_name = live_policy or f"{owner}-{direction}-capacity"
            target, scaling = _scale(scalable, f"table/{table_name}{suffix}", policy, tags, policy_name)
            blocks += [target, scaling, *_scheduled(scalable, target, policy, owner)]
            if blueprint.adopted and blueprint.adopted.imports_target(index, direction):
                blocks.append(import_block(target, scalable.import_id))
            if live_policy is not None:
                blocks.append(import_block(scaling, f"{scalable.import_id}/{live_policy}"))
    return blocks


@dataclass(frozen=True)
class Scalable:
    """One scalable dimension of the table or a GSI."""

    name: str  # the logical id of its target and policy
    resource_id: str  # `table/<name>` or `table/<name>/index/<index>`
    kind: Literal["table", "index"]
    direction: Literal["read", "write"]

    @property
    def dimension(self) -> ScalableDimension:
        return DIMENSIONS[self.kind, self.direction]

    @property
    def import_id(self) -> str:
        """`<service-namespace>/<resource-id>/<scalable-dimension>`, the provider's import id of the target."""
        return f"dynamodb/{self.resource_id}/{self.dimension}"


# Application Auto Scaling's cron: minutes hours day-of-month month day-of-week year, one of the two days `?`
# (https://docs.aws.amazon.com/autoscaling/application/userguide/scheduled-scaling-using-cron-expressions.html).
def cron(time: str, days: Sequence[str] | None, day_of_month: int | None = None) -> str:
    hours, minutes = time.split(":")
    when = f"? * {','.join(days)}" if days else f"{day_of_month} * ?" if day_of_month else "* * ?"
    return f"cron({int(minutes)} {int(hours)} {when} *)"


def schedule(scheduled: ScheduledMinimum, step: Literal["raise", "restore"]) -> str:
    """The `schedule` of a scheduled minimum's action: a one-time `at(yyyy-mm-ddThh:mm:ss)` on its `date`, else a
    `cron(...)` on its weekdays, its day of the month or every day (PutScheduledAction's `Schedule`:
    https://docs.aws.amazon.com/autoscaling/application/APIReference/API_PutScheduledAction.html). A window past
    midnight is restored the next day (the next weekday, the next day of the month, the next date)."""
    time = scheduled.start if step == "raise" else scheduled.end
    later = int(step == "restore" and scheduled.end < scheduled.start)
    if scheduled.date is not None:
        day = datetime.date.fromisoformat(scheduled.date) + datetime.timedelta(days=later)
        return f"at({day.isoformat()}T{time}:00)"
    days = [WEEKDAYS[(WEEKDAYS.index(d) + later) % 7] for d in scheduled.days] if scheduled.days else None
    return cron(time, days, scheduled.day_of_month + later if scheduled.day_of_month else None)


def _scheduled(scalable: Scalable, target: Block, capacity: CapacityPolicy, owner: str) -> list[Block]:
    """Two scheduled actions per scheduled minimum: raise the minimum at its start, restore it at its end."""
    bounds = capacity.bounds(scalable.direction)
    assert bounds is not None
    blocks = []
    for scheduled in capacity.scaling(scalable.direction).scheduled:
        steps: tuple[tuple[Literal["raise", "restore"], int], ...] = (("raise", scheduled.min),
                                                                      ("restore", bounds[0]))
        for step, low in steps:
            blocks.append(resource(AppautoscalingScheduledAction(
                name=f"{owner}-{scalable.direction}-{scheduled.name}-{step}",
                service_namespace=target.ref("service_namespace"),
                resource_id=target.ref("resource_id"),
                scalable_dimension=target.ref("scalable_dimension"),
                schedule=schedule(scheduled, step),
                scalable_target_action=ScalableTargetAction(min_capacity=low, max_capacity=bounds[1]),
            ), f"{scalable.name}_{scheduled.name.replace('-', '_')}_{step}"))
    return blocks


def _scale(scalable: Scalable, resource_id: str, capacity: CapacityPolicy, tags: dict[str, str],
           policy_name: str) -> tuple[Block, Block]:
    bounds = capacity.bounds(scalable.direction)
    assert bounds is not None  # a provisioned policy has both bounds
    scaling = capacity.scaling(scalable.direction)
    target = resource(AppautoscalingTarget(
        resource_id=resource_id,
        scalable_dimension=scalable.dimension,
        min_capacity=bounds[0],
        max_capacity=bounds[1],
        tags=tags or None,
    ), scalable.name)
    policy = AppautoscalingPolicy(
        name=policy_name,
        service_namespace=target.ref("service_namespace"),
        resource_id=target.ref("resource_id"),
        scalable_dimension=target.ref("scalable_dimension"),
        target_tracking_scaling_policy_configuration=TargetTrackingConfiguration(
            target_value=scaling.target,
            predefined_metric_specification=PredefinedMetricSpecification(
                predefined_metric_type=METRICS[scalable.direction]),
            scale_in_cooldown=scaling.scale_in_cooldown,
            scale_out_cooldown=scaling.scale_out_cooldown,
            disable_scale_in=scaling.disable_scale_in or None,
        ),
    )
    return target, resource(policy, scalable.name)
