"""What a change does to items already written that its keys alone do not show: attributes renamed, removed,
retyped or made required, and entities moved onto keys other entities' items hold. Read from two locks (or the
gate's records of them), so the review, the gate and `lint --against` judge the same thing.

Terraform sees nothing of an item's attributes, and DynamoDB stores whatever is written: a renamed attribute
leaves every old item with the value under the old name, a removed one stays on the old items, a changed type
leaves old values of the old type, and an attribute made required (or added as required) is missing from the
old items. Each is a data migration the review shows and the gate blocks until it is declared: a rename by
`renamed_from` on the attribute, the others under `migrations:` (`attribute`, with `removal`, `default` or
`convert`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Literal

from tablewright.blueprint.language import Blueprint, Migration
from tablewright.design.design import TABLE
from tablewright.design.locked import Attributes, Departure, KeyFacts, Keys, all_attribute_renames

Change = Literal["rename", "removal", "type", "required"]


@dataclass(frozen=True)
class AttributeChange:
    entity: str  # as the later design names it (a removed attribute: of the entity that had it)
    attribute: str  # the later name (a removal: the removed name)
    change: Change
    before: str | None  # how it was stored ("string?"), None when old items never had it
    after: str | None  # how it is stored now, None when removed
    former: str | None = None  # a rename: the old name
    declared: Migration | None = None  # the `migrations:` entry for it (a rename declares itself)

    @property
    def is_declared(self) -> bool:
        """A rename declares itself (unless its type changes too: then it needs `convert`)."""
        if self.change == "rename" and _base(self.before) == _base(self.after):
            return True
        return self.declared is not None

    @property
    def steps(self) -> tuple[str, ...]:
        """How the items already written are brought to the new shape (or how to declare it)."""
        name, found = f"`{self.attribute}`", f"every {self.entity} item"
        verify = (f"Verify: `tablewright migrate verify` (each {self.entity} item checked), then contract: readers "
                  "stop accepting the old shape.")
        if not self.is_declared:
            how = {"rename": f"`convert: true` under `migrations:` (entity {self.entity}, attribute {self.attribute})",
                   "removal": f"under `migrations:` `{{entity: {self.entity}, attribute: {self.attribute}, removal: "
                              "delete | keep}`, or `renamed_from` on the attribute that replaces it",
                   "type": f"`{{entity: {self.entity}, attribute: {self.attribute}, convert: true}}` under "
                           "`migrations:`",
                   "required": f"`{{entity: {self.entity}, attribute: {self.attribute}, default: <value>}}` under "
                               "`migrations:` (the value old items get), or make it `optional: true`"}[self.change]
            return (f"Declare it: {how}.",)
        if self.change == "rename":
            return (f"Deploy readers that read {name}, falling back to `{self.former}`, and writers that write {name}.",
                    f"Backfill: `tablewright migrate run` renames `{self.former}` to {name} in {found} (a conditional "
                    "UpdateItem each, so a concurrent write wins).", verify)
        if self.change == "removal" and self.declared is not None and self.declared.removal == "keep":
            return (f"Nothing runs: old items keep {name}, stored and billed.",)
        if self.change == "removal":
            return (f"Stop writing {name}.", f"Backfill: `tablewright migrate run` removes {name} from {found}.",
                    verify)
        if self.change == "type":
            return (f"Deploy readers that accept {name} as {_base(self.before)} or {_base(self.after)}.",
                    f"Backfill: `tablewright migrate run` converts {name} to {_base(self.after)} in {found}.", verify)
        default = self.declared.default if self.declared is not None else None
        return (f"Backfill: `tablewright migrate run` writes {name} = {default!r} into {found} that lacks it.",
                verify)

    @property
    def subject(self) -> str:
        if self.change == "rename":
            retyped = "" if self.before == self.after else f" ({self.before} -> {self.after})"
            return f"{self.entity}.{self.former} renamed {self.attribute}{retyped}"
        if self.change == "removal":
            return f"{self.entity}.{self.attribute} removed (was {self.before})"
        if self.change == "type":
            return f"{self.entity}.{self.attribute} stored as {self.before} -> {self.after}"
        was = "optional" if self.before else "not stored"
        return f"{self.entity}.{self.attribute} required (was {was})"

    @property
    def seen(self) -> str:
        """What an application reading items written before this change sees."""
        old = f"every {self.entity} item written before"
        if self.change == "rename":
            return (f"{old} carries the value as `{self.former}`: readers of `{self.attribute}` find nothing on them "
                    "until the attribute is renamed in the items")
        if self.change == "removal":
            return (f"{old} keeps `{self.attribute}`: still stored and billed, returned by every read of the whole "
                    "item")
        if self.change == "type":
            return (f"{old} holds `{self.attribute}` as {_base(self.before)}: readers expecting "
                    f"{_base(self.after)} fail on them until the values are converted")
        return (f"{old} may lack `{self.attribute}`: readers that require it fail on them until the old items get a "
                "value")


def _base(stored: str | None) -> str:
    return (stored or "(none)").rstrip("?")


def _required(stored: str) -> bool:
    return not stored.endswith("?")


def _declared(migrations: list[Migration], entity: str, attribute: str) -> Migration | None:
    return next((m for m in migrations if m.kind == "attribute" and (m.entity, m.attribute) == (entity, attribute)),
                None)


def _kept(entity: str, name: str, was: str, now: str, migrations: list[Migration],
          former: str | None = None) -> list[AttributeChange]:
    """A change of type or presence of an attribute both designs store (under `former`, renamed)."""
    declared = _declared(migrations, entity, name)
    if _base(was) != _base(now):
        convert = declared if declared is not None and declared.convert else None
        return [AttributeChange(entity, name, "type", was, now, former, convert)]
    if _required(now) and not _required(was):
        default = declared if declared is not None and declared.default is not None else None
        return [AttributeChange(entity, name, "required", was, now, former, default)]
    return []


def entity_changes(entity: str, before: Mapping[str, str], after: Mapping[str, str], renames: Mapping[str, str],
                   migrations: list[Migration]) -> list[AttributeChange]:
    """The attribute changes of one entity (`renames`: old name -> new, its `renamed_from`)."""
    changes = []
    formers = {new: old for old, new in renames.items() if old in before and new not in before}
    for name, now in sorted(after.items()):
        former = formers.get(name)
        if former is not None:
            declared = _declared(migrations, entity, name)
            convert = declared if declared is not None and declared.convert else None
            changes.append(AttributeChange(entity, name, "rename", before[former], now, former, convert))
            changes += [c for c in _kept(entity, name, before[former], now, migrations, former) if c.change != "type"]
        elif name in before:
            changes += _kept(entity, name, before[name], now, migrations)
        elif _required(now):
            declared = _declared(migrations, entity, name)
            changes.append(AttributeChange(entity, name, "required", None, now,
                                           declared=declared if declared and declared.default is not None else None))
    for name, was in sorted(before.items()):
        if name not in after and name not in formers.values():
            declared = _declared(migrations, entity, name)
            removal = declared if declared is not None and declared.removal is not None else None
            changes.append(AttributeChange(entity, name, "removal", was, None, declared=removal))
    return changes


def attribute_changes(before: Attributes | None, after: Attributes | None, names: Mapping[str, str],
                      renames: Mapping[str, Mapping[str, str]], migrations: list[Migration]) -> list[AttributeChange]:
    """Every attribute change of the entities both designs hold (`names`: each earlier entity's later name). None
    when either side predates recorded attributes: nothing to compare."""
    if before is None or after is None:
        return []
    changes = []
    for old_name, stored in sorted(before.items()):
        new_name = names.get(old_name, old_name)
        if new_name in after:
            changes += entity_changes(new_name, stored, after[new_name], renames.get(new_name, {}), migrations)
    return changes


@dataclass(frozen=True)
class Collision:
    """`entity` is on table keys of the shape the items of `other` (another entity before) hold."""

    entity: str
    other: str
    keys: KeyFacts  # the entity's keys now
    held: KeyFacts  # the other's keys, which its items carry
    rename_likely: bool  # `other` is gone and `entity` is new: maybe an undeclared rename

    @property
    def text(self) -> str:
        return (f"{self.entity} ({self.keys.templates}) on the keys {self.other}'s items hold ({self.held.templates}): "
                f"reads of {self.entity} would return {self.other} items and its puts would overwrite them")

    @property
    def way_through(self) -> tuple[str, ...]:
        steps: tuple[str, ...] = (
            f"Give {self.entity} a key of its own (another prefix than {self.held.templates}), or move the "
            f"{self.other} items first: a key migration of {self.other} (or its `removal: delete`), verified "
            f"with `tablewright migrate verify`, in a change before the one that adds {self.entity}.",)
        if self.rename_likely:
            steps += (f"If {self.entity} is {self.other} renamed, declare the rename (`entity: {self.entity}`, "
                      f"`renamed_from: {self.other}` under `migrations:`): its items then move with it.",)
        return steps


def _overlap(one: KeyFacts, other: KeyFacts) -> bool:
    """Whether two entities' table keys can render the same text. A value inside a key never holds the separator
    '#' (the encoding refuses it), so each placeholder is one segment: the keys can meet when they have as many
    segments, each pair equal literals or one of them a placeholder."""
    def segments(facts: KeyFacts) -> list[list[str]]:
        return [part.split("#") for part in facts.templates.split(" / ")]
    pairs = list(zip(segments(one), segments(other), strict=False))
    return len(segments(one)) == len(segments(other)) and all(
        len(mine) == len(theirs) and all(a == b or a.startswith("{") or b.startswith("{") for a, b in zip(
            mine, theirs, strict=True)) for mine, theirs in pairs)


def key_collisions(before: Keys, after: Keys, gone: list[Departure], retained: Keys | None = None) -> list[Collision]:
    """Entities that are new, renamed or re-keyed onto table keys of the shape another entity's items already
    hold (items of a removed entity included: `keep` leaves them, and a delete job runs after the deploy;
    `retained`: the table keys of entities removed by earlier changes whose items stay)."""
    former = {departure.renamed_to: departure.entity for departure in gone if departure.renamed_to}
    earlier = {**(retained or {}), **before}
    held = [(entity, facts) for (entity, index), facts in sorted(earlier.items()) if index == TABLE]
    found = []
    for (entity, index), facts in sorted(after.items()):
        predecessor = former.get(entity, entity)
        if index != TABLE or before.get((predecessor, TABLE)) == facts:
            continue
        other = next((name for name, keys in held if name != predecessor and _overlap(facts, keys)), None)
        if other is not None:
            likely = (other, TABLE) in before and (other, TABLE) not in after and entity not in former \
                and (entity, TABLE) not in before
            found.append(Collision(entity, other, facts, earlier[(other, TABLE)], likely))
    return found


def _renamed_facts(facts: KeyFacts, renames: Mapping[str, str]) -> KeyFacts:
    templates = re.sub(r"\{([A-Za-z][A-Za-z0-9_]*)(?=[:}])", lambda m: "{" + renames.get(m[1], m[1]), facts.templates)
    pairs = sorted((renames.get(name, name), encoding) for name, _, encoding in
                   (pair.partition(": ") for pair in facts.encodings.split("; ") if pair))
    return replace(facts, templates=templates, shard_by=tuple(renames.get(name, name) for name in facts.shard_by),
                   encodings="; ".join(f"{name}: {encoding}" for name, encoding in pairs))


def with_renamed_attributes(keys: Keys, renames: Mapping[str, Mapping[str, str]],
                            names: Mapping[str, str]) -> Keys:
    """The earlier keys as the later design names their attributes (`renames`: entity -> old name -> new, `names`:
    each earlier entity's later name): a renamed attribute keeps its place in the keys and the text items carry."""
    return {(entity, index): _renamed_facts(facts, renames.get(names.get(entity, entity), {}))
            for (entity, index), facts in keys.items()}


def declaration(migration: Migration) -> str | None:
    """A `migrations:` entry as the lock's records and the stack's record name it; None for one that runs no job
    (`keep`)."""
    if migration.kind == "keys":
        return f"keys of {migration.entity} on {migration.index}"
    if migration.kind == "rename":
        return f"entity {migration.renamed_from} renamed {migration.entity}"
    if migration.removal == "keep":
        return None
    if migration.kind == "removal":
        return f"entity {migration.entity} removed ({migration.removal})"
    what = migration.removal or ("convert" if migration.convert else "default")  # never the value: it is data
    return f"attribute {migration.entity}.{migration.attribute} ({what})"


def rename_declaration(entity: str, old: str, new: str) -> str:
    """A renamed attribute (`renamed_from`) as the lock's records name it."""
    return f"attribute {entity}.{old} renamed {new}"


def migration_entities(migration: Migration) -> tuple[str, ...]:
    """The entities a `migrations:` entry concerns: the one it names, and a rename's former name first."""
    return (migration.renamed_from, migration.entity) if migration.renamed_from else (migration.entity,)


_ENTITY = r"[A-Z][A-Za-z0-9]*"
_ATTRIBUTE = r"[A-Za-z][A-Za-z0-9_]*"
_DECLARATION = re.compile(
    rf"keys of (?P<keys>{_ENTITY}) on .+|entity (?P<former>{_ENTITY}) renamed (?P<entity>{_ENTITY})"
    rf"|entity (?P<removed>{_ENTITY}) removed \((?:delete|expire)\)"
    rf"|attribute (?P<owner>{_ENTITY})\.{_ATTRIBUTE} (?:\((?:delete|convert|default)\)|renamed {_ATTRIBUTE})")


def declaration_entities(text: str) -> tuple[str, ...]:
    """The entities a declaration concerns, read from its text as `declaration` and `rename_declaration` write it
    (as `migration_entities` gives them): what the gate has of a declaration in a plan's record. Empty for a text
    neither writes."""
    found = _DECLARATION.fullmatch(text)
    if found is None:
        return ()
    return tuple(name for name in found.group("former", "entity", "keys", "removed", "owner") if name is not None)


def declared_entities(blueprint: Blueprint) -> dict[str, tuple[str, ...]]:
    """Each of the blueprint's `declarations` with the entities it concerns, from its `migrations:` and its
    attributes' `renamed_from`."""
    found = {text: migration_entities(migration) for migration in blueprint.migrations
             if (text := declaration(migration)) is not None}
    for entity, renames in all_attribute_renames(blueprint).items():
        found.update({rename_declaration(entity, old, new): (entity,) for old, new in renames.items()})
    return found


def declarations(blueprint: Blueprint) -> list[str]:
    """The blueprint's declarations of migrations that run a job over old items (`keep` removals run nothing): while
    one stays, the review and the gate expect its job; once it leaves the blueprint (the contract step), a lock
    record of `migrate verify` must hold it."""
    found = [text for text in map(declaration, blueprint.migrations) if text is not None]
    for entity, renames in sorted(all_attribute_renames(blueprint).items()):
        found += [rename_declaration(entity, old, new) for old, new in sorted(renames.items())]
    return sorted(found)
