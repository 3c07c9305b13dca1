"""`terraform show -json PLAN`, read as a stream: memory stays bounded whatever the plan's size, and the JSON is
held to the letter.

A plan of a large account is mostly `prior_state`, `planned_values` and `configuration`, which the gate never
reads: they are parsed (so the whole file is checked) and dropped as they pass. What the gate reads is kept:
`format_version`, every `resource_changes` entry of a table or that does something, the tables Terraform no
longer finds (`resource_drift`), and the `tablewright` output (`output_changes`). The result is a plan in the
same shape with only those parts, so the rest of the review reads it like the whole document.

Strict means what `terraform show -json` writes and nothing else: one JSON object, UTF-8, no key given twice in
any object (parsers disagree on which one wins), no NaN or Infinity, numbers that fit a 64-bit integer or a
double, at most 64 levels deep, a `format_version` of the major version this reads (1.x), and the parts the
gate reads of the types Terraform gives them. Every refusal is exit 2 (E700) with the place in the document.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import ijson

from tablewright.constructs.record import STACK_OUTPUT
from tablewright.errors import ErrorCode, PlanError, missing_path_hint
from tablewright.review.changes import entry_change, plan_error

MAX_PLAN_BYTES = 200_000_000
MAX_PLAN_DEPTH = 64
MAX_KEPT_ENTRIES = 10_000  # resource changes kept (a Tablewright stack has a few hundred resources)
MAX_KEPT_EVENTS = 2_000_000  # JSON values kept in all, about 200 MB of Python objects at most
MAX_OPEN_KEYS = 1_000_000  # object keys remembered at once (to refuse a key given twice)
MAX_STRING_BYTES = 16_000_000  # one value (a policy document is at most a few hundred kilobytes)
MAX_KEPT_CHARACTERS = 32_000_000  # of the strings kept (at most four bytes each in Python)
FORMAT_MAJOR = "1"  # https://developer.hashicorp.com/terraform/internals/json-format: a new major is incompatible
READ_BUFFER = 1 << 20

_BACKEND = ijson.get_backend("yajl2_c")  # the C parser: the pure Python one would take minutes on 200 MB
_STARTS = {"start_map": dict, "start_array": list}
_ENDS = frozenset({"end_map", "end_array"})

Step = str | int


def _where(path: tuple[Step, ...]) -> str:
    text = ""
    for step in path:
        text += f"[{step}]" if isinstance(step, int) else (f".{step}" if text else step)
    return text or "the top level"


@dataclass
class _Frame:
    """An object or array being read: the keys seen (objects), the current key or index."""

    keys: set[str] | None
    step: Step = -1


@dataclass
class _Kept:
    """The parts of the plan the gate reads, as they are found."""

    top: dict[str, type] = field(default_factory=dict)  # the type of each top-level value
    format_version: Any = None
    resource_changes: list[dict[str, Any]] = field(default_factory=list)
    resource_drift: list[dict[str, Any]] = field(default_factory=list)
    outputs: dict[str, Any] = field(default_factory=dict)
    entries: int = 0  # values kept
    events: int = 0  # JSON values inside them
    characters: int = 0  # of the strings inside them


# Top-level values the gate reads, by the depth of the path that is kept whole: `format_version` itself, each
# element of the two lists and each output of `output_changes`.
_KEPT_PATHS = {1: frozenset({"format_version"}), 2: frozenset({"resource_changes", "resource_drift",
                                                              "output_changes"})}


def _kept_path(path: tuple[Step, ...]) -> bool:
    return path[0] in _KEPT_PATHS.get(len(path), ())


class _Stream:
    """Follows the parser's events: where it is, the keys of every open object, the values being kept."""

    def __init__(self, deliver: Any) -> None:
        self.frames: list[_Frame] = []
        self.open_keys = 0
        self.building: list[Any] = []  # the containers of the value being kept, outermost first
        self.pending_key: list[str | None] = []
        self.kept_path: tuple[Step, ...] = ()
        self.events = 0
        self.characters = 0  # of the strings in the value being kept
        self.deliver = deliver

    def path(self) -> tuple[Step, ...]:
        return tuple(frame.step for frame in self.frames)

    def _start_value(self) -> bool:
        """A value starts at the current position; returns whether it is kept."""
        if self.frames:
            frame = self.frames[-1]
            if frame.keys is None:
                frame.step = int(frame.step) + 1
        if self.building:
            return True
        if 1 <= len(self.frames) <= 2 and _kept_path(path := self.path()):
            self.kept_path, self.events, self.characters = path, 0, 0
            return True
        return False

    def _add(self, value: Any) -> None:
        self.events += 1
        if isinstance(value, str):
            self.characters += len(value)
        if self.events > MAX_KEPT_EVENTS or self.characters > MAX_KEPT_CHARACTERS:
            raise plan_error(f"has {_where(self.kept_path)} of more than {MAX_KEPT_EVENTS:,} values or "
                             f"{MAX_KEPT_CHARACTERS:,} characters, which no resource Tablewright reads has")
        if not self.building:
            self.deliver(self.kept_path, value, self.events, self.characters)
            return
        container = self.building[-1]
        if isinstance(container, dict):
            container[self.pending_key[-1]] = value
        else:
            container.append(value)

    def feed(self, event: str, value: Any) -> None:
        if event == "map_key":
            frame = self.frames[-1]
            assert frame.keys is not None
            if value in frame.keys:
                raise plan_error(f"gives the key {value!r} twice in {_where(self.path()[:-1] or ())} (JSON parsers "
                                  "disagree on which one counts)", hint="pass the plan Terraform wrote, unedited")
            frame.keys.add(value)
            self.open_keys += 1
            if self.open_keys > MAX_OPEN_KEYS:
                raise plan_error(f"has objects of more than {MAX_OPEN_KEYS:,} keys open at once, which no "
                                  "Terraform plan has")
            frame.step = value
            if self.building:
                self.pending_key[-1] = value
            return
        if event in _ENDS:
            frame = self.frames.pop()
            self.open_keys -= len(frame.keys or ())
            if self.building:
                built = self.building.pop()
                self.pending_key.pop()
                if self.building:
                    return
                self.deliver(self.kept_path, built, self.events, self.characters)
            return
        kept = self._start_value()
        container = _STARTS.get(event)
        if container is None:  # a scalar
            if kept:
                self._add(value)
            elif len(self.frames) == 1:
                self.deliver(self.path(), value, 0, 0)
            return
        if len(self.frames) >= MAX_PLAN_DEPTH:
            raise plan_error(f"is nested deeper than {MAX_PLAN_DEPTH} levels at {_where(self.path())}, which no "
                              "Terraform plan is")
        if len(self.frames) == 1 and not kept:
            self.deliver(self.path(), container, 0, 0)  # the type of a top-level value
        self.frames.append(_Frame(set() if container is dict else None))
        if kept:
            new = container()
            if self.building:
                self._add(new)
            else:
                self.events = 1
            self.building.append(new)
            self.pending_key.append(None)


_BOUNDARY = re.compile(rb'(?<!\\)"')  # a quote no backslash escapes: where a string starts or ends


def _events(handle: Any, where: Any) -> Iterator[tuple[str, Any]]:
    """The parser's events, the file fed in chunks. The parser holds a string whole, and Python widens one with a
    character beyond U+FFFF to four bytes a character: a run of more than MAX_STRING_BYTES without a string
    boundary is refused before the parser has it."""
    events = ijson.sendable_list()
    parser = _BACKEND.basic_parse_coro(events, use_float=True)
    run, last = 0, b""
    while chunk := handle.read(READ_BUFFER):
        bounded = _BOUNDARY.search(last + chunk, len(last))  # the previous byte may be the escaping backslash
        run = len(chunk) if bounded else run + len(chunk)  # within a chunk of the truth
        last = chunk[-1:]
        if run > MAX_STRING_BYTES:
            raise plan_error(f"has a value of more than {MAX_STRING_BYTES:,} bytes at {_where(where())}, which no "
                             "argument of a resource Tablewright reads is")
        try:
            parser.send(chunk)
        except ijson.JSONError:
            yield from events  # what came before the error, so the stream knows where it broke
            raise
        yield from events
        del events[:]
    try:
        parser.close()
    except ijson.JSONError:
        yield from events
        raise
    yield from events


def _syntax(error: Exception) -> str:
    """The parser's own words, on one line: what is wrong and the text around it."""
    lines = [" ".join(line.split()) for line in str(error).splitlines() if line.strip()]
    reason = lines[0] if lines else type(error).__name__
    return reason + (f" near `{lines[1][:80]}`" if len(lines) > 2 else "")


def _scan(path: Path) -> _Kept:
    """Read the whole file once, keeping what the gate reads."""
    kept = _Kept()

    def deliver(where: tuple[Step, ...], value: Any, events: int, characters: int) -> None:
        top = where[0]
        if len(where) == 1:
            if top == "format_version":
                kept.format_version = value
            kept.top[str(top)] = value if isinstance(value, type) else type(value)
            return
        if top == "output_changes":
            _check_output(str(where[1]), value)
            if where[1] == STACK_OUTPUT:
                _keep(kept, kept.outputs.setdefault(STACK_OUTPUT, value), events, characters)
            return
        if top == "resource_changes":
            change = entry_change(f"resource_changes[{where[1]}]", value)
            if change is not None or (value.get("type"), value.get("mode")) == ("aws_dynamodb_table", "managed"):
                kept.resource_changes.append(_keep(kept, value, events, characters))
            return
        drifted = entry_change(f"resource_drift[{where[1]}]", value)
        if drifted is not None and drifted.type == "aws_dynamodb_table":
            kept.resource_drift.append(_keep(kept, value, events, characters))

    stream = _Stream(deliver)
    with path.open("rb") as handle:
        try:
            for event, value in _events(handle, stream.path):
                stream.feed(event, value)
        except ijson.JSONError as error:
            raise plan_error(f"is not valid JSON at {_where(stream.path())}: {_syntax(error)}") from None
        except UnicodeDecodeError:
            raise plan_error(f"is not UTF-8 at {_where(stream.path())}") from None
    return kept


def _keep(kept: _Kept, value: Any, events: int, characters: int) -> Any:
    """Count a value kept for the gate against the bounds; returns it."""
    kept.entries += 1
    kept.events += events
    kept.characters += characters
    if kept.entries > MAX_KEPT_ENTRIES:
        raise plan_error(f"changes more than {MAX_KEPT_ENTRIES:,} resources the gate reads, which no Tablewright "
                         "stack has", hint="pass the plan of one stack (`terraform -chdir=cdktf.out/stacks/<stack> "
                                           "show -json PLAN`)")
    if kept.events > MAX_KEPT_EVENTS or kept.characters > MAX_KEPT_CHARACTERS:
        raise plan_error(f"holds more than {MAX_KEPT_EVENTS:,} values or {MAX_KEPT_CHARACTERS:,} characters in the "
                         "changes the gate reads, which no plan of one stack has", hint="pass the plan of one stack")
    return value


def _check_output(name: str, change: Any) -> None:
    where = f"output_changes.{name}"
    if not isinstance(change, dict):
        raise plan_error(f"has {where} that is not an object")
    actions = change.get("actions")
    if not isinstance(actions, list) or not actions or not all(isinstance(a, str) for a in actions):
        raise plan_error(f"has {where} without a list of actions")


_TYPES = {"planned_values": dict, "resource_changes": list, "resource_drift": list, "output_changes": dict}


def _checked(kept: _Kept) -> dict[str, Any]:
    if "planned_values" not in kept.top or "format_version" not in kept.top:
        raise plan_error("is not a Terraform plan in JSON (no format_version/planned_values)",
                         hint="pass the output of `terraform show -json PLAN` (a plan, not a state)")
    for key, expected in _TYPES.items():
        if key in kept.top and kept.top[key] is not expected and not (key != "planned_values" and
                                                                       kept.top[key] is type(None)):
            raise plan_error(f"has `{key}` that is not {'an object' if expected is dict else 'a list'}")
    version = kept.format_version
    if not isinstance(version, str) or not re.fullmatch(r"(0|[1-9][0-9]{0,5})\.(0|[1-9][0-9]{0,5})", version):
        kind = "text" if isinstance(version, str) else f"a {type(version).__name__}"
        raise plan_error(f"has format_version {json.dumps(version)} ({kind}), not a version like \"1.2\"")
    if version.split(".")[0] != FORMAT_MAJOR:
        raise plan_error(f"has format_version {version}: this Tablewright reads plans of format {FORMAT_MAJOR}.x, "
                          "and a new major version is not compatible", hint="plan with a Terraform release that "
                          "writes format 1.x (1.0 to 1.11 do), or upgrade Tablewright")
    return {"format_version": version, "planned_values": {}, "resource_changes": kept.resource_changes,
            "resource_drift": kept.resource_drift, "output_changes": kept.outputs}


def read_plan(path: Path) -> dict[str, Any]:
    """`terraform show -json` output, checked strictly as it streams by: the parts the gate reads, in the plan's
    own shape."""
    try:
        if not path.is_file():
            if not path.exists():
                raise PlanError(f"{path}: no such file", code=ErrorCode.PATH_ARGUMENT,
                                hint=missing_path_hint(path, "write it with `terraform show -json PLAN > PLAN.json`"))
            raise PlanError(f"{path} is not a file", code=ErrorCode.PATH_ARGUMENT,
                            hint="pass the file `terraform show -json` wrote")
        size = path.stat().st_size
        if size > MAX_PLAN_BYTES:
            raise PlanError(f"{path} is {size:,} bytes; plans are limited to {MAX_PLAN_BYTES:,}",
                            hint="pass the plan of one stack")
        return _checked(_scan(path))
    except PlanError as error:
        raise (error if error.message.startswith(f"{path}") else error.prefixed(f"{path}: ")) from None
    except OSError as error:
        raise PlanError(f"{path}: cannot be read ({error.strerror})", code=ErrorCode.USAGE,
                        hint="pass a readable file") from None
