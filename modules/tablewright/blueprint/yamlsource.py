"""Safe YAML reading that remembers where every value came from.

Only plain data is accepted: no tags, no merge keys, no duplicate keys, a bounded file size and a
bounded number of nodes after alias expansion (so an alias bomb is refused, not expanded).
Plain scalars follow the YAML 1.2 core schema (`yes`, `02:00` and `2024-01-01` stay strings),
which is what people mean in a blueprint.
"""

from __future__ import annotations

import math
import re
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from tablewright.errors import BlueprintError, ErrorCode, FieldPath, SourceLocation, missing_path_hint

_STANDARD = "tag:yaml.org,2002:"

# libyaml's parser (bundled with PyYAML's wheels) reads the same YAML about ten times faster; the
# pure-Python one stands in where PyYAML was built without it.
_PARSER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_PLAIN = "tag:tablewright,2024:plain"  # an untagged plain scalar YAML 1.1 would read as text


class _Loader(_PARSER):  # type: ignore[misc,valid-type]
    """Plain scalars are resolved by `_scalar` (YAML 1.2 core: `1e3` is a number): the parser's YAML 1.1
    resolver reads some as text, which an explicit `!!str` must stay, so those get a tag of their own."""

    def resolve(self, kind: type, value: str, implicit: tuple[bool, bool]) -> str:
        tag: str = super().resolve(kind, value, implicit)
        return _PLAIN if kind is yaml.ScalarNode and implicit[0] and tag == _STANDARD + "str" else tag


MAX_FILE_BYTES = 1_000_000
MAX_NODES = 100_000
MAX_TEXT = 4 * MAX_FILE_BYTES  # characters of text values, aliases expanded
MAX_DEPTH = 64
MAX_INTEGER_DIGITS = 15
# What YAML itself accepts, minus nothing: anything else (NUL, other C0 controls) is refused with its place.
_CONTROL = re.compile("[^\x09\x0a\x0d\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
# A byte order mark may open the file (dropped before parsing: libyaml skips it without counting it).
BOM = "\ufeff"
# Characters YAML reads as line breaks (or a byte order mark after the start) that editors show, and
# error locations count, differently: refused where they are, so every line number means one line.
_ODD_BREAK = re.compile("\r(?!\n)|[\x85\u2028\u2029\ufeff]")

# Unicode's control characters (category Cc: C0, DEL and C1), in a value; a description may hold line breaks and tabs.
_CONTROL_IN_LINE = re.compile("[\x00-\x1f\x7f-\x9f]")
_CONTROL_IN_TEXT = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")

_ALLOWED_TAGS = {
    _PLAIN, *(_STANDARD + name for name in ("str", "int", "float", "bool", "null", "map", "seq", "value", "timestamp"))
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


def read_text(path: Path, code_for_missing: ErrorCode = ErrorCode.UNREADABLE_FILE) -> str:
    """The file's text, refusing anything that is not a small regular UTF-8 file before reading it."""
    where = SourceLocation(str(path), 1, 1)
    try:
        status = path.stat()
    except FileNotFoundError:
        raise BlueprintError(f"file not found: {path}", code=code_for_missing,
                             hint=missing_path_hint(path, "check the path; paths are relative to the current "
                                                          "directory")) from None
    except OSError as error:
        raise BlueprintError(f"{path} cannot be read: {error.strerror}", code=ErrorCode.UNREADABLE_FILE,
                             hint="pass a readable blueprint file") from None
    if stat.S_ISDIR(status.st_mode):
        raise BlueprintError(f"{path} is a directory, not a blueprint file", code=ErrorCode.UNREADABLE_FILE,
                             hint="pass the .yaml file itself")
    if not stat.S_ISREG(status.st_mode):
        raise BlueprintError(f"{path} is not a regular file",
                             code=ErrorCode.UNREADABLE_FILE, hint="pass a blueprint .yaml file")
    def too_big(size: str) -> BlueprintError:
        return BlueprintError(f"{path} is {size} bytes; blueprints are limited to {MAX_FILE_BYTES:,} bytes",
                              location=where, code=ErrorCode.UNREADABLE_FILE,
                              hint="split the file with `extends:` or remove generated content")

    if status.st_size > MAX_FILE_BYTES:
        raise too_big(f"{status.st_size:,}")
    try:
        with path.open("rb") as handle:
            raw = handle.read(MAX_FILE_BYTES + 1)  # a file may grow, or report no size (/proc)
    except OSError as error:
        raise BlueprintError(f"{path} cannot be read: {error.strerror}", code=ErrorCode.UNREADABLE_FILE,
                             hint="pass a readable blueprint file") from None
    if len(raw) > MAX_FILE_BYTES:
        raise too_big(f"more than {MAX_FILE_BYTES:,}")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        line = raw[: error.start].count(b"\n") + 1
        raise BlueprintError("the file is not valid UTF-8", location=SourceLocation(str(path), line, 1),
                             code=ErrorCode.UNREADABLE_FILE,
                             hint="save the file as UTF-8") from None
    text = text.removeprefix(BOM)
    _refuse_control_characters(text, str(path))
    return text


def _refuse_control_characters(text: str, file: str) -> None:
    found = min((match for match in (_CONTROL.search(text), _ODD_BREAK.search(text)) if match is not None),
                key=lambda match: match.start(), default=None)
    if found is None:
        return
    character = f"U+{ord(found.group()[0]):04X}"
    problem = (f"control character {character}" if _CONTROL.fullmatch(found.group()) else
               f"{'a carriage return without a line feed' if found.group() == chr(13) else character} "
               "(a line break or byte order mark YAML reads differently from editors)")
    raise BlueprintError(f"{problem} is not allowed in a blueprint", location=_at(file, text, found.start()),
                         code=ErrorCode.UNREADABLE_FILE,
                         hint="remove it; blueprints are plain UTF-8 text with \\n (or \\r\\n) line ends")


# Texts read in place of files (real path -> text) inside `standing_in`: edits loaded before they are written.
_STANDING_IN: ContextVar[dict[Path, str] | None] = ContextVar("standing_in", default=None)


@contextmanager
def standing_in(texts: dict[Path, str]) -> Iterator[None]:
    """Within this block, `load_yaml` reads each of `texts` (path -> text) instead of its file: a change to a
    blueprint is loaded with every rule before it is written (`calibrate --write`)."""
    token = _STANDING_IN.set({path.resolve(): text for path, text in texts.items()})
    try:
        yield
    finally:
        _STANDING_IN.reset(token)


def load_yaml(path: Path) -> tuple[Any, SourceMap]:
    """Parse `path` into plain dicts/lists/scalars plus a map of where each value starts."""
    texts = _STANDING_IN.get()
    if texts and Path(path).resolve() in texts:
        return parse_yaml(texts[Path(path).resolve()], str(path))
    return parse_yaml(read_text(path), str(path))


def parse_yaml(text: str, file: str) -> tuple[Any, SourceMap]:
    """Parse blueprint text (already read and checked by `read_text`, or taken from git) with the same rules."""
    text = text.removeprefix(BOM)
    _refuse_control_characters(text, file)
    source = SourceMap(file)
    try:
        _check_depth(text, file)
        node = yaml.compose(text, Loader=_Loader)
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        if error.context_mark is not None and mark is not None and mark.index >= len(text.rstrip()):
            mark = error.context_mark  # an unclosed bracket or quote: point where it opened, not at the end
        location = _at(file, text, mark.index) if mark else SourceLocation(file, 1, 1)
        if "maximum nesting depth" in str(error.problem):  # libyaml's own limit, met before ours on one line
            raise BlueprintError(f"nesting deeper than {MAX_DEPTH} levels", location=location, code=ErrorCode.TOO_LARGE,
                                 hint="flatten the structure; blueprints are shallow documents") from None
        problem = error.problem or error.context or "invalid YAML"
        if error.context and problem.startswith("but "):  # "expected a single document ..., but found another"
            problem = f"{error.context}, {problem}"
        raise BlueprintError(
            f"invalid YAML: {problem}",
            location=location,
            code=ErrorCode.YAML_SYNTAX,
            hint="check indentation and quoting near this line; quote values that contain ': ' or '#'",
        ) from None
    except yaml.YAMLError as error:
        raise BlueprintError(f"invalid YAML: {str(error).splitlines()[0]}", location=SourceLocation(file, 1, 1),
                             code=ErrorCode.YAML_SYNTAX,
                             hint="check the file is a YAML mapping of blueprint fields") from None
    if node is None:
        raise BlueprintError(
            "the file is empty", location=SourceLocation(file, 1, 1), code=ErrorCode.YAML_SYNTAX,
            hint="start with `blueprint: <name>`"
        )
    converter = _Converter(source)
    return converter.convert(node, (), 0), source


def _at(file: str, text: str, index: int) -> SourceLocation:
    """The line and column of a character offset (libyaml puts the end of a file without a final line
    break on a line of its own, after the last)."""
    index = min(index, len(text))
    line_start = text.rfind("\n", 0, index) + 1
    return SourceLocation(file, text.count("\n", 0, index) + 1, index - line_start + 1)


def _check_depth(text: str, file: str) -> None:
    """Refuse deep nesting from the event stream (iterative), before the recursive composer sees it."""
    depth = 0
    for event in yaml.parse(text, Loader=_Loader):
        if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            depth += 1
            if depth > MAX_DEPTH:
                mark = event.start_mark
                assert mark is not None  # the parser marks every event
                raise BlueprintError(f"nesting deeper than {MAX_DEPTH} levels",
                                     location=SourceLocation(file, mark.line + 1, mark.column + 1),
                                                             code=ErrorCode.TOO_LARGE,
                                     hint="flatten the structure; blueprints are shallow documents")
        elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            depth -= 1


class _Converter:
    def __init__(self, source: SourceMap) -> None:
        self.source = source
        self.nodes = 0
        self.text = 0

    def _location(self, node: yaml.Node) -> SourceLocation:
        return SourceLocation(self.source.file, node.start_mark.line + 1, node.start_mark.column + 1)

    def _error(self, node: yaml.Node, message: str, hint: str, code: ErrorCode) -> BlueprintError:
        return BlueprintError(message, location=self._location(node), hint=hint, code=code)

    def convert(self, node: yaml.Node, path: FieldPath, depth: int) -> Any:
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise self._error(
                node,
                f"the document expands to more than {MAX_NODES:,} values (anchors and aliases included)",
                "shorten the document, or the aliases that repeat parts of it; blueprints are small documents",
                ErrorCode.TOO_LARGE,
            )
        if depth > MAX_DEPTH:  # aliases can nest deeper than the text does
            raise self._error(node, f"nesting deeper than {MAX_DEPTH} levels", "flatten the structure",
                              ErrorCode.TOO_LARGE)
        self.source.positions.setdefault(path, self._location(node))
        if node.tag not in _ALLOWED_TAGS:
            raise self._error(node, f"YAML tag {node.tag!r} is not allowed",
                              "remove the tag; blueprints hold plain data only", ErrorCode.YAML_FEATURE)
        if isinstance(node, yaml.ScalarNode):
            value = self._scalar(node)
            if isinstance(value, str):
                self._check_text(node, value, multiline=bool(path) and path[-1] == "description")
            return value
        if isinstance(node, yaml.SequenceNode):
            return [self.convert(item, (*path, index), depth + 1) for index, item in enumerate(node.value)]
        assert isinstance(node, yaml.MappingNode)  # the composer builds only these three kinds of node
        return self._mapping(node, path, depth)

    def _mapping(self, node: yaml.MappingNode, path: FieldPath, depth: int) -> dict[str, Any]:
        result: dict[str, Any] = {}
        for key_node, value_node in node.value:
            if key_node.tag == _STANDARD + "merge":
                raise self._error(key_node, "YAML merge keys (`<<`) are not supported",
                                  "use `extends:` to share settings", ErrorCode.YAML_FEATURE)
            if not isinstance(key_node, yaml.ScalarNode) or key_node.tag not in _ALLOWED_TAGS:
                raise self._error(key_node, "mapping keys must be plain names", "write `name: value`",
                                  ErrorCode.YAML_FEATURE)
            key = self._scalar(key_node)
            if isinstance(key, str):
                self._check_text(key_node, key, multiline=False)
            key = "null" if key is None else str(key).lower() if isinstance(key, bool) else str(key)
            if key in result:
                first = self.source.positions[(*path, key)].line
                raise self._error(key_node, f"duplicate key {key!r} (first defined on line {first})",
                                  "remove one of them; YAML would silently keep only the last", ErrorCode.YAML_FEATURE)
            child = (*path, key)
            self.source.positions[child] = self._location(key_node)
            result[key] = self.convert(value_node, child, depth + 1)
        return result

    def _check_text(self, node: yaml.Node, text: str, multiline: bool) -> None:
        """No control characters inside values and keys (escapes such as "\\x00" included); line breaks only
        in descriptions. Values end up in keys, Terraform and review comments, all single-line. Counted
        against MAX_TEXT: aliases can repeat long text without adding nodes."""
        self.text += len(text)
        if self.text > MAX_TEXT:
            raise self._error(node, f"the document's text expands to more than {MAX_TEXT:,} characters "
                              "(anchors and aliases included)", "repeat long text less often", ErrorCode.TOO_LARGE)
        found = (_CONTROL_IN_TEXT if multiline else _CONTROL_IN_LINE).search(text)
        if found is not None:
            bad = found.group()
            what = "a line break" if bad == "\n" else f"the control character U+{ord(bad):04X}"
            raise self._error(node, f"the value contains {what}", "write it on one line, as plain text",
                              ErrorCode.VALUE_NOT_ALLOWED)

    def _scalar(self, node: yaml.ScalarNode) -> Any:
        text = node.value
        if node.style or node.tag == _STANDARD + "str":  # plain scalars: style None (Python) or "" (libyaml)
            return text
        lowered = text.lower()
        if lowered in ("", "~", "null"):
            return None
        if lowered in ("true", "false"):
            return lowered == "true"
        if _INT.fullmatch(text):
            if len(text.lstrip("+-").lstrip("0")) > MAX_INTEGER_DIGITS:
                raise self._error(node, f"the number {text[:20]}{'...' if len(text) > 20 else ''} has more than "
                                  f"{MAX_INTEGER_DIGITS} digits", "write a realistic figure", ErrorCode.TOO_LARGE)
            return int(text)
        if _FLOAT.fullmatch(text):
            number = float(text)
            if not math.isfinite(number):
                raise self._error(node, f"the number {text[:20]} is out of range",
                                  "write a finite figure such as 1e6", ErrorCode.TOO_LARGE)
            return number
        return text
