"""The design lock: `<blueprint>.lock.json` beside each blueprint, the physical design it deployed.

Per environment (`default` without environments): the table's name, every secondary index (its key
attributes, projection and status) and every entity's key templates on the table and on each index,
with the encodings of the attributes inside them. `synth` writes it (`synth --locked` only checks it);
every command designs against it, so evolving a blueprint never re-keys an index that exists. It is
untrusted input like the blueprint: read with the same bounded loader, validated by these models.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, StringConstraints, ValidationError

from modules.blueprint.model import AttributeName, EntityName, IndexName, KeyAttributeName, Strict, TableName
from modules.blueprint.yamlsource import SourceMap, load_yaml
from modules.errors import BlueprintError

LOCK_VERSION: Literal[1] = 1
DEFAULT_ENVIRONMENT = "default"
Template = Annotated[str, StringConstraints(min_length=1, max_length=1024, pattern=r"^[A-Za-z0-9_.{}:#-]+$")]


class LockedProjection(Strict):
    type: Literal["KEYS_ONLY", "INCLUDE", "ALL"]
    attributes: list[KeyAttributeName] = Field(default_factory=list, max_length=100)


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
    shard_by: list[AttributeName] = Field(default_factory=list, max_length=16)


class LockedEntity(Strict):
    keys: dict[IndexName, LockedKey] = Field(
        description="`table` and each index the entity takes part in: its key templates there.")
    encodings: dict[AttributeName, Annotated[str, StringConstraints(max_length=64)]] = Field(
        default_factory=dict, description="How each attribute inside a key is written (a change re-keys items).")


class StackLock(Strict):
    table: TableName
    partition_key: KeyAttributeName = "PK"
    sort_key: KeyAttributeName | None = "SK"
    indexes: dict[IndexName, LockedIndex] = Field(default_factory=dict, max_length=30)
    entities: dict[EntityName, LockedEntity] = Field(default_factory=dict, max_length=100)


class LockFile(Strict):
    lock_version: Literal[1]
    blueprint: str
    environments: dict[Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9-]{0,30}$")], StackLock] = Field(
        max_length=20)


def lock_path(blueprint: Path) -> Path:
    """`blueprints/crm.yaml` -> `blueprints/crm.lock.json`."""
    return blueprint.with_name(f"{blueprint.stem}.lock.json")


def read_lock(path: Path) -> tuple[LockFile, SourceMap] | None:
    """The lock at `path`, validated; None when there is none."""
    if not path.exists() and not path.is_symlink():
        return None
    data, source = load_yaml(path)  # JSON is YAML: same bounds, same located errors
    try:
        return LockFile.model_validate(data), source
    except ValidationError as error:
        detail = error.errors()[0]
        where = tuple(step for step in detail["loc"] if isinstance(step, (str, int)))
        raise BlueprintError(f"the design lock is not valid: {'.'.join(map(str, where))}: {detail['msg']}",
                             location=source.locate(where), code="E403",
                             hint=f"restore {path.name} from git, or delete it and run `python main.py synth` to "
                                  "write it again from the deployed design") from None
