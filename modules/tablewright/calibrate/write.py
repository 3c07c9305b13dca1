"""`calibrate --write`: the changes a calibration names, made in the blueprint files they are in, comments, order
and layout kept. A round-trip YAML reader (ruamel.yaml) holds the file with its comments; a file whose layout
it would not reproduce byte for byte is refused rather than reformatted.

Each change is found by its line (the located value, which may be in an environment overlay): the mapping key
on that line with the field's name.
"""

from __future__ import annotations

import difflib
import io
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap

from tablewright.calibrate.compare import Change
from tablewright.errors import ErrorCode, TablewrightError

# (mapping, sequence, offset) indents tried, the common layouts first
LAYOUTS = ((2, 4, 2), (2, 2, 0), (4, 4, 2), (4, 6, 4), (2, 4, 0))


def _round_trip(text: str) -> tuple[YAML, Any] | None:
    """A reader that writes `text` back unchanged, and the document; None when no layout does."""
    for mapping, sequence, offset in LAYOUTS:
        yaml = YAML()
        yaml.preserve_quotes = True
        yaml.width = 4096
        yaml.indent(mapping=mapping, sequence=sequence, offset=offset)
        document = yaml.load(text)
        if _dump(yaml, document) == text:
            return yaml, document
    return None


def _dump(yaml: YAML, document: Any) -> str:
    buffer = io.StringIO()
    yaml.dump(document, buffer)
    return buffer.getvalue()


def _mappings(node: Any) -> list[CommentedMap]:
    found = []
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, CommentedMap):
            found.append(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found


def _place(document: Any, line: int, name: str) -> tuple[CommentedMap, str] | None:
    """The mapping holding key `name` on 1-based `line`."""
    for mapping in _mappings(document):
        if name in mapping and mapping.lc.key(name)[0] + 1 == line:
            return mapping, name
    return None


def _value(number: float) -> int | float:
    """A whole number as YAML writes an integer (`240`, not `240.0`)."""
    return int(number) if float(number).is_integer() else number


def _set(document: Any, change: Change) -> bool:
    parts = change.field.split(".")
    if parts[-1] == "hot_key_share":  # the attribute's line: `name: string` or a mapping
        place = _place(document, change.location.line, parts[-2])
        if place is None:
            return False
        mapping, name = place
        spec = mapping[name]
        if isinstance(spec, str):
            spec = CommentedMap([("type", spec)])
            spec.fa.set_flow_style()
            mapping[name] = spec
        if not isinstance(spec, CommentedMap):
            return False
        spec["hot_key_share"] = _value(change.suggested)
        return True
    place = _place(document, change.location.line, parts[-1])
    if place is None:
        return False
    mapping, name = place
    mapping[name] = _value(change.suggested)
    return True


def write_changes(changes: Sequence[Change]) -> tuple[list[tuple[Path, str]], list[Change]]:
    """Each file with its changes made: (path, new text) and the changes that could not be placed (a field the
    file does not hold on that line)."""
    by_file: dict[str, list[Change]] = {}
    for change in changes:
        by_file.setdefault(change.location.file, []).append(change)
    written, missed = [], []
    for file, mine in sorted(by_file.items()):
        path = Path(file)
        text = path.read_text(encoding="utf-8")
        reader = _round_trip(text)
        if reader is None:
            raise TablewrightError(f"{file}: its layout would not be kept by rewriting it", code=ErrorCode.USAGE,
                                   hint="make the changes the report names by hand, or leave out --write")
        yaml, document = reader
        missed += [change for change in mine if not _set(document, change)]
        new = _dump(yaml, document)
        if new != text:
            written.append((path, new))
    return written, missed


def diff(path: Path, before: str, after: str) -> str:
    name = os.path.relpath(path)
    return "".join(difflib.unified_diff(before.splitlines(keepends=True), after.splitlines(keepends=True),
                                        f"a/{name}", f"b/{name}"))
