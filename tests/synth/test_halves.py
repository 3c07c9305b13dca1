"""`halves.for_each`: a forked child does the second half of the work; everything is done once, and an error
comes back to the parent, the first in the items' order."""

from __future__ import annotations

import contextlib
import os
import signal
from pathlib import Path

import pytest

from tablewright.constructs import halves
from tablewright.errors import BlueprintError, ErrorCode, SourceLocation

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="forks only where the platform does")


def _writer(folder: Path):
    def work(item: int) -> None:
        (folder / f"{item}.pid").write_text(str(os.getpid()))
    return work


def _pids(folder: Path, count: int) -> list[int]:
    return [int((folder / f"{item}.pid").read_text()) for item in range(count)]


def test_forked_the_child_does_the_second_half_and_every_item_is_done_once(tmp_path):
    halves.for_each(range(10), _writer(tmp_path), fork=True)
    pids = _pids(tmp_path, 10)
    assert pids[:5] == [os.getpid()] * 5
    assert len(set(pids[5:])) == 1 and pids[5] != os.getpid()
    assert sorted(path.name for path in tmp_path.iterdir()) == sorted(f"{item}.pid" for item in range(10))


def test_few_items_stay_in_the_process(tmp_path):
    halves.for_each(range(halves.MIN_FORKED - 1), _writer(tmp_path))
    assert set(_pids(tmp_path, halves.MIN_FORKED - 1)) == {os.getpid()}


def test_many_items_fork_where_two_cpus_are_free(tmp_path):
    halves.for_each(range(halves.MIN_FORKED), _writer(tmp_path))
    assert (len(set(_pids(tmp_path, halves.MIN_FORKED))) == 2) == halves.can_fork()


def _failing(bad: set[int], tmp_path: Path):
    def work(item: int) -> None:
        if item in bad:
            raise BlueprintError(f"item {item} is bad", location=SourceLocation("b.yaml", item, 1),
                                 code=ErrorCode.NAMING, hint="fix it")
        (tmp_path / str(item)).write_text("")
    return work


def test_an_error_in_the_childs_half_is_raised_in_the_parent_whole(tmp_path):
    with pytest.raises(BlueprintError) as raised:
        halves.for_each(range(10), _failing({7}, tmp_path), fork=True)
    assert raised.value.render() == BlueprintError("item 7 is bad", location=SourceLocation("b.yaml", 7, 1),
                                                   code=ErrorCode.NAMING, hint="fix it").render()
    assert (tmp_path / "4").exists()  # the parent finished its half before raising


def test_the_first_error_in_item_order_wins(tmp_path):
    with pytest.raises(BlueprintError, match="item 2 is bad"):
        halves.for_each(range(10), _failing({2, 8}, tmp_path), fork=True)


def test_an_error_that_does_not_pickle_comes_back_as_its_text():
    class Unpicklable(Exception):
        def __reduce__(self):
            raise TypeError("no")

    def work(item: int) -> None:
        if item == 3:
            raise Unpicklable("the reason")

    with pytest.raises(RuntimeError, match="Unpicklable: the reason"):
        halves.for_each(range(4), work, fork=True)


def test_a_child_killed_before_it_could_report_is_an_error_not_a_success(tmp_path):
    """Killed (a signal, the OOM killer), its half is not done: the parent must not report success."""
    def work(item: int) -> None:
        if item == 7:
            os.kill(os.getpid(), signal.SIGKILL)
        (tmp_path / str(item)).write_text("")

    with pytest.raises(RuntimeError, match=r"stopped \(signal 9\)"):
        halves.for_each(range(10), work, fork=True)


def test_the_child_never_returns_into_its_parents_code(tmp_path):
    """Even when its error cannot be reported (pickling it raises KeyboardInterrupt), the child ends in
    `for_each`: only the parent runs the caller's next statement."""
    class Hostile(Exception):
        def __reduce__(self):
            raise KeyboardInterrupt

    def work(item: int) -> None:
        if item == 8:
            raise Hostile()

    with contextlib.suppress(RuntimeError):  # what it raises is not the point here
        halves.for_each(range(10), work, fork=True)
    (tmp_path / f"after-{os.getpid()}").write_text("")
    assert [path.name for path in tmp_path.iterdir()] == [f"after-{os.getpid()}"]
