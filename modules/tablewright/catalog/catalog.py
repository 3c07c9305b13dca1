"""The catalog (`list`) of a directory of blueprints, and the scaffold (`new`) for a service."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from tablewright.blueprint.compose import ROOT_ENVIRONMENT, blueprint_files, read_document, repository_root
from tablewright.blueprint.load import load_blueprints
from tablewright.blueprint.yamlsource import load_yaml
from tablewright.errors import BlueprintError, ErrorCode, TablewrightError
from tablewright.files import create_new_file


@dataclass(frozen=True)
class Entry:
    blueprint: str
    version: str
    owner: str
    environments: list[str]
    tables: list[str]
    entities: int
    patterns: int
    file: str
    description: str
    kind: str  # "service", "shared" or "invalid"
    error: str = ""


def is_service_blueprint(path: Path) -> bool:
    """A blueprint of its own (it names its `blueprint:`), not a shared base; a file that cannot be read counts,
    so that whoever runs over it sees why."""
    try:
        data, _ = load_yaml(path)
    except TablewrightError:
        return True
    return isinstance(data, dict) and "blueprint" in data


def service_blueprints(directory: Path) -> list[Path]:
    """Every service blueprint under `directory` (shared bases, which name no `blueprint:`, left out)."""
    return [path for path in blueprint_files(directory) if is_service_blueprint(path)] if directory.is_dir() else []


def catalog(directory: Path) -> list[Entry]:
    entries = []
    for path in blueprint_files(directory):
        relative = os.path.relpath(path)
        try:
            document = read_document(path)
            if "blueprint" not in document.data:
                entries.append(Entry(str(path.relative_to(directory)), "", str(document.data.get("owner", "")), [],
                                     [], 0, 0, relative, "shared base (extended by service blueprints)", "shared"))
                continue
            stacks = load_blueprints(path)
        except TablewrightError as error:
            entries.append(Entry(path.stem, "", "", [], [], 0, 0, relative, "", "invalid", error.render()))
            continue
        model = stacks[0].blueprint
        entries.append(Entry(
            blueprint=model.blueprint,
            version=model.version,
            owner=model.owner or "",
            environments=[s.environment for s in stacks if s.environment],
            tables=[s.blueprint.table.name for s in stacks],
            entities=len(model.entities),
            patterns=len(model.access_patterns),
            file=relative,
            description=" ".join((model.description or "").split()),
            kind="service",
        ))
    return entries


SCAFFOLD = """\
# yaml-language-server: $schema={schema}
extends: {base}
blueprint: {name}
version: 0.1.0
description: What {name} stores and who reads it.
owner: team-{name}
tags:
  service: {name}
  owner: team-{name}
  cost-center: set-me
table:
  name: {table}
entities:
  Item:
    attributes:
      itemId: {{type: string, pattern: "^[A-Za-z0-9-]+$"}}
      title: string
      createdAt: timestamp
    key: {{pk: "ITEM#{{itemId}}", sk: "ITEM"}}
    item_bytes: 500
    writes_per_second: 1
access_patterns:
  item_by_id:
    entity: Item
    where: {{itemId: "="}}
    rps: 1
    returns: [title, createdAt]
"""


def check_blueprint_name(name: str, option: str = "NAME") -> None:
    """A new blueprint's name (`new NAME`, `adopt --name`): its file name and stack name, so nothing else."""
    if not re.fullmatch(r"[a-z][a-z0-9-]{0,62}", name):
        raise BlueprintError(f"{option} {name!r} is not a valid blueprint name", code=ErrorCode.USAGE,
                             hint="use lowercase letters, digits and '-', starting with a letter, at most 63 (e.g. "
                                  "`billing`); it names the file and the stack, never a path")


def scaffold(name: str, directory: Path, base: Path, schema: Path) -> Path:
    """Write `<directory>/<name>.yaml`, a blueprint that extends the platform base and passes lint."""
    check_blueprint_name(name)
    path = directory / f"{name}.yaml"
    if path.exists() or path.is_symlink():
        raise BlueprintError(f"{path} already exists", code=ErrorCode.PATH_ARGUMENT,
                             hint="choose another name or edit the existing blueprint")
    if directory.exists() and not directory.is_dir():
        raise BlueprintError(f"--dir {directory} is not a directory", code=ErrorCode.PATH_ARGUMENT,
                             hint="pass the directory the blueprint goes into")
    if not base.is_file():
        raise BlueprintError(f"platform base not found: {base}", code=ErrorCode.PLATFORM_BASE,
                             hint="pass --base with the shared blueprint to extend")
    root = repository_root(path)
    if not base.resolve().is_relative_to(root):
        raise BlueprintError(f"the platform base {base} is outside the repository that holds {path} ({root})",
                             code=ErrorCode.PLATFORM_BASE,
                             hint=f"keep both in one repository, or set {ROOT_ENVIRONMENT}")
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise BlueprintError(f"cannot create --dir {directory}: {error.strerror}", code=ErrorCode.PATH_ARGUMENT,
                             hint="pass a directory path") from None
    text = SCAFFOLD.format(
        name=name,
        table=f"{name.replace('-', '_')}_main",
        base=os.path.relpath(base, directory),
        schema=os.path.relpath(schema, directory),
    )
    create_new_file(path, text)
    return path
