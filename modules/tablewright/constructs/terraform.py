"""Terraform configuration as plain data: the blocks a table emits, and the JSON cdktf writes for them.

Each concern (the table, autoscaling, Contributor Insights, alarms, the alarm topic and its keys, the
change rules) is a pure function from the design to a list of `Block`s, its arguments validated by the
typed models of `resources.py`. `fragment` turns a table's blocks into the Terraform JSON one cdktf
element hands over in a single callback: `resource`, `data` and `locals`, each resource and data source
with the `//` metadata cdktf gives its own elements (the path they would have as children of `scope`),
so the synthesized file is the one a construct per resource would write.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Literal

from tablewright.constructs.resources import ResourceArguments

Kind = Literal["resource", "data", "locals", "import"]


@dataclass(frozen=True)
class Block:
    """One Terraform block: a resource, a data source (`data.<type>.<name>`) or a local value."""

    kind: Kind
    type: str  # the Terraform type; empty for a local
    name: str
    body: Any  # the arguments (a dict), or a local's expression

    @property
    def address(self) -> str:
        if self.kind == "locals":
            return f"local.{self.name}"
        if self.kind == "import":
            return f"import.{self.name}"
        return f"{self.type}.{self.name}" if self.kind == "resource" else f"data.{self.type}.{self.name}"

    def ref(self, attribute: str) -> str:
        """A Terraform reference, `${type.name.attribute}`: Terraform orders the blocks by it."""
        return reference(self.address, attribute)


def reference(address: str, attribute: str) -> str:
    return f"${{{address}.{attribute}}}"


def resource(arguments: ResourceArguments, name: str, *, ignore_changes: list[str] | None = None,
             prevent_destroy: bool | None = None, depends_on: list[Block] | None = None) -> Block:
    body = arguments.arguments()
    lifecycle = {key: value for key, value in (("ignore_changes", ignore_changes), ("prevent_destroy", prevent_destroy))
                 if value is not None}
    if depends_on:
        body["depends_on"] = [block.address for block in depends_on]
    if lifecycle:
        body["lifecycle"] = lifecycle
    return Block("resource", arguments.terraform_type, name, body)


def data_source(arguments: ResourceArguments, name: str, *, count: str | None = None) -> Block:
    body = arguments.arguments()
    if count is not None:
        body["count"] = count
    return Block("data", arguments.terraform_type, name, body)


def local(name: str, expression: str) -> Block:
    return Block("locals", "", name, expression)


def import_block(target: Block, identifier: str) -> Block:
    """A Terraform `import` block (1.5+): the first plan adopts the existing object `identifier` as `target`."""
    return Block("import", "", target.address, identifier)


class DuplicateBlock(ValueError):
    pass


class UnexpectedExpression(ValueError):
    """A string would be evaluated by Terraform but is none of the expressions Tablewright writes: a bug
    (blueprint values are validated to character sets that cannot form `${` or `%{`), never shipped."""


# Every interpolation Tablewright writes starts like one of these; anything else must not be evaluated.
OWN_EXPRESSIONS = re.compile(
    r"\$\{(aws_|data\.|local\.|max\(try\(local\.|try\(contains\(data\.|\{ for g in try\(data\.)"
)
# What starts a template sequence, scanned left to right as HCL's scanner does: `$${` and `%%{` are escapes
# (a literal `${`, `%{`), every other `${` or `%{` is evaluated, whatever precedes it (`%${`, `$%{`).
_TEMPLATE_START = re.compile(r"\$\$\{|%%\{|\$\{|%\{")


def _evaluated(text: str) -> Iterator[int]:
    """Where Terraform starts evaluating an interpolation or a directive in `text`."""
    position = 0
    while (found := _TEMPLATE_START.search(text, position)) is not None:
        if found.group() not in ("$${", "%%{"):
            yield found.start()
        position = found.end()


def check_expressions(value: Any, where: str) -> None:
    """Refuse any `${...}` or `%{...}` in `value` that Tablewright did not write itself."""
    # Scanned as one JSON text (keys and strings alike): JSON's own characters hold no `$`, `%` or `{` that
    # could join two strings, and the expressions Tablewright writes hold nothing JSON escapes.
    text = json.dumps(value, ensure_ascii=False)
    for start in _evaluated(text):
        if not OWN_EXPRESSIONS.match(text, start):
            raise UnexpectedExpression(f"{where}: {text[start:start + 40]!r} would be evaluated by Terraform")


def fragment(blocks: Iterable[Block], scope_path: str) -> dict[str, Any]:
    """The Terraform JSON of `blocks`, as cdktf writes elements that are children of `scope_path`.

    A block may appear more than once (the account data sources every key policy reads) as long as it
    is the same each time; two different blocks at one address are an error.
    """
    result: dict[str, Any] = {}
    for block in blocks:
        check_expressions(block.body, block.address)
        if block.kind == "import":
            imports = result.setdefault("import", [])
            if {"to": block.name, "id": block.body} not in imports:
                imports.append({"to": block.name, "id": block.body})
            continue
        if block.kind == "locals":
            body: Any = block.body
            entries = result.setdefault("locals", {})
        else:
            construct_id = block.address
            body = {**block.body, "//": {"metadata": {"path": f"{scope_path}/{construct_id}", "uniqueId": block.name}}}
            entries = result.setdefault(block.kind, {}).setdefault(block.type, {})
        if block.name in entries and entries[block.name] != body:
            raise DuplicateBlock(f"two different definitions of {block.address}")
        entries[block.name] = body
    return result


def addresses(blocks: Iterable[Block]) -> set[str]:
    return {block.address for block in blocks}
