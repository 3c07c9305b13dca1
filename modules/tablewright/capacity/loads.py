"""The capacity report: each design's reads and writes, its traffic model, and each target's load from it.

The traffic model (`traffic.py`) is built here, once per estimate: each target's load is summed from its flows
(average, busiest second, month average), and every later stage reads the model from the report.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

from tablewright.blueprint.throughput import max_throughput_setting
from tablewright.capacity.estimate import ReadCost, WriteCost, read_cost, write_cost
from tablewright.capacity.prices import BUILT_IN, Prices
from tablewright.capacity.traffic import Direction, Flow, HotKey, TrafficModel, single_item, traffic_model
from tablewright.design.design import TABLE, TableDesign

UNLIMITED = -1  # what the provider takes to remove a maximum
# The least `suggested` sets, per direction: a maximum guards against runaway spend, not against the small
# undeclared traffic every table gets (console lookups, operators' scripts, reads of an index-only table), and
# 100 units a second reached all day costs $1.08 of reads and $5.40 of writes (us-east-1, on demand).
MIN_SUGGESTED_MAXIMUM = 100


@dataclass(frozen=True)
class IndexLoad:
    """One table's (local indexes included) or GSI's load: averages over a normal day, the busiest second's
    (each pattern's and entity's peak added, as if they coincided), and averages over a month, events included."""

    index: str
    read_units_per_second: float
    write_units_per_second: float
    suggested_read: tuple[int, int]
    suggested_write: tuple[int, int]
    peak_read: float = 0.0
    peak_write: float = 0.0
    month_read: float = 0.0
    month_write: float = 0.0

    @property
    def suggested_maximum(self) -> tuple[int, int]:
        """(read, write) request units per second `max_throughput: suggested` sets: the declared peak at the
        target utilization (the suggested autoscaling maximum), never below MIN_SUGGESTED_MAXIMUM."""
        return (max(MIN_SUGGESTED_MAXIMUM, self.suggested_read[1]),
                max(MIN_SUGGESTED_MAXIMUM, self.suggested_write[1]))


@dataclass(frozen=True)
class CapacityReport:
    reads: tuple[ReadCost, ...]
    writes: tuple[WriteCost, ...]
    loads: tuple[IndexLoad, ...]
    prices: Prices  # what `modules/tablewright/capacity/cost.py` prices this estimate with
    traffic: TrafficModel  # the flows and hot keys the loads are summed from
    # On demand: (read, write) request units per second of `max_throughput` for the table ("table") and each
    # GSI that sets it (-1: unlimited); what synth, cost, lint, the simulator and the reports read.
    on_demand_maxima: dict[str, tuple[int, int]]

    def read(self, pattern: str) -> ReadCost:
        return next(read for read in self.reads if read.pattern == pattern)

    def load(self, index: str) -> IndexLoad:
        return next(load for load in self.loads if load.index == index)


def _on_demand_maxima(design: TableDesign, loads: Sequence[IndexLoad]) -> dict[str, tuple[int, int]]:
    """(read, write) request units per second for the table (`"table"`) and every GSI that has a setting:
    the numbers given (-1 for a direction left out), the suggested maximum (the declared peak at the target
    utilization, at least MIN_SUGGESTED_MAXIMUM) for `suggested`, or -1 for `unlimited`. Provisioned tables
    and unset targets have no entry."""
    maxima: dict[str, tuple[int, int]] = {}
    by_target = {load.index: load for load in loads}
    for target in by_target:
        setting = max_throughput_setting(design.blueprint, None if target == TABLE else target)
        if setting is None:
            continue
        if setting == "unlimited":
            maxima[target] = (UNLIMITED, UNLIMITED)
        elif setting == "suggested":
            maxima[target] = by_target[target].suggested_maximum
        else:
            maxima[target] = (setting.read or UNLIMITED, setting.write or UNLIMITED)
    return maxima


def _bounds(average: float, peak: float, target_percent: int) -> tuple[int, int]:
    target = target_percent / 100
    low = max(1, math.ceil(average / target))
    return low, max(low, math.ceil(peak / target))


def _summed(flows: Sequence[Flow]) -> tuple[float, float, float]:
    """Average, busiest second (each flow's peak added, as if they coincided) and month average of flows."""
    return (sum((flow.units for flow in flows), 0.0), sum((flow.peak for flow in flows), 0.0),
            sum((flow.per_request * flow.profile.month_average(flow.requests) for flow in flows), 0.0))


def _load(design: TableDesign, model: TrafficModel, target: str) -> IndexLoad:
    def summed(direction: Direction) -> tuple[float, float, float]:
        return _summed([model.flows[i] for i in model.on(target, direction)])

    (read, read_peak, read_month), (write, write_peak, write_month) = summed("read"), summed("write")
    policy = design.capacity[target]
    return IndexLoad(target, read, write, _bounds(read, read_peak, policy.scaling("read").target),
                     _bounds(write, write_peak, policy.scaling("write").target),
                     read_peak, write_peak, read_month, write_month)


def _batch_share(design: TableDesign, reads: Sequence[ReadCost], flow: Flow, share: float) -> float:
    """A key value's share of a batch get's units: a BatchGetItem names each primary key at most once (DynamoDB
    refuses a request whose keys repeat, "Provided list of item keys contains duplicates": the API reference,
    https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_BatchGetItem.html, names each item by its
    primary key; the refusal is confirmed in https://github.com/boto/boto3/issues/4131). So a key value that is a
    single item is read at most once a call: at most 1 / (items a call) of the flow's units, whatever its share
    of the template's traffic."""
    read = next((read for read in reads if read.pattern == flow.pattern), None)
    if read is None or flow.target != TABLE or not design.plan(read.pattern).batch:
        return share  # not a pattern's batch get (a write, a Query, a read the client sends for an update)
    if not single_item(design, flow.entity, design.shapes[flow.entity][TABLE]):
        return share  # a partition of many items: one call may name several of them
    return min(share, 1 / read.items_per_call) if read.items_per_call else share


def _batches_bounded(design: TableDesign, reads: Sequence[ReadCost], model: TrafficModel) -> TrafficModel:
    """The model with each hot key's share of a batch get bounded by one item a call (`_batch_share`)."""
    def bounded(key: HotKey) -> HotKey:
        terms = tuple((i, _batch_share(design, reads, model.flows[i], share)) for i, share in key.terms)
        return key if terms == key.terms else replace(key, terms=terms)
    return replace(model, hot_keys=tuple(bounded(key) for key in model.hot_keys))


def estimate(design: TableDesign, prices: Prices = BUILT_IN) -> CapacityReport:
    reads = tuple(read_cost(design, plan) for plan in design.plans)
    writes = tuple(write_cost(design, entity) for entity in sorted(design.blueprint.entities))
    model = _batches_bounded(design, reads, traffic_model(design, reads, writes))
    loads = tuple(_load(design, model, target) for target in model.targets)
    return CapacityReport(reads, writes, loads, prices, model, _on_demand_maxima(design, loads))
