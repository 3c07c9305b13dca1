"""Independent work over many items on two CPUs: a forked child takes the second half of the items.

A fleet's stack files are completed one by one in Python (rendered, merged, written), about 3 ms each: with
two CPUs, a child process takes half of them. Forking copies nothing but page tables and needs nothing
pickled but an error; the child writes its files itself and always ends with `os._exit`, never in its
parent's code nor its exit handlers (jsii's, which would stop the parent's Node.js). The work must be plain
Python: no jsii, no threads' locks. The files are the same bytes whoever writes them.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import sys
from collections.abc import Callable, Sequence
from typing import TypeVar

Item = TypeVar("Item")

# Below this many items a fork (about 10 ms for a process of this size) costs more than it saves.
MIN_FORKED = 32


def can_fork() -> bool:
    """On Linux (where forking a process that has started Node.js is safe) with two CPUs to run on."""
    return sys.platform == "linux" and len(os.sched_getaffinity(0)) > 1


def for_each(items: Sequence[Item], work: Callable[[Item], None], *, fork: bool | None = None) -> None:
    """`work(item)` for every item, the second half in a forked child when `fork` (None: when the platform
    forks, two CPUs are free and there are `MIN_FORKED` items). The first error in the items' order is
    raised, once both halves have stopped: the caller may then remove what they wrote."""
    if fork is None:
        fork = len(items) >= MIN_FORKED and can_fork()
    if not fork:
        for item in items:
            work(item)
        return
    middle = len(items) // 2
    reading, writing = os.pipe()
    child = os.fork()
    if child == 0:  # never returns: whatever happens, the child ends here, not in its parent's code
        code = 1
        try:
            os.close(reading)
            code = _run_child(items[middle:], work, writing)
        finally:
            os._exit(code)
    os.close(writing)
    failure: BaseException | None = None
    report, status = b"", 0
    try:
        for item in items[:middle]:
            work(item)
    except BaseException as error:  # Ctrl-C included: the child is waited for, then it is raised
        failure = error
    finally:
        try:
            with os.fdopen(reading, "rb") as pipe:
                report = pipe.read()  # until the child exits
        finally:
            status = os.waitpid(child, 0)[1]
    if failure is not None:
        raise failure
    if report:
        raise _unpickled(report)
    if status != 0:  # killed (a signal, the OOM killer) before it could say why: its half is not done
        raise RuntimeError(f"the process completing the second half stopped ({_described(status)})")


def _unpickled(report: bytes) -> BaseException:
    try:
        error = pickle.loads(report)
    except Exception:
        return RuntimeError("the process completing the second half stopped while reporting its error")
    return error if isinstance(error, BaseException) else RuntimeError(repr(error))


def _described(status: int) -> str:
    if os.WIFSIGNALED(status):
        return f"signal {os.WTERMSIG(status)}"
    return f"exit code {os.waitstatus_to_exitcode(status)}"


def _run_child(items: Sequence[Item], work: Callable[[Item], None], writing: int) -> int:
    """The child's half: 0 when done, else 1 with the error pickled into `writing` (1 also when the parent has
    stopped reading)."""
    with os.fdopen(writing, "wb") as pipe:
        try:
            for item in items:
                work(item)
        except BaseException as error:  # any error goes back to the parent, which raises it
            try:
                report = pickle.dumps(error)
            except BaseException:  # an error that does not pickle goes back as its text
                report = pickle.dumps(RuntimeError(f"{type(error).__name__}: {error}"))
            with contextlib.suppress(OSError):  # the parent may be gone
                pipe.write(report)
            return 1
    return 0
