"""A day of declared traffic, second by second, against DynamoDB's throughput rules.

Every rule, with its source (AWS documentation):

- A partition, and so one partition-key value, serves at most 3,000 read units and 1,000 write units per
  second, or a linear combination (reads/3,000 + writes/1,000 <= 1); adaptive capacity isolates busy items
  on their own partitions but never lifts one above that. Burst and adaptive capacity do not change it.
  https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/bp-partition-key-design.html
  https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/burst-adaptive-capacity.html
- Burst capacity: a provisioned table keeps up to 300 seconds of unused capacity and spends it when traffic
  exceeds what is provisioned (same page). Modelled per table or GSI and direction.
- Target tracking (provisioned): Application Auto Scaling's alarms fire when consumed capacity is above the
  target for 2 consecutive one-minute datapoints (scale out to consumed / target), and below the target
  minus 20 points for 15 (scale in); a throttled request consumes nothing, so a saturated table scales by
  1 / target per step. Decreases are rationed: 4 a day, and one more for each hour without a decrease.
  https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/AutoScaling.html
  https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ServiceQuotas.html
- On demand: a new table serves 4,000 write and 12,000 read request units per second; a table serves up to
  twice its previous peak at once, and traffic past that within 30 minutes throttles; warm throughput is
  served at once; `max_throughput` caps it.
  https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/on-demand-capacity-mode.html
  https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/warm-throughput.html
- A GSI whose writes are throttled throttles the table writes that would update it.
  https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/GSI.html#GSI.ThroughputConsiderations
- Per-table quota: 40,000 read and 40,000 write units/s by default, the table and each GSI (`simulation.table_quota`).

Where AWS publishes no number the blueprint's `simulation` settings name the assumption: how soon new
provisioned capacity serves after its alarm, whether an on-demand table is new, the per-table quota.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from dataclasses import dataclass, field

import numpy as np

from tablewright.blueprint.language import SECONDS_PER_DAY, Simulation
from tablewright.blueprint.traffic import Profile
from tablewright.capacity.traffic import PARTITION_UNITS, Direction, Flow, TrafficModel
from tablewright.design.design import TABLE

MINUTES = SECONDS_PER_DAY // 60
BURST_SECONDS = 300
SCALE_OUT_MINUTES = 2  # consecutive one-minute datapoints above the target
SCALE_IN_MINUTES = 15  # consecutive datapoints below the target (minus `simulation.scale_in_margin`)
FREE_DECREASES = 4  # decreases available at 00:00 UTC and at most at any time; one more each hour
ON_DEMAND_NEW = {"read": 12_000, "write": 4_000}
ON_DEMAND_DOUBLING_SECONDS = 30 * 60
SECONDS = np.arange(SECONDS_PER_DAY, dtype=np.float64)
DIRECTIONS: tuple[Direction, Direction] = ("read", "write")
SHAPES_KEPT = 64
MAX_KEYS = 64  # hot keys a day follows one by one, the busiest (each an array of the day)


def event_window(start: int, seconds: int) -> list[slice]:
    """The seconds from `start` for `seconds`, as slices of the day (two when it runs past midnight)."""
    end = start + seconds
    if end <= SECONDS_PER_DAY:
        return [slice(start, end)]
    return [slice(start, SECONDS_PER_DAY), slice(0, end - SECONDS_PER_DAY)]


@dataclass(frozen=True)
class _Shape:
    """A profile over the day, apart from the average it scales: the curve times the events' factors, and the
    seconds an event's own rate replaces it."""

    scaled: np.ndarray  # multiplier of the average, each second
    fixed: np.ndarray | None  # seconds at an event's rate
    rate: np.ndarray | None  # that rate (requests per second)

    def series(self, average: float, weight: float = 1.0) -> np.ndarray:
        """Requests per second at `average`, times `weight`; with `weight` the sum of several flows' weights and
        `average` their weighted average's numerator over it, the sum of their series (the curve scales with the
        average, an event's rate does not)."""
        normal: np.ndarray = self.scaled * (average * weight)
        if self.fixed is None or self.rate is None:
            return normal
        combined: np.ndarray = np.where(self.fixed, self.rate * weight, normal)
        return combined


def _shape(profile: Profile) -> _Shape:
    points = profile.points
    xs = [points[-1][0] - SECONDS_PER_DAY, *(t for t, _ in points), points[0][0] + SECONDS_PER_DAY]
    vs = [points[-1][1], *(v for _, v in points), points[0][1]]
    scaled = np.interp(SECONDS, xs, vs)
    fixed = rate = None
    for surge in profile.surges:
        for part in event_window(surge.start, surge.seconds):
            if surge.rate is None:
                scaled[part] *= surge.factor or 1.0
                continue
            if fixed is None or rate is None:
                fixed, rate = np.zeros(SECONDS_PER_DAY, dtype=bool), np.zeros(SECONDS_PER_DAY)
            fixed[part] = True
            rate[part] = np.maximum(rate[part], surge.rate)
    return _Shape(scaled, fixed, rate)


def profile_series(profile: Profile, average: float) -> np.ndarray:
    """`profile.rate` at every second of the day, as an array."""
    return _shape(profile).series(average)


@dataclass(frozen=True)
class Capacity:
    """How one target serves one direction."""

    billing: str  # "provisioned" or "on_demand"
    bounds: tuple[int, int] = (1, 40_000)  # provisioned: autoscaling's min and max
    target: float = 0.7
    scale_in_cooldown: int = 0
    scale_out_cooldown: int = 0
    disable_scale_in: bool = False
    maximum: int | None = None  # on demand: `max_throughput`
    warm: int = 0  # warm throughput
    schedule: tuple[tuple[int, int, int, bool], ...] = ()  # provisioned: (first s, last s, minimum, runs daily)

    def minimums(self, minutes: int = MINUTES, first: int = 0) -> list[int]:
        """Autoscaling's minimum at each of `minutes` minutes from second `first` of the day (default: the day): the
        configured one, or a scheduled one while it lasts."""
        lows = np.full(minutes, self.bounds[0])
        moments = (first + 60 * np.arange(minutes)) % SECONDS_PER_DAY
        for start, end, low, _ in self.schedule:
            during = (moments - start) % SECONDS_PER_DAY <= (end - start) % SECONDS_PER_DAY
            lows = np.where(during, np.maximum(lows, low), lows)
        return [int(low) for low in lows]


@dataclass
class Run:
    """One target and direction through the day: per-second demand and service, per-minute capacity."""

    target: str
    direction: Direction
    demand: np.ndarray  # units per second asked for (before any limit or back-pressure)
    served: np.ndarray
    capacity: np.ndarray  # per minute: provisioned units, or what on demand serves at once
    flow_throttled: dict[int, float] = field(default_factory=dict)  # flow -> throttled units over the day
    key_throttled: dict[int, float] = field(default_factory=dict)  # hot key -> throttled units (this direction)
    key_seconds: dict[int, int] = field(default_factory=dict)  # hot key -> seconds it throttled
    backpressure: float = 0.0  # table writes throttled because a GSI was (units)
    over: np.ndarray | None = None  # units per second the table's or index's capacity throttles (keys aside)

    @property
    def over_capacity(self) -> float:
        return 0.0 if self.over is None else float(self.over.sum())

    @property
    def throttled(self) -> np.ndarray:
        difference: np.ndarray = self.demand - self.served
        return difference

    @property
    def throttled_units(self) -> float:
        return float(self.throttled.sum())

    @property
    def throttled_seconds(self) -> int:
        return int((self.throttled > 1e-9).sum())


def _burst_minute(asked: np.ndarray, units: float, bank: float) -> tuple[np.ndarray, float]:
    """One minute at `units` provisioned with `bank` units of burst capacity saved: what each second serves
    and the bank after. Unused capacity adds to the bank (up to BURST_SECONDS of it); demand above the
    capacity draws on it, and what the bank cannot cover is throttled."""
    most = BURST_SECONDS * units
    spare = units - asked
    if (spare >= 0).all():
        return asked, min(most, bank + float(spare.sum()))
    if (spare <= 0).all():  # saturated all minute: the bank only drains
        drawn = np.cumsum(-spare)
        throttled = np.diff(np.maximum(0.0, drawn - bank), prepend=0.0)
        served: np.ndarray = asked - throttled
        return served, max(0.0, bank - float(drawn[-1]))
    got = []
    for want in asked.tolist():
        one = min(want, units + bank)
        got.append(one)
        bank = min(most, bank + units - one)
    return np.array(got), bank


@dataclass
class _Decreases:
    """Provisioned capacity decreases left today: 4 at 00:00 UTC, one more each hour, never more than 4."""

    left: int = FREE_DECREASES
    hour: int = 0

    def take(self, second: int) -> bool:
        hour = second // 3600
        self.left, self.hour = min(FREE_DECREASES, self.left + hour - self.hour), hour
        if self.left == 0:
            return False
        self.left -= 1
        return True


def _quiet_minutes(minute: int, units: float, low: int, high: float, peak: np.ndarray, average: np.ndarray,
                   floors: np.ndarray, capacity: Capacity, low_share: float) -> int:
    """How many minutes from `minute` change nothing: every request served, no scaling possible (within the
    thresholds, or at the bound it would cross), the same minimum. The day is stepped minute by minute only
    where something can happen."""
    units_cap = units >= high
    cannot_in = units <= low or capacity.disable_scale_in
    still = ((peak[minute:] <= units) & ((average[minute:] <= capacity.target * units) | units_cap)
             & ((average[minute:] >= low_share * units) | cannot_in) & (floors[minute:] == low))
    if still.all():
        return len(still)
    return int(still.argmin())


def _trailing(flags: np.ndarray, before: int) -> int:
    """A consecutive-datapoints counter after `flags` (one per minute), from `before`."""
    if flags.all():
        return before + len(flags)
    return len(flags) - 1 - int(np.flatnonzero(~flags)[-1])


def _provisioned(demand: np.ndarray, capacity: Capacity, simulation: Simulation,
                 first: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Served units per second and the provisioned capacity per minute under target tracking and burst (`demand`:
    whole minutes from second `first` of the day; a day by default)."""
    high = min(capacity.bounds[1], simulation.table_quota)
    count = len(demand) // 60
    minutes = demand.reshape(count, 60)
    totals, busiest = minutes.sum(axis=1).tolist(), minutes.max(axis=1).tolist()
    quietest = minutes.min(axis=1).tolist()
    lows = [min(low, int(high)) for low in capacity.minimums(count, first)]  # no minimum lifts it over the quota
    units = float(min(high, max(lows[0], math.ceil(round(totals[0] / 60 / capacity.target, 6)))))
    if not capacity.schedule and units == lows[0] and max(busiest) <= units * capacity.target:
        return demand, np.full(MINUTES, units)  # never above the target, never below the minimum
    bank = BURST_SECONDS * units
    served = demand.copy()
    provisioned = np.empty(count)
    pending: tuple[int, float] | None = None  # (second it serves from, units)
    above = below = 0
    decreases = _Decreases()
    last_out = last_in = -10**9
    low_share = capacity.target - simulation.scale_in_margin
    average, peak, floors = np.array(totals) / 60, np.array(busiest), np.array(lows)
    minute = 0
    while minute < count:
        start = minute * 60
        if pending is not None and pending[0] <= start:
            units, pending = pending[1], None
            bank = min(bank, BURST_SECONDS * units)
        low = lows[minute]
        if units < low:  # a scheduled action raised the minimum: the capacity follows at once
            units, pending = float(low), None
        if (pending is None and bank >= BURST_SECONDS * units and busiest[minute] <= units
                and (totals[minute] <= capacity.target * units * 60 or units >= high)
                and (totals[minute] >= low_share * units * 60 or units <= low or capacity.disable_scale_in)):
            quiet = _quiet_minutes(minute, units, low, high, peak, average, floors, capacity, low_share)
            if quiet:
                stretch = average[minute:minute + quiet]
                above = _trailing(stretch > capacity.target * units, above)
                below = _trailing(stretch < low_share * units, below)
                provisioned[minute:minute + quiet] = units
                minute += quiet
                continue
        provisioned[minute] = units
        consumed = totals[minute] / 60
        if busiest[minute] <= units and bank >= BURST_SECONDS * units:
            pass  # under the capacity with a full bank: everything served, the bank stays full
        elif bank <= 0 and quietest[minute] >= units:
            served[start:start + 60] = units  # saturated with no burst left: the capacity, no more
            consumed = units
        else:
            got, bank = _burst_minute(minutes[minute], units, bank)
            served[start:start + 60] = got
            consumed = float(got.sum()) / 60
        above = above + 1 if consumed > capacity.target * units else 0
        below = below + 1 if consumed < low_share * units else 0
        now = start + 60
        minute += 1
        if pending is not None:
            continue
        wanted = float(min(high, max(low, math.ceil(round(consumed / capacity.target, 6)))))
        if above >= SCALE_OUT_MINUTES and wanted > units and now - last_out >= capacity.scale_out_cooldown:
            pending, last_out = (now + simulation.update_seconds, wanted), now
        elif (below >= SCALE_IN_MINUTES and wanted < units and not capacity.disable_scale_in
              and now - last_in >= capacity.scale_in_cooldown and decreases.take(now)):
            pending, last_in, below = (now + simulation.update_seconds, wanted), now, 0
    return served, provisioned


def _on_demand(demand: np.ndarray, capacity: Capacity, direction: Direction, simulation: Simulation,
               previous_peak: float) -> tuple[np.ndarray, np.ndarray]:
    """Served units per second and, per minute, what on demand serves at once: twice the peak it served at
    least 30 minutes before (the previous peak), never less than a new table's throughput (partitions are
    never taken away) or the warm throughput, at most `max_throughput` and the table quota."""
    count = len(demand) // 60
    most = demand.reshape(count, 60).max(axis=1)
    busiest = most.tolist()
    floor = max(capacity.warm, ON_DEMAND_NEW[direction])
    ceiling = min(capacity.maximum or math.inf, simulation.table_quota)
    lag = ON_DEMAND_DOUBLING_SECONDS // 60
    seen = 0.0 if simulation.history == "new" else previous_peak
    if max(busiest) <= min(ceiling, max(floor, 2 * seen)):  # never above what it serves at once
        lagged = np.maximum.accumulate(np.concatenate([np.full(lag, seen), np.maximum(most, seen)]))[:count]
        return demand, np.minimum(ceiling, np.maximum(floor, 2 * lagged))
    peaks = [0.0] * MINUTES  # the most served in a second, per minute
    allowed = np.empty(count)
    for minute in range(count):
        if minute >= lag:
            seen = max(seen, peaks[minute - lag])
        cap = min(ceiling, max(floor, 2 * seen))
        allowed[minute] = cap
        peaks[minute] = min(busiest[minute], cap)
    return np.minimum(demand, np.repeat(allowed, 60)), allowed


@dataclass
class Day:
    """The simulated day of one stack: one run per target and direction."""

    runs: list[Run]
    passed: dict[str, np.ndarray] = field(default_factory=dict)  # entity -> share of its writes its GSIs let through

    def run(self, target: str, direction: Direction) -> Run | None:
        return next((r for r in self.runs if r.target == target and r.direction == direction), None)


def serve(demand: np.ndarray, capacity: Capacity, direction: Direction, simulation: Simulation,
          previous_peak: float, first: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """What one target serves of `demand` (units per second, whole minutes from second `first` of the day), and
    its capacity per minute."""
    if capacity.billing == "provisioned":
        return _provisioned(demand, capacity, simulation, first)
    return _on_demand(demand, capacity, direction, simulation, previous_peak)


class Shapes:
    """Each profile met, over the day: computed once, the last SHAPES_KEPT kept (the flows of every pattern and
    entity that shares a profile share it), so memory stays bounded by them."""

    def __init__(self) -> None:
        self._kept: OrderedDict[Profile, _Shape] = OrderedDict()

    def _shape(self, profile: Profile) -> _Shape:
        shape = self._kept.get(profile)
        if shape is None:
            shape = self._kept[profile] = _shape(profile)
            if len(self._kept) > SHAPES_KEPT:
                self._kept.popitem(last=False)
        else:
            self._kept.move_to_end(profile)
        return shape

    def requests(self, flow: Flow) -> np.ndarray:
        """The flow's calls (or writes) per second."""
        return self._shape(flow.profile).series(flow.requests)

    def summed(self, terms: list[tuple[Flow, float]]) -> np.ndarray:
        """Units per second of the flows, each times its share, added up: one multiply-add per profile they
        share (a curve is linear in the average; an event's rate is the same for every flow of the profile)."""
        groups: dict[Profile, tuple[float, float]] = {}
        for flow, share in terms:
            weight = flow.per_request * share
            averaged, total = groups.get(flow.profile, (0.0, 0.0))
            groups[flow.profile] = (averaged + weight * flow.requests, total + weight)
        found = np.zeros(SECONDS_PER_DAY)
        for profile, (averaged, total) in groups.items():
            if total:
                found += self._shape(profile).series(averaged / total, total)
        return found

    def units(self, flow: Flow, passing: np.ndarray | None = None) -> np.ndarray:
        """The flow's units per second; `passing`: the share of each second's that gets through (back-pressure)."""
        units: np.ndarray = self.requests(flow) * flow.per_request
        return units if passing is None else units * passing


SHAPES = Shapes()  # shared by every day simulated in the process (a profile's shape does not change)


def followed_keys(model: TrafficModel) -> list[int]:
    """The hot keys simulated one by one: the busiest MAX_KEYS by peak (the others count as spread)."""
    peaks = [model.key_peak(key, "read") / PARTITION_UNITS["read"] + model.key_peak(key, "write")
             / PARTITION_UNITS["write"] for key in model.hot_keys]
    return sorted(sorted(range(len(peaks)), key=lambda k: -peaks[k])[:MAX_KEYS])


def _cut(used: np.ndarray) -> np.ndarray:
    """The share of a key's requests its partition turns away: above reads/3,000 + writes/1,000 = 1."""
    cut: np.ndarray = np.where(used > 1, 1 - 1 / np.maximum(used, 1), 0.0)
    return cut


def _hold_back(passed: dict[str, np.ndarray], entity: str, through: np.ndarray) -> None:
    """An entity's writes to a GSI let `through` this share each second: its table writes get no more."""
    passed[entity] = np.minimum(passed[entity], through) if entity in passed else through


def _key_cuts(model: TrafficModel, numbers: list[int],
              held: dict[int, np.ndarray]) -> tuple[dict[int, np.ndarray], dict[tuple[int, Direction], np.ndarray]]:
    """Of the hot keys `numbers`, those over a partition's limit: the share of their requests cut each second, and
    the units cut in each direction; `held`: table writes a GSI holds back, as many as get through."""
    cuts: dict[int, np.ndarray] = {}
    key_units: dict[tuple[int, Direction], np.ndarray] = {}
    for number in numbers:
        terms = model.hot_keys[number].terms
        load = {d: SHAPES.summed([(model.flows[i], share) for i, share in terms
                                  if model.flows[i].direction == d and i not in held]) for d in DIRECTIONS}
        for i, share in terms:
            if i in held:
                load[model.flows[i].direction] += SHAPES.units(model.flows[i], held[i]) * share
        cut = _cut(load["read"] / PARTITION_UNITS["read"] + load["write"] / PARTITION_UNITS["write"])
        if cut.any():
            cuts[number] = cut
            for direction in DIRECTIONS:
                key_units[number, direction] = load[direction] * cut
    return cuts, key_units


def simulate_day(model: TrafficModel, capacities: dict[tuple[str, Direction], Capacity], simulation: Simulation,
                 previous_peaks: dict[tuple[str, Direction], float] | None = None, base: Day | None = None,
                 only: set[tuple[str, Direction]] | None = None) -> Day:
    """Every target through the day: the GSIs first, so that their write throttling holds back the table's
    writes of the same entities (one pass: table throttles are not fed back into the GSIs). With `base` and
    `only`, just those targets and directions are simulated again; the others are `base`'s (a fix being tried).

    Work and memory are bounded: one array per (profile, rate) met (the last SHAPES_KEPT), one per followed hot
    key and one per entity written to a GSI; flows are summed into them and never kept one by one."""
    followed = followed_keys(model)
    runs: list[Run] = []
    passed: dict[str, np.ndarray] = dict(base.passed) if base is not None else {}
    kept = {(run.target, run.direction): run for run in base.runs} if base is not None else {}
    for target in [t for t in model.targets if t != TABLE] + [TABLE]:
        if only is not None and all((target, d) not in only for d in DIRECTIONS):
            runs += [kept[target, d] for d in DIRECTIONS]
            continue
        mine = [i for i, flow in enumerate(model.flows) if flow.target == target]
        held = {i: passed[model.flows[i].entity] for i in mine
                if target == TABLE and model.flows[i].direction == "write" and model.flows[i].entity in passed}
        cuts, key_units = _key_cuts(model, [n for n in followed if model.hot_keys[n].target == target], held)
        in_keys: dict[int, list[tuple[int, float]]] = {}
        for number in cuts:
            for i, share in model.hot_keys[number].terms:
                in_keys.setdefault(i, []).append((number, share))
        for direction in DIRECTIONS:
            if only is not None and (target, direction) not in only:
                runs.append(kept[target, direction])
                continue
            flows = [i for i in mine if model.flows[i].direction == direction]
            asked = SHAPES.summed([(model.flows[i], 1.0) for i in flows])
            after_keys = asked
            for i in held:
                if i in flows:
                    after_keys = after_keys - SHAPES.units(model.flows[i]) * (1 - held[i])
            for (_, key_direction), throttled in key_units.items():
                if key_direction == direction:
                    after_keys = after_keys - throttled
            peak = (previous_peaks or {}).get((target, direction), float(np.max(after_keys)))
            served, capacity = serve(after_keys, capacities[target, direction], direction, simulation, peak)
            over = None if served is after_keys else after_keys - served
            if over is not None and not (over > 1e-9).any():
                over = None
            ratio = None if over is None else np.divide(served, after_keys, out=np.ones_like(served),
                                                        where=after_keys > 0)
            run = Run(target, direction, asked, served, capacity, over=over)
            for i in flows:
                flow = model.flows[i]
                if i not in held and i not in in_keys:
                    if ratio is not None:
                        run.flow_throttled[i] = flow.per_request * float(np.dot(SHAPES.requests(flow), 1 - ratio))
                        if direction == "write" and target != TABLE:
                            _hold_back(passed, flow.entity, ratio)
                    else:
                        run.flow_throttled[i] = 0.0
                    continue
                kept_share: np.ndarray = np.ones(SECONDS_PER_DAY) if ratio is None else ratio.copy()
                for number, share in in_keys.get(i, ()):
                    kept_share = kept_share - cuts[number] * share * (1.0 if ratio is None else ratio)
                original = SHAPES.units(flow)
                if i in held:
                    run.backpressure += float((original * (1 - held[i])).sum())
                run.flow_throttled[i] = float((original - SHAPES.units(flow, held.get(i)) * kept_share).sum())
                if direction == "write" and target != TABLE:
                    _hold_back(passed, flow.entity, kept_share)
            for (number, key_direction), throttled in key_units.items():
                if key_direction == direction:
                    run.key_throttled[number] = float(throttled.sum())
                    run.key_seconds[number] = int((throttled > 1e-9).sum())
            runs.append(run)
    return Day(runs, passed)


def key_throttle(terms: list[tuple[Flow, float]]) -> tuple[float, int]:
    """(units throttled, seconds with a throttle) over the day on one key value that receives `share` of each
    flow's units: the partition limit alone (the table's or index's capacity aside)."""
    shapes = SHAPES
    load = {d: shapes.summed([(flow, share) for flow, share in terms if flow.direction == d]) for d in DIRECTIONS}
    cut = _cut(load["read"] / PARTITION_UNITS["read"] + load["write"] / PARTITION_UNITS["write"])
    return float(np.dot(load["read"] + load["write"], cut)), int((cut > 1e-9).sum())
