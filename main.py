"""Tablewright entry point: `python main.py --help`; with no arguments, the cdktf app (`cdktf synth`)."""

import sys

from modules.cli import main

if __name__ == "__main__":
    sys.exit(main())
