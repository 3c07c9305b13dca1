"""The migration's write budget (tablewright/migrate/limiter.py), its retry policy, and the per-second figures its
progress reports (tablewright/migrate/progress.py): pure, on a fake clock, without sleeping or a network."""

from __future__ import annotations

import io
import json
import random
import threading

import pytest
from botocore.exceptions import ClientError, EndpointConnectionError

from tablewright.errors import TablewrightError
from tablewright.migrate.limiter import (
    OverBudget,
    Reservation,
    SlidingWindow,
    backoff,
    client_config,
    consumed_units,
    error_kind,
)
from tablewright.migrate.progress import Progress


class FakeClock:
    """A clock that sleeping advances (a lock keeps threads' sleeps apart)."""

    def __init__(self, start: float = 1000.0) -> None:
        self.now = start
        self.lock = threading.Lock()

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        with self.lock:
            self.now += seconds


def busiest_window(reservations: list[Reservation], window: float = 1.0) -> float:
    """The most units in any window of `window` seconds: the busiest one starts at a reservation's time."""
    times = sorted(reservations, key=lambda r: r.at)
    return max(sum(r.units for r in times if start.at <= r.at < start.at + window) for start in times)


def test_bursts_with_jitter_never_put_more_than_the_budget_in_any_second():
    clock, rng = FakeClock(), random.Random(7)
    limiter = SlidingWindow(50.0, clock=clock, sleep=clock.sleep)
    made = []
    for _ in range(3000):
        if rng.random() < 0.05:  # a pause between bursts
            clock.sleep(rng.uniform(0.0, 2.0))
        elif rng.random() < 0.5:  # jitter between requests of a burst
            clock.sleep(rng.uniform(0.0, 0.02))
        reservation = limiter.reserve(rng.choice([0.5, 1.0, 1.0, 2.0, 3.0, 7.5]))
        assert reservation is not None
        made.append(reservation)
        if rng.random() < 0.7:  # the answer reports what it consumed: at most the estimate, often less
            limiter.settle(reservation, reservation.units * rng.choice([1.0, 1.0, 0.5, 0.0]))
    assert busiest_window(made) <= 50.0 + 1e-9


def test_a_steady_demand_gets_the_whole_budget_every_second():
    clock = FakeClock(0.0)
    limiter = SlidingWindow(50.0, clock=clock, sleep=clock.sleep)
    made = [limiter.reserve(1.0) for _ in range(1000)]
    per_second: dict[int, float] = {}
    for reservation in made:
        per_second[int(reservation.at)] = per_second.get(int(reservation.at), 0.0) + reservation.units
    assert list(per_second.values()) == [50.0] * 20  # it waits only as long as it must


def test_threads_sharing_one_window_stay_within_the_budget():
    clock = FakeClock()
    limiter = SlidingWindow(20.0, clock=clock, sleep=clock.sleep)
    made: list[Reservation] = []

    def worker(seed: int) -> None:
        rng = random.Random(seed)
        for _ in range(200):
            reservation = limiter.reserve(rng.choice([1.0, 2.0, 3.0]))
            assert reservation is not None
            made.append(reservation)

    threads = [threading.Thread(target=worker, args=(seed,)) for seed in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(made) == 800
    assert busiest_window(made) <= 20.0 + 1e-9


def test_a_reservation_waits_exactly_until_the_oldest_units_leave_the_window():
    clock = FakeClock(0.0)
    limiter = SlidingWindow(10.0, clock=clock, sleep=clock.sleep)
    limiter.reserve(6.0)
    clock.now = 0.5
    limiter.reserve(4.0)
    clock.now = 0.6
    assert limiter.wait_time(5.0, 0.6) == pytest.approx(0.4)  # the 6 units of t=0 leave at t=1.0
    assert limiter.try_reserve(5.0) == pytest.approx(0.4)
    assert limiter.reserve(5.0).at == pytest.approx(1.0)
    assert limiter.held() == pytest.approx(9.0)


def test_the_reported_units_replace_the_reservation():
    clock = FakeClock(0.0)
    limiter = SlidingWindow(10.0, clock=clock, sleep=clock.sleep)
    first = limiter.reserve(8.0)
    assert limiter.try_reserve(5.0) == pytest.approx(1.0)  # 8 + 5 > 10: wait for the first to leave
    limiter.settle(first, 3.0)  # it consumed 3
    assert isinstance(limiter.try_reserve(5.0), Reservation)  # 3 + 5 <= 10: at once
    assert limiter.held() == pytest.approx(8.0)
    limiter.settle(first, None)  # no figure reported (a failed conditional write): the units stay
    assert limiter.held() == pytest.approx(8.0)
    limiter.settle(first, 6.0)  # more than reserved: counted from then on
    assert limiter.held() == pytest.approx(11.0)
    assert limiter.try_reserve(1.0) == pytest.approx(1.0)
    clock.now = 1.0
    assert limiter.held() == 0.0


def test_a_request_larger_than_the_budget_is_refused_before_it_waits():
    limiter = SlidingWindow(10.0, clock=FakeClock(), sleep=lambda _: pytest.fail("it must not wait"))
    with pytest.raises(OverBudget) as raised:
        limiter.reserve(12.5)
    assert isinstance(raised.value, ValueError) and isinstance(raised.value, TablewrightError)
    assert "12.5 write units exceeds the budget of 10 units per second" in raised.value.message
    assert "--max-wcu" in (raised.value.hint or "")
    limiter.check(10.0)  # the whole budget is allowed
    with pytest.raises(ValueError, match="positive"):
        SlidingWindow(0.0)


def test_a_wait_ends_when_the_run_gives_up():
    clock = FakeClock(0.0)
    limiter = SlidingWindow(1.0, clock=clock, sleep=lambda _: None)  # time stands still
    limiter.reserve(1.0)
    calls = []
    assert limiter.reserve(1.0, give_up=lambda: calls.append(1) or len(calls) > 3) is None


def test_backoff_doubles_from_50_ms_up_to_5_s_with_jitter():
    rng = random.Random(1)
    first = [backoff(0, rng) for _ in range(100)]
    assert all(0.025 <= delay <= 0.05 for delay in first) and len(set(first)) > 50
    assert all(0.05 <= backoff(1, rng) <= 0.1 for _ in range(100))
    assert all(2.5 <= backoff(attempt, rng) <= 5.0 for attempt in (7, 20, 60) for _ in range(100))


def client_error(code: str, status: int = 400, reasons: list[str] | None = None) -> ClientError:
    response: dict = {"Error": {"Code": code, "Message": code}, "ResponseMetadata": {"HTTPStatusCode": status}}
    if reasons is not None:
        response["CancellationReasons"] = [{"Code": reason} for reason in reasons]
    return ClientError(response, "UpdateItem")


@pytest.mark.parametrize(("error", "kind"), [
    (client_error("ConditionalCheckFailedException"), "conflict"),
    (client_error("TransactionCanceledException", reasons=["None", "ConditionalCheckFailed"]), "conflict"),
    (client_error("TransactionCanceledException", reasons=["ThrottlingError", "None"]), "throttled"),
    (client_error("TransactionCanceledException", reasons=["TransactionConflict"]), "transient"),
    (client_error("TransactionCanceledException", reasons=["ValidationError"]), "fatal"),
    (client_error("ProvisionedThroughputExceededException"), "throttled"),
    (client_error("ThrottlingException"), "throttled"),
    (client_error("RequestLimitExceeded"), "throttled"),
    (client_error("InternalServerError", 500), "transient"),
    (client_error("SomethingNew", 503), "transient"),
    (EndpointConnectionError(endpoint_url="http://127.0.0.1:1"), "transient"),
    (client_error("ValidationException"), "fatal"),
    (client_error("ResourceNotFoundException"), "fatal"),
    (KeyError("PK"), "fatal"),
])
def test_each_failure_is_retried_counted_or_raised_by_its_kind(error, kind):
    assert error_kind(error) == kind


def test_the_consumed_units_of_an_answer_and_the_client_it_expects():
    assert consumed_units({"ConsumedCapacity": {"TableName": "t", "CapacityUnits": 3.0}}) == 3.0
    assert consumed_units({"ConsumedCapacity": [{"CapacityUnits": 2.0}, {"CapacityUnits": 4.0}]}) == 6.0
    assert consumed_units({}) is None
    config = client_config(16)
    assert config.retries == {"total_max_attempts": 1} and config.max_pool_connections == 18


def lines(stream: io.StringIO) -> list[dict]:
    return [json.loads(line) for line in stream.getvalue().splitlines()]


def test_each_second_is_told_once_all_its_requests_have_their_answers():
    clock, out = FakeClock(100.2), io.StringIO()
    progress = Progress(out=out, err=io.StringIO(), clock=clock, terminal=False)
    progress.sent(100.3)
    progress.sent(100.9)
    progress.consumed(100.3, 2.0)
    progress.sent(101.1)
    clock.now = 102.5
    progress.consumed(101.1, 3.0)  # second 100 still waits for the request sent at 100.9
    assert [r for r in lines(out) if r["event"] == "second"] == []
    progress.consumed(100.9, 1.5)
    assert [r for r in lines(out) if r["event"] == "second"] == [{"event": "second", "t": 100, "units": 3.5}]
    progress.page(3, items=100, rewritten=90, conflicts=1, scanned=300, done=False, throttled=0)
    progress.finish({"scanned": 100, "finished": True})
    records = lines(out)
    assert [r["event"] for r in records] == ["second", "page", "second", "summary"]
    assert records[1] == {"event": "page", "t": 102.5, "segment": 3, "items": 100, "rewritten": 90, "conflicts": 1,
                          "scanned": 300, "done": False}
    assert records[2] == {"event": "second", "t": 101, "units": 3.0}
    assert records[3] == {"event": "summary", "scanned": 100, "finished": True}


def test_on_a_terminal_one_line_is_redrawn_on_stderr_and_stdout_stays_empty():
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    clock, out, err = FakeClock(100.0), io.StringIO(), Terminal()
    progress = Progress(out=out, err=err, clock=clock, total=1000)
    assert progress.terminal
    for second in range(100, 107):
        clock.now = second + 0.5
        progress.sent(second + 0.1)
        progress.consumed(second + 0.1, 10.0)
        progress.page(0, items=100, rewritten=100, conflicts=0, scanned=100, done=False, throttled=2)
    progress.finish({"scanned": 700, "rewritten": 700, "units": 70.0, "seconds": 7.0, "finished": True})
    assert out.getvalue() == ""
    drawn = err.getvalue()
    assert "\r" in drawn and "scanned 700/1,000 (70%)" in drawn and "throttled 2" in drawn
    assert "10.0 WCU/s" in drawn  # seconds 100..104 told, 10 units each
    assert drawn.endswith("finished: 700 scanned, 700 rewritten, 70.0 write units in 7.0 s\n")
