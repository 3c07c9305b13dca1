"""Blueprints as they were at a git revision: `GITREF:path` (e.g. `origin/main:blueprints/crm.yaml`).

The file and every file it extends are written, at their repository paths, into a scratch
directory, so the old version composes exactly as it did then; `extends` may not leave that
directory. Revisions are checked and resolved to a commit id before any other git call, and every
git call marks the end of its options, so a revision can never be read as an option.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path, PurePosixPath

from modules.blueprint.load import LoadedBlueprint, load_blueprints
from modules.blueprint.lock import lock_path
from modules.blueprint.yamlsource import MAX_FILE_BYTES, parse_yaml
from modules.errors import BlueprintError, ErrorList, SourceLocation, TablewrightError, combined

# A revision as people write them (branch, tag, sha, HEAD~2, origin/main, main@{1}): never an option,
# never a range, no whitespace or control characters.
_REVISION = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._/@{}~^-]{0,255}")
_MAX_FILES = 32


def is_git_spec(spec: str) -> bool:
    return ":" in spec and not Path(spec).exists()


def _spec_error(spec: str, problem: str, hint: str) -> BlueprintError:
    return BlueprintError(f"{spec!r}: {problem}", code="E601", hint=hint)


def _repository_path(spec: str, text: str) -> PurePosixPath:
    """A path inside the repository, without `..` leaving it."""
    path = PurePosixPath(text)
    parts: list[str] = []
    for part in path.parts:
        if part == "..":
            if not parts:
                raise _spec_error(spec, f"the path {text!r} leaves the repository",
                                  "write the path relative to the repository root")
            parts.pop()
        elif part not in (".", ""):
            parts.append(part)
    if path.is_absolute() or not parts:
        raise _spec_error(spec, f"the path {text!r} is not a file inside the repository",
                          "write GITREF:path, the path relative to the repository root")
    return PurePosixPath(*parts)


def parse_spec(spec: str) -> tuple[str, PurePosixPath]:
    revision, _, relative = spec.partition(":")
    if not _REVISION.fullmatch(revision) or ".." in revision:
        raise _spec_error(spec, f"{revision!r} is not a git revision",
                          "write a branch, tag or commit before the colon, e.g. origin/main:blueprints/crm.yaml")
    return revision, _repository_path(spec, relative)


def _git(spec: str, *args: str, cwd: Path) -> bytes:
    try:
        result = subprocess.run(["git", *args], cwd=cwd, capture_output=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise _spec_error(spec, f"git could not run ({error})", "install git and run inside the repository") from None
    if result.returncode != 0:
        message = result.stderr.decode("utf-8", "replace").strip().splitlines()
        raise _spec_error(spec, f"git: {message[0] if message else 'failed'}",
                          "check the revision and the path (relative to the repository root)")
    return result.stdout


def _blob(spec: str, commit: str, path: PurePosixPath, root: Path) -> str:
    name = f"{commit}:{path.as_posix()}"
    kind = _git(spec, "cat-file", "-t", "--end-of-options", name, cwd=root).decode().strip()
    if kind != "blob":
        raise _spec_error(spec, f"{path} at {commit[:12]} is a {kind}, not a file", "name a blueprint file")
    size = int(_git(spec, "cat-file", "-s", "--end-of-options", name, cwd=root))
    if size > MAX_FILE_BYTES:
        raise _spec_error(spec, f"{path} is {size:,} bytes; blueprints are limited to {MAX_FILE_BYTES:,} bytes",
                          "split the file with `extends:`")
    try:
        return _git(spec, "cat-file", "blob", "--end-of-options", name, cwd=root).decode("utf-8")
    except UnicodeDecodeError:
        raise _spec_error(spec, f"{path} is not valid UTF-8", "save the file as UTF-8") from None


def _price_files(data: object) -> list[object]:
    """The `pricing.file` entries of a blueprint document, at the top and in its environments."""
    if not isinstance(data, dict):
        return []
    overlays = data.get("environments")
    documents = [data, *(overlays.values() if isinstance(overlays, dict) else [])]
    pricing = [document.get("pricing") for document in documents if isinstance(document, dict)]
    return [entry.get("file") for entry in pricing if isinstance(entry, dict)]


def _extended(text: str, path: PurePosixPath) -> list[PurePosixPath]:
    """Repository paths a blueprint text extends or takes prices from (the loader reports anything malformed)."""
    try:
        data, _ = parse_yaml(text, str(path))
    except TablewrightError:
        return []
    raw = data.get("extends") if isinstance(data, dict) else None
    entries = [raw] if isinstance(raw, str) else raw if isinstance(raw, list) else []
    found = []
    for entry in [*entries, *_price_files(data)]:
        if isinstance(entry, str) and entry and not entry.startswith("/"):
            try:
                found.append(_repository_path(entry, str(path.parent / entry)))
            except BlueprintError:
                continue  # leaves the repository: the loader refuses it, confined to the scratch directory
    return found


def materialize(spec: str, scratch: Path) -> Path:
    """A local path for `spec`: the path itself, or the file (and what it extends) at a revision."""
    if not is_git_spec(spec):
        return Path(spec)
    revision, relative = parse_spec(spec)
    root = Path(_git(spec, "rev-parse", "--show-toplevel", cwd=Path.cwd()).decode().strip())
    try:
        commit = _git(spec, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{revision}^{{commit}}",
                      cwd=root).decode().strip()
    except BlueprintError:
        raise _spec_error(spec, f"`{revision}` is not a commit in this repository",
                          "fetch it first (e.g. `git fetch origin main`), or name a branch, tag or commit that "
                          "exists") from None
    lock = PurePosixPath(lock_path(Path(relative)).as_posix())
    pending = [relative] + ([lock] if _exists(spec, commit, lock, root) else [])
    written: set[PurePosixPath] = set()
    while pending:
        path = pending.pop()
        if path in written:
            continue
        if len(written) >= _MAX_FILES:
            raise _spec_error(spec, f"more than {_MAX_FILES} files in its `extends` tree",
                              "flatten the shared blueprints")
        written.add(path)
        text = _blob(spec, commit, path, root)
        target = scratch.joinpath(*path.parts)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
        if path != lock:
            pending += _extended(text, path)
    return scratch.joinpath(*relative.parts)


def _exists(spec: str, commit: str, path: PurePosixPath, root: Path) -> bool:
    try:
        _git(spec, "cat-file", "-e", "--end-of-options", f"{commit}:{path.as_posix()}", cwd=root)
    except BlueprintError:
        return False
    return True


def as_given(error: TablewrightError, spec: str, scratch: Path) -> TablewrightError:
    """Point a location inside the scratch copy of `spec` at `REVISION:path`, the name the user gave."""
    if not is_git_spec(spec):
        return error
    if isinstance(error, ErrorList):
        return combined([as_given(item, spec, scratch) for item in error.errors])
    revision = spec.partition(":")[0]

    def shown(text: str) -> str:
        for prefix in sorted({str(scratch.resolve()), str(scratch)}, key=len, reverse=True):
            text = text.replace(prefix + "/", f"{revision}:").replace(prefix, f"(the repository at {revision})")
        return text

    location = error.location
    if location is not None:
        location = SourceLocation(shown(location.file), location.line, location.column)
    return error.rewritten(message=shown(error.message), hint=error.hint and shown(error.hint), location=location)


def load_spec(spec: str, scratch: Path, option: str) -> list[LoadedBlueprint]:
    """Every stack of the blueprint `spec` names (a path, or GITREF:path copied into `scratch`);
    `option` is the command-line option that gave it, named in errors about the revision."""
    if not is_git_spec(spec):
        return load_blueprints(spec)
    try:
        path = materialize(spec, scratch)
    except TablewrightError as error:
        raise error.prefixed(f"{option} ") from None
    try:
        return load_blueprints(path, root=scratch)
    except TablewrightError as error:
        raise as_given(error, spec, scratch) from None
