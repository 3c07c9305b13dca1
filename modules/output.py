"""The output directory `synth --out DIR` writes: replaced only when it is Tablewright's own.

`DIR` is replaced only if it does not exist or holds an earlier synthesis (the marker
file below, or the plain layout cdktf writes). Never the working directory, one of its ancestors,
the home directory, a repository, a symbolic link or a file. The new output is written beside
`DIR` (`.DIR.staging-PID`), then swapped in with two renames under a lock on the parent directory;
a run killed between the renames leaves `.DIR.retired-PID`, which the next run puts back before it
starts, so the previous output is never lost. Leftovers of killed runs are removed.
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from modules.errors import TablewrightError

MARKER = ".tablewright-output"
MARKER_TEXT = "Written by `python main.py synth`: replaced as a whole on the next synth.\n"
# What cdktf itself writes into an output directory (outputs from before the marker existed).
CDKTF_LAYOUT = frozenset({"manifest.json", "stacks", "constructs.json", MARKER})


def _refuse(outdir: Path, problem: str, hint: str) -> TablewrightError:
    return TablewrightError(f"--out {outdir}: {problem}", code="E600", hint=hint)


def is_tablewright_output(directory: Path) -> bool:
    if (directory / MARKER).is_file():
        return True
    entries = {entry.name for entry in directory.iterdir()}
    return entries <= CDKTF_LAYOUT and "manifest.json" in entries


@contextmanager
def _writable(outdir: Path) -> Iterator[None]:
    """What the file system refuses (a read-only or virtual file system, a name too long) is the user's path."""
    try:
        yield
    except OSError as error:
        raise _refuse(outdir, f"cannot be written: {error.strerror or error}",
                      "pass a path to a writable directory (default: cdktf.out)") from None


def check_target(outdir: Path) -> Path:
    """The absolute output path, or a refusal naming why synth must not replace it."""
    with _writable(outdir):
        return _checked_target(outdir)


def _checked_target(outdir: Path) -> Path:
    choose = "choose a new directory, or the one an earlier synth wrote (default: cdktf.out)"
    if outdir.is_symlink():
        raise _refuse(outdir, "is a symbolic link", "pass the real directory, or a new one")
    target = Path(os.path.abspath(outdir))
    if target.exists() and not target.is_dir():
        raise _refuse(outdir, "is a file, not an output directory", choose)
    protected = {Path.cwd().resolve(): "the current directory or one of its ancestors",
                 Path.home().resolve(): "the home directory or one of its ancestors"}
    for place, what in protected.items():
        if place == target.resolve() or place.is_relative_to(target.resolve()):
            raise _refuse(outdir, f"is {what}", choose)
    if target.is_dir():
        if (target / ".git").exists():
            raise _refuse(outdir, "is a git repository", choose)
        if not is_tablewright_output(target):
            raise _refuse(outdir, "already exists and was not written by Tablewright", choose)
    return target


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _leftovers(target: Path) -> list[tuple[str, int, Path]]:
    pattern = re.compile(rf"\.{re.escape(target.name)}\.(staging|retired)-(\d+)")
    found = []
    for entry in target.parent.iterdir():
        match = pattern.fullmatch(entry.name)
        if match and entry.is_dir() and not entry.is_symlink():
            found.append((match.group(1), int(match.group(2)), entry))
    return sorted(found, key=lambda item: item[2].name)


def recover(target: Path) -> None:
    """Undo what a killed run left: put a retired output back if none is in place, drop the rest."""
    for kind, pid, path in _leftovers(target):
        if pid != os.getpid() and _pid_alive(pid):
            continue
        if not is_tablewright_output(path):
            continue  # not ours after all: leave it alone
        if kind == "retired" and not target.exists():
            path.rename(target)
        else:
            shutil.rmtree(path, ignore_errors=True)


@contextmanager
def _locked(directory: Path, outdir: Path) -> Iterator[None]:
    """One synth at a time per parent directory (released when the process dies)."""
    with _writable(outdir):
        directory.mkdir(parents=True, exist_ok=True)
        descriptor = os.open(directory, os.O_RDONLY)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        yield
    finally:
        os.close(descriptor)


def replace_output(outdir: Path, write: Callable[[Path], None]) -> Path:
    """Call `write(staging)` to fill a fresh directory, then swap it in for `outdir`. What the file system
    refuses on the way is the user's path (E600); what `write` raises is its own."""
    target = check_target(outdir)
    with _locked(target.parent, outdir):
        with _writable(outdir):
            recover(target)
            target = check_target(outdir)  # another run may have changed it while we waited
            staging = target.with_name(f".{target.name}.staging-{os.getpid()}")
            retired = target.with_name(f".{target.name}.retired-{os.getpid()}")
            shutil.rmtree(staging, ignore_errors=True)
            staging.mkdir()
        try:
            with _writable(outdir):
                (staging / MARKER).write_text(MARKER_TEXT)  # first, so a killed run's staging is recognisably ours
            write(staging)
            with _writable(outdir):
                if target.exists():
                    target.rename(retired)
                staging.rename(target)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        shutil.rmtree(retired, ignore_errors=True)
    return target
