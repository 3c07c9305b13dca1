"""Command line: `python main.py synth|explain ...`; with no arguments, the cdktf app entry point.

The package: `parser` (every command's options and help), `commands` and `review_commands` (what each does),
`project` (which blueprints a command takes), `terminal` (colour and progress on a TTY)."""

from __future__ import annotations

import argparse
import sys
import traceback
from collections.abc import Callable, Sequence

from modules.cli.commands import cdktf_app
from modules.cli.parser import build_parser
from modules.cli.project import CDKTF_JSON, PROJECT_ROOT, TOOL_FILES, default_blueprints, load_all
from modules.cli.terminal import say
from modules.errors import EXIT_INTERNAL, EXIT_INTERRUPTED, TablewrightError

__all__ = ["CDKTF_JSON", "PROJECT_ROOT", "TOOL_FILES", "build_parser", "cdktf_app", "default_blueprints", "load_all",
           "main"]


def tool_version() -> str:
    from importlib import metadata  # only on the error path: it costs start-up time

    try:
        return metadata.version("tablewright")
    except metadata.PackageNotFoundError:
        return "unknown"


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in arguments
    arguments = [argument for argument in arguments if argument != "--debug"]
    try:
        if not arguments:
            return cdktf_app()
        args = build_parser().parse_args(arguments)
        handler: Callable[[argparse.Namespace], int] = args.handler
        return handler(args)
    except TablewrightError as error:
        say(error.render())
        return error.exit_code
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except Exception as error:  # the one place that turns a bug into a clear report
        if debug:
            traceback.print_exc()
        detail = " ".join(str(error).split())[:200]
        say(f"error: internal error in Tablewright {tool_version()}: {type(error).__name__}"
            f"{': ' + detail if detail else ''} [E900]\n"
            "  fix: this is a bug in Tablewright, not in your input: report it with the command and the files "
            "involved (add --debug for the traceback)")
        return EXIT_INTERNAL
