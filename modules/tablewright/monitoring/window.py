"""The maintenance window: when it is open, and the SSM Change Calendar that publishes it.

The window opens at `start` local time on the chosen days, in `timezone`, and stays open for
`duration` of elapsed time. A start that falls into a daylight-saving gap is read with the offset
before the gap, as RFC 5545 does for calendar events, so the calendar and these functions agree.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from functools import cache
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

from tablewright.blueprint.language import WEEKDAYS, MaintenanceWindow

if TYPE_CHECKING:
    from icalendar import Timezone

# A fixed anchor keeps the calendar text identical from run to run (2024-01-01 is a Monday).
ANCHOR = date(2024, 1, 1)
DTSTAMP = datetime(2024, 1, 1, tzinfo=UTC)


def _start_on(window: MaintenanceWindow, day: date) -> datetime:
    hour, minute = map(int, window.start.split(":"))
    return datetime.combine(day, time(hour, minute), tzinfo=ZoneInfo(window.timezone))


def _opens_on(window: MaintenanceWindow, day: date) -> bool:
    return WEEKDAYS[day.weekday()] in window.weekdays


def is_open(window: MaintenanceWindow, at: datetime) -> bool:
    """Whether the window is open at the instant `at` (timezone-aware)."""
    if at.tzinfo is None:
        raise ValueError("`at` must carry a time zone")
    local_day = at.astimezone(ZoneInfo(window.timezone)).date()
    for day in (local_day - timedelta(days=1), local_day):
        if _opens_on(window, day):
            start = _start_on(window, day).astimezone(UTC)
            if start <= at < start + timedelta(minutes=window.minutes):
                return True
    return False


def next_opening(window: MaintenanceWindow, after: datetime) -> datetime:
    """The next instant the window opens, strictly after `after`."""
    day = after.astimezone(ZoneInfo(window.timezone)).date() - timedelta(days=1)
    while True:
        if _opens_on(window, day):
            start = _start_on(window, day)
            if start.astimezone(UTC) > after:
                return start
        day += timedelta(days=1)


def describe(window: MaintenanceWindow) -> str:
    days = "daily" if window.days == "daily" else ", ".join(window.weekdays)
    return f"{days} from {window.start} for {window.duration} ({window.timezone})"


@cache
def _vtimezone(tzid: str) -> Timezone:
    """The VTIMEZONE of a zone (its rules from 1970 to 2038): built once per zone, then shared read-only."""
    from icalendar import Timezone

    return Timezone.from_tzid(tzid)


def calendar_text(window: MaintenanceWindow, name: str) -> str:
    """iCalendar for an SSM Change Calendar that is closed except during the window."""
    from icalendar import Calendar, Event, vRecur  # imported when needed: a window-less synth skips it

    calendar = Calendar()
    calendar.add("prodid", "-//Tablewright//Change Calendar 1.0//EN")
    calendar.add("version", "2.0")
    calendar.add("x-calendar-type", "DEFAULT_CLOSED")
    calendar.add("x-wr-caldesc", f"Maintenance window of {name}: {describe(window)}")
    calendar.add_component(_vtimezone(window.timezone))
    first = ANCHOR
    while not _opens_on(window, first):
        first += timedelta(days=1)
    event = Event()
    event.add("uid", f"{name}-maintenance-window@tablewright")
    event.add("dtstamp", DTSTAMP)
    event.add("dtstart", _start_on(window, first))
    event.add("duration", timedelta(minutes=window.minutes))
    rule = vRecur(freq="DAILY") if window.days == "daily" else vRecur(freq="WEEKLY", byday=list(window.weekdays))
    event.add("rrule", rule)
    event.add("summary", f"Open: {describe(window)}")
    calendar.add_component(event)
    ical: bytes = calendar.to_ical()
    return ical.decode("utf-8")
