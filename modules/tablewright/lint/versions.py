"""Breaking changes between two versions of a blueprint (`lint --against OLD`).

A change is breaking when data or callers built for the old version stop working: an entity's keys
change on the table or on any index, planned or declared (items already written sit under the old
keys), an entity is renamed or removed (its items keep the old name, or stay behind unread), or an
access pattern is removed while another blueprint that extends this one still names it.
Breaking changes need a major version bump (semver) and, for keys, a declared migration; with both
they are reported as notes.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tablewright.blueprint.compose import Composer, blueprint_files, repository_root
from tablewright.blueprint.language import Blueprint
from tablewright.blueprint.load import LoadedBlueprint
from tablewright.blueprint.lock import StackLock
from tablewright.blueprint.yamlsource import load_yaml
from tablewright.design.design import TABLE, TableDesign, place
from tablewright.design.evolution import attribute_changes, key_collisions, with_renamed_attributes
from tablewright.design.locked import (
    Departure,
    KeyFacts,
    Keys,
    all_attribute_renames,
    attribute_facts,
    departures,
    key_facts,
    lock_of,
    possible_renames,
    retained_facts,
)
from tablewright.errors import TablewrightError
from tablewright.lint.findings import Finding, Issue, Severity, comparison_rule

KEY_TEMPLATE_CHANGED = comparison_rule("TW401", "Key template changed without a major version",
                "Items already written keep their old keys: migrate (new index or table, dual write, backfill, "
                "cut over) and bump the major version.",
                why="Keys of an existing entity changed on the table or any index, planned or declared (`lint "
                    "--against`)",
                severity="error; info with a major bump and a declared migration")
ENTITY_DEPARTED = comparison_rule("TW403", "Entity renamed or removed without a declared migration",
                "Items already written keep the old entity's name and keys: declare the rename (`renamed_from`) or "
                "what happens to the items (`removal: delete | keep | expire`) under `migrations:`, and bump the "
                "major version.",
                why="Entity renamed or removed (`lint --against`): its items keep the old name and keys",
                severity="error; info with a major bump and a declared rename or removal")
ATTRIBUTE_CHANGED = comparison_rule("TW404", "Stored attribute changed without a declared migration",
                "Items already written keep the attribute as it was: declare the change (`renamed_from` on a renamed "
                "attribute; `{entity, attribute, removal | default | convert}` under `migrations:`), run `tablewright "
                "migrate`, and bump the major version.",
                why="A stored attribute is renamed, removed, retyped or made required (`lint --against`)",
                severity="error; info with a major bump and a declaration")
KEYS_SHARED = comparison_rule("TW405", "Entity on keys another entity's items hold",
                "Give the entity a key of its own, or move the other entity's items first (a migration verified "
                "with `tablewright migrate verify`) in an earlier change.",
                why="A new, renamed or re-keyed entity's table keys have the shape another entity's items carry: its "
                    "reads would return them and its puts overwrite them (`lint --against`)",
                severity="error")
PATTERN_STILL_NAMED = comparison_rule("TW402", "Access pattern removed while another blueprint names it",
                "Remove it from the extending blueprints first, or bump the major version.",
                why="Access pattern removed while an extending blueprint still names it (`lint --against`)",
                severity="error; info with a major bump")


@dataclass(frozen=True)
class KeyChange:
    entity: str
    index: str
    before: KeyFacts
    after: KeyFacts


def _major(version: str) -> int:
    return int(version.split(".")[0])


def _key_path(new: LoadedBlueprint, entity: str, index: str, part: str) -> tuple[str, ...]:
    if index == TABLE:
        return ("entities", entity, "key", part)
    if index in new.blueprint.entities[entity].index_keys:
        return ("entities", entity, "index_keys", index, part)
    return ("entities", entity)


def _extended_files(path: Path) -> set[Path]:
    """Every file `path` extends, directly or not (a file that does not load extends nothing here)."""
    composer = Composer(repository_root(path))
    try:
        composer.read(path)
    except TablewrightError:
        return set()
    return set(composer.documents) - {composer.resolved(path)}


def _namers(new: LoadedBlueprint, pattern: str, search: Path) -> list[Path]:
    """Blueprints under `search` that extend `new` and still name `pattern` in their access patterns."""
    target = new.path.resolve()
    namers = []
    for candidate in blueprint_files(search):
        try:
            if candidate.resolve(strict=True) == target:
                continue
            data, _ = load_yaml(candidate)
        except (TablewrightError, OSError, RuntimeError):  # unreadable, or a symbolic link loop
            continue
        patterns = data.get("access_patterns") if isinstance(data, dict) else None
        if isinstance(patterns, dict) and pattern in patterns and target in _extended_files(candidate):
            namers.append(candidate)
    return namers


def key_changes(before: dict[tuple[str, str], KeyFacts], after: dict[tuple[str, str], KeyFacts]) -> list[KeyChange]:
    """(entity, index) whose keys differ between the two designs (entities and indexes on both sides)."""
    return [KeyChange(entity, index, before[(entity, index)], facts)
            for (entity, index), facts in sorted(after.items())
            if (entity, index) in before and before[(entity, index)] != facts]


def breaking_changes(old: LoadedBlueprint, old_design: TableDesign, new: LoadedBlueprint, new_design: TableDesign,
                     search: Path) -> list[Finding]:
    bumped = _major(new.blueprint.version) > _major(old.blueprint.version)
    severity: Severity = "info" if bumped else "error"
    versions = f"{old.blueprint.version} -> {new.blueprint.version}"
    suffix = f" (major version bumped, {versions})" if bumped else f", but the version goes {versions}"
    findings = []
    old_lock, new_lock = lock_of(old_design), lock_of(new_design)
    before, after = key_facts(old_lock), key_facts(new_lock)
    gone = departures(before, after, list(new.blueprint.migrations))
    names = {d.entity: d.renamed_to for d in gone if d.renamed_to}
    stored = _stored_changes(old_lock, new_lock, (before, after), gone, new.blueprint, bumped, suffix)
    before = with_renamed_attributes(before, all_attribute_renames(new.blueprint), names)
    for change in key_changes(before, after):
        declared = any(m.kind == "keys" and (m.entity, m.index) == (change.entity, change.index)
                       for m in new.blueprint.migrations)
        where = place(change.index)
        part = "pk" if change.before.templates.split(" / ")[0] != change.after.templates.split(" / ")[0] else "sk"
        findings.append(KEY_TEMPLATE_CHANGED.finding(Issue(
            "info" if bumped and declared else "error",
            f"{change.entity}'s keys on {where} change from {change.before.text} to {change.after.text}: items "
            f"already written keep the old keys{suffix}{'' if declared else ', and no migration is declared'}",
            "declare the migration under `migrations:` (entity, index, from, to, strategy, reason), run it "
            "(dual write, backfill, cut over) and bump the major version",
            _key_path(new, change.entity, change.index, part),
        )))
    for departure in gone:
        declared = departure.declared is not None
        candidates = [] if declared else possible_renames(departure.entity, before, after)
        what = f"renamed `{departure.renamed_to}`" if departure.renamed_to else "removed"
        findings.append(ENTITY_DEPARTED.finding(Issue(
            "info" if bumped and declared else "error",
            f"entity `{departure.entity}` is {what}: its items already written keep the name `{departure.entity}` "
            f"and their keys ({before[(departure.entity, TABLE)].templates}){suffix}"
            + ("" if declared else ", and no migration is declared")
            + (f" (new in this version: {', '.join(candidates)})" if candidates else ""),
            f"declare it under `migrations:` (`entity: {candidates[0] if candidates else '<new name>'}, "
            f"renamed_from: {departure.entity}` for a rename; `entity: {departure.entity}, removal: delete | keep "
            "| expire` for a removal; with a `reason`) and bump the major version",
            ("entities", departure.renamed_to) if departure.renamed_to else ("entities",),
        )))
    findings += stored
    for pattern in sorted(set(old.blueprint.access_patterns) - set(new.blueprint.access_patterns)):
        for namer in _namers(new, pattern, search):
            findings.append(PATTERN_STILL_NAMED.finding(Issue(
                severity,
                f"access pattern `{pattern}` is removed but {namer} (which extends this blueprint) still names it"
                f"{suffix}",
                f"remove `{pattern}` from {namer} first, or keep the pattern",
                ("version",),
            )))
    return findings


def _stored_changes(old_lock: StackLock, new_lock: StackLock, keys: tuple[Keys, Keys], gone: list[Departure],
                    blueprint: Blueprint, bumped: bool, suffix: str) -> list[Finding]:
    """Attribute changes (TW404) and entities on keys other items hold (TW405); `keys`: both locks' `key_facts`."""
    names = {departure.entity: departure.renamed_to for departure in gone if departure.renamed_to}
    findings = []
    for change in attribute_changes(attribute_facts(old_lock), attribute_facts(new_lock), names,
                                    all_attribute_renames(blueprint), list(blueprint.migrations)):
        path = ("entities", change.entity, "attributes") + ((change.attribute,) if change.after else ())
        findings.append(ATTRIBUTE_CHANGED.finding(Issue(
            "info" if bumped and change.is_declared else "error",
            f"{change.subject}: {change.seen}{suffix}" + ("" if change.is_declared else ", and it is not declared"),
            change.steps[0] if not change.is_declared else "run `tablewright migrate plan` and bump the major version",
            path)))
    for collision in key_collisions(*keys, gone, retained_facts(old_lock)):
        findings.append(KEYS_SHARED.finding(Issue("error", collision.text, collision.way_through[-1],
                                                  ("entities", collision.entity, "key"))))
    return findings
