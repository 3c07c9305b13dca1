"""A blueprint file's outline for `calibrate --write`: every mapping key by its line and column (as the loader
locates fields), with its path in the file and its value's span, style and anchors, read from the YAML events
(PyYAML's, with libyaml when it is there, as the loader reads). Event marks count characters from the start of the
text (a byte order mark removed), so a span is a slice of the text.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import yaml

from tablewright.errors import ErrorCode, FieldPath, SourceLocation, TablewrightError

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass
class Node:
    kind: str  # "scalar", "alias", "mapping" or "sequence"
    path: FieldPath  # in the file, from its top
    start: int
    end: int  # a block collection's: its start (libyaml marks its end at the next token)
    text: str  # a scalar's value, an alias's anchor
    style: str | None  # a scalar's: None or "" plain, "'", '"', "|", ">"
    anchor: str | None
    held_by: tuple[str | None, ...]  # the anchors of the collections holding it
    flow: bool = False
    keys: dict[str, Key] = field(default_factory=dict)  # a mapping's
    last: int = 0  # a collection's: the end of its last scalar, alias or flow collection
    last_style: str | None = None  # that scalar's style


@dataclass
class Key:
    name: str
    line: int  # 1-based, as the loader's locations
    column: int
    path: FieldPath  # the key's path in the file
    value: Node | None = None


@dataclass
class Outline:
    keys: dict[tuple[int, int], Key]  # (line, column) -> the key there
    anchors: dict[str, int]  # anchor -> the line it is defined on (the first, when defined again)
    aliases: dict[str, int]  # anchor -> the line of its first alias


@dataclass
class _Open:
    node: Node
    key: Key | None = None  # a mapping's key whose value comes next; None: a key comes next
    items: int = 0  # a sequence's items so far


def outline(text: str, file: str) -> Outline:
    """The outline of `text` (a blueprint file's, without its byte order mark)."""
    found = Outline({}, {}, {})
    open_: list[_Open] = []
    try:
        for event in yaml.parse(text, Loader=_LOADER):
            if isinstance(event, yaml.CollectionEndEvent):
                node = open_.pop().node
                if node.flow:
                    node.end = _marks(event)[3]
                    _ended(open_, node.end, None)
            elif isinstance(event, yaml.NodeEvent):
                _node(event, open_, found)
    except yaml.YAMLError as error:
        raise TablewrightError(f"{file} no longer reads as YAML ({str(error).splitlines()[0]})",
                               location=SourceLocation(file, 1, 1), code=ErrorCode.USAGE,
                               hint="run calibrate again on the file as it is now") from None
    return found


def _marks(event: yaml.Event) -> tuple[int, int, int, int]:
    """The event's 1-based line and column, and its start and end offsets."""
    start, end = event.start_mark, event.end_mark
    assert start is not None and end is not None  # the parser marks every event
    return start.line + 1, start.column + 1, start.index, end.index


def _ended(open_: list[_Open], end: int, style: str | None) -> None:
    for holder in open_:
        if end >= holder.node.last:
            holder.node.last, holder.node.last_style = end, style


def _node(event: yaml.NodeEvent, open_: list[_Open], found: Outline) -> None:
    parent = open_[-1] if open_ else None
    line, column, start, end = _marks(event)
    if parent is not None and parent.node.kind == "mapping" and parent.key is None:  # a key
        if not isinstance(event, yaml.ScalarEvent):  # the loader refuses other keys: the file changed since
            raise yaml.YAMLError(f"line {line}: a mapping key is not a plain name")
        name = event.value
        parent.key = Key(name, line, column, (*parent.node.path, name))
        parent.node.keys.setdefault(name, parent.key)
        found.keys[(parent.key.line, parent.key.column)] = parent.key
        _ended(open_, end, None)
        return
    path: FieldPath = ()
    held_by: tuple[str | None, ...] = ()
    if parent is not None:
        held_by = (*parent.node.held_by, parent.node.anchor)
        if parent.key is not None:
            path = parent.key.path
        else:
            path = (*parent.node.path, parent.items)
            parent.items += 1
    if isinstance(event, yaml.AliasEvent):
        node = Node("alias", path, start, end, event.anchor or "", None, None, held_by)
        found.aliases.setdefault(event.anchor or "", line)
    elif isinstance(event, yaml.ScalarEvent):
        node = Node("scalar", path, start, end, event.value, event.style, event.anchor, held_by)
    else:
        kind = "mapping" if isinstance(event, yaml.MappingStartEvent) else "sequence"
        flow = bool(getattr(event, "flow_style", False))
        node = Node(kind, path, start, start, "", None, event.anchor, held_by, flow)
    if event.anchor is not None and not isinstance(event, yaml.AliasEvent):
        found.anchors.setdefault(event.anchor, line)
    if parent is not None and parent.key is not None:
        parent.key.value = node
        parent.key = None
    if node.kind in ("mapping", "sequence"):
        open_.append(_Open(node))
    else:
        _ended(open_, node.end, node.style)
