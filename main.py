"""Tablewright entry point: `python main.py --help`; with no arguments, the cdktf app (`cdktf synth`)."""

import os
import sys

from modules.cli import main
from modules.errors import EXIT_INTERRUPTED

if __name__ == "__main__":
    code = main()
    if code == EXIT_INTERRUPTED:
        # Ctrl-C stopped jsii's Node.js child too: its exit handler would report the closed pipe as a traceback.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)
