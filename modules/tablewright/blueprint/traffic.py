"""How each pattern's reads and each entity's writes arrive over a day: its profile (curve and surges).

A profile's curve averages 1 over the day, so a declared average rate times the curve is the rate at each
second; surges (declared events) replace or multiply it while they last. Everything here is exact for the
piecewise-linear curves the language describes: peaks are found at the curve's corners and the surges' edges,
and event volumes are integrals, so no figure depends on a sampling step.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import Literal

from tablewright.blueprint.language import (
    SECONDS_PER_DAY,
    Blueprint,
    TrafficEvent,
    TrafficShape,
    seconds_of_day,
)

HOURS_PER_MONTH = 730  # AWS prices a month as 730 hours
SECONDS_PER_MONTH = HOURS_PER_MONTH * 3600
OCCURRENCES_PER_MONTH = {"once": 1.0, "day": HOURS_PER_MONTH / 24, "week": HOURS_PER_MONTH / 168, "month": 1.0}
DEFAULT_PEAK_AT = "18:00"
PEAK_HOURS = 4.0  # the peak-factor curve's hump: 3 hours of rise and 1 at the peak (shorter above a factor of 3)


@dataclass(frozen=True)
class Surge:
    """A declared event as the simulator and the estimates use it."""

    name: str
    start: int  # second of the day
    seconds: int
    every: Literal["once", "day", "week", "month"]
    rate: float | None  # requests per second while it lasts
    factor: float | None  # or the normal rate times this
    where: str = field(compare=False)  # the blueprint field that declares it, for messages (two patterns whose
    # traffic is the same YAML anchor have equal profiles)

    def active(self, t: int) -> bool:
        return (t - self.start) % SECONDS_PER_DAY < self.seconds

    @property
    def per_month(self) -> float:
        return OCCURRENCES_PER_MONTH[self.every]


@dataclass(frozen=True, eq=False)
class Profile:
    points: tuple[tuple[int, float], ...]  # (second of the day, multiplier), sorted; linear between, wrapping
    surges: tuple[Surge, ...]
    basis: str  # the curve in words

    # Profiles key the simulator's caches: a thousand patterns may share one (a YAML anchor), so equality and the
    # hash are computed once, from the curve and the surges.
    @cached_property
    def _identity(self) -> tuple[object, ...]:
        return (self.points, self.surges)

    @cached_property
    def _hash(self) -> int:
        return hash(self._identity)

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        return isinstance(other, Profile) and self._hash == other._hash and self._identity == other._identity

    def normal(self, t: float) -> float:
        """The curve at second `t` of the day (multiplier of the average)."""
        t %= SECONDS_PER_DAY
        points = self.points
        i = bisect_right(self.times, t) - 1
        t0, v0 = points[i] if i >= 0 else (points[-1][0] - SECONDS_PER_DAY, points[-1][1])
        t1, v1 = points[i + 1] if i + 1 < len(points) else (points[0][0] + SECONDS_PER_DAY, points[0][1])
        return v0 + (v1 - v0) * (t - t0) / (t1 - t0)

    @cached_property
    def times(self) -> list[int]:
        return [time for time, _ in self.points]

    def rate(self, average: float, t: int) -> float:
        """Requests per second at second `t`: a surge's rate (the highest, if several), else the normal rate
        times every active surge's factor."""
        active = [s for s in self.surges if s.active(t)]
        rates = [s.rate for s in active if s.rate is not None]
        if rates:
            return max(rates)
        factor = 1.0
        for surge in active:
            factor *= surge.factor or 1.0
        return average * self.normal(t) * factor

    def corners(self) -> list[int]:
        """Every second where the rate can turn: the curve's points and the surges' first and last seconds."""
        times = {t for t, _ in self.points}
        for surge in self.surges:
            times |= {surge.start, (surge.start + surge.seconds - 1) % SECONDS_PER_DAY}
        return sorted(times)

    def peak(self, average: float) -> float:
        """The highest rate of the day, events included (every flow of a pattern or entity asks it again)."""
        return _peak(self, average)

    @property
    def peak_factor(self) -> float:
        """The normal day's peak over its average (events aside)."""
        return max(value for _, value in self.points)

    def integral(self, start: int, seconds: int) -> float:
        """The curve summed over `seconds` seconds from `start` (exact: trapezoids between its points)."""
        return _integral(self, start, seconds)

    def event_volume(self, average: float, surge: Surge) -> float:
        """Requests one occurrence of a surge adds to the normal day's."""
        normal = average * self.integral(surge.start, surge.seconds)
        if surge.rate is not None:
            return surge.rate * surge.seconds - normal
        return ((surge.factor or 1.0) - 1) * normal

    def month_average(self, average: float) -> float:
        """Requests per second over a month: the normal days plus each event as often as it recurs."""
        extra = sum(surge.per_month * self.event_volume(average, surge) for surge in self.surges)
        return average + extra / SECONDS_PER_MONTH


@lru_cache(maxsize=4096)
def _peak(profile: Profile, average: float) -> float:
    return max(profile.rate(average, t) for t in profile.corners())


@lru_cache(maxsize=4096)
def _integral(profile: Profile, start: int, seconds: int) -> float:
    end = start + seconds
    corners = sorted({end} | {day + t for day in (0, SECONDS_PER_DAY, 2 * SECONDS_PER_DAY)
                              for t in profile.times if start < day + t < end})
    total, t = 0.0, start
    for corner in corners:
        total += (profile.normal(t) + profile.normal(corner)) / 2 * (corner - t)
        t = corner
    return total


def peak_curve(peak_factor: float, peak_at: str) -> tuple[tuple[int, float], ...]:
    """A day averaging 1 with a hump to `peak_factor`: it rises for 3/4 of the hump's width before `peak_at`,
    holds for 1/4 and falls for 3/4, the width PEAK_HOURS (narrower above a factor of 3, so the rest of the day
    stays at least half the average)."""
    if peak_factor == 1:
        return ((0, 1.0), (SECONDS_PER_DAY // 2, 1.0))
    width = min(PEAK_HOURS, 12 / peak_factor) * 3600  # rise + hold, in seconds
    base = (SECONDS_PER_DAY - peak_factor * width) / (SECONDS_PER_DAY - width)
    start = seconds_of_day(peak_at)
    rise, hold = round(width * 3 / 4), round(width / 4)
    raw = [(start - rise, base), (start, peak_factor), (start + hold, peak_factor), (start + hold + rise, base)]
    return tuple(sorted((t % SECONDS_PER_DAY, value) for t, value in raw))


def daily_curve(daily: dict[str, float]) -> tuple[tuple[int, float], ...]:
    """Declared relative rates at times of day, scaled so the day averages 1."""
    points = sorted((seconds_of_day(time), value) for time, value in daily.items())
    wrapped = [*points[1:], (points[0][0] + SECONDS_PER_DAY, points[0][1])]
    area = sum((v0 + v1) / 2 * (t1 - t0) for (t0, v0), (t1, v1) in zip(points, wrapped, strict=True))
    scale = SECONDS_PER_DAY / area
    return tuple((t, value * scale) for t, value in points)


def _surges(events: list[TrafficEvent], where: str) -> list[Surge]:
    return [Surge(e.name, e.start_second, e.seconds, e.every, e.rate, e.factor, f"{where}.events[{i}]")
            for i, e in enumerate(events)]


def _profile(blueprint: Blueprint, own: TrafficShape | None, where: str) -> Profile:
    traffic = blueprint.traffic
    curve_from = own if own is not None and (own.daily is not None or own.peak_factor is not None) else traffic
    peak_at = (own.peak_at if own is not None and own.peak_at else None) or traffic.peak_at or DEFAULT_PEAK_AT
    if curve_from.daily is not None:
        points, basis = daily_curve(curve_from.daily), "the declared daily curve"
    else:
        factor = curve_from.peak_factor or 1.0
        points, basis = peak_curve(factor, peak_at), f"peak factor {factor:g} at {peak_at} UTC"
    surges = _surges(traffic.events, "traffic") + (_surges(own.events, where) if own else [])
    return Profile(points, tuple(surges), basis)


def pattern_profile(blueprint: Blueprint, pattern: str) -> Profile:
    return _profile(blueprint, blueprint.access_patterns[pattern].traffic, f"access_patterns.{pattern}.traffic")


def entity_profile(blueprint: Blueprint, entity: str) -> Profile:
    return _profile(blueprint, blueprint.entities[entity].traffic, f"entities.{entity}.traffic")
