"""Jobs: a pattern the application runs on a schedule (a nightly export, a weekly report), not as requests.

A job reads what its calls read (a Scan: the whole table) once per run, spread evenly over the run's window;
it follows neither the daily curve nor the events of the blueprint's `traffic`, and reads nothing outside it. A
daily job is part of every day; a weekly, monthly or one-time job is an event of its own (on its day only).
"""

from __future__ import annotations

from pydantic import Field, model_validator

from tablewright.blueprint.invalid import Invalid
from tablewright.blueprint.language.base import Strict
from tablewright.blueprint.language.traffic import (
    SECONDS_PER_DAY,
    Duration,
    EventDay,
    Recurrence,
    TimeOfDay,
    check_day,
    duration_seconds,
    seconds_of_day,
)
from tablewright.errors import ErrorCode

MAX_JOB_CALLS = 10_000_000  # calls one run makes (a Query per customer, say)


class JobSchedule(Strict):
    """When a job runs: from `start` (UTC) for `duration`, every day, or on a weekday, a day of the month, a date."""

    every: Recurrence = Field(default="day", description="`day`: a run every day; `week`, `month`: a run on the "
                              "weekday or day of the month `on` names; `once`: one run, on the date `on` names "
                              "(priced once a month, as an `every: once` event).")
    on: EventDay | None = Field(
        default=None, description="The run's day: a weekday `MON`..`SUN` (`week`), a day of the month 1-28 "
        "(`month`), a date `YYYY-MM-DD` (`once`); none for a daily job.", examples=["SUN", 1, "2027-01-31"])
    start: TimeOfDay = Field(description="When a run starts, UTC, `HH:MM`.", examples=["02:00"])
    duration: Duration = Field(description="How long a run takes, in whole minutes: `30m`, `2h`, `1800` "
                               "(at least a minute, at most a day); its reads are spread evenly over it.",
                               examples=["30m"])
    calls: int | None = Field(
        default=None, ge=1, le=MAX_JOB_CALLS,
        description="Calls of the pattern one run makes: a Scan job reads the whole table once (default 1); "
        "any other pattern says how many (a Query per customer: the number of customers).")

    @model_validator(mode="after")
    def _window(self) -> JobSchedule:
        check_day(self.on, self.every, "job")
        if self.on is None and self.every != "day":
            raise Invalid(f"an `every: {self.every}` job runs on one day: say which", {
                "week": "add `on: SUN` (a weekday)", "month": "add `on: 1` (a day of the month 1-28)",
                "once": 'add `on: "2027-01-31"` (a date)'}[self.every], "on", code=ErrorCode.MISSING_FIELD)
        if not 60 <= self.seconds <= SECONDS_PER_DAY or self.seconds % 60:
            raise Invalid(f"`duration` {self.duration!r} is not a whole number of minutes from one minute to a day",
                          "write minutes or hours: `30m`, `2h` (at most `24h`)", "duration",
                          code=ErrorCode.VALUE_NOT_ALLOWED)
        return self

    @property
    def daily(self) -> bool:
        return self.every == "day"

    @property
    def seconds(self) -> int:
        return duration_seconds(self.duration)

    @property
    def start_second(self) -> int:
        return seconds_of_day(self.start)
