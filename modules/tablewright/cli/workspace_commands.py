"""The commands of a user's own repository: init (scaffold it), local (a local AWS with its tables) and terraform
(Terraform in a stack's directory, against that local AWS when asked)."""

from __future__ import annotations

import argparse
import os
import re
import signal
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from tablewright.cli.project import stacks_of
from tablewright.cli.terminal import say, tool_version
from tablewright.errors import ErrorCode, TablewrightError

if TYPE_CHECKING:
    from tablewright.scaffold import Choices

MAX_LISTED = 5


# init -------------------------------------------------------------------------------------------------------------


def _choices(args: argparse.Namespace, directory: Path) -> Choices:
    from tablewright.blueprint.language.base import REGION, S3_BUCKET
    from tablewright.scaffold import Choices

    if not re.fullmatch(REGION, args.region):
        raise TablewrightError(f"--region {args.region!r} is not an AWS region", code=ErrorCode.USAGE,
                               hint="write it as AWS does, e.g. --region eu-west-1")
    if args.backend == "s3":
        if not args.state_bucket or not re.fullmatch(S3_BUCKET, args.state_bucket):
            raise TablewrightError(f"--backend s3 needs --state-bucket with a bucket name (given: "
                                   f"{args.state_bucket!r})", code=ErrorCode.USAGE,
                                   hint="e.g. --backend s3 --state-bucket acme-terraform-state --state-region "
                                        "eu-west-1 (the bucket holds one state object per stack)")
        if args.state_region is not None and not re.fullmatch(REGION, args.state_region):
            raise TablewrightError(f"--state-region {args.state_region!r} is not an AWS region",
                                   code=ErrorCode.USAGE, hint="e.g. --state-region eu-west-1")
    elif args.state_bucket or args.state_region:
        raise TablewrightError("--state-bucket and --state-region go with --backend s3", code=ErrorCode.USAGE,
                               hint="add --backend s3, or leave them out for a local state")
    project = re.sub(r"[^a-z0-9-]+", "-", directory.resolve().name.lower()).strip("-") or "infrastructure"
    return Choices(project=project, version=tool_version(), region=args.region, backend=args.backend,
                   state_bucket=args.state_bucket, state_region=args.state_region, ci=args.ci)


def command_init(args: argparse.Namespace) -> int:
    from tablewright.scaffold import missing_lines, project_files
    from tablewright.stacks.catalog import create_new_file

    directory = Path(args.directory)
    if directory.exists() and not directory.is_dir():
        raise TablewrightError(f"{directory} is a file", code=ErrorCode.PATH_ARGUMENT,
                               hint="pass the directory of the repository to scaffold")
    choices = _choices(args, directory)
    files = {directory / path: text for path, text in project_files(choices).items()}
    unchanged = [path for path, text in files.items() if _holds(path, text)]
    conflicts = [path for path in files if path not in unchanged and (path.exists() or path.is_symlink())]
    if conflicts and not args.skip_existing:
        raise TablewrightError(
            f"init would overwrite {len(conflicts)} file(s) with other contents: "
            + ", ".join(os.path.relpath(path) for path in conflicts[:MAX_LISTED])
            + (" ..." if len(conflicts) > MAX_LISTED else ""), code=ErrorCode.PROJECT_FILES,
            hint="move them aside and run init again, or pass --skip-existing to write only the missing files")
    written: list[Path] = []
    try:
        for path, text in files.items():
            if path not in unchanged and path not in conflicts:
                path.parent.mkdir(parents=True, exist_ok=True)
                create_new_file(path, text)
                written.append(path)
    except (OSError, TablewrightError) as error:
        for path in written:  # nothing half-scaffolded
            path.unlink(missing_ok=True)
        raise TablewrightError(f"init: cannot write into {directory} ({error})", code=ErrorCode.PROJECT_FILES,
                               hint="pass a directory you can write to") from None
    for path in written:
        print(f"wrote {os.path.relpath(path)}")
    for path in conflicts:
        lacking = (missing_lines(path.read_text(errors="replace"), files[path]) if path.is_file()
                   and not path.is_symlink() else [])
        print(f"left as it is: {os.path.relpath(path)}" + (f" (it lacks: {'; '.join(lacking)})" if lacking else ""))
    print(f"{len(written)} file(s) written, {len(unchanged)} already as init writes them, {len(conflicts)} left as "
          "they are")
    if written:
        print(_next_steps(directory))
    return 0


def _holds(path: Path, text: str) -> bool:
    try:
        return path.is_file() and not path.is_symlink() and path.read_text(encoding="utf-8") == text
    except (OSError, UnicodeDecodeError):
        return False


def _next_steps(directory: Path) -> str:
    steps = [("tablewright new payments", "a service blueprint extending the platform base"),
             ("tablewright lint", "points at each placeholder of the platform base (TW602)"),
             ("tablewright synth --env dev", "writes cdktf.out/stacks/payments-dev")]
    if directory.resolve() != Path.cwd().resolve():
        steps.insert(0, (f"cd {os.path.relpath(directory)}", "the repository"))
    width = max(len(command) for command, _ in steps)
    return "\n".join(["next:", *(f"  {command.ljust(width)}  # {what}" for command, what in steps),
                      "  and commit these files; each stack's .terraform.lock.hcl too, once Terraform wrote it"])


# local ------------------------------------------------------------------------------------------------------------


def command_local(args: argparse.Namespace) -> int:
    from tablewright.local.emulator import REGION, Emulator, check_address, exports, pointed_at
    from tablewright.local.tables import create_tables

    check_address(args.host, args.port)  # before any blueprint is read
    if args.items < 0 or args.items > 1000:
        raise TablewrightError(f"--items {args.items} is out of range", code=ErrorCode.USAGE,
                               hint="pass 0 (no items) to 1000 sample items per entity")
    if args.empty and (args.blueprints or args.items):
        raise TablewrightError("--empty creates no table: it takes no blueprint and no --items", code=ErrorCode.USAGE,
                               hint="leave out --empty to create the blueprints' tables")
    stacks = [] if args.empty else stacks_of(args)
    regions = sorted({stack.design.blueprint.region or REGION for stack in stacks}) or [REGION]
    with Emulator(args.port, args.host) as emulator, pointed_at(emulator.endpoint, regions[0]):
        tables = create_tables(lambda region: emulator.client("dynamodb", region=region), stacks, args.items,
                               args.seed)
        print("\n".join(f"export {name}={value}" for name, value in exports(emulator.endpoint, regions[0]).items()))
        for table in tables:
            print(f"# table {table.table} ({table.stack}, {table.region}): {table.items} sample item(s)")
        sys.stdout.flush()
        if len(regions) > 1:
            say(f"note: the tables are in {', '.join(regions)}: AWS_REGION is {regions[0]}; pass another region to "
                "reach the others")
        say(f"serving {emulator.endpoint} (127.0.0.1 only) until Ctrl-C; `tablewright terraform STACK --endpoint "
            f"{emulator.endpoint} -- plan` plans a stack against it")
        _wait_for_stop()
    say("stopped: nothing is kept")
    return 0


def _wait_for_stop() -> None:
    """Until SIGINT or SIGTERM."""
    stop = threading.Event()
    previous = {number: signal.signal(number, lambda *_: stop.set()) for number in (signal.SIGINT, signal.SIGTERM)}
    try:
        while not stop.wait(0.5):
            pass
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


# terraform --------------------------------------------------------------------------------------------------------


def stack_directory(out: Path, stack: str) -> Path:
    """`out/stacks/STACK`, refused unless synth wrote it."""
    stacks = out / "stacks"
    written = sorted(entry.name for entry in stacks.iterdir() if (entry / "cdk.tf.json").is_file()) \
        if stacks.is_dir() else []
    directory = stacks / stack
    if (not re.fullmatch(r"[a-z0-9][a-z0-9-]{0,127}", stack) or stack not in written
            or directory.is_symlink()):
        import difflib

        close = difflib.get_close_matches(stack, written, n=3, cutoff=0.6)
        hint = (f"did you mean {' or '.join(close)}?" if close else
                f"the stacks synthesized: {', '.join(written[:MAX_LISTED])}" if written else
                f"run `tablewright synth` first (it writes {stacks}/<stack>)")
        raise TablewrightError(f"no stack {stack!r} in {stacks}", code=ErrorCode.UNKNOWN_STACK, hint=hint)
    return directory


def command_terraform(args: argparse.Namespace) -> int:
    from tablewright.local.terraform import MIRROR_SETUP, OVERRIDE_FILE, check_endpoint, chosen_mirror, run_terraform

    arguments: Sequence[str] = args.arguments
    if not arguments:
        raise TablewrightError("tablewright terraform: no Terraform command after `--`", code=ErrorCode.USAGE,
                               hint="e.g. tablewright terraform orders-dev -- plan")
    endpoint = check_endpoint(args.endpoint) if args.endpoint is not None else None
    directory = stack_directory(Path(args.out), args.stack)
    mirror = chosen_mirror()
    stale = directory / OVERRIDE_FILE
    if endpoint is None and stale.exists():  # left by a run that was killed: it would point Terraform elsewhere
        stale.unlink()
        say(f"note: removed {os.path.relpath(stale)}, left by an interrupted `--endpoint` run")
    code = run_terraform(directory, arguments, endpoint, mirror)
    if code != 0 and mirror is None and arguments[0] == "init":
        say(f"note: if init could not reach the registry, use a provider mirror: {MIRROR_SETUP}")
    return code

