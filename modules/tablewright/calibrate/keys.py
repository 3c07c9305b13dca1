"""Contributor Insights' busiest and throttled keys, traced back to their key templates and entities, against
the shares the blueprint declares.

A key value matches a partition-key template when it has as many `#`-separated segments, the same literal ones,
digits where the shard number goes and a declared value where an enum is (`attribution.py`). The declared share of
the table's or index's accesses that the template's busiest value takes is its share of the template's traffic
(declared, or judged at its worst, as lint does) times the template's share of the target's throughput units (an
accessed-keys rule counts reads and writes together, a write unit 3 times: `attribution.py`). A busiest value
observed above it, beyond the tolerance, asks for the `hot_key_share` that would declare it: the observed share
over the template's share of the target, that share taken with the rates calibrate asks for at the same time
(declared as they are, the share would be off again).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from tablewright.blueprint.templates import SEPARATOR, KeyTemplate
from tablewright.blueprint.traits import hottest_share
from tablewright.calibrate.attribution import matches, members, throughput_units
from tablewright.calibrate.compare import Change, Comparison, stack_scales
from tablewright.calibrate.fit import scaled
from tablewright.calibrate.insights import RuleReport
from tablewright.capacity.traffic import Flow
from tablewright.stacks.stack import Stack

MIN_SHARE = 0.01  # a value under 1% of a table's or index's accesses is not a hot key, whatever is declared


@dataclass(frozen=True)
class KeyObservation:
    stack: str
    target: str
    rule: str
    key: str  # the partition-key value (with the sort key's, for SKT)
    template: str | None  # None: no key template of the target makes it
    entities: tuple[str, ...]
    observed_share: float | None  # of the target's accesses (accessed-keys rules)
    declared_share: float | None
    throttled: float  # throttle events counted for the key (throttled-keys rules)
    verdict: str  # "hotter than declared", "as declared", "throttled", "matches no key template"
    change: Change | None

    @property
    def fails(self) -> bool:
        return self.verdict in ("hotter than declared", "throttled")


def _template_share(flows: Sequence[Flow], target: str, entities: Sequence[str]) -> float:
    """The entities' share of the throughput units the target serves, as an accessed-keys rule counts them (a
    write unit 3 times, a read unit once: `attribution.py`)."""
    units = throughput_units(flows, target)
    total = sum(units.values())
    return sum(units.get(entity, 0.0) for entity in entities) / total if total else 0.0


def _accessed(stack: Stack, report: RuleReport, tolerance: float, fitted: Sequence[Flow]) -> list[KeyObservation]:
    templates = members(stack, report.target)
    busiest: dict[str, tuple[str, float, tuple[str, ...]]] = {}  # template -> its busiest value, share, entities
    unmatched = []
    for contributor in report.contributors:
        key = contributor.keys[0]
        entities = tuple(e for e, pk in templates.items() if matches(pk, key, stack, e))
        share = contributor.value / report.aggregate if report.aggregate else 0.0
        if not entities:
            unmatched.append(KeyObservation(report.stack, report.target, report.rule, key, None, (), round(share, 4),
                                            None, 0.0, "matches no key template", None))
            continue
        template = " / ".join(dict.fromkeys(templates[e].text for e in entities))
        if template not in busiest or share > busiest[template][1]:
            busiest[template] = (key, share, entities)
    found = []
    dominant = stack.design.blueprint.traffic.dominant_share
    flows = stack.capacity.traffic.flows
    blueprint = stack.design.blueprint
    for template, (key, share, entities) in sorted(busiest.items()):
        of_target = _template_share(flows, report.target, entities)
        of_fitted = _template_share(fitted, report.target, entities)  # with the rates `--write` declares
        within = max(hottest_share(templates[e], blueprint.entities[e].attributes, dominant) or 0.0 for e in entities)
        declared = within * of_target
        hotter = share >= MIN_SHARE and share > declared * (1 + tolerance)
        change = None
        if hotter and of_fitted > 0:
            change = _share_change(stack, entities[0], templates[entities[0]], key, min(1.0, share / of_fitted))
            change = None if change is not None and change.suggested == change.current else change  # the rates do
        found.append(KeyObservation(report.stack, report.target, report.rule, key, template, entities, round(share, 4),
                                    round(declared, 4), 0.0, "hotter than declared" if hotter else "as declared",
                                    change))
    return found + unmatched


def _share_change(stack: Stack, entity: str, template: KeyTemplate, key: str, share: float) -> Change | None:
    """The line that declares `share` of the template's traffic for its busiest value: the attribute's
    `hot_key_share` (its own line when written, else the attribute's: `--write` adds it there), or, for an
    attribute with `weights` (which already say how busy each value is, so it takes no `hot_key_share`), the
    observed value's weight w such that w / (w + the other weights) = share. None when no line can: no attribute
    in the key, or a weighted value's share of 1 (no weight makes the others' nothing)."""
    segments = [(n, s.attribute) for n, s in enumerate(template.segments) if s.attribute and s.bucket is None]
    if not segments:
        return None
    position, attribute = segments[0]
    where = ("entities", entity, "attributes", attribute)
    spec = stack.design.blueprint.entities[entity].attributes[attribute]
    owner = (stack.name, str(stack.source.path))
    if spec.weights is None:
        return Change(stack.source.source.locate((*where, "hot_key_share")), ".".join((*where, "hot_key_share")),
                      spec.hot_key_share or 0.0, round(share, 2), *owner)
    value = key.split(SEPARATOR)[position]
    others = sum(weight for name, weight in spec.weights.items() if name != value)
    if value not in spec.weights or "." in value or share >= 1 or not others:  # a field names it between dots
        return None
    return Change(stack.source.source.locate((*where, "weights", value)), ".".join((*where, "weights", value)),
                  spec.weights[value], round(share * others / (1 - share), 2), *owner)


def _throttled(stack: Stack, report: RuleReport) -> list[KeyObservation]:
    templates = members(stack, report.target)
    found = []
    for contributor in report.contributors:
        entities = tuple(e for e, pk in templates.items() if matches(pk, contributor.keys[0], stack, e))
        template = " / ".join(dict.fromkeys(templates[e].text for e in entities)) or None
        found.append(KeyObservation(report.stack, report.target, report.rule, " ".join(contributor.keys), template,
                                    entities, None, None, contributor.value, "throttled", None))
    return found


def observe_keys(stacks: Sequence[Stack], reports: Sequence[RuleReport], tolerance: float,
                 comparisons: Sequence[Comparison] = ()) -> list[KeyObservation]:
    """The keys the reports name, against the declared shares; a hot-key share suggested with the rates the
    `comparisons` ask for (`compare.py`), so that declaring both and calibrating again finds the key as declared."""
    by_name = {stack.name: stack for stack in stacks}
    found = []
    for report in reports:
        stack = by_name[report.stack]
        if report.kind == "PKC":
            fitted = scaled(stack.capacity.traffic.flows, stack_scales(stack, comparisons))
            found += _accessed(stack, report, tolerance, fitted)
        elif report.throttled:
            found += _throttled(stack, report)
    return found
