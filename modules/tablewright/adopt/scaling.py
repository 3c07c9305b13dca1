"""A table's live autoscaling (scalable targets and their target-tracking policies) and the billing
and capacity lines of the blueprint that keep it."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TypeVar

from tablewright.adopt.describe import (
    Description,
    IndexDescription,
    ScalableTarget,
    ScalingPolicy,
    TableDescription,
    Throughput,
    adopt_error,
)
from tablewright.design.design import place

DIMENSION = re.compile(r"dynamodb:(table|index):(Read|Write)CapacityUnits")


Scalable = TypeVar("Scalable", ScalableTarget, ScalingPolicy)
# (table or index, read or write) -> the live scalable target and its target-tracking policy
Scaling = dict[tuple[str, str], tuple[ScalableTarget, ScalingPolicy | None]]


def live_scaling(described: Description, table: str) -> Scaling:
    prefix = f"table/{table}"
    found: Scaling = {}
    for target in _of_table(described.ScalableTargets or [], prefix):
        owner, direction = _dimension_of(target.ServiceNamespace, target.ResourceId, target.ScalableDimension, prefix)
        found[(owner, direction)] = (target, None)
    for policy in _of_table(described.ScalingPolicies or [], prefix):
        owner, direction = _dimension_of(policy.ServiceNamespace, policy.ResourceId, policy.ScalableDimension, prefix)
        where = f"{place(owner)} {direction} capacity"
        tracking = policy.TargetTrackingScalingPolicyConfiguration
        metric = tracking.PredefinedMetricSpecification if tracking else None
        expected = f"DynamoDB{direction.capitalize()}CapacityUtilization"
        if policy.PolicyType != "TargetTrackingScaling" or metric is None or metric.PredefinedMetricType != expected:
            raise adopt_error(f"policy {policy.PolicyName!r} on {where} is not a target-tracking policy on "
                              f"{expected}", "Tablewright manages exactly that policy; delete or convert this one")
        if (owner, direction) not in found:
            raise adopt_error(f"policy {policy.PolicyName!r} on {where} has no scalable target among the inputs",
                              "pass describe-scalable-targets' output with describe-scaling-policies'")
        target, earlier = found[(owner, direction)]
        if earlier is not None:
            raise adopt_error(f"{where} has two scaling policies ({earlier.PolicyName!r}, {policy.PolicyName!r})",
                              "Tablewright manages one target-tracking policy per dimension; delete the other")
        found[(owner, direction)] = (target, policy)
    return found


def check_scaling_described(described: Description) -> None:
    """A provisioned table's capacity is adopted only with its autoscaling described: without it adopt cannot
    tell autoscaled capacity from fixed, and today's capacity written as fixed bounds stops the autoscaler."""
    billing = described.Table.BillingModeSummary
    if billing is not None and billing.BillingMode == "PAY_PER_REQUEST":
        return
    missing = [command for command, given in (("describe-scalable-targets", described.ScalableTargets),
                                              ("describe-scaling-policies", described.ScalingPolicies))
               if given is None]
    if missing:
        table = described.Table.TableName
        raise adopt_error(
            f"table {table} is provisioned, and its autoscaling is not described (no {' or '.join(missing)} "
            "output): adopt cannot tell autoscaled capacity from fixed, and writing today's capacity as fixed bounds "
            "would stop the autoscaler when the plan is applied",
            f"run `aws application-autoscaling describe-scalable-targets --service-namespace dynamodb "
            f"--resource-ids table/{table} > targets.json` and `aws application-autoscaling "
            "describe-scaling-policies --service-namespace dynamodb > policies.json`, and pass both")


def _of_table(entries: Sequence[Scalable], prefix: str) -> list[Scalable]:
    """The targets or policies of this table (describe-scalable-targets lists the whole account's)."""
    return [entry for entry in entries if entry.ResourceId == prefix or entry.ResourceId.startswith(prefix + "/")]


def _dimension_of(namespace: str, resource: str, dimension: str, prefix: str) -> tuple[str, str]:
    match = DIMENSION.fullmatch(dimension)
    index = re.fullmatch(re.escape(prefix) + r"(?:/index/(.+))?", resource)
    if namespace != "dynamodb" or match is None or index is None or (match.group(1) == "index") != bool(
            index.group(1)):
        raise adopt_error(f"{namespace} {resource} {dimension} is not a scalable dimension of {prefix}",
                          f"pass only the scalable targets and policies of {prefix} (`--resource-ids {prefix}`)")
    return index.group(1) or "table", match.group(2).lower()


def billing_lines(table: TableDescription, scaling: Scaling, warnings: list[str], indent: str,
             index: IndexDescription | None = None) -> list[str]:
    """Billing and capacity of the table (`index` None) or of one GSI: autoscaling bounds, targets and cooldowns
    when provisioned, the on-demand maximum when on demand."""
    owner = "table" if index is None else index.IndexName
    on_demand = table.BillingModeSummary is not None and table.BillingModeSummary.BillingMode == "PAY_PER_REQUEST"
    if on_demand:
        limit = (table if index is None else index).OnDemandThroughput
        lines = [f"{indent}billing: on_demand"] if index is None else []
        maxima = [] if limit is None else [f"{direction}: {units}" for direction, units in
                                            (("read", limit.MaxReadRequestUnits),
                                             ("write", limit.MaxWriteRequestUnits)) if units > 0]
        if maxima:  # -1 (or nothing) in a direction: no maximum there
            lines.append(f"{indent}max_throughput: {{{', '.join(maxima)}}}")
        return lines
    current = (index.ProvisionedThroughput if index is not None else table.ProvisionedThroughput) or Throughput()
    directions = {}
    pinned: list[tuple[str, int]] = []
    for direction, units in (("read", current.ReadCapacityUnits), ("write", current.WriteCapacityUnits)):
        live = scaling.get((owner, direction))
        if live is None:  # no autoscaling there: Tablewright's target keeps the capacity where it is
            directions[direction] = f"{{min: {max(units, 1)}, max: {max(units, 1)}}}"
            pinned.append((direction, max(units, 1)))
            continue
        target, policy = live
        settings = [f"min: {target.MinCapacity}", f"max: {target.MaxCapacity}"]
        tracking = policy.TargetTrackingScalingPolicyConfiguration if policy else None
        if tracking is not None:
            if tracking.TargetValue != int(tracking.TargetValue) or not 20 <= tracking.TargetValue <= 90:
                raise adopt_error(f"the {direction} target of {owner} is {tracking.TargetValue:g}%",
                                  "Tablewright writes whole percents from 20 to 90: change the policy first")
            settings.append(f"target_utilization: {int(tracking.TargetValue)}")
            settings += [f"{name}: {value}" for name, value in (("scale_in_cooldown", tracking.ScaleInCooldown),
                                                                 ("scale_out_cooldown", tracking.ScaleOutCooldown))
                         if value is not None]
            if tracking.DisableScaleIn:
                settings.append("disable_scale_in: true")
        directions[direction] = "{" + ", ".join(settings) + "}"
    lines = [f"{indent}billing: provisioned"] if owner == "table" else []
    where = place(owner)
    if pinned:
        directions_pinned = " and ".join(direction for direction, _ in pinned)
        units_pinned = [f"{direction} {units}" for direction, units in pinned]
        warnings.append(f"{where} has no autoscaling for {directions_pinned} capacity: the blueprint pins it "
                                 f"where it is ({', '.join(units_pinned)} units, min = max), and the stack registers "
                                 "a scalable target at that capacity; raise `max` to let it scale")
        lines.append(f"{indent}# TODO(adopt): no autoscaling on {where} for {' and '.join(units_pinned)} units today: "
                     "pinned (min = max); raise `max` to let it scale")
    lines += [f"{indent}capacity:", f"{indent}  read: {directions['read']}", f"{indent}  write: {directions['write']}"]
    return lines
