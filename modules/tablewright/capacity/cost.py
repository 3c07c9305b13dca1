"""The monthly cost of a stack, from the blueprint's rates and sizes and the prices of its region.

Lines: throughput (provisioned at the suggested autoscaling minimums kept within the configured autoscaling
bounds, or on-demand requests; the other mode is shown for comparison, outside the total), the scheduled minimums
(by capacity/schedule.py's rule, the one lint and `simulate` price them by), storage at the
table class's price (entities without `item_count` named, not counted), point-in-time recovery, Contributor
Insights (rules and events), the CloudWatch alarms (per metric they read) and, when the stack creates one,
the CloudTrail trail. Every line names its region. A blueprint without a region, a region the prices lack,
or an item the region's prices lack is not priced, and the report says so: nothing is ever priced with
another region's figures.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from tablewright.blueprint.prices import ClassPrices, RegionPrices, Sourced
from tablewright.blueprint.provider import insights_mode
from tablewright.blueprint.traffic import HOURS_PER_MONTH, SECONDS_PER_MONTH
from tablewright.capacity.estimate import STORAGE_OVERHEAD_BYTES, ReadCost, entry_bytes, presence
from tablewright.capacity.loads import CapacityReport
from tablewright.capacity.prices import Prices
from tablewright.capacity.schedule import scheduled_raises
from tablewright.design.design import TABLE, TableDesign
from tablewright.monitoring.alarms import alarm_specs

GIB = 2**30
MILLION = 1_000_000
INSIGHTS_RULES_PER_KEY = 2  # one rule for the most accessed keys, one for the most throttled (per key part)


@dataclass(frozen=True)
class CostLine:
    item: str
    quantity: float
    unit: str
    price: float | None  # USD per unit in `region`; None: not priced (the note says why)
    region: str | None
    billed: bool = True  # False: a comparison or a ceiling, not part of the total
    note: str = ""

    @property
    def monthly(self) -> float | None:
        return None if self.price is None else round(self.quantity * self.price, 2)


@dataclass(frozen=True)
class PriceDates:
    effective: str  # when the prices took effect
    checked: str  # when they were last checked against their sources
    file: str  # where they come from


@dataclass(frozen=True)
class CostReport:
    region: str | None
    billing: str
    table_class: str
    dates: PriceDates | None  # None: nothing priced (no region, or no prices for it)
    lines: tuple[CostLine, ...]
    notes: tuple[str, ...]
    ceiling: float | None  # on demand with a maximum everywhere: the most throughput can cost a month
    # The quantities behind the lines, for an Infracost usage file: the capacity autoscaling keeps per target and
    # direction, the bytes stored (table and indexes; the table alone, which PITR backs up) and the entities
    # those bytes leave out (no `item_count`).
    provisioned: tuple[ProvisionedUnits, ...]
    stored_bytes: int
    table_bytes: int
    uncounted: tuple[str, ...]

    @property
    def billed(self) -> tuple[CostLine, ...]:
        return tuple(line for line in self.lines if line.billed)

    @property
    def total(self) -> float:
        """The priced lines of the bill (see `unpriced` for the others)."""
        return round(sum(line.monthly or 0.0 for line in self.billed), 2)

    @property
    def unpriced(self) -> tuple[str, ...]:
        return tuple(line.item for line in self.billed if line.price is None)

    def line(self, item: str) -> CostLine:
        return next(line for line in self.lines if line.item == item)

    def amount(self, item: str) -> float | None:
        """The monthly figure of a line, None when it is not priced or not there."""
        found = [line for line in self.lines if line.item == item]
        return found[0].monthly if found else None


def _caveat(group: Sourced | None) -> str:
    """Unconfirmed figures say so, with the gist of their source (the price file has all of it)."""
    if group is None or group.confirmed:
        return ""
    return f"unconfirmed figure ({group.source.split(';')[0].split(' (')[0]})"


def stored_bytes(design: TableDesign, *, table_only: bool = False) -> int:
    """Bytes of items and index entries (100 bytes of overhead each); `table_only`: the items and their local
    index entries, what point-in-time recovery backs up."""
    total = 0
    for name, spec in design.blueprint.entities.items():
        for index in design.shapes[name]:
            if table_only and not (index == TABLE or design.index_is_local(index)):
                continue
            share = presence(design, name, index) if index != TABLE else 1.0  # a sparse index holds fewer
            total += round((spec.item_count or 0) * share) * (entry_bytes(design, name, index) + STORAGE_OVERHEAD_BYTES)
    return total


def _keys(design: TableDesign, target: str) -> int:
    """Contributor Insights events per item on a target: two when it has a sort key, else one."""
    return 2 if target == TABLE or design.index(target).keys.sk else 1


def _read_events(design: TableDesign, read: ReadCost) -> float:
    """Contributor Insights events per call of one pattern (accessed and throttled keys mode): one per Query,
    one or two per item read otherwise; a follow-up BatchGetItem's items count on the table."""
    plan = design.plan(read.pattern)
    target = TABLE if read.index == TABLE or design.index_is_local(read.index) else read.index
    if plan.operation == "Query":
        events = sum(request.count for request in read.requests if request.operation == "Query")
    else:
        events = float(read.items_per_call * _keys(design, target))
    if plan.follow_up:
        events += read.fetched_items * _keys(design, TABLE)
    return events


def insights_events_per_second(design: TableDesign, capacity: CapacityReport) -> float:
    """Events a second in accessed and throttled keys mode: the reads', and one per key part for every item
    written to the table or a GSI; on a sparse GSI only the share of writes whose item carries its key."""
    reads = sum(_read_events(design, read) * read.rps for read in capacity.reads)
    writes = sum(kind.rate * _keys(design, index) * (1.0 if index == TABLE else presence(design, write.entity, index))
                 for write in capacity.writes for kind in write.kinds for index, units in kind.units.items()
                 if units > 0 and (index == TABLE or not design.index_is_local(index)))
    # the item a client reads before it writes (capacity/requests.py): one GetItem's events
    before = sum(kind.rate * request.count * _keys(design, TABLE) for write in capacity.writes for kind in write.kinds
                 for request in kind.requests if request.operation == "GetItem")
    return reads + writes + before


def insights_rules(design: TableDesign) -> int:
    return sum(INSIGHTS_RULES_PER_KEY * _keys(design, target)
               for target in [TABLE, *(index.name for index in design.global_indexes)])


@dataclass(frozen=True)
class _Pricer:
    """The prices of one region: a figure and its caveat, or None and why."""

    region: str | None
    book: RegionPrices | None
    file: str

    def __call__(self, group: Sourced | None, figure: str) -> tuple[float | None, str]:
        if group is None:
            return None, "" if self.book is None else f"no price in {self.file} for {self.region}"
        return float(getattr(group, figure)), _caveat(group)

    def line(self, item: str, quantity: float, unit: str, group: Sourced | None, figure: str, *,
             billed: bool = True, note: str = "") -> CostLine:
        price, caveat = self(group, figure)
        return CostLine(item, quantity, unit, price, self.region, billed, "; ".join(filter(None, [note, caveat])))


def _notes(region: str | None, table_class: str, prices: Prices) -> list[str]:
    if region is None:
        return ["no `region` in the blueprint: nothing is priced (set `region:` to the stack's region)"]
    if prices.region(region) is None:
        return [f"no prices for {region} in {prices.file}: nothing is priced (add the region to a price file: "
                "`pricing.file`)"]
    if prices.table_class(region, table_class) is None:
        return [f"no {table_class} prices for {region} in {prices.file}: throughput and storage are not priced"]
    return []


@dataclass(frozen=True)
class ProvisionedUnits:
    """The capacity one table or GSI is provisioned at in one direction, as priced: the suggested minimum
    (the average load at the target utilization), kept within the configured autoscaling [min, max]."""

    index: str
    direction: Literal["read", "write"]
    units: int
    suggested: int
    bound: Literal["", "minimum", "maximum"] = ""  # the configured bound that decides `units`, if one does


def bound_note(priced: list[ProvisionedUnits], direction: str) -> str:
    """Which configured bounds decide the priced capacity of a direction, with what the load alone needs."""
    notes = []
    for bound, words, after in (("minimum", "a configured minimum decides", ""),
                                ("maximum", "capped at a configured maximum", "; expect throttling")):
        decided = [p for p in priced if p.direction == direction and p.bound == bound]
        if decided:
            figures = ", ".join(f"{p.index} {p.units:,} (the load needs {p.suggested:,})" for p in decided)
            notes.append(f"{words}: {figures}{after}")
    return "; ".join(notes)


def provisioned_units(design: TableDesign, capacity: CapacityReport) -> list[ProvisionedUnits]:
    """Per table and GSI and direction, the capacity autoscaling keeps: the suggested minimum clamped to the
    configured [min, max] of a provisioned table (on demand, for comparison: the suggested minimum)."""
    found = []
    for load in capacity.loads:
        policy = design.capacity[load.index]
        directions: tuple[tuple[Literal["read", "write"], int], ...] = (
            ("read", load.suggested_read[0]), ("write", load.suggested_write[0]))
        for direction, suggested in directions:
            bounds = policy.bounds(direction) if policy.billing == "provisioned" else None
            if bounds is None or bounds[0] <= suggested <= bounds[1]:
                found.append(ProvisionedUnits(load.index, direction, suggested, suggested))
            elif suggested < bounds[0]:
                found.append(ProvisionedUnits(load.index, direction, bounds[0], suggested, "minimum"))
            else:
                found.append(ProvisionedUnits(load.index, direction, bounds[1], suggested, "maximum"))
    return found


def _throughput_lines(design: TableDesign, capacity: CapacityReport, provisioned: list[ProvisionedUnits],
                      price: _Pricer, throughput: ClassPrices | None) -> list[CostLine]:
    """Both billing modes' throughput; the other mode's lines are a comparison, outside the total."""
    billing, loads = design.blueprint.table.billing, capacity.loads
    rcu: float = sum(p.units for p in provisioned if p.direction == "read") * HOURS_PER_MONTH
    wcu: float = sum(p.units for p in provisioned if p.direction == "write") * HOURS_PER_MONTH
    # Events: their extra units at the target utilization, for as long as they last (the scale-in after them,
    # which `simulate` follows minute by minute, is not counted here).
    rcu += sum((load.month_read - load.read_units_per_second) / (design.capacity[load.index].scaling("read").target
                                                                   / 100) for load in loads) * HOURS_PER_MONTH
    wcu += sum((load.month_write - load.write_units_per_second) / (
        design.capacity[load.index].scaling("write").target / 100) for load in loads) * HOURS_PER_MONTH
    bases = {direction: bound_note(provisioned, direction) for direction in ("read", "write")}
    reads = sum(load.month_read for load in loads)
    writes = sum(load.month_write for load in loads)
    rows = (("provisioned read capacity", rcu, "RCU-hours", "provisioned_rcu_hour", "provisioned",
             bases["read"]),
            ("provisioned write capacity", wcu, "WCU-hours", "provisioned_wcu_hour", "provisioned",
             bases["write"]),
            ("on-demand read requests", reads * SECONDS_PER_MONTH, "read request units",
             "on_demand_read_request_unit", "on_demand", ""),
            ("on-demand write requests", writes * SECONDS_PER_MONTH, "write request units",
             "on_demand_write_request_unit", "on_demand", ""))
    return [price.line(item, quantity, unit, throughput, figure, billed=mode == billing,
                       note=basis if mode == billing else
                       f"if the table were {mode.replace('_', '-')}: not in the total")
            for item, quantity, unit, figure, mode, basis in rows]


def _scheduled_lines(design: TableDesign, price: _Pricer, throughput: ClassPrices | None) -> list[CostLine]:
    """The scheduled minimums, per direction, priced by capacity/schedule.py's rule (lint and `simulate` too)."""
    raises = scheduled_raises(design)
    lines = []
    for direction, unit, figure in (("read", "RCU-hours", "provisioned_rcu_hour"),
                                    ("write", "WCU-hours", "provisioned_wcu_hour")):
        mine = [r for r in raises if r.direction == direction]
        if mine:
            lines.append(price.line(f"scheduled {direction} minimums", sum(r.unit_hours for r in mine), unit,
                                    throughput, figure, note="at most: the units above the configured minimum for "
                                    "each window, as often as it runs"))
    return lines


def uncounted(design: TableDesign) -> tuple[str, ...]:
    """Entities without `item_count`: their items are in no storage figure."""
    return tuple(sorted(name for name, spec in design.blueprint.entities.items() if spec.item_count is None))


def uncounted_text(design: TableDesign) -> str:
    """Which entities storage leaves out, or "" when every entity is counted."""
    names = uncounted(design)
    if not names:
        return ""
    return f"{', '.join(names)} declare{'s' if len(names) == 1 else ''} no item_count (not counted, not priced)"


def _storage_lines(design: TableDesign, stored: int, backed_up: int, price: _Pricer,
                   throughput: ClassPrices | None) -> list[CostLine]:
    table = design.blueprint.table
    missing = uncounted_text(design)
    lines = [price.line(f"storage ({table.table_class})", stored / GIB, "GB-months", throughput,
                        "storage_gb_month", note="; ".join(filter(None, ["free tier not deducted", missing])))]
    if table.point_in_time_recovery:
        lines.append(price.line("point-in-time recovery", backed_up / GIB, "GB-months",
                                price.book.pitr if price.book else None, "gb_month", note=missing))
    return lines


def _storage_notes(design: TableDesign) -> list[str]:
    missing = uncounted_text(design)
    if not missing:
        return []
    what = "storage and point-in-time recovery" if design.blueprint.table.point_in_time_recovery else "storage"
    return [f"{what}: {missing}; declare `item_count` on every entity to price them"]


def _monitoring_lines(design: TableDesign, capacity: CapacityReport, price: _Pricer) -> list[CostLine]:
    """Contributor Insights, the alarms and the trail the change rule may create."""
    blueprint, book = design.blueprint, price.book
    lines = []
    mode = insights_mode(blueprint)
    if mode != "off":
        insights = book.contributor_insights if book else None
        lines.append(price.line("Contributor Insights rules", insights_rules(design), "rules", insights, "rule_month"))
        if mode == "accessed_and_throttled_keys":
            events = insights_events_per_second(design, capacity) * SECONDS_PER_MONTH / MILLION
            lines.append(price.line("Contributor Insights events", events, "million events", insights,
                                    "million_events"))
        else:
            lines.append(price.line("Contributor Insights events", 0.0, "million events", insights, "million_events",
                                    note="throttled keys mode: only throttled requests are events, none estimated"))
    if blueprint.alarms.enabled:
        metrics = sum(spec.metric_count for spec in alarm_specs(design, "table"))
        lines.append(price.line("CloudWatch alarms", metrics, "alarm metrics", book.alarms if book else None,
                                "metric_month"))
        if blueprint.change_rules.trail == "create":
            lines.append(CostLine("CloudTrail trail", 1, "trail", None, price.region, note=(
                "free if it is the first trail logging management events in this region; otherwise CloudTrail "
                "charges per management event it records, and the S3 storage of its logs is not counted")))
    return lines


def monthly_cost(design: TableDesign, capacity: CapacityReport) -> CostReport:
    """Every line of the month's bill in the blueprint's region, priced with the estimate's prices."""
    blueprint = design.blueprint
    region, table_class, prices = blueprint.region, blueprint.table.table_class, capacity.prices
    book = prices.region(region)
    throughput = prices.table_class(region, table_class)
    price = _Pricer(region, book, prices.file)
    provisioned = provisioned_units(design, capacity)
    stored, backed_up = stored_bytes(design), stored_bytes(design, table_only=True)
    lines = (_throughput_lines(design, capacity, provisioned, price, throughput)
             + _scheduled_lines(design, price, throughput)
             + _storage_lines(design, stored, backed_up, price, throughput)
             + _monitoring_lines(design, capacity, price))
    ceiling = _ceiling(design, capacity, throughput)
    dates = PriceDates(book.effective, book.checked, prices.file) if book else None
    return CostReport(region, blueprint.table.billing, table_class, dates, tuple(lines),
                      tuple(_notes(region, table_class, prices) + _storage_notes(design)), ceiling,
                      tuple(provisioned), stored, backed_up, uncounted(design))


def _ceiling(design: TableDesign, capacity: CapacityReport, throughput: ClassPrices | None) -> float | None:
    """The most on-demand throughput can cost in a month while every target (table and GSIs) has a maximum:
    every maximum reached all month. None when one is unbounded (or nothing is priced)."""
    if design.blueprint.table.billing != "on_demand" or throughput is None:
        return None
    read_price, write_price = throughput.on_demand_read_request_unit, throughput.on_demand_write_request_unit
    maxima = capacity.on_demand_maxima
    targets = [TABLE, *(index.name for index in design.global_indexes)]
    if not all(target in maxima and min(maxima[target]) > 0 for target in targets):
        return None
    return round(SECONDS_PER_MONTH * sum(maxima[t][0] * read_price + maxima[t][1] * write_price for t in targets), 2)


def insights_share(design: TableDesign, capacity: CapacityReport) -> tuple[float, float]:
    """The month's billed Contributor Insights and throughput (scheduled minimums included), in USD, as
    `monthly_cost` prints their lines (unpriced ones count 0): what lint's TW330 weighs against each other."""
    region, prices = design.blueprint.region, capacity.prices
    price = _Pricer(region, prices.region(region), prices.file)
    throughput = prices.table_class(region, design.blueprint.table.table_class)
    paid = (_throughput_lines(design, capacity, provisioned_units(design, capacity), price, throughput)
            + _scheduled_lines(design, price, throughput))
    insights = [line for line in _monitoring_lines(design, capacity, price) if line.item.startswith("Contributor")]
    return (sum(line.monthly or 0.0 for line in insights if line.billed),
            sum(line.monthly or 0.0 for line in paid if line.billed))
