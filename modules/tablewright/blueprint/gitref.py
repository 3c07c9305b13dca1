"""Blueprints as they were at a git revision: `GITREF:path` (e.g. `origin/main:blueprints/crm.yaml`).

The file and every file it extends are written, at their repository paths, into a scratch
directory, so the old version composes exactly as it did then; `extends` may not leave that
directory. Revisions are checked and resolved to a commit id before any other git call, and every
git call marks the end of its options, so a revision can never be read as an option.
"""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from tablewright.blueprint.load import LoadedBlueprint, load_blueprints
from tablewright.blueprint.lock import lock_path
from tablewright.blueprint.yamlsource import MAX_FILE_BYTES, parse_yaml
from tablewright.errors import BlueprintError, ErrorCode, ErrorList, SourceLocation, TablewrightError, combined

# A revision as people write them (branch, tag, sha, HEAD~2, origin/main, main@{1}): never an option,
# never a range, no whitespace or control characters.
_REVISION = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._/@{}~^-]{0,255}")
_MAX_FILES = 32


def exists(spec: str) -> bool:
    """Whether `spec` names an existing file; a name the system refuses (too long) names none."""
    try:
        return Path(spec).exists()
    except OSError:
        return False


def is_revision(text: str) -> bool:
    """Whether `text` is a git revision alone (`origin/main`, `v1.2`, a commit), not a path at one nor a blueprint
    file's name."""
    return ":" not in text and bool(_REVISION.fullmatch(text)) and ".." not in text \
        and not text.endswith((".yaml", ".yml"))


def is_git_spec(spec: str) -> bool:
    return ":" in spec and not exists(spec)


def _spec_error(spec: str, problem: str, hint: str) -> BlueprintError:
    return BlueprintError(f"{spec!r}: {problem}", code=ErrorCode.GITREF, hint=hint)


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


def _resolve(spec: str, revision: str) -> tuple[Path, str]:
    """The repository holding the working directory, and the commit `revision` names in it."""
    root = Path(_git(spec, "rev-parse", "--show-toplevel", cwd=Path.cwd()).decode().strip())
    try:
        commit = _git(spec, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{revision}^{{commit}}",
                      cwd=root).decode().strip()
    except BlueprintError:
        raise _spec_error(spec, f"`{revision}` is not a commit in this repository",
                          "fetch it first (e.g. `git fetch origin main`, or check out with the whole history), "
                          "or name a branch, tag or commit that exists") from None
    return root, commit


@dataclass(frozen=True)
class ChangedFiles:
    """What changed in the repository since a revision: the files of `git diff MERGE_BASE` (committed, staged
    and not) and the untracked ones, as resolved absolute paths."""

    revision: str  # as given
    root: Path  # the repository's work tree
    merge_base: str  # the commit the changes are counted from: where the revision and HEAD meet
    paths: frozenset[Path]


def changed_files(revision: str, option: str = "--changed-since") -> ChangedFiles:
    """The files changed since `revision` (like a pull request's diff: from the merge base of `revision` and
    HEAD to the work tree, untracked files included). The revision is checked and resolved to a commit
    before any other git call."""
    spec = f"{option} {revision}"
    if not _REVISION.fullmatch(revision) or ".." in revision:
        raise _spec_error(spec, f"{revision!r} is not a git revision",
                          f"write a branch, tag or commit, e.g. {option} origin/main")
    root, commit = _resolve(spec, revision)
    try:
        base = _git(spec, "merge-base", "--end-of-options", commit, "HEAD", cwd=root).decode().strip()
    except BlueprintError:
        raise _spec_error(spec, f"`{revision}` and HEAD have no common history",
                          "fetch the whole history (e.g. `git fetch --unshallow`), or name a revision HEAD grew "
                          "from") from None
    listed = _git(spec, "diff", "--name-only", "-z", "--no-renames", "--end-of-options", base, "--", cwd=root)
    listed += _git(spec, "ls-files", "-z", "--others", "--exclude-standard", cwd=root)
    names = {name for name in listed.decode("utf-8", "surrogateescape").split("\0") if name}
    return ChangedFiles(revision, root, base, frozenset(Path(os.path.abspath(root / name)) for name in names))


def revision_spec(changes: ChangedFiles, path: Path) -> str | None:
    """`MERGE_BASE:path` for a file of the work tree as it was where the changes start, or None when it did
    not exist there (a new file)."""
    where = Path(os.path.realpath(path.parent)) / path.name  # the directories resolved, as git names them
    if not where.is_relative_to(changes.root):
        raise _spec_error(str(path), f"is outside the repository {changes.root}",
                          "name blueprints inside the repository whose history --changed-since reads")
    relative = PurePosixPath(where.relative_to(changes.root).as_posix())
    spec = f"{changes.merge_base}:{relative}"
    return spec if _exists(spec, changes.merge_base, relative, changes.root) else None


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
    root, commit = _resolve(spec, revision)
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
