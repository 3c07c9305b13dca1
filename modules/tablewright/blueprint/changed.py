"""Which blueprints a change affects (`synth --changed-since GITREF`, `review --changed-since GITREF`).

A blueprint is affected when, since the revision, its file changed, any file of its `extends` tree
changed (a shared base), or its design lock changed; or when a file under one of the `always` paths
changed (Tablewright's own code, when it lives in the same repository). Every other blueprint's stacks
would synthesize exactly as they did, so pipelines synthesize and plan only the affected ones.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from tablewright.blueprint.compose import Composer, extends_tree
from tablewright.blueprint.gitref import ChangedFiles
from tablewright.blueprint.lock import lock_path


@dataclass(frozen=True)
class Affected:
    path: Path  # the blueprint, as given
    reasons: tuple[str, ...]  # why it is affected, for people: "changed", "extends ..., which changed", ...


def shown(path: Path) -> str:
    """A path as people read it: relative to the working directory when it is inside it."""
    return os.path.relpath(path) if path.is_relative_to(Path.cwd().resolve()) else str(path)


def _under(path: Path, prefixes: Iterable[Path]) -> bool:
    return any(path == prefix or path.is_relative_to(prefix) for prefix in prefixes)


def _names(path: Path) -> set[Path]:
    """The paths git may list for a file: as named (its directories resolved) and the file it resolves to."""
    return {Path(os.path.realpath(path.parent)) / path.name, Composer.resolved(path)}


def reasons_for(blueprint: Path, changed: frozenset[Path], always: Sequence[Path] = ()) -> tuple[str, ...]:
    """Why the blueprint at `blueprint` is affected by the `changed` files (resolved paths); empty when not."""
    found: list[str] = []
    tool = sorted(path for path in changed if _under(path, always))
    if tool:
        found.append(f"Tablewright itself changed ({shown(tool[0])}{' and more' if len(tool) > 1 else ''})")
    if _names(blueprint) & changed:
        found.append("changed")
    elif blueprint.exists():  # unchanged: read its `extends` tree (a changed file may be broken: not read)
        itself = Composer.resolved(blueprint)
        found += [f"extends {shown(part)}, which changed" for part in extends_tree(blueprint)
                  if part != itself and part in changed]
    lock = lock_path(blueprint)
    if _names(lock) & changed:
        found.append(f"its design lock {lock.name} changed")
    return tuple(found)


def affected(blueprints: Sequence[Path], changes: ChangedFiles, always: Sequence[Path] = ()) -> list[Affected]:
    """The blueprints (in the order given, each once) that `changes` affects, with the reasons."""
    chosen = []
    for blueprint in dict.fromkeys(blueprints):
        reasons = reasons_for(blueprint, changes.paths, [Composer.resolved(p) for p in always])
        if reasons:
            chosen.append(Affected(blueprint, reasons))
    return chosen
