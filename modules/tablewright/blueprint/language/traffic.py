"""Traffic as it arrives: a daily curve (or a peak factor), named events, and how key values share it.

Declared rates (`rps`, `writes`) stay averages over a normal day; a shape says how that average is spread
over the day, and events say when it surges. A shape on the blueprint applies to every pattern and entity;
one on an entity (its writes) or a pattern (its reads) replaces the blueprint's curve and adds its events.
"""

from __future__ import annotations

import datetime
import re
from typing import Annotated, Literal

from pydantic import Field, StringConstraints, model_validator

from tablewright.blueprint.invalid import Invalid
from tablewright.blueprint.language.base import MAX_RATE, Strict
from tablewright.errors import ErrorCode

SECONDS_PER_DAY = 86_400
MAX_EVENTS = 20
MAX_CURVE_POINTS = 96  # one every 15 minutes
TIME_OF_DAY = r"^([01][0-9]|2[0-3]):[0-5][0-9]$"
TimeOfDay = Annotated[str, StringConstraints(pattern=TIME_OF_DAY)]
DURATION = re.compile(r"^([1-9][0-9]{0,4})(s|m|h)$")
EventName = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9-]{0,62}$")]
Recurrence = Literal["once", "day", "week", "month"]
EVENT_DATE = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$"
EventDay = Annotated[str, StringConstraints(pattern=r"^([0-9]{4}-[0-9]{2}-[0-9]{2}|MON|TUE|WED|THU|FRI|SAT|SUN)$")] | \
    Annotated[int, Field(ge=1, le=28)]


def _calendar_date(text: str) -> bool:
    try:
        datetime.date.fromisoformat(text)
    except ValueError:
        return False
    return True


def check_day(on: str | int | None, every: str, what: str) -> None:
    """An `on:` names a day of its `every:`: a date for `once`, a weekday for `week`, a day 1-28 for `month`."""
    if on is None:
        return
    kind = "month" if isinstance(on, int) else "once" if re.match(EVENT_DATE, on) else "week"
    if kind != every or (kind == "once" and not _calendar_date(str(on))):
        wanted = {"once": "a date `YYYY-MM-DD`", "week": "a weekday (`FRI`)", "month": "a day of the month 1-28",
                  "day": "nothing (it happens every day)"}[every]
        raise Invalid(f"`on: {on}` does not name a day of an `every: {every}` {what}", f"write {wanted}", "on",
                      code=ErrorCode.VALUE_NOT_ALLOWED)


def seconds_of_day(time: str) -> int:
    hours, minutes = time.split(":")
    return int(hours) * 3600 + int(minutes) * 60


def duration_seconds(value: int | str) -> int:
    """`600`, `"90s"`, `"10m"` or `"2h"` as seconds."""
    if isinstance(value, int):
        return value
    found = DURATION.match(value)
    assert found, value  # the field's pattern admits nothing else
    return int(found.group(1)) * {"s": 1, "m": 60, "h": 3600}[found.group(2)]


Duration = int | Annotated[str, StringConstraints(pattern=DURATION.pattern)]


class TrafficEvent(Strict):
    """A known surge (a launch, a sale, a nightly job): from `start` (UTC) for `duration`, at `rate` or at
    `factor` times the normal rate, once or every day, week or month."""

    name: EventName = Field(description="What the event is called in findings and reports.",
                            examples=["flash-sale"])
    start: TimeOfDay = Field(description="When it starts, UTC, `HH:MM`.", examples=["18:00"])
    duration: Duration = Field(description="How long it lasts: seconds, or `90s`, `10m`, `2h` (at most a day).",
                               examples=["10m"])
    every: Recurrence = Field(default="once", description="`once` (priced once a month) or every `day`, `week` "
                              "or `month`.")
    on: EventDay | None = Field(
        default=None, description="The day it happens, so that lint's scheduled minimum runs on it: a date "
        "`YYYY-MM-DD` (`every: once`: a one-time `at(...)` action), a weekday `MON`..`SUN` (`week`) or a day of the "
        "month 1-28 (`month`).", examples=["2027-11-26", "FRI", 1])
    rate: float | None = Field(
        default=None, gt=0, le=MAX_RATE,
        description="Requests per second during the event: a pattern's reads, or an entity's writes that consume "
        "capacity (inserts, updates and deletes in their declared proportions; TTL expiries are free and never "
        "counted; inserts when the entity declares none). Not on the blueprint's `traffic` (write `factor` there).")
    factor: float | None = Field(default=None, gt=0, le=10_000,
                                 description="The normal rate times this during the event.")

    @model_validator(mode="after")
    def _one_level(self) -> TrafficEvent:
        if (self.rate is None) == (self.factor is None):
            raise Invalid("an event sets exactly one of `rate` and `factor`",
                          "write `rate: 10000` (requests per second) or `factor: 5` (times the normal rate)",
                          code=ErrorCode.CONTRADICTION if self.rate is not None else ErrorCode.MISSING_FIELD)
        if not 1 <= self.seconds <= SECONDS_PER_DAY:
            raise Invalid(f"`duration` {self.duration!r} is longer than a day", "at most `24h` (86400 seconds)",
                          "duration", code=ErrorCode.VALUE_NOT_ALLOWED)
        return self

    @model_validator(mode="after")
    def _day_fits(self) -> TrafficEvent:
        check_day(self.on, self.every, "event")
        return self

    @property
    def seconds(self) -> int:
        return duration_seconds(self.duration)

    @property
    def start_second(self) -> int:
        return seconds_of_day(self.start)


class TrafficShape(Strict):
    """How an average rate is spread over the day. `peak_factor` is the simple form; `daily` the full one."""

    peak_factor: float | None = Field(
        default=None, ge=1, le=100,
        description="The day's peak over its average: the rate rises to it over three hours before `peak_at`, "
        "holds it for an hour and falls back (the rest of the day below the average, so the average stays the "
        "declared rate).")
    peak_at: TimeOfDay | None = Field(default=None, description="When the daily peak begins, UTC (default 18:00).")
    daily: dict[TimeOfDay, Annotated[float, Field(ge=0, le=1000)]] | None = Field(
        default=None, min_length=2, max_length=MAX_CURVE_POINTS,
        description="Relative rates at times of day (UTC), joined linearly and scaled so the day averages the "
        "declared rate.",
        examples=[{"03:00": 0.2, "09:00": 1.0, "19:00": 2.5}])
    events: list[TrafficEvent] = Field(default_factory=list, max_length=MAX_EVENTS,
                                       description="Named surges on top of the daily curve.")

    @model_validator(mode="after")
    def _one_curve(self) -> TrafficShape:
        if self.daily is not None and ("peak_factor" in self.model_fields_set or self.peak_at is not None):
            raise Invalid("`daily` gives the whole curve, so `peak_factor` and `peak_at` do not apply",
                          "keep `daily` (its highest point is the peak) or remove it", "daily",
                          code=ErrorCode.CONTRADICTION)
        if self.daily is not None and not any(self.daily.values()):
            raise Invalid("`daily` is zero all day", "give the busiest time a positive rate", "daily",
                          code=ErrorCode.VALUE_NOT_ALLOWED)
        names = [event.name for event in self.events]
        twice = sorted({name for name in names if names.count(name) > 1})
        if twice:
            raise Invalid(f"two events are named {twice[0]!r}", "give each event its own name", "events",
                          code=ErrorCode.VALUE_NOT_ALLOWED)
        return self


class Traffic(TrafficShape):
    """The blueprint's traffic: the shape of every pattern and entity that declares none, and the assumption
    for key values whose distribution nobody declared."""

    peak_factor: float | None = Field(
        default=3.0, ge=1, le=100,
        description="Peak over average request rate: sizes the autoscaling maximum, and lint judges keys at it. "
        "The rate rises to it over three hours before `peak_at` and holds it for an hour.")
    dominant_share: float = Field(
        default=0.8, gt=0, le=1,
        description="The share of its traffic the busiest value of an enum, boolean or other low-cardinality key "
        "attribute is assumed to take when no `weights` or `hot_key_share` say otherwise.")

    @model_validator(mode="after")
    def _factors_only(self) -> Traffic:
        for event in self.events:
            if event.rate is not None:
                raise Invalid(f"event {event.name!r}: the blueprint's traffic has no single rate",
                              "write `factor:` here, or move the event to the pattern or entity it drives",
                              "events", code=ErrorCode.VALUE_NOT_ALLOWED)
        return self


class Simulation(Strict):
    """What `simulate` assumes where AWS publishes no number (each named in its report)."""

    history: Literal["established", "new"] = Field(
        default="established",
        description="`established`: on demand has served the normal day's peak before (it serves twice that at "
        "once); `new`: a new table, which serves 4,000 write and 12,000 read request units per second until it "
        "has seen more.")
    update_seconds: int = Field(
        default=180, ge=0, le=3600,
        description="Seconds from the scaling alarm to the new provisioned capacity serving requests (AWS: \"it then "
        "takes several minutes to update the provisioned capacity\"; it publishes no figure).")
    scale_in_margin: float = Field(
        default=0.2, ge=0, lt=0.9,
        description="How far below the target utilization consumed capacity must stay for 15 minutes before "
        "autoscaling scales in (AWS documents the 15 datapoints below the target; the 20-point margin comes from "
        "its Knowledge Center, not the Developer Guide).")
    table_quota: int = Field(
        default=40_000, ge=1, le=10_000_000,
        description="The account's per-table throughput quota in each direction (AWS's default 40,000 units): the "
        "most one table or one GSI may be provisioned at, or serve on demand.")
    account_quota: int = Field(
        default=80_000, ge=1, le=100_000_000,
        description="The account's per-region quota on provisioned capacity in each direction, summed over every "
        "table and GSI (AWS's default 80,000 units): lint checks this table and its GSIs against it.")
    cache_reads_per_second: float = Field(
        default=1.0, gt=0, le=1000,
        description="Reads per second a cache (DAX, or the application's) sends to DynamoDB for one cached key.")
