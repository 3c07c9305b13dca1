"""Blueprints as they were at a git revision: `GITREF:path` (e.g. `origin/main:blueprints/crm.yaml`).

The file and every file it extends are written, at their repository paths, into a scratch
directory, so the old version composes exactly as it did then.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import yaml

from modules.errors import BlueprintError


def is_git_spec(spec: str) -> bool:
    return ":" in spec and not Path(spec).exists()


def _git(*args: str, cwd: Path) -> str:
    result = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True)
    if result.returncode != 0:
        raise BlueprintError(f"git {' '.join(args)} failed: {result.stderr.strip()}",
                             hint="check the revision and the path (relative to the repository root)")
    return result.stdout


def materialize(spec: str, scratch: Path) -> Path:
    """A local path for `spec`: the path itself, or the file (and what it extends) at a revision."""
    if not is_git_spec(spec):
        return Path(spec)
    revision, relative = spec.split(":", 1)
    root = Path(_git("rev-parse", "--show-toplevel", cwd=Path.cwd()).strip())
    pending, written = [Path(relative)], set()
    while pending:
        path = pending.pop()
        if path in written:
            continue
        written.add(path)
        text = _git("show", f"{revision}:{path.as_posix()}", cwd=root)
        target = scratch / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
        try:
            extends = (yaml.safe_load(text) or {}).get("extends") or []
        except yaml.YAMLError:
            extends = []  # the loader reports the syntax error with its location
        for parent in [extends] if isinstance(extends, str) else extends:
            pending.append(_normalize(path.parent / parent))
    return scratch / relative


def _normalize(path: Path) -> Path:
    """Resolve `..` in a repository-relative path without touching the file system."""
    parts: list[str] = []
    for part in path.parts:
        if part == "..":
            if parts:
                parts.pop()
        elif part != ".":
            parts.append(part)
    return Path(*parts)
