"""Contributor Insights' busiest and throttled keys, traced back to their key templates and entities, against
the shares the blueprint declares.

A key value matches a partition-key template when it has as many `#`-separated segments, the same literal ones,
digits where the shard number goes and a declared value where an enum is. The declared share of the table's or
index's accesses that the template's busiest value takes is its share of the template's traffic (declared, or
judged at its worst, as lint does) times the template's share of the target's units (reads and writes: an
accessed-keys rule counts both). A busiest value observed above it, beyond the tolerance, asks for the
`hot_key_share` that would declare it: the observed share over the template's share of the target.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from tablewright.blueprint.templates import SEPARATOR, KeyTemplate
from tablewright.blueprint.traits import hottest_share
from tablewright.calibrate.compare import Change
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


def matches(template: KeyTemplate, value: str, stack: Stack, entity: str) -> bool:
    parts = value.split(SEPARATOR)
    if len(parts) != len(template.segments):
        return False
    specs = stack.design.blueprint.entities[entity].attributes
    for part, segment in zip(parts, template.segments, strict=True):
        if segment.literal is not None and part != segment.literal:
            return False
        if segment.shards is not None and not part.isdigit():
            return False
        if segment.attribute is not None:
            values = specs[segment.attribute].values
            if not part or (segment.bucket is None and values is not None and part not in values):
                return False
    return True


def _members(stack: Stack, target: str) -> dict[str, KeyTemplate]:
    return {entity: shapes[target].pk for entity, shapes in sorted(stack.design.shapes.items()) if target in shapes}


def _template_share(flows: Sequence[Flow], target: str, entities: Sequence[str]) -> float:
    """The entities' share of the units the target serves, reads and writes together."""
    on = [flow for flow in flows if flow.target == target]
    total = sum(flow.units for flow in on)
    return sum(flow.units for flow in on if flow.entity in entities) / total if total else 0.0


def _accessed(stack: Stack, report: RuleReport, tolerance: float) -> list[KeyObservation]:
    members = _members(stack, report.target)
    busiest: dict[str, tuple[str, float, tuple[str, ...]]] = {}  # template -> its busiest value, share, entities
    unmatched = []
    for contributor in report.contributors:
        key = contributor.keys[0]
        entities = tuple(e for e, pk in members.items() if matches(pk, key, stack, e))
        share = contributor.value / report.aggregate if report.aggregate else 0.0
        if not entities:
            unmatched.append(KeyObservation(report.stack, report.target, report.rule, key, None, (), round(share, 4),
                                            None, 0.0, "matches no key template", None))
            continue
        template = " / ".join(dict.fromkeys(members[e].text for e in entities))
        if template not in busiest or share > busiest[template][1]:
            busiest[template] = (key, share, entities)
    found = []
    dominant = stack.design.blueprint.traffic.dominant_share
    flows = stack.capacity.traffic.flows
    blueprint = stack.design.blueprint
    for template, (key, share, entities) in sorted(busiest.items()):
        of_target = _template_share(flows, report.target, entities)
        within = max(hottest_share(members[e], blueprint.entities[e].attributes, dominant) or 0.0 for e in entities)
        declared = within * of_target
        hotter = share >= MIN_SHARE and share > declared * (1 + tolerance)
        change = None
        first = entities[0]
        attribute = next((s.attribute for s in members[first].segments if s.attribute and s.bucket is None), None)
        if hotter and attribute is not None and of_target > 0:
            current = blueprint.entities[first].attributes[attribute].hot_key_share or 0.0
            # the share's own line when it is written, else its attribute's (`--write` adds it there)
            change = Change(stack.source.source.locate(("entities", first, "attributes", attribute, "hot_key_share")),
                            f"entities.{first}.attributes.{attribute}.hot_key_share", current,
                            round(min(1.0, share / of_target), 2), stack.name, str(stack.source.path))
        found.append(KeyObservation(report.stack, report.target, report.rule, key, template, entities, round(share, 4),
                                    round(declared, 4), 0.0, "hotter than declared" if hotter else "as declared",
                                    change))
    return found + unmatched


def _throttled(stack: Stack, report: RuleReport) -> list[KeyObservation]:
    members = _members(stack, report.target)
    found = []
    for contributor in report.contributors:
        entities = tuple(e for e, pk in members.items() if matches(pk, contributor.keys[0], stack, e))
        template = " / ".join(dict.fromkeys(members[e].text for e in entities)) or None
        found.append(KeyObservation(report.stack, report.target, report.rule, " ".join(contributor.keys), template,
                                    entities, None, None, contributor.value, "throttled", None))
    return found


def observe_keys(stacks: Sequence[Stack], reports: Sequence[RuleReport], tolerance: float) -> list[KeyObservation]:
    by_name = {stack.name: stack for stack in stacks}
    found = []
    for report in reports:
        stack = by_name[report.stack]
        if report.kind == "PKC":
            found += _accessed(stack, report, tolerance)
        elif report.throttled:
            found += _throttled(stack, report)
    return found
