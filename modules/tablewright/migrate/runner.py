"""The engine of `tablewright migrate run`: a resumable, rate-limited, parallel backfill over a DynamoDB table.

`run_job` scans the table by parallel-Scan segments (K = `segments`; this process runs `mine`, a thread each) and
sends, for every item, the writes the job's `rewrite` returns:

- Budget: a worker's share is `max_wcu * len(mine) / segments` write units per second, so workers on one machine or
  many (a Kubernetes indexed Job, an AWS Batch array) together stay within `max_wcu`. Its threads share one
  `limiter.SlidingWindow`: a request reserves its estimate before it is sent, the units its answer reports replace
  it, and no one-second window holds more than the share. Checkpoints count too (1 unit reserved each).
- Conflicts: on ConditionalCheckFailed (or a transaction cancelled for it) the item is read again, strongly
  consistent, and rewritten from what it holds now; after MAX_CONFLICT_RETRIES it is left unresolved (counted).
- Throttles, 5xx answers and connection errors: retried after a backoff, 50 ms doubling to 5 s with jitter, at most
  MAX_ATTEMPTS times. The client must not retry on its own (or throttles go uncounted): `client_config`.
- Checkpoints: after each Scan page the segment's control item records where it is (`control`). A new run resumes
  there and skips done segments (a SIGKILL redoes at most a page per segment; already migrated items rewrite to
  None); it refuses to start, writing nothing, while another migration is in progress or with another K.
- Ctrl-C (KeyboardInterrupt in the calling thread) or `stop.set()`: each thread stops after its current request
  and records where it is; the result says `interrupted`. Errors stop every thread too, then `run_job` raises them.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

from tablewright.errors import TablewrightError
from tablewright.migrate import control
from tablewright.migrate.control import CODE, SegmentState
from tablewright.migrate.limiter import MAX_ATTEMPTS, OverBudget, SlidingWindow, backoff, consumed_units, error_kind
from tablewright.migrate.limiter import client_config as client_config  # the client `run_job` expects
from tablewright.migrate.progress import Progress

PAGE_SIZE = 100  # items per Scan page: a killed worker redoes at most this many per segment
MAX_CONFLICT_RETRIES = 5  # re-reads of one item whose condition failed, before it is left unresolved
CHECKPOINT_UNITS = 1.0  # reserved for a control item's write (under 1 KB)
OPERATIONS = {"Update": "update_item", "Put": "put_item", "Delete": "delete_item"}


@dataclass(frozen=True)
class Rewrite:
    """The writes that migrate one item, each already conditioned on the values read (the caller builds the
    ConditionExpression), so a concurrent application write is never overwritten."""

    requests: tuple[dict[str, Any], ...]  # {"Update": {...}}, {"Put": {...}}, {"Delete": {...}}, without TableName
    write_units: float  # the caller's estimate of the units these writes consume (reserved before sending)


RewriteFunction = Callable[[dict[str, Any]], Rewrite | None]  # a typed item -> its writes; None: none needed


@dataclass(frozen=True)
class Job:
    table: str  # physical table name
    migration: str  # a stable id of this migration (e.g. 16 hex digits); control items record it
    partition_key: str  # the table's key attribute names, for the control items
    sort_key: str | None
    entity_filter: tuple[str, ...]  # scan only items whose `_entity` is one of these; empty: all items
    rewrite: RewriteFunction


@dataclass(frozen=True)
class RunResult:
    scanned: int  # items scanned (control items not counted)
    rewritten: int  # items whose writes succeeded
    conflicts_retried: int  # conditional conflicts, each followed by a re-read and a new rewrite
    conflicts_unresolved: int  # items still conflicting after MAX_CONFLICT_RETRIES: left unmigrated
    units: float  # write units consumed: as the answers report them (a failed conditional write: its estimate)
    read_units: float  # read units the answers report (Scan, GetItem)
    throttled: int  # throttled requests (each retried)
    seconds: float
    finished: bool  # every segment of `mine` is done
    interrupted: bool  # stopped by Ctrl-C or `stop` before finishing
    done_segments: tuple[int, ...] = ()
    unresolved_before: int = 0  # items earlier runs of these segments left unmigrated (their checkpoints count them)


class _Conflict(Exception):
    """A condition failed (ConditionalCheckFailed, alone or as a transaction's cancellation reason)."""


class _Stopped(Exception):
    """The run is stopping: the request was not sent."""


class _Runner:
    def __init__(self, client: Any, job: Job, limiter: SlidingWindow, progress: Progress, stop: threading.Event,
                 page_size: int) -> None:
        self.client, self.job, self.limiter, self.progress, self.stop = client, job, limiter, progress, stop
        self.page_size = page_size
        self.counts: dict[str, float] = {}  # RunResult's counts, by name
        self.lock = threading.Lock()
        self.offset = time.time() - limiter.clock()  # the limiter's clock to Unix time, for the progress
        self.errors: list[BaseException] = []
        self.done: set[int] = set()

    def count(self, **counts: float) -> None:
        with self.lock:
            for name, value in counts.items():
                self.counts[name] = self.counts.get(name, 0) + value

    def call(self, operation: str, arguments: dict[str, Any], units: float | None = None,
             stoppable: bool = True) -> dict[str, Any]:
        """One request, retried when throttled or failing in transit; `units`: a write's reservation."""
        for attempt in range(MAX_ATTEMPTS):
            if stoppable and self.stop.is_set():
                raise _Stopped
            held = None if units is None else self.limiter.reserve(
                units, give_up=self.stop.is_set if stoppable else lambda: False)
            if units is not None and held is None:
                raise _Stopped
            if held is not None:
                self.progress.sent(held.at + self.offset)
            consumed: float | None = None
            try:
                answer: dict[str, Any] = getattr(self.client, operation)(**arguments)
                consumed = consumed_units(answer)
                if held is None:
                    self.count(read_units=consumed or 0.0)
                return answer
            except Exception as error:
                kind = error_kind(error)
                if kind == "conflict":
                    raise _Conflict from error
                if kind == "fatal":
                    raise
                consumed = 0.0 if kind == "throttled" else None  # a throttled request consumes nothing
                self.count(throttled=kind == "throttled")
            finally:
                if held is not None:
                    self.limiter.settle(held, consumed)
                    self.count(units=held.units)
                    self.progress.consumed(held.at + self.offset, held.units)
            if not stoppable:
                time.sleep(backoff(attempt))
            elif self.stop.wait(backoff(attempt)):
                raise _Stopped
        raise TablewrightError(f"{operation} on table {self.job.table} was throttled or failed {MAX_ATTEMPTS} times "
                               "in a row", code=CODE, hint="lower --max-wcu or raise the table's capacity, then run "
                                                          "again: the migration resumes where it stopped")

    def key_of(self, item: dict[str, Any]) -> dict[str, Any]:
        return {name: item[name] for name in (self.job.partition_key, self.job.sort_key) if name}

    def send(self, rewrite: Rewrite) -> None:
        entries = [(kind, {**arguments, "TableName": self.job.table})
                   for request in rewrite.requests for kind, arguments in request.items()]
        if len(entries) != len(rewrite.requests) or {kind for kind, _ in entries} - {*OPERATIONS, "ConditionCheck"}:
            raise ValueError(f"each request of a rewrite is one of Update, Put, Delete, ConditionCheck: {rewrite}")
        if len(entries) == 1 and entries[0][0] in OPERATIONS:
            kind, arguments = entries[0]
            self.call(OPERATIONS[kind], {**arguments, "ReturnConsumedCapacity": "TOTAL"}, rewrite.write_units)
        elif entries:
            self.call("transact_write_items", {"TransactItems": [{kind: arguments} for kind, arguments in entries],
                                               "ReturnConsumedCapacity": "TOTAL"}, rewrite.write_units)

    def migrate(self, item: dict[str, Any]) -> tuple[str, int]:
        """Rewrite one item: rewritten, unchanged (nothing to do, or gone) or unresolved; and its conflicts."""
        key = self.key_of(item)
        for attempt in range(MAX_CONFLICT_RETRIES + 1):
            try:
                rewrite = self.job.rewrite(item)
            except Exception as error:
                error.add_note(f"while computing the writes of the item {control.encode_key(key)}")
                raise
            if rewrite is None:
                return "unchanged", attempt
            try:
                self.limiter.check(rewrite.write_units)
            except OverBudget as error:
                raise error.rewritten(message=f"the item {control.encode_key(key)}: {error.message}") from None
            try:
                self.send(rewrite)
                return "rewritten", attempt
            except _Conflict:
                if attempt == MAX_CONFLICT_RETRIES:
                    break
            self.count(conflicts_retried=1)
            fresh = self.call("get_item", {"TableName": self.job.table, "Key": key, "ConsistentRead": True,
                                           "ReturnConsumedCapacity": "TOTAL"})
            if "Item" not in fresh:
                return "unchanged", attempt + 1
            item = fresh["Item"]
        self.count(conflicts_unresolved=1)
        return "unresolved", MAX_CONFLICT_RETRIES

    def checkpoint(self, state: SegmentState) -> None:
        try:
            self.call("put_item", {**control.checkpoint_request(self.job, replace(state, updated_at="")),
                                   "ReturnConsumedCapacity": "TOTAL"}, CHECKPOINT_UNITS, stoppable=False)
        except _Conflict:
            raise TablewrightError(f"another migration took over segment {state.segment} of table {self.job.table}",
                                   code=CODE, hint="let it finish, then run this one again") from None

    def page(self, state: SegmentState, items: list[dict[str, Any]]) -> tuple[SegmentState, int, int, bool]:
        """Migrate a page's items in order: the state after the last one migrated, how many were, their conflicts,
        and whether all were (not when stopping, or on an error, which stops every thread)."""
        conflicts = 0
        for done, item in enumerate(items):
            if self.stop.is_set():
                return state, done, conflicts, False
            try:
                outcome, retried = self.migrate(item)
            except _Stopped:
                return state, done, conflicts, False
            except Exception as error:
                self.errors.append(error)
                self.stop.set()
                return state, done, conflicts, False
            conflicts += retried
            state = replace(state, position=self.key_of(item), scanned=state.scanned + 1,
                            rewritten=state.rewritten + (outcome == "rewritten"),
                            conflicts=state.conflicts + (outcome == "unresolved"))
            self.count(scanned=1, rewritten=outcome == "rewritten")
        return state, len(items), conflicts, True

    def run_segment(self, state: SegmentState) -> None:
        try:
            while not state.done:
                try:
                    answer = self.call("scan", control.scan_request(self.job, state, self.page_size))
                except _Stopped:
                    return
                items = [item for item in answer.get("Items", [])
                         if not str(item.get(self.job.partition_key, {}).get("S", "")).startswith(control.CONTROL)]
                before = state
                state, count, conflicts, whole = self.page(state, items)
                if whole:
                    last = answer.get("LastEvaluatedKey")
                    state = replace(state, position=last, done=last is None)
                self.checkpoint(state)
                self.progress.page(state.segment, count, state.rewritten - before.rewritten, conflicts,
                                   state.scanned, state.done, int(self.counts.get("throttled", 0)))
                if not whole:
                    return
            self.done.add(state.segment)
        except BaseException as error:  # stops every thread; run_job raises the first
            self.errors.append(error)
            self.stop.set()

    def result(self, started: float, interrupted: bool, mine: Sequence[int], before: int) -> RunResult:
        number = {name: int(self.counts.get(name, 0)) for name in
                  ("scanned", "rewritten", "conflicts_retried", "conflicts_unresolved", "throttled")}
        finished = self.done >= set(mine)
        return RunResult(**number, units=round(self.counts.get("units", 0.0), 6),
                         read_units=round(self.counts.get("read_units", 0.0), 6),
                         seconds=round(time.monotonic() - started, 3), finished=finished,
                         interrupted=interrupted and not finished, done_segments=tuple(sorted(self.done)),
                         unresolved_before=before)


def _wait(threads: list[threading.Thread], stop: threading.Event) -> bool:
    """Join the threads; on Ctrl-C, stop them and join again (a second Ctrl-C is not caught). Whether stopped."""
    try:
        for thread in threads:
            while thread.is_alive():
                thread.join(timeout=0.1)
    except KeyboardInterrupt:
        stop.set()
        for thread in threads:
            thread.join()
        return True
    return stop.is_set()


def run_job(client: Any, job: Job, max_wcu: float, segments: int, mine: Sequence[int], progress: Progress, *,
            page_size: int = PAGE_SIZE, stop: threading.Event | None = None,
            clock: Callable[[], float] = time.monotonic) -> RunResult:
    """Run this worker's segments `mine` of K = `segments` (see the module's docstring); the worker's write budget
    is `max_wcu * len(mine) / segments` units per second. Raises TablewrightError (nothing written) when another
    migration is in progress, this one was started with another K, or a segment is not in 0..K-1."""
    started, mine = time.monotonic(), list(mine)
    if not max_wcu > 0 or page_size < 1:
        raise TablewrightError(f"--max-wcu {max_wcu}: the write budget must be positive", code=CODE,
                               hint="pass the write units per second the migration may use, e.g. --max-wcu 100")
    states = control.read_control(client, job, segments)
    recorded = control.check_start(states, job, segments, mine)
    before = sum(recorded[segment].conflicts for segment in mine if segment in recorded)  # left by earlier runs
    runner = _Runner(client, job, SlidingWindow(max_wcu * len(mine) / segments, clock=clock), progress,
                     stop or threading.Event(), page_size)
    working = not all(segment in recorded and recorded[segment].done for segment in mine)
    try:
        if working:
            runner.call("put_item", {**control.claim_request(job, False), "ReturnConsumedCapacity": "TOTAL"},
                        CHECKPOINT_UNITS, stoppable=False)
    except _Conflict:
        raise TablewrightError(
            f"a migration {control.claimed_by(client, job)} is in progress in table {job.table}", code=CODE,
            hint=f"finish it (`tablewright migrate run` with that design) or delete its control items "
                 f"(partition key {control.CONTROL!r}) before starting another") from None
    progress.start(job.table, job.migration, segments, mine, runner.limiter.budget)
    if job.sort_key is None and not all(recorded.get(segment, None) and recorded[segment].done for segment in mine):
        runner.call("put_item", {**control.header_request(job, segments), "ReturnConsumedCapacity": "TOTAL"},
                    CHECKPOINT_UNITS, stoppable=False)
    for segment in mine:
        if segment not in recorded:  # visible at once to other workers and migrations
            recorded[segment] = SegmentState(segment, job.migration, segments, None, done=False)
            runner.checkpoint(recorded[segment])
    runner.done = {segment for segment in mine if recorded[segment].done}
    threads = [threading.Thread(target=runner.run_segment, args=(recorded[segment],), daemon=True,
                                name=f"migrate-segment-{segment}") for segment in mine if segment not in runner.done]
    for thread in threads:
        thread.start()
    interrupted = _wait(threads, runner.stop)
    if working and runner.done >= set(mine) and not runner.errors and control.all_done(
            control.read_control(client, job, segments), job.migration, segments):
        runner.call("put_item", {**control.claim_request(job, True), "ReturnConsumedCapacity": "TOTAL"},
                    CHECKPOINT_UNITS, stoppable=False)  # the last worker done lets the next migration start
    result = runner.result(started, interrupted and not runner.errors, mine, before)
    progress.finish(asdict(result))
    if runner.errors:
        raise runner.errors[0]
    return result
