"""Jobs (`schedule:` on a pattern) in the traffic model: each run's reads in its window of the day.

A job's run reads what its calls read (a Scan: every item of the table, the total size of the items it
evaluates in 4 KB units, halved when eventually consistent: `estimate.read_cost`, after
https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/read-write-operations.html#read-operation-consumption),
spread evenly over its window and zero outside it: neither the daily curve nor any event shapes it. A daily job
is part of the normal day: its profile is a window on the day's curve (an established on-demand table has served
it before), and a month holds 730 / 24 runs. A job on a weekday, a day of the month or a date is an event of its
own: nothing on a normal day, its run on the event day, as often a month as an event of its recurrence.

`job_costs.py` prices each run.
"""

from __future__ import annotations

from tablewright.blueprint.language import SECONDS_PER_DAY
from tablewright.blueprint.language.jobs import JobSchedule
from tablewright.blueprint.traffic import Profile, Surge


def calls_per_run(schedule: JobSchedule) -> int:
    """A Scan job scans the table once a run unless it says otherwise (other jobs must say)."""
    return schedule.calls or 1


def _window(start: int, seconds: int, height: float) -> tuple[tuple[int, float], ...]:
    """A curve at `height` for the `seconds` whole seconds from `start` and zero outside, exact at every second
    (one-second edges; the trapezoids of `Profile.integral` add up to `height * seconds`)."""
    if seconds == SECONDS_PER_DAY:
        return ((0, height), (SECONDS_PER_DAY // 2, height))
    end = start + seconds
    edges = [(start - 1, 0.0), (start, height), (end - 1, height), (end, 0.0)]
    return tuple(sorted((t % SECONDS_PER_DAY, value) for t, value in edges))


def job_profile(pattern: str, schedule: JobSchedule) -> Profile:
    """A job's profile. Daily: a window of the day, averaging 1 (its pattern's `rps` is a run's calls a day). On other
    days: no calls on a normal day, and its run an event of its own (its calls over its window, as often as it
    recurs), which the simulator and the month's cost take as they take an event's `rate`."""
    calls, seconds = calls_per_run(schedule), schedule.seconds
    when = "every day" if schedule.daily else f"every {schedule.every} on {schedule.on}" if schedule.every != "once" \
        else f"once, on {schedule.on}"
    basis = f"a job: {calls:,} call(s) {when} from {schedule.start} UTC over {seconds // 60:,} min"
    if schedule.daily:
        return Profile(_window(schedule.start_second, seconds, SECONDS_PER_DAY / seconds), (), basis)
    run = Surge(pattern, schedule.start_second, seconds, schedule.every, calls / seconds, None,
                f"access_patterns.{pattern}.schedule")
    return Profile(((0, 1.0), (SECONDS_PER_DAY // 2, 1.0)), (run,), basis)
