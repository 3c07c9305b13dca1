"""Thresholds sized from the design: the conditional-check alarm set above the failures the design declares.

DynamoDB adds one to ConditionalCheckFailedRequests (dimension TableName, one per table, every index
included) for each PutItem, UpdateItem or DeleteItem whose condition is false, publishes it every minute,
and the alarm reads its Sum over the alarm period
(https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/metrics-dimensions.html). A design that
declares `writes.failing` expects that count in every period, so a fixed threshold of 100 per five minutes
would stay in ALARM all day for a design working as declared.

The rule (docs/guides/observability.md, "Conditional checks sized from the design"):

    failures per second at the peak = sum over entities of
        (sum over kinds of rate x failing share) / entity's writes per second x the entity's peak write rate
    expected per period  = failures per second at the peak x period (seconds)
    threshold            = max(the default threshold, ceil(MARGIN x expected per period))

An entity's peak write rate is its profile's highest rate of the day (blueprint/traffic.py): the daily curve or
peak factor, with every declared event (a `factor` multiplies the rate; a `rate` replaces it, inserts, updates and
deletes in their declared proportions). Entities peaking at different times are added as if
they coincided, and a period is counted at the peak rate throughout: both only raise the figure, so a design as
declared stays below it.

A static threshold at the declared peak, not a CloudWatch anomaly-detection band (ANOMALY_DETECTION_BAND), even
where the daily curve varies a lot: a band is trained on the metric's own history (the AnomalyDetector API reports
PENDING_TRAINING, TRAINED_INSUFFICIENT_DATA, TRAINED) and knows nothing of the declaration, so a declared event
rarer than that history (a monthly sale) falls outside the band and alarms: a design as declared would alarm. The
cost of the static threshold is sensitivity off the peak: a retry storm at night must exceed the peak's figure.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from tablewright.blueprint.language import Blueprint
from tablewright.blueprint.traffic import entity_profile

# Twice the declared peak: a failing share is an estimate (`failing: {updates: 0.7}`), so the alarm leaves room for
# it being off; and an application retrying failed conditions turns each failure into two or more, so the storm the
# alarm is for shows as a multiple of the declared figure, not a few percent above it.
MARGIN = 2.0


@dataclass(frozen=True)
class Sizing:
    """The conditional-check threshold of one alarm period."""

    expected: float  # failed conditions per period at the declared peak (0: the design declares none)
    threshold: float
    derived: bool  # the threshold came from the declaration, not from the default or the blueprint


def peak_failures_per_second(blueprint: Blueprint) -> float:
    """Failed conditions per second at each entity's declared peak, added over the entities."""
    total = 0.0
    for name, entity in sorted(blueprint.entities.items()):
        rates = entity.write_rates
        failing = sum(getattr(rates, kind) * share for kind, share in sorted(rates.failing.items()))
        if not failing:
            continue
        # What an event's `rate` gives: the application's writes in their declared mix (TTL expiries are free and
        # not the application's; as capacity/traffic.py's `entity_writes` reads them).
        writes = rates.inserts + rates.updates + rates.deletes
        total += failing / writes * entity_profile(blueprint, name).peak(writes)
    return total


def conditional_checks(blueprint: Blueprint, period: int, default: float) -> Sizing:
    """The threshold for ConditionalCheckFailedRequests summed over `period` seconds: the blueprint's own
    `alarms.conditional_checks.threshold` if set, else the rule above with `default` as its floor."""
    expected = peak_failures_per_second(blueprint) * period
    explicit = blueprint.alarms.conditional_checks.threshold
    if explicit is not None:
        return Sizing(expected, explicit, False)
    sized = float(math.ceil(round(MARGIN * expected, 6)))  # 2 x 132,000.00000000001 is 264,000, not 264,001
    return Sizing(expected, max(default, sized), sized > default)
