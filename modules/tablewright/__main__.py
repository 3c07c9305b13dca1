"""`python -m tablewright ...`: the `tablewright` command."""

import sys

from tablewright.cli import main

if __name__ == "__main__":
    sys.exit(main())
