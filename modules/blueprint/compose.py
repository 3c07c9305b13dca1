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

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from modules.blueprint.yamlsource import SourceMap, load_yaml
from modules.errors import BlueprintError, FieldPath, SourceLocation

ADDITIVE_LISTS: frozenset[FieldPath] = frozenset({("required_tags",)})
ENVIRONMENT_NAME = r"[a-z][a-z0-9-]{0,30}"


@dataclass
class Document:
    data: dict[str, Any]
    source: SourceMap


def _subtree(source: SourceMap, prefix: FieldPath) -> dict[FieldPath, SourceLocation]:
    return {path: location for path, location in source.positions.items() if path[: len(prefix)] == prefix}


def _merge(path: FieldPath, base: Any, top: Any, base_source: SourceMap, top_source: SourceMap,
           positions: dict[FieldPath, SourceLocation]) -> Any:
    if isinstance(base, dict) and isinstance(top, dict):
        positions[path] = top_source.positions.get(path) or base_source.positions.get(path) or positions.get(path)
        merged: dict[str, Any] = {}
        for key, value in base.items():
            if key not in top:
                merged[key] = value
                positions.update(_subtree(base_source, path + (key,)))
        for key, value in top.items():
            if value is None:
                continue  # an explicit null removes the inherited value
            if key in base:
                merged[key] = _merge(path + (key,), base[key], value, base_source, top_source, positions)
            else:
                merged[key] = value
                positions.update(_subtree(top_source, path + (key,)))
        return merged
    if path in ADDITIVE_LISTS and isinstance(base, list) and isinstance(top, list):
        merged_list = list(base)
        for position, item in enumerate(base):
            positions.update(_subtree(base_source, path + (position,)))
        for position, item in enumerate(top):
            if item not in merged_list:
                new = len(merged_list)
                merged_list.append(item)
                for sub, location in _subtree(top_source, path + (position,)).items():
                    positions[path + (new,) + sub[len(path) + 1:]] = location
        positions[path] = top_source.positions.get(path, base_source.positions.get(path))
        return merged_list
    positions.update(_subtree(top_source, path))
    return top


def merge(base: Document, top: Document) -> Document:
    """`top` over `base` with the rules above; provenance follows the winning values."""
    positions: dict[FieldPath, SourceLocation] = {}
    data = _merge((), base.data, top.data, base.source, top.source, positions)
    return Document(data, SourceMap(top.source.file, positions))


def _extends(data: dict[str, Any], path: Path, source: SourceMap) -> list[tuple[Path, SourceLocation]]:
    raw = data.pop("extends", None)
    if raw is None:
        return []
    entries = [raw] if isinstance(raw, str) else raw
    if not isinstance(entries, list) or not all(isinstance(e, str) for e in entries):
        raise BlueprintError("`extends` must be a path or a list of paths", location=source.locate(("extends",)),
                             hint="write `extends: shared/platform-base.yaml`, relative to this file")
    return [(path.parent / entry, source.locate(("extends", position) if isinstance(raw, list) else ("extends",)))
            for position, entry in enumerate(entries)]


def read_document(path: Path, chain: tuple[Path, ...] = ()) -> Document:
    """A blueprint file with everything it extends merged in (extended files first, in order)."""
    data, source = load_yaml(path)
    if not isinstance(data, dict):
        raise BlueprintError("a blueprint must be a mapping of fields", location=source.locate(()),
                             hint="start with `blueprint: <name>` or `extends: <file>`")
    composed = Document({}, SourceMap(str(path)))
    for parent, location in _extends(data, path, source):
        trail = " -> ".join(str(p) for p in chain + (path, parent))
        if parent.resolve() in {p.resolve() for p in chain + (path,)}:
            raise BlueprintError(f"`extends` forms a cycle: {trail}", location=location,
                                 hint="remove one of the `extends` entries")
        if not parent.is_file():
            raise BlueprintError(f"extended file not found: {parent} (chain: {trail})", location=location,
                                 hint="paths in `extends` are relative to the file that names them")
        composed = merge(composed, read_document(parent, chain + (path,)))
    return merge(composed, Document(data, source))


def environment_documents(document: Document) -> dict[str | None, Document]:
    """One document per environment (the base with that overlay merged), or {None: base} without any."""
    data = dict(document.data)
    environments = data.pop("environments", None) or {}
    base_positions = {p: l for p, l in document.source.positions.items() if p[:1] != ("environments",)}
    base = Document(data, SourceMap(document.source.file, base_positions))
    if not isinstance(environments, dict):
        raise BlueprintError("`environments` must map names to overlays", location=document.source.locate(("environments",)),
                             hint="write `environments: {dev: {...}, prod: {...}}`")
    if not environments:
        return {None: base}
    documents = {}
    for name, overlay in sorted(environments.items()):
        where = ("environments", name)
        if not re.fullmatch(ENVIRONMENT_NAME, name):
            raise BlueprintError(f"environment name {name!r} is not valid", location=document.source.locate(where),
                                 hint="use lowercase letters, digits and '-', starting with a letter (e.g. `prod`)")
        if overlay is None:
            overlay = {}
        if not isinstance(overlay, dict):
            raise BlueprintError(f"environment `{name}` must be a mapping of overrides",
                                 location=document.source.locate(where), hint="write `{}` for no overrides")
        rerooted = {p[2:]: l for p, l in document.source.positions.items() if p[:2] == where}
        documents[name] = merge(base, Document(overlay, SourceMap(document.source.file, rerooted)))
    return documents
