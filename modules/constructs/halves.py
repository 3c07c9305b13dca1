"""Independent work over many items on two CPUs: a forked child takes the second half of the items.

A fleet's stack files are completed one by one in Python (rendered, merged, written), about 4 ms each: with
two CPUs, a child process takes half of them. Forking copies nothing but page tables and needs nothing
pickled but an error; the child writes its files itself and exits without running the parent's exit
handlers (jsii's, which would stop the parent's Node.js). The files are the same bytes whoever writes them.
"""

from __future__ import annotations

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
    if child == 0:
        os.close(reading)
        os._exit(_run_child(items[middle:], work, writing))
    os.close(writing)
    failure: BaseException | None = None
    try:
        for item in items[:middle]:
            work(item)
    except BaseException as error:  # Ctrl-C included: the child is waited for, then it is raised
        failure = error
    finally:
        with os.fdopen(reading, "rb") as pipe:
            report = pipe.read()  # until the child exits
        os.waitpid(child, 0)
    if failure is not None:
        raise failure
    if report:
        raise pickle.loads(report)


def _run_child(items: Sequence[Item], work: Callable[[Item], None], writing: int) -> int:
    """The child's half: 0 when done, else 1 with the error pickled into `writing`."""
    with os.fdopen(writing, "wb") as pipe:
        try:
            for item in items:
                work(item)
        except BaseException as error:  # any error goes back to the parent, which raises it
            try:
                pipe.write(pickle.dumps(error))
            except Exception:  # an error that does not pickle goes back as its text
                pipe.write(pickle.dumps(RuntimeError(f"{type(error).__name__}: {error}")))
            return 1
    return 0
