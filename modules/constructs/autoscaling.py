"""Target-tracking autoscaling for the table and every GSI, read and write.

`resource_id` is built from a reference to the table, so Terraform (and graph-based checks) see
that the scaling targets belong to it and create them after it.
"""

from __future__ import annotations

from modules.blueprint.model import Capacity
from modules.constructs.cdk import Construct, Resource
from modules.constructs.naming import logical_id
from modules.constructs.resources import (
    AppautoscalingPolicy,
    AppautoscalingTarget,
    PredefinedMetricSpecification,
    TargetTrackingConfiguration,
)
from modules.design.model import TableDesign

DIMENSIONS = {"read": "ReadCapacityUnits", "write": "WriteCapacityUnits"}
METRICS = {"read": "DynamoDBReadCapacityUtilization", "write": "DynamoDBWriteCapacityUtilization"}


def add_autoscaling(scope: Construct, design: TableDesign, table: Resource, tags: dict[str, str]) -> None:
    bp = design.blueprint
    if bp.table.billing != "provisioned" or bp.table.capacity is None:
        return
    base = logical_id(bp.blueprint)
    table_ref = f"table/{table.ref('name')}"
    for direction in ("read", "write"):
        _scale(scope, logical_id(base, direction), table_ref, "table", direction, bp.table.capacity, tags,
               f"{bp.table.name}-{direction}-capacity")
    for index in design.global_indexes:
        settings = bp.indexes.get(index.name)
        capacity = settings.capacity if settings and settings.capacity else bp.table.capacity
        for direction in ("read", "write"):
            _scale(scope, logical_id(base, index.name, direction), f"{table_ref}/index/{index.name}", "index",
                   direction, capacity, tags, f"{bp.table.name}-{index.name}-{direction}-capacity")


def _scale(
    scope: Construct, base: str, resource_id: str, kind: str, direction: str, capacity: Capacity,
    tags: dict[str, str], policy_name: str,
) -> None:
    bounds = capacity.read if direction == "read" else capacity.write
    target_arguments = AppautoscalingTarget(
        resource_id=resource_id,
        scalable_dimension=f"dynamodb:{kind}:{DIMENSIONS[direction]}",
        min_capacity=bounds.min,
        max_capacity=bounds.max,
        tags=tags or None,
    )
    target = Resource(scope, base, target_arguments.terraform_type, target_arguments.arguments())
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
    Resource(scope, base, policy.terraform_type, policy.arguments())
