"""What `calibrate` found, as its renderers take it."""

from __future__ import annotations

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
    def changes(self) -> list[Change]:
        """Every blueprint change the calibration names."""
        return ([change for item in self.comparisons for change in item.changes]
                + [key.change for key in self.keys if key.change is not None])
