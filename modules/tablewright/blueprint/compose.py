"""Composition: `extends:` chains and `environments:` overlays, merged with provenance.

Merge rules (documented in the README):
- mappings merge key by key, recursively; the extending file (or the environment overlay) wins;
- lists replace the inherited list, except additive ones (`required_tags`), which append;
- an explicit `null` removes the inherited value;
- `extends:` takes a path or a list of paths, relative to the extending file, applied in order.

Every value keeps the file, line and column it came from, so errors and `explain --resolved` can
say where a composed value was written.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tablewright.blueprint.yamlsource import SourceMap, load_yaml
from tablewright.errors import BlueprintError, ErrorCode, FieldPath, SourceLocation

ADDITIVE_LISTS: frozenset[FieldPath] = frozenset({("required_tags",)})
ENVIRONMENT_NAME = r"[a-z][a-z0-9-]{0,30}"
MAX_ENVIRONMENTS = 20
OVERLAY_REFUSED = frozenset({"extends", "environments", "tenant"})  # tenant: keys and policies of every stack


@dataclass
class Document:
    data: dict[str, Any]
    source: SourceMap


class Subtrees:
    """The positions of a source map under any path, found in time proportional to what is found: a merge
    copies the provenance of every value it keeps, and scanning the whole map for each would make
    composition quadratic in the size of the blueprint."""

    def __init__(self, source: SourceMap) -> None:
        self.positions = source.positions
        self.children: dict[FieldPath, list[FieldPath]] = {}
        linked: set[FieldPath] = set()
        for path in source.positions:  # each path is linked to its parent once, intermediate ones included
            while path and path not in linked:
                linked.add(path)
                self.children.setdefault(path[:-1], []).append(path)
                path = path[:-1]

    def under(self, prefix: FieldPath) -> dict[FieldPath, SourceLocation]:
        """`prefix` and everything below it that has a position, in document order."""
        found: dict[FieldPath, SourceLocation] = {}
        pending = [prefix]
        while pending:
            path = pending.pop()
            if path in self.positions:
                found[path] = self.positions[path]
            pending += reversed(self.children.get(path, ()))
        return found


def _seen_key(item: Any) -> str:
    return json.dumps(item, sort_keys=True, default=str)


def _merge(path: FieldPath, base: Any, top: Any, base_source: Subtrees, top_source: Subtrees,
           positions: dict[FieldPath, SourceLocation]) -> Any:
    if isinstance(base, dict) and isinstance(top, dict):
        location = top_source.positions.get(path) or base_source.positions.get(path) or positions.get(path)
        if location is not None:  # always: `top` was read from a file that has this path
            positions[path] = location
        merged: dict[str, Any] = {}
        for key, value in base.items():
            if key not in top:
                merged[key] = value
                positions.update(base_source.under((*path, key)))
        for key, value in top.items():
            if value is None:
                continue  # an explicit null removes the inherited value
            if key in base:
                merged[key] = _merge((*path, key), base[key], value, base_source, top_source, positions)
            else:
                merged[key] = value
                positions.update(top_source.under((*path, key)))
        return merged
    if path in ADDITIVE_LISTS and isinstance(base, list) and isinstance(top, list):
        merged_list = list(base)
        seen = {_seen_key(item) for item in base}
        for position in range(len(base)):
            positions.update(base_source.under((*path, position)))
        for position, item in enumerate(top):
            if _seen_key(item) not in seen:
                seen.add(_seen_key(item))
                new = len(merged_list)
                merged_list.append(item)
                for sub, location in top_source.under((*path, position)).items():
                    positions[(*path, new, *sub[len(path) + 1:])] = location
        list_location = top_source.positions.get(path, base_source.positions.get(path))
        if list_location is not None:  # always, as for mappings above
            positions[path] = list_location
        return merged_list
    positions.update(top_source.under(path))
    return top


def merge(base: Document, top: Document) -> Document:
    """`top` over `base` with the rules above; provenance follows the winning values."""
    positions: dict[FieldPath, SourceLocation] = {}
    data = _merge((), base.data, top.data, Subtrees(base.source), Subtrees(top.source), positions)
    return Document(data, SourceMap(top.source.file, positions))


MAX_EXTENDED_FILES = 32
MAX_EXTENDS_DEPTH = 16
ROOT_ENVIRONMENT = "TABLEWRIGHT_ROOT"


def repository_root(blueprint: Path) -> Path:
    """Where `extends` may reach: `TABLEWRIGHT_ROOT` when set, else the git work tree holding the
    blueprint (the nearest ancestor with `.git`), else the working directory when the blueprint is
    inside it, else the blueprint's own directory."""
    configured = os.environ.get(ROOT_ENVIRONMENT)
    if configured:
        return Path(configured).resolve()
    start = Path(os.path.abspath(blueprint)).parent
    for candidate in (start, *start.parents):
        if (candidate / ".git").exists():
            return candidate.resolve()
    working = Path.cwd().resolve()
    return working if start.resolve().is_relative_to(working) else start.resolve()


def resolve_inside(root: Path, entry: str, relative_to: Path, location: SourceLocation, field: str,
                   code: ErrorCode) -> Path:
    """The file `entry` names, relative to the directory `relative_to`, refused unless it stays inside `root`
    (checked before the file is looked up, and again after symbolic links are resolved)."""
    def refuse(problem: str, hint: str) -> BlueprintError:
        return BlueprintError(f"`{field}: {entry}` {problem}", location=location, code=code, hint=hint)

    if not entry or Path(entry).is_absolute():
        raise refuse("is not a relative path", f"paths in `{field}` are relative to the file that names them")
    candidate = relative_to / entry
    outside = refuse(f"leaves the repository root {root}",
                     f"keep the file inside the repository (or set {ROOT_ENVIRONMENT})")
    if not Path(os.path.normpath(os.path.abspath(candidate))).is_relative_to(root):
        raise outside
    try:
        resolved = candidate.resolve(strict=True)
    except FileNotFoundError:
        raise refuse(f"names no file ({candidate})", f"paths in `{field}` are relative to the file that "
                                                     "names them") from None
    except (OSError, RuntimeError):
        raise refuse("cannot be resolved (a symbolic link loop?)", "point it at a real file") from None
    if not resolved.is_relative_to(root):
        raise outside
    return resolved


def _extends_entries(data: dict[str, Any], source: SourceMap) -> list[tuple[str, SourceLocation]]:
    raw = data.pop("extends", None)
    if raw is None:
        return []
    entries = [raw] if isinstance(raw, str) else raw
    if not isinstance(entries, list) or not all(isinstance(e, str) for e in entries):
        raise BlueprintError("`extends` must be a path or a list of paths", location=source.locate(("extends",)),
                             code=ErrorCode.EXTENDS,
                             hint="write `extends: shared/platform-base.yaml`, relative to this file")
    return [(entry, source.locate(("extends", position) if isinstance(raw, list) else ("extends",)))
            for position, entry in enumerate(entries)]


class Composer:
    """Reads a blueprint and everything it extends, each file once (memoised), all inside `root`."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        self.documents: dict[Path, Document] = {}

    def _resolve(self, entry: str, extending: Path, location: SourceLocation, chain: tuple[Path, ...]) -> Path:
        def refuse(problem: str, hint: str) -> BlueprintError:
            return BlueprintError(f"`extends: {entry}` {problem}", location=location, code=ErrorCode.EXTENDS, hint=hint)

        relative = "paths in `extends` are relative to the file that names them"
        if not entry or Path(entry).is_absolute():
            raise refuse("is not a relative path", relative)
        if Path(entry).suffix not in (".yaml", ".yml"):
            raise refuse("is not a blueprint file", "extend a .yaml file")
        candidate = extending.parent / entry
        outside = refuse(f"leaves the repository root {self.root}",
                         f"keep shared blueprints inside the repository (or set {ROOT_ENVIRONMENT})")
        if not Path(os.path.normpath(os.path.abspath(candidate))).is_relative_to(self.root):
            raise outside  # checked before touching the file, so nothing outside is even looked up
        try:
            resolved = candidate.resolve(strict=True)
        except FileNotFoundError:
            trail = " -> ".join(str(p) for p in (*chain, extending, candidate))
            raise BlueprintError(f"extended file not found: {candidate} (chain: {trail})", location=location,
                                 code=ErrorCode.EXTENDS, hint=relative) from None
        except (OSError, RuntimeError):
            raise refuse("cannot be resolved (a symbolic link loop?)", "point it at a real file") from None
        if not resolved.is_relative_to(self.root):
            raise outside  # a symbolic link inside the repository pointing out of it
        return resolved

    @staticmethod
    def resolved(path: Path) -> Path:
        """The real path, or the absolute one when it cannot be resolved (read_text says why)."""
        try:
            return path.resolve(strict=True)
        except (OSError, RuntimeError):
            return Path(os.path.abspath(path))

    def read(self, path: Path) -> Document:
        """The blueprint at `path` with everything it extends merged in (extended files first, in order)."""
        return self._read(path, self.resolved(path), ())

    def _read(self, path: Path, resolved: Path, chain: tuple[Path, ...]) -> Document:
        if resolved in self.documents:
            return self.documents[resolved]
        if len(self.documents) >= MAX_EXTENDED_FILES:
            raise BlueprintError(f"more than {MAX_EXTENDED_FILES} files in the `extends` tree",
                                 location=SourceLocation(str(path), 1, 1), code=ErrorCode.EXTENDS,
                                 hint="flatten the shared blueprints into fewer files")
        data, source = load_yaml(path)
        if not isinstance(data, dict):
            raise BlueprintError("a blueprint must be a mapping of fields", location=source.locate(()),
                                 code=ErrorCode.WRONG_TYPE,
                                 hint="start with `blueprint: <name>` or `extends: <file>`")
        composed = Document({}, SourceMap(str(path)))
        for entry, location in _extends_entries(data, source):
            parent = self._resolve(entry, path, location, chain)
            trail = " -> ".join(str(p) for p in (*chain, resolved, parent))
            if parent in (*chain, resolved):
                raise BlueprintError(f"`extends` forms a cycle: {trail}", location=location, code=ErrorCode.EXTENDS,
                                     hint="remove one of the `extends` entries")
            if len(chain) >= MAX_EXTENDS_DEPTH:
                raise BlueprintError(f"`extends` chains more than {MAX_EXTENDS_DEPTH} files deep: {trail}",
                                     location=location, code=ErrorCode.EXTENDS, hint="flatten the shared blueprints")
            shown = Path(os.path.relpath(parent)) if parent.is_relative_to(Path.cwd()) else parent
            composed = merge(composed, self._read(shown, parent, (*chain, resolved)))
        _keep_tenant(composed, data, source)
        document = merge(composed, Document(data, source))
        self.documents[resolved] = document
        return document


def _keep_tenant(base: Document, data: dict[str, Any], source: SourceMap) -> None:
    """A blueprint cannot change or remove the `tenant` of what it extends: its keys and every policy rest on it."""
    inherited = base.data.get("tenant")
    if inherited is not None and "tenant" in data and data["tenant"] != inherited:
        raise BlueprintError(
            f"`tenant` is `{inherited}` in {base.source.locate(('tenant',))}: an extending "
            "blueprint cannot change or remove it", location=source.locate(("tenant",)), code=ErrorCode.EXTENDS,
            hint="remove `tenant` here: the items and policies of a tenant base stay confined to one tenant")


def blueprint_files(directory: Path) -> list[Path]:
    """The .yaml and .yml files under `directory`, without following symbolic links to directories (no loops)."""
    if not directory.is_dir():
        raise BlueprintError(f"{directory} is not a directory", code=ErrorCode.PATH_ARGUMENT,
                               hint="pass the directory that holds the blueprints (default: blueprints/)")
    found = []
    for parent, directories, files in os.walk(directory, followlinks=False):
        directories.sort()
        found += [Path(parent) / name for name in sorted(files) if name.endswith((".yaml", ".yml"))]
    return sorted(found)


def linked_directories(directory: Path) -> list[Path]:
    """Symbolic links to directories under `directory`: `blueprint_files` does not look inside them."""
    return sorted(Path(parent) / name for parent, directories, _ in os.walk(directory, followlinks=False)
                  for name in directories if (Path(parent) / name).is_symlink())


def read_document(path: Path, root: Path | None = None) -> Document:
    """A blueprint file with everything it extends merged in; `extends` stays inside `root`
    (default: the repository holding the file)."""
    return Composer(root or repository_root(path)).read(path)


def extends_tree(path: Path, root: Path | None = None) -> list[Path]:
    """Every file the blueprint at `path` is composed from, itself included (resolved paths), read as
    `read_document` reads them (the same checks and limits)."""
    composer = Composer(root or repository_root(path))
    composer.read(path)
    return sorted(composer.documents)


def environment_documents(document: Document) -> dict[str | None, Document]:
    """One document per environment (the base with that overlay merged), or {None: base} without any."""
    data = dict(document.data)
    environments = data.pop("environments", None) or {}
    base_positions = {p: loc for p, loc in document.source.positions.items() if p[:1] != ("environments",)}
    base = Document(data, SourceMap(document.source.file, base_positions))
    if not isinstance(environments, dict):
        raise BlueprintError("`environments` must map names to overlays",
                             location=document.source.locate(("environments",)), code=ErrorCode.ENVIRONMENTS,
                             hint="write `environments: {dev: {...}, prod: {...}}`")
    if len(environments) > MAX_ENVIRONMENTS:
        raise BlueprintError(f"{len(environments)} environments; at most {MAX_ENVIRONMENTS}",
                             location=document.source.locate(("environments",)), code=ErrorCode.OVER_LIMIT,
                             hint="split the blueprint, or remove environments nobody deploys")
    if not environments:
        return {None: base}
    documents = {}
    for name, overlay in sorted(environments.items()):
        where = ("environments", name)
        if not re.fullmatch(ENVIRONMENT_NAME, name):
            raise BlueprintError(f"environment name {name!r} is not valid", location=document.source.locate(where),
                                 code=ErrorCode.ENVIRONMENTS,
                                 hint="use lowercase letters, digits and '-', starting with a letter (e.g. `prod`)")
        if overlay is None:
            overlay = {}
        if not isinstance(overlay, dict):
            raise BlueprintError(f"environment `{name}` must be a mapping of overrides",
                                 location=document.source.locate(where), code=ErrorCode.ENVIRONMENTS,
                                 hint="write `{}` for no overrides")
        for key in sorted(OVERLAY_REFUSED & overlay.keys()):
            raise BlueprintError(f"`{key}` cannot be set per environment",
                                 location=document.source.locate((*where, key)), code=ErrorCode.ENVIRONMENTS,
                                 hint=f"move `{key}` to the top level of the blueprint")
        rerooted = {p[2:]: loc for p, loc in document.source.positions.items() if p[:2] == where}
        documents[name] = merge(base, Document(overlay, SourceMap(document.source.file, rerooted)))
    return documents
