"""What a migration worker tells while it runs.

On a terminal (`err.isatty()`): one progress line on `err`, rewritten in place (items scanned, of the estimated
total when given, rewritten, write units per second over the last seconds, throttled requests), then a summary.
Otherwise JSON lines on `out`, one object each:

- `{"event": "start", "t", "table", "migration", "segments", "mine", "budget"}`;
- `{"event": "page", "t", "segment", "items", "rewritten", "conflicts", "scanned", "done"}` after each Scan page a
  segment has processed (`items`, `rewritten`: this page's; `scanned`: the segment's total so far; `done`: it was the
  segment's last page);
- `{"event": "second", "t", "units"}`: the write units consumed by the requests sent in the second that starts at
  `t` (Unix time, whole seconds), written a second after it ends, once every request sent in it has its answer (a
  request registered later still, which a thread stalled between its reservation and its registration, comes on
  another line of that second: lines of one second add up);
- `{"event": "summary", ...}`: the run's result (`RunResult`), last.

The clock is injectable (Unix seconds); every method is thread-safe.
"""

from __future__ import annotations

import json
import math
import sys
import threading
import time
from collections.abc import Callable
from typing import Any, TextIO

BAR_INTERVAL = 0.2  # seconds between two redraws of the progress line
RATE_SECONDS = 5  # the units-per-second figure of the progress line averages this many whole seconds


class Progress:
    def __init__(self, out: TextIO | None = None, err: TextIO | None = None, clock: Callable[[], float] = time.time,
                 total: int | None = None, terminal: bool | None = None) -> None:
        self.out = out if out is not None else sys.stdout
        self.err = err if err is not None else sys.stderr
        self.clock, self.total = clock, total
        self.terminal = self.err.isatty() if terminal is None else terminal
        self._lock = threading.Lock()
        self._pending: dict[int, int] = {}  # second -> requests sent in it without an answer yet
        self._units: dict[int, float] = {}  # second -> units consumed by its answered requests
        self._written: dict[int, float] = {}  # the seconds already told (the last few, for the rate)
        self.scanned = self.rewritten = self.throttled = 0
        self._drawn = 0.0

    def _emit(self, record: dict[str, Any]) -> None:
        if not self.terminal:
            self.out.write(json.dumps(record) + "\n")
            self.out.flush()

    def start(self, table: str, migration: str, segments: int, mine: list[int], budget: float) -> None:
        with self._lock:
            self._emit({"event": "start", "t": self.clock(), "table": table, "migration": migration,
                        "segments": segments, "mine": mine, "budget": budget})

    def sent(self, at: float) -> None:
        """A request was sent at `at` (Unix seconds); `consumed` follows with its units, whatever its outcome."""
        with self._lock:
            second = math.floor(at)
            self._pending[second] = self._pending.get(second, 0) + 1

    def consumed(self, at: float, units: float) -> None:
        """The request sent at `at` consumed `units` (0 when it was throttled)."""
        with self._lock:
            second = math.floor(at)
            self._pending[second] = self._pending.get(second, 0) - 1
            if self._pending[second] <= 0:
                del self._pending[second]
            self._units[second] = self._units.get(second, 0.0) + units
            self._flush(self.clock())

    def _flush(self, now: float, everything: bool = False) -> None:
        """Tell every second that is over and has all its answers."""
        current = math.floor(now)
        for second in sorted(self._units):
            if everything or (second < current - 1 and second not in self._pending):
                units = self._units.pop(second)
                self._written[second] = self._written.get(second, 0.0) + units
                self._emit({"event": "second", "t": second, "units": round(units, 6)})
        for second in [s for s in self._written if s < current - RATE_SECONDS - 1]:
            del self._written[second]
        self._draw(now)

    def page(self, segment: int, items: int, rewritten: int, conflicts: int, scanned: int, done: bool,
             throttled: int) -> None:
        with self._lock:
            self.scanned += items
            self.rewritten += rewritten
            self.throttled = throttled
            self._emit({"event": "page", "t": self.clock(), "segment": segment, "items": items,
                        "rewritten": rewritten, "conflicts": conflicts, "scanned": scanned, "done": done})
            self._flush(self.clock())

    def rate(self, now: float) -> float:
        """Write units per second over the last RATE_SECONDS whole seconds told."""
        current = math.floor(now)
        recent = [units for second, units in self._written.items() if current - RATE_SECONDS <= second < current]
        return sum(recent) / RATE_SECONDS

    def _draw(self, now: float, final: bool = False) -> None:
        if not self.terminal or (not final and now - self._drawn < BAR_INTERVAL):
            return
        self._drawn = now
        of = f"/{self.total:,}" if self.total else ""
        share = f" ({100 * self.scanned / self.total:.0f}%)" if self.total else ""
        line = (f"scanned {self.scanned:,}{of}{share}  rewritten {self.rewritten:,}  "
                f"{self.rate(now):,.1f} WCU/s  throttled {self.throttled:,}")
        self.err.write("\r" + line.ljust(78) + ("\n" if final else ""))
        self.err.flush()

    def finish(self, summary: dict[str, Any]) -> None:
        """Tell the seconds left and the summary."""
        with self._lock:
            self._flush(self.clock(), everything=True)
            if self.terminal:
                self._draw(self.clock(), final=True)
                state = "finished" if summary.get("finished") else "interrupted" if summary.get(
                    "interrupted") else "stopped"
                self.err.write(f"{state}: {summary.get('scanned', 0):,} scanned, {summary.get('rewritten', 0):,} "
                               f"rewritten, {summary.get('units', 0):,.1f} write units in "
                               f"{summary.get('seconds', 0):,.1f} s\n")
                self.err.flush()
            else:
                self._emit({"event": "summary", **summary})
