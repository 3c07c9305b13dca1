"""`calibrate --write`: the changes a calibration names, each made in the node it names and nothing else.

A change is found by the file, line and column of its key (where the loader located the value: the blueprint, an
environment overlay in it, or a base it extends), read from the file's YAML events, whose marks give each scalar's
span. Only that span is replaced, so comments, quoting, key order, flow or block layout, line ends and a byte
order mark stay as they were. A field the file does not write yet is added to the mapping that holds it (a
pattern's `rps` left at its default, an attribute's hot-key share; a `traffic:` section for a peak factor left at
the language's default): `productId: string` becomes `productId: {type: string, hot_key_share: 0.82}`, a mapping
gets the key in its own layout.

Refused, with the line to change by hand (exit 2, nothing written): a value that is an alias, or lies inside an
anchored node that an alias repeats (one edit would change several fields, or only one of the values the reader
sees as one); a key whose path in the file is not the field named; a value that is not a plain number. Every
edited file is then loaded again in memory with the blueprint's own rules (bounds included) before any is written.
"""

from __future__ import annotations

import difflib
import math
import os
from collections.abc import Sequence
from itertools import pairwise
from pathlib import Path

from tablewright.blueprint.load import load_blueprints
from tablewright.blueprint.yamlsource import BOM, parse_yaml, standing_in
from tablewright.calibrate.compare import Change
from tablewright.calibrate.outline import Key, Node, Outline, outline
from tablewright.errors import ErrorCode, ErrorList, FieldPath, TablewrightError

Edit = tuple[int, int, str]  # start and end offsets in the text, and what replaces them


def _refusal(change: Change, problem: str, hint: str) -> TablewrightError:
    return TablewrightError(f"calibrate --write cannot set it to {change.suggested:g}: {problem}",
                            path=tuple(change.field.split(".")), location=change.location, code=ErrorCode.USAGE,
                            hint=f"{hint}; nothing was written")


def _number(change: Change) -> str:
    value = change.suggested
    if not math.isfinite(value) or value < 0:
        raise _refusal(change, "that is not a rate", "check the metrics passed, or leave out --write")
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def _matches(path: FieldPath, field: Sequence[str]) -> bool:
    """The path of a key in its file is the field, at the top or in an environment overlay."""
    return tuple(path) == tuple(field) or (path[:1] == ("environments",) and tuple(path[2:]) == tuple(field))


def _check_single(change: Change, shape: Outline, key: Key, field: Sequence[str]) -> Node:
    """The key's value, refused unless it is one node of the field named, written once."""
    if not _matches(key.path, field):
        raise _refusal(change, f"line {key.line} holds `{'.'.join(map(str, key.path))}`, which the field reaches "
                       "through an alias (or the file changed since it was read)", "write the value out where it "
                       "applies (no anchor or alias), or change it by hand")
    node = key.value
    if node is None:
        raise _refusal(change, "the key has no value", "write the value out, or change it by hand")
    if node.kind == "alias":
        raise _refusal(change, f"the value is `*{node.text}`, an alias of line {shape.anchors.get(node.text, '?')}",
                       f"write the number out on line {key.line} (or change the anchor's value by hand, if every "
                       "use should change)")
    for anchor in (*node.held_by, node.anchor):
        if anchor is not None and anchor in shape.aliases:
            what = "the value is anchored" if anchor == node.anchor else "the value is inside"
            raise _refusal(change, f"{what} `&{anchor}` (line {shape.anchors[anchor]}), which line "
                           f"{shape.aliases[anchor]} repeats with `*{anchor}`: one edit would change both",
                           "write the value out where each use is (no anchor or alias), or change it by hand")
    return node


def _scalar_edit(change: Change, node: Node) -> Edit:
    if node.kind != "scalar" or node.style in ("|", ">"):
        raise _refusal(change, "the value is not a plain number", "write it as a number (`rps: 120`), or change it "
                       "by hand")
    text = _number(change)
    quote = node.style if node.style in ("'", '"') else ""
    return node.start, node.end, f"{quote}{text}{quote}"


def _added_edit(change: Change, shape: Outline, key: Key, text: str) -> Edit:
    """The field added to the mapping `key` holds (a pattern's `rps` left at its default, an attribute's
    `hot_key_share`): in the mapping's own layout; an attribute's shorthand type becomes a flow mapping."""
    field = change.field.split(".")
    name = field[-1]
    spec = _check_single(change, shape, key, field[:-1])
    value = _number(change)
    if spec.kind == "scalar" and spec.style not in ("|", ">") and name == "hot_key_share":
        return spec.start, spec.end, f"{{type: {text[spec.start:spec.end]}, {name}: {value}}}"
    if spec.kind != "mapping":
        raise _refusal(change, f"`{key.name}` is not a mapping to add `{name}` to", "change it by hand")
    if spec.flow:
        if spec.keys:
            return spec.last, spec.last, f", {name}: {value}"
        return spec.end - 1, spec.end - 1, f"{name}: {value}"
    if spec.last_style in ("|", ">"):
        raise _refusal(change, f"`{key.name}` ends with a block scalar", f"add `{name}` by hand")
    indent = min(child.column for child in spec.keys.values()) - 1
    end = text.find("\n", spec.last)
    end = len(text) if end < 0 else end - (text[end - 1] == "\r")
    newline = "\r\n" if text[end:end + 2] == "\r\n" else "\n"
    return end, end, f"{newline}{' ' * indent}{name}: {value}"


def _section_edit(change: Change, shape: Outline, text: str) -> Edit | None:
    """A field of a top-level section the file does not write (`traffic.peak_factor` in a blueprint without
    `traffic:`, the language's default in force): the section added at the end of the file, in block style."""
    field = change.field.split(".")
    top = [key for key in shape.keys.values() if len(key.path) == 1]
    if len(field) != 2 or not top or any(key.name == field[0] or key.column != 1 for key in top):
        return None
    newline = "\r\n" if "\r\n" in text else "\n"
    lead = "" if not text or text.endswith("\n") else newline
    return len(text), len(text), f"{lead}{field[0]}:{newline}  {field[1]}: {_number(change)}{newline}"


def _edit(change: Change, shape: Outline, text: str) -> Edit | None:
    """The edit that makes `change`; None when the file holds no key of the field at its place."""
    field = change.field.split(".")
    key = shape.keys.get((change.location.line, change.location.column))
    if key is not None and len(field) > 1 and key.name == field[-2] and field[-1] not in key.path:
        return _added_edit(change, shape, key, text)
    if key is None or key.name != field[-1]:
        return _section_edit(change, shape, text)
    return _scalar_edit(change, _check_single(change, shape, key, field))


def _edited(file: str, text: str, changes: Sequence[Change]) -> tuple[str, list[Change]]:
    """`text` with `changes` made; the changes the file holds no key for."""
    shape = outline(text, file)
    edits: list[tuple[Edit, Change]] = []
    missed = []
    for change in changes:
        edit = _edit(change, shape, text)
        if edit is None:
            missed.append(change)
        else:
            edits.append((edit, change))
    edits.sort(key=lambda item: (item[0][0], item[0][1]))
    for (before, change), (after, other) in pairwise(edits):
        if after[0] < before[1] or (after[0] == before[0] and after[1] == before[1]):
            raise _refusal(other, f"`{change.field}` changes the same text", "change them by hand")
    for (start, end, replacement), _ in reversed(edits):
        text = text[:start] + replacement + text[end:]
    return text, missed


def _read(path: Path) -> tuple[str, str]:
    """The file's byte order mark (or none) and its text, line ends as they are."""
    try:
        text = path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise TablewrightError(f"{path} cannot be read again to write it ({error})", code=ErrorCode.USAGE,
                               hint="leave out --write, or make the changes the report names by hand") from None
    return (BOM, text[1:]) if text.startswith(BOM) else ("", text)


def _reload(texts: dict[Path, str], changes: Sequence[Change]) -> None:
    """Each blueprint whose stack asked for a change, loaded with the edited texts, before anything is written."""
    owners = sorted({change.owner or change.location.file for change in changes})
    with standing_in(texts):
        for owner in owners:
            try:
                load_blueprints(owner)
            except TablewrightError as error:
                raise _unloadable(error, changes) from None


def _unloadable(error: TablewrightError, changes: Sequence[Change]) -> TablewrightError:
    first = error.errors[0] if isinstance(error, ErrorList) else error
    where = first.location
    change = next((c for c in changes if where is not None and c.location.line == where.line
                   and os.path.realpath(c.location.file) == os.path.realpath(where.file)), None)
    what = f"{change.current:g} -> {change.suggested:g}" if change is not None else "calibrate's changes"
    return first.rewritten(
        message=f"{what} would not load again: {first.message}",
        path=first.path or (tuple(change.field.split(".")) if change else ()),
        hint="nothing was written; check the metrics (this table's, over one window), or set a value the "
             f"blueprint accepts by hand{': ' + first.hint if first.hint else ''}")


def write_changes(changes: Sequence[Change]) -> tuple[list[tuple[Path, str]], list[Change]]:
    """Each file with its changes made: (path, new text) and the changes that could not be placed (a field the
    file does not hold at that place). Raises, with nothing written, when a change cannot be made exactly or the
    blueprint would not load with it."""
    by_file: dict[str, list[Change]] = {}
    for change in changes:
        by_file.setdefault(change.location.file, []).append(change)
    written: list[tuple[Path, str]] = []
    missed: list[Change] = []
    made: list[Change] = []
    for file, mine in sorted(by_file.items()):
        path = Path(file)
        bom, text = _read(path)
        new, lost = _edited(file, text, mine)
        missed += lost
        made += [change for change in mine if change not in lost]
        if new != text:
            try:
                parse_yaml(new, file)  # the file alone: every YAML rule of a blueprint
            except TablewrightError as error:
                raise _unloadable(error, mine) from None
            written.append((path, bom + new))
    if written:
        _reload({path: text for path, text in written}, made)
    return written, missed


def diff(path: Path, before: str, after: str) -> str:
    name = os.path.relpath(path)
    return "".join(difflib.unified_diff(before.splitlines(keepends=True), after.splitlines(keepends=True),
                                        f"a/{name}", f"b/{name}"))
