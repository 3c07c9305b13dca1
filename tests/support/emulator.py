"""The emulator the slow tier uses: `tablewright local`'s (modules/tablewright/local/emulator.py), on a free port,
refused to tests that are not marked for the slow tier."""

from __future__ import annotations

import subprocess

from tablewright.local.emulator import Emulator as LocalEmulator
from tests.support.terraform_support import slow_tier_only


class Emulator(LocalEmulator):
    def __init__(self) -> None:
        slow_tier_only("the AWS emulator")
        super().__init__()


def read_exports(process: subprocess.Popen[str]) -> dict[str, str]:
    """The variables of the `export` lines a running `tablewright local` prints first (it serves once the last,
    AWS_DEFAULT_REGION, is out)."""
    exports: dict[str, str] = {}
    while "AWS_DEFAULT_REGION" not in exports:
        line = process.stdout.readline() if process.stdout else ""
        if not line.startswith("export "):
            error = process.stderr.read() if process.stderr else ""
            raise AssertionError(f"tablewright local printed {line!r}: {error}")
        name, _, value = line.removeprefix("export ").strip().partition("=")
        exports[name] = value
    return exports
