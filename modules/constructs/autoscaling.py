"""Target-tracking autoscaling for the table and every GSI, read and write.

`resource_id` is built from a reference to the table, so Terraform (and graph-based checks) see
that the scaling targets belong to it and create them after it.
"""

from __future__ import annotations

from typing import Literal

from modules.constructs.naming import logical_id
from modules.constructs.resources import (
    AppautoscalingPolicy,
    AppautoscalingTarget,
    PredefinedMetricSpecification,
    PredefinedMetricType,
    ScalableDimension,
    TargetTrackingConfiguration,
)
from modules.constructs.terraform import Block, resource
from modules.design.model import TABLE, CapacityPolicy, TableDesign

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
    """Scaling targets and policies; `table_name` is a reference to the table's name."""
    bp = design.blueprint
    base = logical_id(bp.blueprint)
    table_id = f"table/{table_name}"
    blocks: list[Block] = []
    targets: list[tuple[str, str, str, Literal["table", "index"], str]] = [
        (TABLE, logical_id(base), table_id, "table", bp.table.name)]
    targets += [(index.name, logical_id(base, index.name), f"{table_id}/index/{index.name}", "index",
                 f"{bp.table.name}-{index.name}") for index in design.global_indexes]
    for index, name, resource_id, kind, policy_name in targets:
        policy = design.capacity[index]
        if policy.billing != "provisioned":
            continue
        for direction in DIRECTIONS:
            blocks += _scale(f"{name}_{direction}", resource_id, kind, direction, policy, tags,
                             f"{policy_name}-{direction}-capacity")
    return blocks


def _scale(
    name: str, resource_id: str, kind: Literal["table", "index"], direction: Literal["read", "write"],
    capacity: CapacityPolicy, tags: dict[str, str], policy_name: str,
) -> list[Block]:
    bounds = capacity.bounds(direction)
    assert bounds is not None  # a provisioned policy has both bounds
    target = resource(AppautoscalingTarget(
        resource_id=resource_id,
        scalable_dimension=DIMENSIONS[kind, direction],
        min_capacity=bounds[0],
        max_capacity=bounds[1],
        tags=tags or None,
    ), name)
    policy = AppautoscalingPolicy(
        name=policy_name,
        service_namespace=target.ref("service_namespace"),
        resource_id=target.ref("resource_id"),
        scalable_dimension=target.ref("scalable_dimension"),
        target_tracking_scaling_policy_configuration=TargetTrackingConfiguration(
            target_value=capacity.target,
            predefined_metric_specification=PredefinedMetricSpecification(predefined_metric_type=METRICS[direction]),
        ),
    )
    return [target, resource(policy, name)]
