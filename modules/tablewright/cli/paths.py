"""Where a command runs, and the paths it is given.

A command runs in the project's root: `--root DIR`, else the nearest directory from the working directory up
(within its git work tree) that holds `cdktf.json`, else one that holds `blueprints/`, else the working
directory. Paths typed on the command line are relative to where they were typed; the defaults (`blueprints/`,
`cdktf.out`, `schema/`) are relative to the root. A path that names nothing gets the nearest existing names.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from tablewright.errors import ErrorCode, TablewrightError, missing_path_hint

PROJECT_MARKERS = ("cdktf.json", "blueprints")


def find_root(start: Path) -> Path | None:
    """The nearest directory from `start` up, within its git work tree and never above the home directory, holding
    `cdktf.json`; else `blueprints/`."""
    chain = []
    home = Path.home()
    for directory in (start, *start.parents):
        chain.append(directory)
        if (directory / ".git").exists() or directory == home:
            break
    for marker in PROJECT_MARKERS:
        for directory in chain:
            if (directory / marker).exists():
                return directory
    return None


def project_root(option: str | None, working: Path) -> Path:
    """The root a command runs in (`option`: `--root`, relative to `working`)."""
    if option is None:
        return find_root(working) or working
    root = working / option
    expected = "pass the directory that holds cdktf.json and blueprints/"
    if not option:
        raise TablewrightError("--root is empty", code=ErrorCode.PATH_ARGUMENT, hint=expected)
    if root.exists() and not root.is_dir():
        raise TablewrightError(f"--root {option}: not a directory", code=ErrorCode.PATH_ARGUMENT, hint=expected)
    if not root.is_dir():
        raise TablewrightError(f"--root {option}: no such directory", code=ErrorCode.PATH_ARGUMENT,
                               hint=missing_path_hint(root, expected))
    return root.resolve()


def typed_path(working: Path, root: Path) -> Callable[[str], str]:
    """An argparse `type`: a path typed in `working`, as seen from `root` (where the command runs)."""
    def convert(text: str) -> str:
        if working == root or not text or os.path.isabs(text):
            return text
        return os.path.relpath(working / text, root)
    return convert


def typed_spec(working: Path, root: Path) -> Callable[[str], str]:
    """`typed_path` for a FILE or a GITREF:path (whose path is relative to the repository, not to `working`)."""
    as_path = typed_path(working, root)

    def convert(text: str) -> str:
        from tablewright.blueprint.gitref import exists

        return text if ":" in text and not exists(str(working / text)) else as_path(text)
    return convert


def typed_against(working: Path, root: Path) -> Callable[[str], str]:
    """`typed_spec`, or a bare git revision (`origin/main`: the blueprint's own path at it) kept as typed."""
    as_spec = typed_spec(working, root)

    def convert(text: str) -> str:
        from tablewright.blueprint.gitref import is_revision

        return text if is_revision(text) and not (working / text).exists() else as_spec(text)
    return convert


def typed_stack_plan(working: Path, root: Path) -> Callable[[str], str]:
    """`typed_path` for `PLAN.json` or `STACK=PLAN.json`."""
    as_path = typed_path(working, root)

    def convert(text: str) -> str:
        stack, equals, path = text.partition("=")
        return f"{stack}={as_path(path)}" if equals and stack else text
    return convert
