"""The output directory `synth --out DIR` writes: replaced only when it is Tablewright's own.

`DIR` is replaced only if it does not exist or holds an earlier synthesis (the marker
file below, or the plain layout cdktf writes). Never the working directory, one of its ancestors,
the home directory, a repository, a symbolic link or a file. The new output is written beside
`DIR` (`.DIR.staging-PID`), then swapped in with two renames under a lock on the parent directory;
a run killed between the renames leaves `.DIR.retired-PID`, which the next run puts back before it
starts, so the previous output is never lost. Leftovers of killed runs are removed.

What synth did not write is never deleted. Terraform's own files in a stack directory (`.terraform`,
`.terraform.lock.hcl`, a saved plan, a state file from before the state moved out) and anything else
a user put there are moved into the new output as they are; a stack directory synth no longer writes
that holds such files makes synth refuse (exit 2) with nothing changed.
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from tablewright.constructs.state import LOCAL_STATE_DIRECTORY
from tablewright.errors import ErrorCode, TablewrightError

MARKER = ".tablewright-output"
MARKER_TEXT = "Written by `tablewright synth`: replaced as a whole on the next synth.\n"
# What cdktf itself writes into an output directory (outputs from before the marker existed).
CDKTF_LAYOUT = frozenset({"manifest.json", "stacks", "constructs.json", MARKER})
STACKS = "stacks"
# What `tablewright terraform --endpoint` writes beside a stack while Terraform runs, and removes afterwards: one
# left by a killed run would point plain `terraform` at the emulator, so synth drops it with the old output.
LOCAL_OVERRIDE_FILE = "tablewright_local_override.tf.json"
STACK_FILES = frozenset({"cdk.tf.json", LOCAL_OVERRIDE_FILE})  # what synth writes (or drops) in each stack directory
MAX_NAMED = 5  # entries a refusal lists by name


def state_file(output: Path, stack_name: str) -> Path:
    """Where the local state of `stack_name` is, for the output directory `output`."""
    return output.parent / LOCAL_STATE_DIRECTORY / f"{stack_name}.tfstate"


def _refuse(outdir: Path, problem: str, hint: str) -> TablewrightError:
    return TablewrightError(f"--out {outdir}: {problem}", code=ErrorCode.PATH_ARGUMENT, hint=hint)


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
    """Undo what a killed run left: put a retired output back if none is in place, then move the user's files a
    staging directory holds into it, and drop the rest. `_leftovers` sorts `.retired-` before `.staging-`, so the
    output is back in place before anything is moved into it."""
    for kind, pid, path in _leftovers(target):
        if pid != os.getpid() and _pid_alive(pid):
            continue
        if not is_tablewright_output(path):
            continue  # not ours after all: leave it alone
        holds_users_files = bool(foreign_entries(path))
        if not target.exists() and (kind == "retired" or holds_users_files):
            path.rename(target)  # the output back in place (or, holding the user's files, a staging in its place)
            continue
        if holds_users_files:  # a run killed after moving the user's files into its staging
            if conflicts(path, target):
                continue  # both hold something at one place: leave the leftover to the user
            carry_over(path, target)
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


def _ours(relative: Path, entry: Path) -> bool:
    """Whether synth writes the entry at `relative` (inside an output directory) itself: one of its names, of its
    kind (a directory where it writes a directory, a regular file where it writes a file), never a symbolic link."""
    if entry.is_symlink():
        return False
    parts = relative.parts
    if parts[0] == STACKS and len(parts) <= 2:
        return entry.is_dir()
    if len(parts) == 1:
        return parts[0] in CDKTF_LAYOUT and entry.is_file()
    return parts[0] == STACKS and len(parts) == 3 and parts[2] in STACK_FILES and entry.is_file()


def foreign_entries(output: Path) -> list[Path]:
    """What synth did not write in `output`, relative to it: each top-most such entry (a whole `.terraform`
    directory is one entry). Symbolic links are entries, never followed."""
    found, pending = [], [Path()]
    while pending:
        directory = pending.pop()
        for entry in sorted((output / directory).iterdir()):
            relative = directory / entry.name
            if not _ours(relative, entry):
                found.append(relative)
            elif entry.is_dir():
                pending.append(relative)
    return sorted(found)


def stack_of(relative: Path) -> str | None:
    """The stack directory an entry is in (`stacks/<stack>/...`), if any."""
    parts = relative.parts
    return parts[1] if len(parts) >= 3 and parts[0] == STACKS else None


def earlier_state(entries: Iterable[Path], local: set[str]) -> list[Path]:
    """The state files earlier versions wrote in a stack directory (`stacks/<stack>/terraform.<stack>.tfstate`), of
    the stacks (`local`) whose state is now kept beside the output."""
    return [entry for entry in entries
            if (stack := stack_of(entry)) in local and entry.parts[2:] == (f"terraform.{stack}.tfstate",)]


def orphaned(output: Path, stacks: set[str]) -> list[Path]:
    """Entries synth did not write inside stack directories it no longer writes: replacing `output`
    would delete them."""
    return [entry for entry in foreign_entries(output) if stack_of(entry) not in (None, *stacks)]


def refuse_orphans(outdir: Path, output: Path, stacks: set[str], option: str = "--out ") -> None:
    """Refuse (E603) to replace `output` when a stack directory it would drop holds files synth did not write
    (`option`: how the command names the output directory)."""
    lost = orphaned(output, stacks)
    if not lost:
        return
    named = ", ".join(str(Path(outdir) / entry) for entry in lost[:MAX_NAMED])
    more = f" and {len(lost) - MAX_NAMED} more" if len(lost) > MAX_NAMED else ""
    gone = sorted({str(stack_of(entry)) for entry in lost})
    raise TablewrightError(
        f"{option}{outdir}: stack {', '.join(gone)} is not in this synthesis, and its directory holds what synth did "
        f"not write ({named}{more}): replacing the output would delete it", code=ErrorCode.OUTPUT_HOLDS_FILES,
        hint="synthesize that stack too (its blueprint and environment), or move what you keep out of "
             f"{Path(outdir) / STACKS / gone[0]} and delete the directory yourself; Terraform state lives beside "
             "the output (see the README: Terraform state)")


def written_stacks(output: Path) -> set[str]:
    """The stacks an output holds (none when it holds no `stacks` directory: a synthesis of nothing)."""
    directory = output / STACKS
    return {entry.name for entry in directory.iterdir()} if directory.is_dir() else set()


def _taken(destination: Path, entry: Path) -> bool:
    """Whether `destination` has something at `entry`, or a file where `entry` needs a directory on its way."""
    for parent in [*reversed(entry.parents[:-1]), entry]:
        place = destination / parent
        if place.is_symlink() or (place.exists() and (parent == entry or not place.is_dir())):
            return True
    return False


def conflicts(source: Path, destination: Path) -> list[Path]:
    """Entries of `source` synth did not write that cannot move into `destination`: it has something there."""
    return [entry for entry in foreign_entries(source) if _taken(destination, entry)]


def carry_over(source: Path, destination: Path) -> tuple[Path, ...]:
    """Move every entry synth did not write from `source` into the same place in `destination` (the caller has
    checked there are no `conflicts`); returns them, relative to the output."""
    moved = []
    for entry in foreign_entries(source):
        there = destination / entry
        there.parent.mkdir(parents=True, exist_ok=True)
        (source / entry).rename(there)
        moved.append(entry)
    return tuple(moved)


def refuse_conflicts(outdir: Path, output: Path, staging: Path) -> None:
    """Refuse (E603) when the previous output holds something of the user's where synth writes its own files."""
    clashing = conflicts(output, staging)
    if clashing:
        named = ", ".join(str(Path(outdir) / entry) for entry in clashing[:MAX_NAMED])
        raise TablewrightError(
            f"--out {outdir}: {named} is not what synth writes there (a file, a link or a directory of yours where "
            "it writes its own): replacing the output would delete it", code=ErrorCode.OUTPUT_HOLDS_FILES,
            hint="move it out of the output directory, then synthesize again")


def replace_output(outdir: Path, write: Callable[[Path], None]) -> tuple[Path, tuple[Path, ...]]:
    """Call `write(staging)` to fill a fresh directory, then swap it in for `outdir`, with what the previous
    output holds that synth did not write moved into it (returned: the kept entries). What the file system
    refuses on the way is the user's path (E600); what `write` raises is its own."""
    target = check_target(outdir)
    kept: tuple[Path, ...] = ()
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
                    refuse_orphans(outdir, target, written_stacks(staging))
                    refuse_conflicts(outdir, target, staging)
                    kept = carry_over(target, staging)
                    target.rename(retired)
                staging.rename(target)
        finally:
            if staging.exists():  # a failed swap puts back what it moved (where recovery will find it)
                previous = target if target.exists() else retired
                if previous.exists() and not conflicts(staging, previous):
                    carry_over(staging, previous)
            shutil.rmtree(staging, ignore_errors=True)
        shutil.rmtree(retired, ignore_errors=True)
    return target, kept
