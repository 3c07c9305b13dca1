"""Replay: the observed demand of each table and GSI driven through the simulator's capacity rules
(`modules/tablewright/simulate/engine.py`: burst capacity, target tracking, on-demand doubling), with the capacity the
blueprint configures (starting from what the first minute needs). It compares the minutes the simulator
predicts throttles in with the minutes CloudWatch counted throttle events in, and the units it predicts served
with those consumed.

Demand is what was consumed plus what was throttled: throttle events count requests, each taken at the
declared units per request of the target and direction (every SDK retry is counted too, so demand is an upper
bound). Each period's demand is spread evenly over its seconds. A window of more than 31 days, periods that are
not whole minutes, or throttle events at another period than the consumed units are not replayed. Keys are not
replayed: a partition's limit needs the key's own series, which Contributor Insights gives only for its top keys.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tablewright.blueprint.language import SECONDS_PER_DAY
from tablewright.calibrate.metrics import Direction, Metrics, Series
from tablewright.design.design import TABLE
from tablewright.simulate.engine import serve
from tablewright.simulate.stack import capacities
from tablewright.stacks.stack import Stack

SLACK_PERIODS = 2  # a predicted throttle within 2 periods of an observed one matches it
# On demand serves twice its previous peak at once; the table's history before the window is unknown, so the
# peak of the window's first 30 minutes stands for it.
HISTORY_SECONDS = 30 * 60
MAX_DAYS = 31  # the simulator steps seconds: a longer window is not replayed (its arrays would not stay small)


@dataclass(frozen=True)
class Replay:
    stack: str
    target: str
    direction: Direction
    period: int
    observed_throttled: tuple[int, ...]  # epoch seconds of the periods with throttle events
    predicted_throttled: tuple[int, ...]
    matched: int  # observed periods with a predicted throttle within SLACK_PERIODS
    false_alarms: int  # predicted periods with no observed throttle within SLACK_PERIODS
    served_error: float | None  # mean absolute difference of served against consumed, over the mean consumed


def _near(moment: int, others: tuple[int, ...], slack: int) -> bool:
    return any(abs(moment - other) <= slack for other in others)


def _replay(stack: Stack, target: str, direction: Direction, consumed: Series, throttled: Series | None,
            per_request: float) -> Replay | None:
    period = consumed.period
    moments = sorted(set(consumed.points) | set(throttled.points if throttled else ()))
    if period % 60 or not moments or (throttled is not None and throttled.period != period):
        return None  # the simulator steps whole minutes, and both series the same periods
    if moments[-1] - moments[0] > MAX_DAYS * SECONDS_PER_DAY:
        return None
    start, periods = moments[0], (moments[-1] - moments[0]) // period + 1
    used = np.zeros(periods)
    refused = np.zeros(periods)
    for moment, value in consumed.points.items():
        used[(moment - start) // period] = value
    for moment, value in (throttled.points if throttled else {}).items():
        refused[(moment - start) // period] = value * per_request
    demand = np.repeat((used + refused) / period, period)
    capacity = capacities(stack.design, stack.capacity, stack.design.blueprint.table.billing)[target, direction]
    history = float(demand[:HISTORY_SECONDS].max())  # on demand: what the table had served before, at least
    served, _ = serve(demand, capacity, direction, stack.design.blueprint.simulation, history,
                      start % SECONDS_PER_DAY)
    served_per_period = served.reshape(periods, period).sum(axis=1)
    short = (demand.reshape(periods, period).sum(axis=1) - served_per_period) > 0.5
    observed = tuple(start + i * period for i in range(periods) if refused[i] > 0)
    predicted = tuple(start + i * period for i in range(periods) if short[i])
    slack = SLACK_PERIODS * period
    mean = float(used.mean())
    matched = sum(_near(moment, predicted, slack) for moment in observed)
    false_alarms = sum(not _near(moment, observed, slack) for moment in predicted)
    error = round(float(np.abs(served_per_period - used).mean()) / mean, 4) if mean else None
    return Replay(stack.name, target, direction, period, observed, predicted, matched, false_alarms, error)


def replay(stacks: list[Stack], metrics: Metrics) -> list[Replay]:
    found = []
    for stack in stacks:
        table = stack.design.blueprint.table.name
        model = stack.capacity.traffic
        for target in model.targets:
            for direction in ("read", "write"):
                mine = [s for s in metrics.series if s.table == table and (s.index or TABLE) == target
                        and s.direction == direction]
                consumed = next((s for s in mine if s.kind == "consumed"), None)
                if consumed is None:
                    continue
                flows = [model.flows[i] for i in model.on(target, direction)]
                requests = sum(flow.requests for flow in flows)
                per_request = sum(flow.units for flow in flows) / requests if requests else 1.0
                done = _replay(stack, target, direction, consumed,
                               next((s for s in mine if s.kind == "throttled"), None), per_request)
                if done is not None:
                    found.append(done)
    return found
