"""The commands of a user's own repository: init (scaffold it), local (a local AWS with its tables) and terraform
(Terraform in a stack's directory, against that local AWS when asked)."""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import signal
import sys
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from tablewright.cli.project import designed, load_all
from tablewright.cli.terminal import say, tool_version
from tablewright.errors import ErrorCode, TablewrightError

if TYPE_CHECKING:
    from tablewright.blueprint.load import LoadedBlueprint
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
        if not args.state_bucket:
            raise TablewrightError("--backend s3 needs --state-bucket", code=ErrorCode.USAGE,
                                   hint="e.g. --backend s3 --state-bucket acme-terraform-state --state-region "
                                        "eu-west-1 (the bucket holds one state object per stack)")
        if not re.fullmatch(S3_BUCKET, args.state_bucket) or ".." in args.state_bucket:
            raise TablewrightError(f"--state-bucket {args.state_bucket!r} is not an S3 bucket name",
                                   code=ErrorCode.USAGE, hint="3 to 63 lowercase letters, digits, '.' and '-', "
                                                              "starting and ending with a letter or digit")
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

    directory = Path(args.directory) if args.directory is not None else Path("." if args.root else args.here)
    if (directory.exists() or directory.is_symlink()) and not directory.is_dir():  # a file, a dangling link
        raise TablewrightError(f"{directory} is not a directory", code=ErrorCode.PATH_ARGUMENT,
                               hint="pass the directory of the repository to scaffold")
    choices = _choices(args, directory)
    files = {directory / path: text for path, text in project_files(choices).items()}
    unchanged = [path for path, text in files.items() if _holds(path, text)]
    conflicts = [path for path in files if path not in unchanged
                 and (path.exists() or path.is_symlink() or _blocked(directory, path))]
    if conflicts and not args.skip_existing:
        raise TablewrightError(
            f"init would overwrite {len(conflicts)} file(s) with other contents, or write through a link: "
            + ", ".join(os.path.relpath(path) for path in conflicts[:MAX_LISTED])
            + (" ..." if len(conflicts) > MAX_LISTED else ""), code=ErrorCode.PROJECT_FILES,
            hint="move them aside and run init again, or pass --skip-existing to write only the missing files")
    written = _write_all({path: text for path, text in files.items() if path not in unchanged + conflicts},
                         directory)
    for path in written:
        print(f"wrote {os.path.relpath(path)}")
    for path in conflicts:
        lacking = (missing_lines(path.read_text(errors="replace"), files[path]) if path.name == ".gitignore"
                   and path.is_file() and not path.is_symlink() and not _blocked(directory, path) else [])
        print(f"left as it is: {os.path.relpath(path)}" + (f" (add these lines: {'; '.join(lacking)})" if lacking
                                                           else ""))
    print(f"{len(written)} file(s) written, {len(unchanged)} already as init writes them, {len(conflicts)} left as "
          "they are")
    if written:
        print(_next_steps(os.path.relpath(directory, args.here)))
    if args.backend == "local" and args.ci != "none":
        say("note: the CI workflow plans and applies on a fresh runner every time: with the local state it finds "
            "none and plans every stack anew; for a team, `init --backend s3 --state-bucket BUCKET` (see the "
            "platform base's `terraform.backend`)")
    return 0


def _blocked(directory: Path, path: Path) -> bool:
    """Whether a folder on the way from `directory` to `path` is a link or a file: writing there would land
    elsewhere, or fail."""
    parts = path.relative_to(directory).parts[:-1]
    return any((directory.joinpath(*parts[:depth]).is_symlink()
                or (directory.joinpath(*parts[:depth]).exists() and not directory.joinpath(*parts[:depth]).is_dir()))
               for depth in range(1, len(parts) + 1))


def _write_all(files: dict[Path, str], directory: Path) -> list[Path]:
    """Each file new (`create_new_file`: never through a link), its folders made as needed; on any failure
    everything this wrote, folders included, is removed again: nothing half-scaffolded."""
    from tablewright.files import create_new_file

    made: list[Path] = []  # folders and files, in the order they came to be
    try:
        for path, text in files.items():
            for folder in reversed(path.parents):
                if folder.is_relative_to(directory) and not folder.exists():
                    folder.mkdir()
                    made.append(folder)
            create_new_file(path, text)
            made.append(path)
    except (OSError, TablewrightError) as error:
        for entry in reversed(made):
            with contextlib.suppress(OSError):
                if entry.is_dir():
                    entry.rmdir()
                else:
                    entry.unlink()
        cause = error.message if isinstance(error, TablewrightError) else f"{error.filename}: {error.strerror}"
        raise TablewrightError(f"init: {cause}", code=ErrorCode.PROJECT_FILES,
                               hint="pass a directory you can write to, with room for a few files") from None
    return [path for path in made if path in files]


def _holds(path: Path, text: str) -> bool:
    try:
        return path.is_file() and not path.is_symlink() and path.read_text(encoding="utf-8") == text
    except (OSError, UnicodeDecodeError):
        return False


def _next_steps(directory: str) -> str:
    """What to do next, from where the user typed `init` (`directory`: the repository, relative to that)."""
    steps = [("tablewright new payments", "a service blueprint extending the platform base"),
             ("tablewright lint", "points at each placeholder of the platform base (TW602)"),
             ("tablewright synth --env dev", "writes cdktf.out/stacks/payments-dev")]
    if directory != ".":
        steps.insert(0, (f"cd {directory}", "the repository"))
    width = max(len(command) for command, _ in steps)
    return "\n".join(["next:", *(f"  {command.ljust(width)}  # {what}" for command, what in steps),
                      "  and commit these files; each stack's .terraform.lock.hcl too, once Terraform wrote it"])


# local ------------------------------------------------------------------------------------------------------------


def _local_stacks(args: argparse.Namespace) -> list[LoadedBlueprint]:
    """`--env`'s stack of each blueprint; by default `dev`'s, or the one stack of a blueprint without
    environments."""
    if args.env is not None:
        return load_all(args.blueprints, args.env, args.command)
    loaded = load_all(args.blueprints, None, args.command)
    with_environments = {stack.path for stack in loaded if stack.environment is not None}
    chosen = [stack for stack in loaded if stack.environment == DEFAULT_LOCAL_ENVIRONMENT
              or (stack.environment is None and stack.path not in with_environments)]
    left_out = sorted({str(stack.path) for stack in loaded} - {str(stack.path) for stack in chosen})
    if left_out:
        say(f"note: {len(left_out)} blueprint(s) without environment `{DEFAULT_LOCAL_ENVIRONMENT}` left out: "
            f"{', '.join(left_out[:MAX_LISTED])}{' ...' if len(left_out) > MAX_LISTED else ''} (pass --env)")
    return chosen


DEFAULT_LOCAL_ENVIRONMENT = "dev"


def command_local(args: argparse.Namespace) -> int:
    from tablewright.local.emulator import REGION, Emulator, check_address
    from tablewright.local.tables import MAX_ITEMS, create_tables

    check_address(args.host, args.port)  # before any blueprint is read
    if not 0 <= args.items <= MAX_ITEMS:
        raise TablewrightError(f"--items {args.items} is out of range", code=ErrorCode.USAGE,
                               hint=f"pass 0 (no items) to {MAX_ITEMS} sample items per entity")
    if args.empty and (args.blueprints or args.items):
        raise TablewrightError("--empty creates no table: it takes no blueprint and no --items", code=ErrorCode.USAGE,
                               hint="leave out --empty to create the blueprints' tables")
    stacks = [] if args.empty else designed(_local_stacks(args), args.command)
    regions = sorted({stack.design.blueprint.region or REGION for stack in stacks}) or [REGION]
    with _stopped_by_signals() as stop, Emulator(args.port, args.host) as emulator:
        variables = emulator.point_environment(regions[0])
        tables = create_tables(lambda region: emulator.client("dynamodb", region=region), stacks, args.items,
                               args.seed)
        print("\n".join(f"export {name}={value}" for name, value in variables.items()))
        for table in tables:
            print(f"# table {table.table} ({table.stack}, {table.region}): {table.items} sample item(s)")
        sys.stdout.flush()
        if len(regions) > 1:
            say(f"note: the tables are in {', '.join(regions)}: AWS_REGION is {regions[0]}; pass another region to "
                "reach the others")
        say(f"serving {emulator.endpoint} (127.0.0.1 only) until Ctrl-C; `tablewright terraform STACK --endpoint "
            f"{emulator.endpoint} -- plan` plans a stack against it")
        while not stop.wait(0.5):
            pass
    say("stopped: nothing is kept")
    return 0


@contextlib.contextmanager
def _stopped_by_signals() -> Iterator[threading.Event]:
    """An event SIGINT or SIGTERM sets (from the start: a stop during start-up ends it cleanly too)."""
    stop = threading.Event()
    previous = {number: signal.signal(number, lambda *_: stop.set()) for number in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield stop
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


# terraform --------------------------------------------------------------------------------------------------------


def stack_directory(out: Path, stack: str) -> Path:
    """`out/stacks/STACK`, refused unless synth wrote it (a directory of its own, not a link)."""
    import difflib

    stacks = out / "stacks"
    written = sorted(entry.name for entry in stacks.iterdir() if not entry.is_symlink()
                     and (entry / "cdk.tf.json").is_file()) if stacks.is_dir() and not stacks.is_symlink() else []
    directory = stacks / stack
    if directory.is_symlink():
        raise TablewrightError(f"{directory} is a symbolic link, not a stack synth wrote", code=ErrorCode.UNKNOWN_STACK,
                               hint="run `tablewright synth`: it writes each stack's directory")
    if re.fullmatch(r"[a-z0-9][a-z0-9-]{0,127}", stack) and stack in written:
        return directory
    close = [written[[name.lower() for name in written].index(match)]
             for match in difflib.get_close_matches(stack.lower(), [name.lower() for name in written], n=3, cutoff=0.6)]
    hint = (f"did you mean {' or '.join(close)}?" if close else
            f"the stacks synthesized: {', '.join(written[:MAX_LISTED])}" if written else
            f"run `tablewright synth` first (it writes {stacks}/<stack>)")
    raise TablewrightError(f"no stack {stack!r} in {stacks}", code=ErrorCode.UNKNOWN_STACK, hint=hint)


def _listening(endpoint: str) -> bool:
    import socket

    host, _, port = endpoint.removeprefix("http://").partition(":")
    try:
        with socket.create_connection((host, int(port)), timeout=2):
            return True
    except OSError:
        return False


def command_terraform(args: argparse.Namespace) -> int:
    from tablewright.local.terraform import (
        MIRROR_SETUP,
        check_endpoint,
        chosen_mirror,
        remove_stale_override,
        run_terraform,
    )
    from tablewright.synth.output import LOCAL_OVERRIDE_FILE

    arguments: Sequence[str] = args.arguments
    if not arguments:
        raise TablewrightError("tablewright terraform: no Terraform command after `--`", code=ErrorCode.USAGE,
                               hint="e.g. tablewright terraform orders-dev -- plan")
    endpoint = check_endpoint(args.endpoint) if args.endpoint is not None else None
    directory = stack_directory(Path(args.out), args.stack)
    mirror = chosen_mirror()
    if endpoint is not None and not _listening(endpoint):
        say(f"note: nothing listens on {endpoint}: Terraform's AWS calls will fail; start `tablewright local "
            f"--empty --port {endpoint.rsplit(':', 1)[1]}` first (init, validate and fmt need no emulator)")
    if endpoint is None and remove_stale_override(directory):  # a killed run's: it would point Terraform elsewhere
        say(f"note: removed {os.path.relpath(directory / LOCAL_OVERRIDE_FILE)}, left by an interrupted `--endpoint` "
            "run")
    code = run_terraform(directory, arguments, endpoint, mirror)
    if code != 0 and mirror is None and arguments[0] == "init":
        say(f"note: if init could not reach the registry, use a provider mirror: {MIRROR_SETUP}")
    return code

