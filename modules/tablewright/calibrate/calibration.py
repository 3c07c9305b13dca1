"""What `calibrate` found, as its renderers take it."""

from __future__ import annotations

import os
from dataclasses import dataclass

from tablewright.calibrate.compare import Change, Comparison
from tablewright.calibrate.keys import KeyObservation
from tablewright.calibrate.replay import Replay


@dataclass(frozen=True)
class Calibration:
    comparisons: list[Comparison]
    keys: list[KeyObservation]
    partial: tuple[str, ...]  # metric series no page completed
    tolerance: float  # 0.25 for 25 %
    replays: list[Replay]

    @property
    def named(self) -> list[Change]:
        """Every blueprint change the report names, each from the traffic of one stack."""
        return ([change for item in self.comparisons for change in item.changes]
                + [key.change for key in self.keys if key.change is not None])

    @property
    def changes(self) -> list[Change]:
        """The changes `--write` makes: each line written only from the stacks of the blueprint whose file holds
        it. A base's line (`extends:`) takes the base's own traffic when the base is calibrated too, never that of
        the tables extending it (`write_notes` says what they asked for)."""
        return [change for change in self.named if change.own]

    @property
    def write_notes(self) -> list[str]:
        """One note per base line the extending blueprints' traffic would change: which tables ask for which
        value, and whether the base's own traffic was written there instead."""
        asked: dict[tuple[str, int, int, str], list[Change]] = {}
        for change in self.named:
            if not change.own:
                where = change.location
                asked.setdefault((os.path.realpath(where.file), where.line, where.column, change.field), []).append(
                    change)
        own = {(os.path.realpath(c.location.file), c.location.line, c.location.column, c.field): c
               for c in sorted(self.changes, key=lambda c: c.suggested)}  # the highest is written
        return [_note(changes, own.get(key)) for key, changes in sorted(asked.items())]


def _note(asked: list[Change], written: Change | None) -> str:
    first = asked[0]
    where = f"{os.path.relpath(first.location.file)}:{first.location.line}"
    figures = dict.fromkeys(f"{change.stack or os.path.relpath(change.owner)} {change.suggested:g}"
                            for change in sorted(asked, key=lambda c: (c.stack, c.suggested)))
    values = {change.suggested for change in asked}
    tables = ("the tables extending it disagree with it" if len(values) == 1 else
              "the tables extending it disagree with it and with each other")
    text = f"`{first.field}` ({first.current:g}) in {where}: {tables}: {', '.join(figures)}; "
    if written is not None:
        return (text + f"written from its own stack {written.stack} ({written.current:g} -> {written.suggested:g}); "
                "declare the extending tables' own value in their blueprints")
    return (text + "not written: declare each table's own value in its blueprint, or change it in the base if "
                   "every blueprint that extends it should")
