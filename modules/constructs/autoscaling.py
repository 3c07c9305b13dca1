"""Target-tracking autoscaling for the table and every GSI, read and write.

`resource_id` is built from a reference to the table, so Terraform (and graph-based checks) see
that the scaling targets belong to it and create them after it.
"""

from __future__ import annotations

from modules.blueprint.model import Capacity
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
from modules.design.model import TableDesign

# (table or index, read or write) -> the scalable dimension
DIMENSIONS: dict[tuple[str, str], ScalableDimension] = {
    ("table", "read"): "dynamodb:table:ReadCapacityUnits",
    ("table", "write"): "dynamodb:table:WriteCapacityUnits",
    ("index", "read"): "dynamodb:index:ReadCapacityUnits",
    ("index", "write"): "dynamodb:index:WriteCapacityUnits",
}
METRICS: dict[str, PredefinedMetricType] = {
    "read": "DynamoDBReadCapacityUtilization",
    "write": "DynamoDBWriteCapacityUtilization",
}


def autoscaling(design: TableDesign, table_name: str, tags: dict[str, str]) -> list[Block]:
    """Scaling targets and policies; `table_name` is a reference to the table's name."""
    bp = design.blueprint
    if bp.table.billing != "provisioned" or bp.table.capacity is None:
        return []
    base = logical_id(bp.blueprint)
    table_id = f"table/{table_name}"
    blocks: list[Block] = []
    for direction in ("read", "write"):
        blocks += _scale(logical_id(base, direction), table_id, "table", direction, bp.table.capacity, tags,
                         f"{bp.table.name}-{direction}-capacity")
    for index in design.global_indexes:
        settings = bp.indexes.get(index.name)
        capacity = settings.capacity if settings and settings.capacity else bp.table.capacity
        for direction in ("read", "write"):
            blocks += _scale(logical_id(base, index.name, direction), f"{table_id}/index/{index.name}", "index",
                             direction, capacity, tags, f"{bp.table.name}-{index.name}-{direction}-capacity")
    return blocks


def _scale(
    name: str, resource_id: str, kind: str, direction: str, capacity: Capacity, tags: dict[str, str],
    policy_name: str,
) -> list[Block]:
    bounds = capacity.read if direction == "read" else capacity.write
    target = resource(AppautoscalingTarget(
        resource_id=resource_id,
        scalable_dimension=DIMENSIONS[kind, direction],
        min_capacity=bounds.min,
        max_capacity=bounds.max,
        tags=tags or None,
    ), name)
    policy = AppautoscalingPolicy(
        name=policy_name,
        service_namespace=target.ref("service_namespace"),
        resource_id=target.ref("resource_id"),
        scalable_dimension=target.ref("scalable_dimension"),
        target_tracking_scaling_policy_configuration=TargetTrackingConfiguration(
            target_value=capacity.target_utilization,
            predefined_metric_specification=PredefinedMetricSpecification(predefined_metric_type=METRICS[direction]),
        ),
    )
    return [target, resource(policy, name)]
