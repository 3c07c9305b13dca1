"""Tablewright entry point: `python main.py --help`; with no arguments, the cdktf app (`cdktf synth`)."""

import atexit
import os
import sys
from pathlib import Path

# A clone runs its own code, installed or not: modules/ is the source root of the `tablewright` package.
sys.path.insert(0, str(Path(__file__).resolve().parent / "modules"))

from tablewright.cli import main
from tablewright.errors import EXIT_INTERRUPTED

if __name__ == "__main__":
    code = main()
    if code == EXIT_INTERRUPTED:  # Ctrl-C stopped Node.js too: jsii's handler would report the closed pipe
        sys.unraisablehook = lambda _: None
    atexit._run_exitfuncs()  # jsii's: stop Node.js, remove its temporary directory
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except OSError:  # the reader is gone: nothing more can reach it
        pass
    # Exit without freeing every object one by one: seconds for a fleet's stacks, which the system reclaims at once.
    os._exit(code)
