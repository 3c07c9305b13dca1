"""Synthesis: stacks -> cdktf -> cdktf.out, replacing the output directory only on success; and the
design lock beside each blueprint, written or (`--locked`) checked."""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from pathlib import Path

from tablewright.blueprint.lock import DEFAULT_ENVIRONMENT, LOCK_VERSION, LockFile, lock_path, lock_text
from tablewright.design.locked import as_recorded, lock_changes, lock_of
from tablewright.errors import ErrorCode, TablewrightError
from tablewright.stacks.stack import Stack
from tablewright.synth.output import replace_output


def synthesize_into(stacks: Sequence[Stack], outdir: str | None) -> None:
    """Run cdktf (or cdktn) synthesis into `outdir` (None: wherever the CLI asked for)."""
    node = os.environ.get("JSII_NODE", "node")  # what jsii starts as the library loads
    if shutil.which(node) is None:
        raise TablewrightError(f"Node.js (`{node}`) is not on PATH: cdktf runs on it", code=ErrorCode.CDK_LIBRARY,
                               hint="install Node.js 20 or later (https://nodejs.org) and put `node` on PATH")
    from tablewright.constructs.cdk import App, synth
    from tablewright.constructs.stack import construct_stack

    app = App(outdir=outdir, stack_traces=False)
    synth(app, [construct_stack(app, stack) for stack in stacks])


def synthesize(stacks: Sequence[Stack], outdir: Path) -> list[Path]:
    """Synthesize into a fresh directory, then swap it in for `outdir` (only ever replacing an earlier
    synthesis: modules/tablewright/synth/output.py). Returns the cdk.tf.json files."""
    return synthesize_keeping(stacks, outdir)[0]


def synthesize_keeping(stacks: Sequence[Stack], outdir: Path) -> tuple[list[Path], tuple[Path, ...]]:
    """`synthesize`, also returning what the previous output held that synth did not write (kept)."""
    target, kept = replace_output(outdir, lambda staging: synthesize_into(stacks, str(staging)))
    return [target / "stacks" / stack.name / "cdk.tf.json" for stack in stacks], kept


def lock_texts(stacks: Sequence[Stack], as_written: bool = False) -> dict[Path, tuple[str, LockFile, LockFile | None]]:
    """Per blueprint file: the lock text its design deploys, that lock, and the lock on disk (if any).
    Environments not among `stacks` (`synth --env`) keep their entries. `as_written`: without the attributes where
    the lock on disk predates them (`as_recorded`)."""
    found: dict[Path, tuple[str, LockFile, LockFile | None]] = {}
    by_path: dict[Path, list[Stack]] = {}
    for stack in stacks:  # grouped in one pass: a fleet has thousands of blueprints
        by_path.setdefault(stack.source.path, []).append(stack)
    for path, ours in by_path.items():
        on_disk = ours[0].source.lock_file  # as the blueprint was loaded with it
        environments = dict(on_disk.environments) if on_disk else {}
        for stack in ours:
            environment = stack.source.environment or DEFAULT_ENVIRONMENT
            on_disk_entry = environments.get(environment)
            designed = lock_of(stack.design)
            if on_disk_entry is not None and on_disk_entry.migrated:  # `migrate verify` wrote them: kept
                designed = designed.model_copy(update={"migrated": on_disk_entry.migrated})
            environments[environment] = as_recorded(designed, on_disk_entry if as_written else None)
        lock = LockFile(lock_version=LOCK_VERSION, blueprint=ours[0].design.blueprint.blueprint,
                        environments=dict(sorted(environments.items())))
        text = lock_text(lock.model_dump(mode="json", exclude_defaults=True))
        found[path] = (text, lock, on_disk)
    return found


def check_locks(stacks: Sequence[Stack]) -> None:
    """`--locked`: every blueprint has a lock and its design is exactly that lock (nothing is written)."""
    for path, (text, lock, on_disk) in lock_texts(stacks, as_written=True).items():
        where = lock_path(path)
        if on_disk is None:
            raise TablewrightError(f"{path} has no design lock ({where.name}) to check against",
                                   code=ErrorCode.LOCK_CHANGED,
                                   hint=f"run `tablewright synth {path}` (without --locked) and commit {where}")
        if text == where.read_text():
            continue
        changes = [f"{environment}: {line}" for environment, entry in lock.environments.items()
                   for line in lock_changes(on_disk.environments.get(environment), entry)]
        if not changes:  # the same design, written otherwise (reformatted, a byte order mark)
            raise TablewrightError(f"{where} holds the design of {path} but not as synth writes it",
                                   code=ErrorCode.LOCK_CHANGED,
                                   hint=f"run `tablewright synth {path}` (without --locked) to rewrite it, and "
                                        "commit it")
        shown = "; ".join(changes[:8]) + (f"; and {len(changes) - 8} more" if len(changes) > 8 else "")
        raise TablewrightError(
            f"the design of {path} differs from its lock {where.name}: {shown}",
            code=ErrorCode.LOCK_CHANGED,
            hint=f"if the change is intended, run `tablewright synth {path}` (without --locked), review the "
                 f"diff of {where} and commit it; otherwise undo the blueprint change")


def write_locks(stacks: Sequence[Stack]) -> list[Path]:
    """Write each blueprint's lock beside it (atomically: a new file renamed over the old one; the blueprint was
    loaded with it, so it is a regular file if it exists). Returns the locks that changed."""
    written = []
    for path, (text, _, _) in lock_texts(stacks).items():
        where = lock_path(path)
        if where.exists() and where.read_text() == text:
            continue
        staging = where.with_name(f".{where.name}.{os.getpid()}")
        staging.write_text(text)
        staging.replace(where)
        written.append(where)
    return written
