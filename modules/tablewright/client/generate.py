"""`client`: one data-access module per blueprint, in Python or TypeScript, from its designed stacks."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Literal

from tablewright.client import python, typescript
from tablewright.client.model import Client, client_of
from tablewright.client.names import snake
from tablewright.design.locked import design_digest
from tablewright.errors import ErrorCode, FieldPath, TablewrightError
from tablewright.stacks.stack import Stack

Language = Literal["python", "typescript"]
SUFFIX = {"python": ".py", "typescript": ".ts"}
RENDER: dict[str, Callable[[Client], str]] = {"python": python.render, "typescript": typescript.render}
# Names every generated module defines itself: a blueprint's name that would become one of them is refused.
# Names every generated module defines or uses itself: a blueprint name that would become one of them is refused.
RESERVED = {
    "python": python.RESERVED | {"self.check_design", "self.table_name", "self._client"},
    "typescript": typescript.RESERVED,
}


def module_name(blueprint: str) -> str:
    return f"{snake(blueprint)}_client"


def _one_design(stacks: Sequence[Stack]) -> None:
    digests = {stack.source.environment: design_digest(stack.design) for stack in stacks}
    if len(set(digests.values())) > 1:
        names = ", ".join(f"{env} {digest}" for env, digest in sorted(digests.items()))
        raise stacks[0].source.locate(TablewrightError(
            f"the environments of {stacks[0].design.blueprint.blueprint} differ in design ({names}): one client "
            "cannot write items every one of them reads", path=("environments",), code=ErrorCode.CONTRADICTION,
            hint="generate one client per environment (--env ENV, each into its own --out directory), or give the "
                 "environments one design"))


def _check_names(client: Client, language: Language, stack: Stack) -> None:
    """Every generated name is unique and none is the runtime's."""
    taken: dict[str, FieldPath] = {}
    for name, path in typescript.names(client) if language == "typescript" else python.names(client):
        clash = "the generated module's own" if name in RESERVED[language] else None
        if name in taken and taken[name] != path:
            clash = f"the one generated for {'.'.join(map(str, taken[name]))}"
        if clash is not None:
            raise stack.source.locate(TablewrightError(
                f"the {language} client would name `{name}` twice: for {'.'.join(map(str, path))} and {clash}",
                path=path, code=ErrorCode.NAMING,
                hint="rename the entity or access pattern (a rename of an entity: see `migrations`)"))
        taken.setdefault(name, path)


def checked_client(stacks: Sequence[Stack], language: Language) -> Client:
    """The client of one blueprint's stacks, once they share one design and every generated name is unique."""
    _one_design(stacks)
    client = client_of(list(stacks), _shown(stacks[0].source.path))
    _check_names(client, language, stacks[0])
    return client


def generate(stacks: Sequence[Stack], language: Language) -> dict[str, str]:
    """File name -> text: one module per blueprint (every environment of it, which must share one design)."""
    by_blueprint: dict[Path, list[Stack]] = {}
    for stack in stacks:
        by_blueprint.setdefault(stack.source.path, []).append(stack)
    files: dict[str, str] = {}
    for _, own in sorted(by_blueprint.items()):
        client = checked_client(own, language)
        name = module_name(client.blueprint) + SUFFIX[language]
        if name in files:
            raise own[0].source.locate(TablewrightError(
                f"two blueprints are named {client.blueprint}: both clients would be {name}", path=("blueprint",),
                code=ErrorCode.NAMING, hint="generate them into different --out directories"))
        files[name] = RENDER[language](client)
    return files


def _shown(path: Path) -> str:
    """The blueprint's path as the module's header names it: relative to the working directory when inside it,
    other characters than those of plain paths replaced (it goes into a comment of the code)."""
    try:
        shown = path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        shown = path.name
    return re.sub(r"[^A-Za-z0-9_./+@-]", "_", shown)
