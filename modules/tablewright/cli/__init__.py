"""Command line: `tablewright synth|explain ...`; with no arguments, the cdktf app entry point.

The package: `parser` and `help` (every command's options and help), `commands`, `review_commands` and
`workspace_commands` (what each does), `project` (which blueprints a command takes), `paths` (the project root a
command runs in, and the paths it is given), `terminal` (colour and progress on a TTY)."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path

from tablewright.cli.commands import cdktf_app
from tablewright.cli.parser import ArgumentParser, build_parser
from tablewright.cli.paths import project_root
from tablewright.cli.project import CDKTF_JSON, TOOL_FILES, default_blueprints, load_all
from tablewright.cli.terminal import say, tool_version
from tablewright.errors import (
    EXIT_BAD_INPUT,
    EXIT_CLOSED_OUTPUT,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    ErrorCode,
    TablewrightError,
)

__all__ = ["CDKTF_JSON", "TOOL_FILES", "build_parser", "cdktf_app", "default_blueprints", "load_all", "main"]


def root_option(arguments: Sequence[str]) -> str | None:
    """`--root DIR` or `--root=DIR`, wherever it is (before `--`; the last one given wins, as for any option), found
    before the parser runs: the parser converts typed paths to the root."""
    found = None
    for position, argument in enumerate(arguments):
        if argument == "--":
            break
        if argument == "--root" and position + 1 < len(arguments):
            found = arguments[position + 1]
        elif argument.startswith("--root="):
            found = argument.partition("=")[2]
    return found


def split_passthrough(arguments: list[str]) -> tuple[list[str], list[str] | None]:
    """Tablewright's arguments, and those after the first `--` (None without one), which `terraform` passes on."""
    if "--" not in arguments:
        return arguments, None
    position = arguments.index("--")
    return arguments[:position], arguments[position + 1:]


def run(arguments: list[str]) -> int:
    """Parse and run one command in the project's root; the working directory is put back afterwards."""
    try:
        working = Path.cwd()
    except FileNotFoundError:
        raise TablewrightError("the working directory no longer exists", code=ErrorCode.PATH_ARGUMENT,
                               hint="cd into the repository again (it was removed or replaced)") from None
    root = project_root(root_option(arguments), working)
    parser = build_parser(working, root)
    os.chdir(root)
    try:
        if root != working:
            say(f"note: in the project {os.path.relpath(root, working)} (paths below are relative to it)")
        own, passed = split_passthrough(arguments)
        args, extras = parser.parse_known_args(own)
        command: ArgumentParser = parser.commands.get(getattr(args, "command", ""), parser)
        if passed is not None and getattr(args, "arguments", None) is None:
            extras = [*extras, "--", *passed]  # only `terraform` passes arguments on
        if extras:
            command.unrecognized(extras)
        if passed is not None:
            args.arguments = passed
        handler: Callable[[argparse.Namespace], int] = args.handler
        return handler(args)
    finally:
        os.chdir(working)


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    own = arguments[:arguments.index("--")] if "--" in arguments else arguments  # after `--`: Terraform's
    debug = "--debug" in own
    if debug:
        arguments.remove("--debug")
    try:
        code = run(arguments) if arguments else cdktf_app()
        sys.stdout.flush()  # here, where a reader gone away is still ours to answer
        return code
    except TablewrightError as error:
        say(error.render())
        return error.exit_code
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # `| head` had enough: stop as a program SIGPIPE stops
        with contextlib.suppress(OSError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_CLOSED_OUTPUT
    except Exception as error:  # the one place that turns a bug into a clear report
        if isinstance(error, OSError) and error.filename is not None:  # a path the system refused: the user's
            say(TablewrightError(f"{error.filename}: {error.strerror or error}", code=ErrorCode.PATH_ARGUMENT,
                                 hint="check the path (its length, its permissions, its folders)").render())
            return EXIT_BAD_INPUT
        if debug:
            traceback.print_exc()
        detail = " ".join(str(error).split())[:200]
        say(f"error: internal error in Tablewright {tool_version()}: {type(error).__name__}"
            f"{': ' + detail if detail else ''} [E900]\n"
            "  fix: this is a bug in Tablewright, not in your input: report it with the command and the files "
            "involved (add --debug for the traceback)")
        return EXIT_INTERNAL
