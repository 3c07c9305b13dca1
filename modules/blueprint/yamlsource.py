"""Safe YAML reading that remembers where every value came from.

Only plain data is accepted: no tags, no merge keys, no duplicate keys, a bounded file size and a
bounded number of nodes after alias expansion (so an alias bomb is refused, not expanded).
Plain scalars follow the YAML 1.2 core schema (`yes`, `02:00` and `2024-01-01` stay strings),
which is what people mean in a blueprint.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from modules.errors import BlueprintError, FieldPath, SourceLocation

MAX_FILE_BYTES = 1_000_000
MAX_NODES = 100_000
MAX_DEPTH = 64

_STANDARD = "tag:yaml.org,2002:"
_ALLOWED_TAGS = {
    _STANDARD + name
    for name in ("str", "int", "float", "bool", "null", "map", "seq", "value", "timestamp")
}
_INT = re.compile(r"[-+]?[0-9]+")
_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?")


@dataclass
class SourceMap:
    """Where each field of a document starts (file, 1-based line and column). A composed blueprint
    (`extends:`, environments) maps each field to the file that supplied its value."""

    file: str
    positions: dict[FieldPath, SourceLocation] = field(default_factory=dict)

    def locate(self, path: FieldPath) -> SourceLocation:
        """The position of `path`, or of its nearest ancestor that exists in the document."""
        probe = tuple(path)
        while probe not in self.positions and probe:
            probe = probe[:-1]
        return self.positions.get(probe, SourceLocation(self.file, 1, 1))


def read_text(path: Path) -> str:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise BlueprintError(
            f"file not found: {path}", hint="check the path; paths are relative to the current directory"
        ) from None
    except IsADirectoryError:
        raise BlueprintError(f"{path} is a directory, not a blueprint file") from None
    if len(raw) > MAX_FILE_BYTES:
        raise BlueprintError(
            f"{path} is {len(raw):,} bytes; blueprints are limited to {MAX_FILE_BYTES:,} bytes",
            location=SourceLocation(str(path), 1, 1),
            hint="split the file with `extends:` or remove generated content",
        )
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        line = raw[: error.start].count(b"\n") + 1
        raise BlueprintError(
            "the file is not valid UTF-8",
            location=SourceLocation(str(path), line, 1),
            hint="save the file as UTF-8",
        ) from None


def load_yaml(path: Path) -> tuple[Any, SourceMap]:
    """Parse `path` into plain dicts/lists/scalars plus a map of where each value starts."""
    text = read_text(path)
    source = SourceMap(str(path))
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        if error.context_mark is not None and mark.index >= len(text.rstrip()):
            mark = error.context_mark  # an unclosed bracket or quote: point where it opened, not at the end
        location = SourceLocation(str(path), mark.line + 1, mark.column + 1) if mark else None
        problem = error.problem or error.context or "invalid YAML"
        raise BlueprintError(
            f"invalid YAML: {problem}",
            location=location,
            hint="check indentation and quoting near this line; quote values that contain ': ' or '#'",
        ) from None
    except yaml.YAMLError as error:
        raise BlueprintError(f"invalid YAML: {error}", location=SourceLocation(str(path), 1, 1)) from None
    if node is None:
        raise BlueprintError(
            "the file is empty", location=SourceLocation(str(path), 1, 1), hint="start with `blueprint: <name>`"
        )
    converter = _Converter(source)
    return converter.convert(node, (), 0), source


class _Converter:
    def __init__(self, source: SourceMap) -> None:
        self.source = source
        self.nodes = 0

    def _location(self, node: yaml.Node) -> SourceLocation:
        return SourceLocation(self.source.file, node.start_mark.line + 1, node.start_mark.column + 1)

    def _error(self, node: yaml.Node, message: str, hint: str | None = None) -> BlueprintError:
        return BlueprintError(message, location=self._location(node), hint=hint)

    def convert(self, node: yaml.Node, path: FieldPath, depth: int) -> Any:
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise self._error(
                node,
                f"the document expands to more than {MAX_NODES:,} values (anchors and aliases included)",
                hint="remove deeply nested aliases; blueprints are small documents",
            )
        if depth > MAX_DEPTH:
            raise self._error(node, f"nesting deeper than {MAX_DEPTH} levels", hint="flatten the structure")
        self.source.positions.setdefault(path, self._location(node))
        if node.tag not in _ALLOWED_TAGS:
            raise self._error(
                node, f"YAML tag {node.tag!r} is not allowed", hint="remove the tag; blueprints hold plain data only"
            )
        if isinstance(node, yaml.ScalarNode):
            return _scalar(node)
        if isinstance(node, yaml.SequenceNode):
            return [self.convert(item, path + (index,), depth + 1) for index, item in enumerate(node.value)]
        return self._mapping(node, path, depth)

    def _mapping(self, node: yaml.MappingNode, path: FieldPath, depth: int) -> dict[str, Any]:
        result: dict[str, Any] = {}
        for key_node, value_node in node.value:
            if key_node.tag == _STANDARD + "merge":
                raise self._error(
                    key_node, "YAML merge keys (`<<`) are not supported", hint="use `extends:` to share settings"
                )
            if not isinstance(key_node, yaml.ScalarNode) or key_node.tag not in _ALLOWED_TAGS:
                raise self._error(key_node, "mapping keys must be plain names", hint="write `name: value`")
            key = _scalar(key_node)
            key = "null" if key is None else str(key).lower() if isinstance(key, bool) else str(key)
            if key in result:
                first = self.source.positions[path + (key,)].line
                raise self._error(
                    key_node,
                    f"duplicate key {key!r} (first defined on line {first})",
                    hint="remove one of them; YAML would silently keep only the last",
                )
            child = path + (key,)
            self.source.positions[child] = self._location(key_node)
            result[key] = self.convert(value_node, child, depth + 1)
        return result


def _scalar(node: yaml.ScalarNode) -> Any:
    text = node.value
    if node.style is not None or node.tag == _STANDARD + "str":
        return text
    lowered = text.lower()
    if lowered in ("", "~", "null"):
        return None
    if lowered in ("true", "false"):
        return lowered == "true"
    if _INT.fullmatch(text):
        return int(text)
    if _FLOAT.fullmatch(text):
        return float(text)
    return text
