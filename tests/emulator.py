"""The emulator the slow tier uses: `tablewright local`'s (modules/tablewright/local/emulator.py), on a free port,
refused to tests that are not marked for the slow tier."""

from __future__ import annotations

from tablewright.local.emulator import Emulator as LocalEmulator
from tests.terraform_support import slow_tier_only


class Emulator(LocalEmulator):
    def __init__(self) -> None:
        slow_tier_only("the AWS emulator")
        super().__init__()
