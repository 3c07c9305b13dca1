"""The declared rates and peak factor that would declare what was observed, found at once so that declaring them
and calibrating again on the same metrics reports every table and GSI as declared.

Rates: one scale per source (a pattern's reads, an entity's writes), fitted to every table and GSI measured in a
direction together. A target's observed units are the sum of its sources' declared units times their scales; each
GSI holds only some entities (and serves only some patterns), so the targets tell the sources apart: an entity
written 3 times as often as declared and alone on a GSI is found from the GSI, and the table's remainder is the
others'. What the targets cannot tell apart (the changes in the null space of their rows), the keys Contributor
Insights counted may: each entity's share of a target's throughput units (`attribution.py`, 3 per write unit and
1 per read unit, reads and writes together), taken as proportions among the entities whose units the targets
leave free, fitted within that null space (so an entity a GSI measures keeps what the GSI says). What neither
tells apart is shared by the sources' declared units (the same scale for each: the least-squares solution of
smallest norm, each source's column weighted by the square root of its declared units). A scale below 0 (noisy
metrics) is taken as 0.

Peak factor: the busiest minute of a target is the maximum over the day of its flows added up, each on its own
curve: flows with a curve of their own (`traffic:` of a pattern or entity) and events at a fixed `rate` do not move
with the blueprint's `traffic.peak_factor`, so scaling the factor by observed / declared busiest undershoots
whenever they make part of the busiest minute (calibrating again asked for more). The factor is instead the
lowest one whose busiest minute, with the fitted rates, reaches the observed one (bisection: the busiest minute
grows with the factor once the peak's hump holds it), the highest such factor of any target measured.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace

import numpy as np

from tablewright.blueprint.language import Blueprint
from tablewright.blueprint.traffic import Profile, entity_profile, pattern_profile
from tablewright.calibrate.attribution import WRITE_WEIGHT
from tablewright.calibrate.metrics import Direction
from tablewright.capacity.traffic import Flow
from tablewright.simulate.engine import MINUTES, profile_series

Source = tuple[Direction, str]  # ("read", pattern) or ("write", entity)
Target = tuple[str, Direction]  # ("table" or a GSI, direction)
MAX_PEAK_FACTOR = 100.0  # `traffic.peak_factor`'s bound (blueprint/language/traffic.py)
STEPS = 50  # bisection steps: the factor to within 100 / 2**50
ROUNDS = 20  # with shares: at most this many turns of writes then reads
SETTLED = 1e-9  # a scale that moves less than this in a turn has settled
FREE = 1e-9  # an entity whose units move less than this (relative) with what no target sees is measured


def source_of(flow: Flow) -> Source:
    """Whose rate a flow follows: a pattern's reads, an entity's writes; the reads a client makes before it writes
    (`before_write`) follow the entity's writes."""
    return ("write", flow.source) if flow.before_write else (flow.direction, flow.source)


def fit_scales(flows: Iterable[Flow], observed: dict[Target, float], directions: Iterable[Direction],
               fixed: Callable[[Source], bool] = lambda _: False,
               shares: Mapping[str, Mapping[str, float]] | None = None) -> dict[Source, float]:
    """Each source's scale (1: as declared) in `directions`, from the observed average units of the targets
    measured (`observed`) and each entity's share of a target's throughput units (`shares`: target -> entity ->
    share, from Contributor Insights, `attribution.py`). Writes first: the reads made before writes follow them.
    A share counts reads and writes together, so with shares the directions are fitted in turn until the scales
    settle. A `fixed` source (no rate to write: a job's schedule), and a source of the other direction, keeps
    the units it has."""
    found: dict[Source, float] = {}
    every = list(flows)
    for _ in range(ROUNDS if shares else 1):
        before = dict(found)
        for direction in sorted(directions, reverse=True):
            found.update(_fit_direction(every, observed, direction, fixed, shares or {}, found))
        if found.keys() == before.keys() and all(abs(found[s] - before[s]) < SETTLED for s in found):
            break
    return found


def _fit_direction(every: list[Flow], observed: dict[Target, float], direction: Direction,
                   fixed: Callable[[Source], bool], shares: Mapping[str, Mapping[str, float]],
                   found: dict[Source, float]) -> dict[Source, float]:
    """The scales of the sources of one direction, the other direction's at `found` (else as declared)."""
    targets = sorted(target for target, way in observed if way == direction)
    on = [f for f in every if f.direction == direction and f.target in targets and f.units > 0]
    mine = [f for f in on if source_of(f)[0] == direction and not fixed(source_of(f))]
    sources = sorted({flow.source for flow in mine})
    if not sources:
        return {}
    declared = np.zeros((len(targets), len(sources)))
    row, column = {t: n for n, t in enumerate(targets)}, {s: n for n, s in enumerate(sources)}
    for flow in mine:
        declared[row[flow.target], column[flow.source]] += flow.units
    fitted = {id(flow) for flow in mine}
    kept = [sum(f.units * found.get(source_of(f), 1.0) for f in on if f.target == target and id(f) not in fitted)
            for target in targets]
    missing = np.array([observed[target, direction] for target in targets]) - declared.sum(axis=1) - np.array(kept)
    weight = np.sqrt(declared.sum(axis=0))  # each source's column: the smallest change is shared by declared units
    by_target = declared / weight
    change = np.linalg.lstsq(by_target, missing, rcond=None)[0]
    free = _null_space(by_target)
    if free.shape[1]:  # what the targets cannot tell apart, the entities' shares may
        by_share, wanted = _share_rows(every, direction, shares, column, found, free, weight)
        if len(wanted):
            change = change + free @ np.linalg.lstsq(by_share @ free, wanted - by_share @ change, rcond=None)[0]
    return {(direction, source): max(0.0, 1.0 + float(d / w)) for source, d, w in zip(sources, change, weight,
                                                                                       strict=True)}


def _null_space(matrix: np.ndarray) -> np.ndarray:
    """An orthonormal basis (columns) of the changes the matrix does not see."""
    _, singular, rows = np.linalg.svd(matrix)
    rank = int((singular > singular.max(initial=0.0) * max(matrix.shape) * np.finfo(float).eps).sum())
    return np.asarray(rows[rank:].T)


def _entity_units(flows: list[Flow], direction: Direction, column: dict[str, int],
                  found: dict[Source, float]) -> tuple[np.ndarray, float]:
    """The throughput units (3 per write unit, 1 per read unit) of an entity's flows on a target: per source being
    fitted (at scale 1), and the rest at the scales found (else as declared)."""
    units = np.zeros(len(column))
    other = 0.0
    for flow in flows:
        source = source_of(flow)
        if source[0] == direction and source[1] in column:
            units[column[source[1]]] += WRITE_WEIGHT[flow.direction] * flow.units
        else:
            other += WRITE_WEIGHT[flow.direction] * flow.units * found.get(source, 1.0)
    return units, other


def _share_rows(every: list[Flow], direction: Direction, shares: Mapping[str, Mapping[str, float]],
                column: dict[str, int], found: dict[Source, float], free: np.ndarray,
                weight: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per target with shares, one row per entity whose units the targets leave free (some of its sources' change
    lies in `free`): its throughput units are its share of those entities' units (shares taken as proportions
    among them: an entity a GSI measures keeps what the GSI says, whatever its keys' share). Returns the rows (in
    the weighted changes) and what each misses at scale 1."""
    rows: list[np.ndarray] = []
    wanted: list[float] = []
    for target, of_target in sorted(shares.items()):
        on = [f for f in every if f.target == target]
        units = {entity: _entity_units([f for f in on if f.entity == entity], direction, column, found)
                 for entity in sorted(of_target)}
        loose = [e for e, (u, _) in units.items() if np.linalg.norm((u / weight) @ free) > FREE * np.linalg.norm(u)]
        total = sum(of_target[entity] for entity in loose)
        if len(loose) < 2 or total <= 0:
            continue
        together = sum(units[entity][0] for entity in loose)
        rest = sum(units[entity][1] for entity in loose)
        for entity in loose:
            proportion = of_target[entity] / total
            row = units[entity][0] - proportion * together
            rows.append(row / weight)
            wanted.append(-(row.sum() + units[entity][1] - proportion * rest))
    return np.array(rows).reshape(len(rows), len(column)), np.array(wanted)


def scaled(flows: Iterable[Flow], scales: dict[Source, float]) -> list[Flow]:
    return [replace(flow, requests=flow.requests * scales.get(source_of(flow), 1.0)) for flow in flows]


def busiest_minute(flows: Iterable[tuple[Flow, Profile]]) -> float:
    """The busiest minute's units per second of the flows, each on the given profile (the flows of one profile
    added first: its curve scales with their units, an event's fixed rate with their units per request)."""
    groups: dict[Profile, tuple[float, float]] = {}
    for flow, profile in flows:
        units, weight = groups.get(profile, (0.0, 0.0))
        groups[profile] = (units + flow.units, weight + flow.per_request)
    total = np.zeros(MINUTES * 60)
    for profile, (units, weight) in groups.items():
        if weight:
            total += profile_series(profile, units / weight) * weight
    return float(total.reshape(MINUTES, 60).mean(axis=1).max())


def _profile(blueprint: Blueprint, flow: Flow) -> Profile:
    return (pattern_profile if source_of(flow)[0] == "read" else entity_profile)(blueprint, flow.source)


def fitted_peak_factor(blueprint: Blueprint, flows: list[Flow], observed: float) -> float | None:
    """The lowest peak factor (at least the declared one) at which the flows' busiest minute reaches `observed`;
    None when no factor up to the language's bound does (their curves are their own, or a daily curve). A flow
    whose profile is not the one the blueprint's traffic gives it (a curve of its own, a job's) keeps it."""
    declared = blueprint.traffic.peak_factor
    if declared is None or blueprint.traffic.daily is not None:
        return None
    moving = [_profile(blueprint, flow) == flow.profile for flow in flows]

    def busiest(factor: float) -> float:
        at = blueprint.model_copy(update={"traffic": blueprint.traffic.model_copy(update={"peak_factor": factor})})
        rebuilt: dict[Profile, Profile] = {}  # flows of one profile get one profile at `factor`
        for flow, moves in zip(flows, moving, strict=True):
            if moves and flow.profile not in rebuilt:
                rebuilt[flow.profile] = _profile(at, flow)
        return busiest_minute((flow, rebuilt.get(flow.profile, flow.profile)) for flow in flows)

    if busiest(declared) >= observed:
        return declared
    low, high = declared, MAX_PEAK_FACTOR
    if busiest(high) < observed:
        return None
    for _ in range(STEPS):
        middle = (low + high) / 2
        low, high = (middle, high) if busiest(middle) < observed else (low, middle)
    return high
