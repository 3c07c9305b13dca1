"""The design lock: `<blueprint>.lock.json` beside each blueprint, the physical design it deployed.

Per environment (`default` without environments): the table's name, every secondary index (its key
attributes, projection and status) and every entity's key templates on the table and on each index,
with the encodings of the attributes inside them. `synth` writes it (`synth --locked` only checks it);
every command designs against it, so evolving a blueprint never re-keys an index that exists. It is
untrusted input like the blueprint: read with the same bounded loader, validated by these models.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, StringConstraints, ValidationError, field_validator

from tablewright.blueprint.invalid import Invalid
from tablewright.blueprint.language import (
    MAX_ATTRIBUTES,
    MAX_ENTITIES,
    MAX_INDEXES,
    MAX_PATTERNS,
    MAX_TEMPLATE_LENGTH,
    AttributeName,
    EntityName,
    IndexName,
    KeyAttributeName,
    Strict,
    TableName,
)
from tablewright.blueprint.references import index_name_problem
from tablewright.blueprint.templates import parse_template
from tablewright.blueprint.yamlsource import MAX_NODES, SourceMap, parse_yaml, read_text
from tablewright.errors import BlueprintError, ErrorCode, FieldPath, SourceLocation, TablewrightError

LOCK_VERSION: Literal[1] = 1
DEFAULT_ENVIRONMENT = "default"
TABLE_KEYS = "table"  # an entity's keys on the table itself, beside those on each index
StoredType = Annotated[str, StringConstraints(min_length=1, max_length=128)]
Template = Annotated[str, StringConstraints(min_length=1, max_length=MAX_TEMPLATE_LENGTH,
                                            pattern=r"^[A-Za-z0-9_.{}:#-]+$")]


# The lock holds what any design holds (lint, not the lock, reports what exceeds DynamoDB's quotas: TW301, TW302),
# within bounds that keep a hand-made lock small: every attribute of every entity, an index per pattern.
MAX_LOCKED_ATTRIBUTES = MAX_ENTITIES * MAX_ATTRIBUTES
MAX_LOCKED_INDEXES = MAX_PATTERNS + MAX_INDEXES
MAX_DECLARATIONS = 50 + MAX_ENTITIES * MAX_ATTRIBUTES  # `migrations:` entries and renamed attributes


class LockedProjection(Strict):
    type: Literal["KEYS_ONLY", "INCLUDE", "ALL"]
    attributes: list[KeyAttributeName] = Field(default_factory=list, max_length=MAX_LOCKED_ATTRIBUTES)


class LockedIndex(Strict):
    type: Literal["global", "local"]
    partition_key: KeyAttributeName
    sort_key: KeyAttributeName | None = None
    projection: LockedProjection
    status: Literal["active", "retiring"] = Field(
        description="`retiring`: no pattern reads it any more (replaced, or its patterns removed); it stays until "
                    "the blueprint says `indexes.<name>.remove: true`.")


class LockedKey(Strict):
    pk: Template = Field(description="Partition key template, without the shard number.")
    sk: Template | None = Field(default=None, description="Sort key template; none when the key has no sort key.")
    shards: int | None = Field(default=None, ge=2, le=100)
    shard_by: list[AttributeName] = Field(default_factory=list, max_length=MAX_ATTRIBUTES)


Declaration = Annotated[str, StringConstraints(min_length=1, max_length=300)]


class MovingKeys(Strict):
    """The keys an entity's old items still carry while a declared migration moves them (a rename, a key migration)
    and `tablewright migrate verify` has not recorded it: generated clients read them too."""

    entity: EntityName = Field(description="The name old items carry in `_entity` (the one it was renamed from).")
    keys: dict[IndexName, LockedKey] = Field(max_length=MAX_LOCKED_INDEXES + 1,
                                             description="`table` and each index: the keys old items carry there.")
    declarations: list[Declaration] = Field(min_length=1, max_length=MAX_DECLARATIONS,
                                            description="The pending migrations that move them.")


class LockedEntity(Strict):
    keys: dict[IndexName, LockedKey] = Field(
        description="`table` and each index the entity takes part in: its key templates there.")
    encodings: dict[AttributeName, Annotated[str, StringConstraints(max_length=128)]] = Field(
        default_factory=dict, description="How each attribute inside a key is written (a change re-keys items).")
    attributes: dict[AttributeName, StoredType] | None = Field(
        default=None, max_length=MAX_ATTRIBUTES,
        description="Every stored attribute and how it is stored (`string`, `number`, `timestamp:epoch_seconds`...), "
                    "`?` after it when items may go without it: a rename, removal or type change is a data change. "
                    "Absent from locks written before attributes were recorded (then only keys are compared).")
    moving: MovingKeys | None = Field(default=None, description="While a declared migration moves its items: the "
                                                                "keys they still carry (synth keeps it until "
                                                                "`migrate verify` records the migration).")


class MigratedRecord(Strict):
    """A migration `tablewright migrate verify` found done in the table."""

    identity: Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{16}$")]
    declarations: list[Declaration] = Field(
        max_length=MAX_DECLARATIONS, description="The blueprint's migration declarations it carried out (as "
        "`design.evolution.declarations` names them): removing them from the blueprint is the contract step.")
    items: int = Field(ge=0, description="Items of the migrated entities the verifying Scan found.")
    verified: Annotated[str, StringConstraints(pattern=r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$")]
    table: TableName = Field(description="The table the verifying Scan read.")
    endpoint: Annotated[str, StringConstraints(max_length=200, pattern=r"^https?://[A-Za-z0-9.:\[\]/_-]+$")] | None = \
        Field(default=None, description="The endpoint it read (an emulator's); none: AWS itself.")

    @field_validator("verified")
    @classmethod
    def _a_real_moment(cls, value: str) -> str:
        moment = datetime.strptime(value, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)  # ValueError: not a date
        if moment > datetime.now(UTC) + timedelta(days=1):
            raise ValueError(f"{value} is in the future")
        return value


class StackLock(Strict):
    table: TableName
    partition_key: KeyAttributeName = "PK"
    sort_key: KeyAttributeName | None = "SK"
    indexes: dict[IndexName, LockedIndex] = Field(default_factory=dict, max_length=MAX_LOCKED_INDEXES)
    entities: dict[EntityName, LockedEntity] = Field(default_factory=dict, max_length=MAX_ENTITIES)
    retained: dict[EntityName, LockedKey] = Field(
        default_factory=dict, max_length=MAX_ENTITIES,
        description="Entities gone from the blueprint whose items stay in the table (`removal: keep`, or a delete not "
                    "yet verified): their table keys, which no later entity may take.")
    migrated: list[MigratedRecord] = Field(
        default_factory=list, max_length=20,
        description="Verified migrations (`tablewright migrate verify` writes them; synth keeps them).")


class LockFile(Strict):
    lock_version: Literal[1]
    blueprint: str
    environments: dict[Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9-]{0,30}$")], StackLock] = Field(
        max_length=20)


def lock_path(blueprint: Path) -> Path:
    """`blueprints/crm.yaml` -> `blueprints/crm.lock.json`."""
    return blueprint.with_name(f"{blueprint.stem}.lock.json")


def _restore(path: Path) -> str:
    return (f"restore {path.name} from git (`git checkout -- {path.name}`), or delete it and run `tablewright "
            "synth` to write it again from the deployed design")


def read_lock(path: Path) -> LockFile | None:
    """The lock at `path`, validated (its models, then its consistency); None when there is none."""
    if not path.exists() and not path.is_symlink():
        return None
    if path.is_symlink() or not path.is_file():
        raise BlueprintError(f"the design lock {path} is not a regular file", location=SourceLocation(str(path), 1, 1),
                             code=ErrorCode.LOCK_INVALID,
                             hint=f"remove it: `tablewright synth` writes {path.name} as a file")
    try:
        text = read_text(path)
    except BlueprintError as error:
        raise _unreadable(path, error) from None
    data = as_synth_writes(text)
    if data is not None:  # a lock as synth writes it: no located reading needed unless it is wrong
        try:
            lock = LockFile.model_validate(data)
        except ValidationError:
            lock = None
        if lock is not None and not any(map(inconsistency, lock.environments.values())):
            return lock
    return _located_lock(path, text)


def as_synth_writes(text: str) -> Any | None:
    """The lock's data parsed by the C JSON parser, about 25 times faster than the YAML reader, when `text` is
    exactly as synth writes a lock (`lock_text`): then the YAML reader would read the same values and accept
    the file. None otherwise (then the YAML reader reads it, with located errors)."""
    if "\\" in text or text.count("\n") >= MAX_NODES:  # escapes; more values than the YAML reader takes
        return None
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return data if lock_text(data) == text else None


def lock_text(data: Any) -> str:
    """A lock's text as synth writes it."""
    return json.dumps(data, indent=2, sort_keys=True) + "\n"


def lock_source(path: Path) -> SourceMap:
    """Where each field of the (readable) lock at `path` is, for an error about it."""
    try:
        return parse_yaml(read_text(path), str(path))[1]
    except BlueprintError as error:  # changed since it was read
        raise _unreadable(path, error) from None


def _unreadable(path: Path, error: BlueprintError) -> TablewrightError:
    """Said of a lock, with the lock's way back (not a blueprint's fix)."""
    location = error.location or SourceLocation(str(path), 1, 1)
    return error.rewritten(message=f"the design lock cannot be read: {error.message}", location=location,
                           code=ErrorCode.LOCK_INVALID, hint=_restore(path))


def _located_lock(path: Path, text: str) -> LockFile:
    """The lock read by the YAML reader (JSON is YAML: same bounds), every problem raised with its place."""
    try:
        data, source = parse_yaml(text, str(path))
    except BlueprintError as error:
        raise _unreadable(path, error) from None
    try:
        lock = LockFile.model_validate(data)
    except ValidationError as error:
        detail = error.errors()[0]
        where = tuple(step for step in detail["loc"] if isinstance(step, (str, int)))
        raise BlueprintError(f"the design lock is not valid: {'.'.join(map(str, where))}: {detail['msg']}",
                             location=source.locate(where), code=ErrorCode.LOCK_INVALID, hint=_restore(path)) from None
    for environment, entry in lock.environments.items():
        problem = inconsistency(entry)
        if problem is not None:
            where, message = ("environments", environment, *problem[0]), problem[1]
            raise BlueprintError(f"the design lock is not consistent: {'.'.join(map(str, where))}: {message}",
                                 location=source.locate(where), code=ErrorCode.LOCK_INVALID,
                                 hint=f"the lock is written by `tablewright synth`, never by hand: {_restore(path)}")
    return lock


def inconsistency(lock: StackLock) -> tuple[FieldPath, str] | None:
    """The first thing in one environment's lock that no synthesis writes, which would make the design
    deploy something else than it says (an index renamed under the entities that use it): where, and what.
    None when the entry is consistent."""
    indexes = lock.indexes
    listed = ", ".join(sorted(indexes)) or "none"
    if TABLE_KEYS in indexes:
        return ("indexes", TABLE_KEYS), f"an index cannot be named `{TABLE_KEYS}`: it names the table's own keys"
    for entity, locked in lock.entities.items():
        if TABLE_KEYS not in locked.keys:
            return ("entities", entity, "keys"), f"`{entity}` has no keys on the table"
        for index, key in locked.keys.items():
            where: FieldPath = ("entities", entity, "keys", index)
            if index != TABLE_KEYS and index not in indexes:
                return where, f"`{entity}` has keys on index `{index}`, which the lock's `indexes` do not list " \
                              f"(they list: {listed})"
            sort_key = lock.sort_key if index == TABLE_KEYS else indexes[index].sort_key
            if index != TABLE_KEYS and indexes[index].type == "local" and key.pk != locked.keys[TABLE_KEYS].pk:
                return where, (f"`{entity}`'s partition key on local index `{index}` is {key.pk!r}, on the table "
                               f"{locked.keys[TABLE_KEYS].pk!r}: a local index shares the table's partition key")
            if (key.sk is None) != (sort_key is None):
                has = "a sort key template" if key.sk is not None else "no sort key template"
                return where, f"`{entity}` has {has} on {index}, whose sort key is {sort_key or 'none'}"
            try:
                templates = [parse_template(text) for text in (key.pk, key.sk) if text]
            except Invalid as error:
                return where, error.message
            used = {a for template in templates for a in template.attributes}
            for segment in (segment for template in templates for segment in template.segments if segment.bucket):
                encoding = locked.encodings.get(str(segment.attribute), "")
                if not (encoding.startswith("timestamp") or encoding == "date"):
                    return where, (f"`{entity}`'s keys on {index} bucket `{segment.attribute}` by "
                                   f"{segment.bucket}, which is written as {encoding or 'nothing'}, not a time")
            missing = sorted(used - locked.encodings.keys())
            if missing:
                return (("entities", entity, "encodings"),
                        f"`{entity}`'s keys on {index} use `{missing[0]}`, which its `encodings` do not list")
    clash = index_name_problem(indexes)
    if clash is not None:
        return ("indexes", clash[0]), clash[1]
    if lock.sort_key == lock.partition_key:
        return ("sort_key",), f"the table's sort key is its partition key `{lock.partition_key}`"
    for name, locked_index in indexes.items():
        if locked_index.sort_key == locked_index.partition_key:
            return (("indexes", name, "sort_key"),
                    f"index `{name}`'s sort key is its partition key `{locked_index.partition_key}`")
        if locked_index.type == "local" and locked_index.partition_key != lock.partition_key:
            return (("indexes", name, "partition_key"), f"local index `{name}` has partition key "
                    f"`{locked_index.partition_key}`, the table `{lock.partition_key}`")
    return None
