"""A write-unit budget over a sliding one-second window, shared by the threads of one migration worker.

Every request reserves the units it is expected to consume before it is sent; a reservation is admitted only when
the units reserved in the window that ends with it (the requests sent in the last second, itself included) stay
within the budget, else it waits for the oldest to leave the window. Once the response reports what the request
really consumed, that figure replaces the reservation. So no one-second window, wherever it starts, holds more
than the budget of send times' units, provided no request consumes more than it reserved (a response that reports
more is counted from then on, and makes later requests wait longer).

The retry policy beside it: `backoff` (exponential, with jitter, bounded), `error_kind` (what a failed request
means) and `consumed_units` (what an answer reports).

Pure logic: the clock and the sleep are injectable (tests run it on a fake clock, without sleeping).
"""

from __future__ import annotations

import random
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tablewright.errors import ErrorCode, TablewrightError

WINDOW_SECONDS = 1.0


class OverBudget(TablewrightError, ValueError):
    """One request's units exceed the whole per-second budget: it could never be sent within it."""

    default_code = ErrorCode.USAGE


@dataclass(eq=False)
class Reservation:
    """Units held in the window from `at` (the limiter's clock) until a second later."""

    at: float
    units: float


class SlidingWindow:
    """At most `budget` units in any window of `window` seconds, over the reservations' times.

    Thread-safe: `reserve` blocks (sleeping outside the lock) until the units fit; `settle` replaces a reservation's
    units by the consumed figure (`None`: keep the reservation, e.g. a failed conditional write, which consumes
    capacity but reports none)."""

    def __init__(self, budget: float, window: float = WINDOW_SECONDS, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        if not budget > 0:
            raise ValueError(f"the budget must be positive, not {budget}")
        self.budget, self.window, self.clock, self.sleep = float(budget), window, clock, sleep
        self._held: deque[Reservation] = deque()  # in order of time
        self._total = 0.0  # units of `_held`
        self._lock = threading.Lock()

    def check(self, units: float) -> None:
        """Refuse a request that alone exceeds the budget (it would wait forever)."""
        if units > self.budget:
            raise OverBudget(
                f"a request of {units:g} write units exceeds the budget of {self.budget:g} units per second",
                hint="raise --max-wcu (a worker gets max_wcu x its segments / all segments) or run fewer segments per "
                     "worker")

    def _expire(self, now: float) -> None:
        while self._held and self._held[0].at <= now - self.window:
            self._total -= self._held.popleft().units
        if not self._held:
            self._total = 0.0  # no drift from float sums

    def wait_time(self, units: float, now: float) -> float:
        """Seconds from `now` until `units` fit in the window (0: now). Call with the lock held or in a test."""
        self._expire(now)
        excess = self._total + units - self.budget
        if excess <= 1e-9:
            return 0.0
        for held in self._held:  # the oldest leave first
            excess -= held.units
            if excess <= 1e-9:
                return max(held.at + self.window - now, 0.0)
        return self.window  # unreachable while units <= budget; a settle may have raised the held units

    def try_reserve(self, units: float) -> Reservation | float:
        """A reservation now, or the seconds to wait before trying again."""
        self.check(units)
        with self._lock:
            now = self.clock()
            wait = self.wait_time(units, now)
            if wait > 0:
                return wait
            reservation = Reservation(now, float(units))
            self._held.append(reservation)
            self._total += reservation.units
            return reservation

    def reserve(self, units: float, give_up: Callable[[], bool] = lambda: False) -> Reservation | None:
        """Wait until `units` fit, then hold them. None when `give_up()` turns true while waiting."""
        while True:
            got = self.try_reserve(units)
            if isinstance(got, Reservation):
                return got
            if give_up():
                return None
            self.sleep(min(got, self.window))

    def settle(self, reservation: Reservation, consumed: float | None) -> None:
        """Replace the reservation by what the request consumed (None: keep it)."""
        if consumed is None:
            return
        with self._lock:
            if reservation in self._held:  # identity: dataclass(eq=False)
                self._total += consumed - reservation.units
            reservation.units = float(consumed)

    def held(self, now: float | None = None) -> float:
        """Units in the window that ends at `now` (default: the clock's now)."""
        with self._lock:
            self._expire(self.clock() if now is None else now)
            return self._total


BACKOFF_FIRST = 0.05  # seconds before the first retry of a throttled request
BACKOFF_MAX = 5.0
_JITTER = random.Random()


def backoff(attempt: int, rng: random.Random | None = None) -> float:
    """Seconds to wait before retry `attempt` (0 for the first): 50 ms doubling up to 5 s, with jitter (a uniform
    draw from the upper half, so threads throttled together do not retry together)."""
    ceiling = min(BACKOFF_MAX, BACKOFF_FIRST * 2 ** attempt)
    return float(ceiling / 2 + (rng or _JITTER).uniform(0.0, ceiling / 2))


MAX_ATTEMPTS = 15  # sends of one request that is throttled or fails in transit (about 45 s of backoff)
THROTTLED = {"ProvisionedThroughputExceededException", "ThrottlingException", "RequestLimitExceeded"}
TRANSIENT = {"InternalServerError", "ServiceUnavailable", "TransactionConflictException",
             "TransactionInProgressException"}


def consumed_units(answer: dict[str, Any]) -> float | None:
    """The units an answer reports (a transaction's: summed over its tables); None when it reports none."""
    consumed = answer.get("ConsumedCapacity")
    if consumed is None:
        return None
    return float(sum(c.get("CapacityUnits", 0.0) for c in (consumed if isinstance(consumed, list) else [consumed])))


def error_kind(error: Exception) -> str:
    """What a failed request means: `conflict` (a condition failed, alone or as a transaction's cancellation
    reason), `throttled` or `transient` (retry after a backoff; a 5xx, a connection error, a transaction conflict), or
    `fatal` (raise it)."""
    from botocore.exceptions import ClientError, ConnectionError, HTTPClientError

    if isinstance(error, ConnectionError | HTTPClientError):
        return "transient"
    if not isinstance(error, ClientError):
        return "fatal"
    code = error.response.get("Error", {}).get("Code", "")
    if code == "TransactionCanceledException":
        reasons = {reason.get("Code") for reason in error.response.get("CancellationReasons", [])}
        return ("conflict" if "ConditionalCheckFailed" in reasons else
                "throttled" if reasons & {"ThrottlingError", "ProvisionedThroughputExceeded"} else
                "transient" if "TransactionConflict" in reasons else "fatal")
    if code == "ConditionalCheckFailedException":
        return "conflict"
    status = error.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0)
    return "throttled" if code in THROTTLED else "transient" if code in TRANSIENT or status >= 500 else "fatal"


def client_config(threads: int) -> Any:
    """The botocore configuration `runner.run_job` expects of its client: no automatic retries (the runner backs off
    and counts the throttles itself) and a connection per thread."""
    from botocore.config import Config

    return Config(retries={"total_max_attempts": 1}, max_pool_connections=max(10, threads + 2),
                  connect_timeout=10, read_timeout=60)
