"""What `calibrate` found, as its renderers take it."""

from __future__ import annotations

from dataclasses import dataclass

from modules.calibrate.compare import Comparison
from modules.calibrate.keys import KeyObservation


@dataclass(frozen=True)
class Calibration:
    comparisons: list[Comparison]
    keys: list[KeyObservation]
    partial: tuple[str, ...]  # metric series no page completed
    tolerance: float  # 0.25 for 25 %
