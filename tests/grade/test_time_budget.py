"""Does a student whose code keeps timing out stop costing time? After a first time-out, later cells of
the submission get the shorter limit; once time-outs have cost the budget, the rest is not run, said so.
An honest notebook, and the engine's own defaults, are untouched."""
from __future__ import annotations

import dataclasses
import os
import signal
import time

import pytest

from autograder.grade.classrun.config import GradeConfig
from autograder.engine import Limits, default_pool, fallback, supervisor
from autograder.grade.submission.running import run_cells
from autograder.engine.frames import FrameReader, write_frame

pytestmark = [pytest.mark.grading, pytest.mark.xdist_group("test_engine")]
LOOP = "def slow(x):\n    while True:\n        pass\n"
# The same loop, waiting instead of spinning, where the test is about limits rather than about interrupting
# busy code (the first test here and tests/grade/test_engine.py prove that): a spinning one would take a core
# from the rest of the test command for each of its time-outs.
WAITING = "def slow(x):\n    import time\n    while True:\n        time.sleep(0.05)\n"
DEAF = "def deaf():\n    while True:\n        try:\n            while True:\n                pass\n        except KeyboardInterrupt:\n            pass\n"
# A looping cell gets 3 s of its own (cell_timeouts), later ones 2 s, and time-outs may cost 7 s in all: so three
# time-outs spend it (3 + 2 + 2) and two leave 2 s to spare, room for a loaded machine's late interrupts (the
# cost is the time each interrupted cell really ran). A cell that must finish has a minute: nothing here
# depends on how fast the machine runs it.
BUDGET = Limits(cell_timeout=60, interrupt_grace=1, later_timeout=2, timeout_budget=7, memory_bytes=2 * 2**30)


def looping(limits: Limits, *cells: int, seconds: float = 3.0) -> Limits:
    """``limits`` with ``cells`` (the ones that loop) given a limit of their own."""
    return dataclasses.replace(limits, cell_timeouts={i: seconds for i in cells})


@pytest.fixture(scope="module", autouse=True)
def warm():
    default_pool().warm(1)


def test_later_time_outs_are_shorter_and_the_rest_is_not_run_once_the_budget_is_spent():
    run = run_cells([LOOP, "x = 1", "slow(1)", "slow(2)", "slow(3)", "slow(4)", "print('after', x)"],
                    assignment="02_demo", limits=looping(BUDGET, 2, 3, 4, 5))
    status = [c.status for c in run.cells]
    assert status[:2] == ["ok", "ok"]
    # 3 s, then 2 s each: 3 + 2 + 2 = 7 s spent, so slow(4) and what follows never start (the cells that did not
    # run are the proof, not a stopwatch: without the budget slow(4) would cost 2 s more and print would run)
    assert status[2:5] == ["timeout"] * 3, [(c.status, c.detail) for c in run.cells]
    assert "interrupted after 3 s" in run.cells[2].detail
    assert "interrupted after 2 s (the shorter limit" in run.cells[3].detail, run.cells[3].detail
    assert [c.status for c in run.cells[5:]] == ["skipped", "skipped"]
    assert all("time budget spent" in c.detail for c in run.cells[5:])
    assert any("whole time budget" in p for p in run.problems)


def test_a_loop_that_ignores_the_interrupt_counts_against_the_budget_too():
    # each costs its limit and the grace, as counted (3 + 1, then 2 + 1): 7 s, the budget
    run = run_cells([DEAF, "deaf()", "deaf()", "print('never')"], assignment="02_demo", limits=looping(BUDGET, 1, 2),
                    max_restarts=6)
    assert [c.status for c in run.cells[1:3]] == ["timeout", "timeout"], [(c.status, c.detail) for c in run.cells]
    assert run.cells[3].status == "skipped" and "time budget spent" in run.cells[3].detail


def test_without_a_budget_every_cell_still_runs_to_its_own_limit():
    """The engine's defaults (no budget): the control that shows the budget above is what stopped the cells."""
    limits = looping(Limits(cell_timeout=60, interrupt_grace=1, memory_bytes=2 * 2**30), 1, 2, 3, seconds=2)
    run = run_cells([WAITING, "slow(1)", "slow(2)", "slow(3)", "print('after')"], assignment="02_demo",
                    limits=limits)
    assert [c.status for c in run.cells] == ["ok", "timeout", "timeout", "timeout", "ok"]
    assert all("interrupted after 2 s" in c.detail for c in run.cells[1:4])


def test_an_honest_notebook_is_untouched_by_the_budget():
    run = run_cells(["import time\ntime.sleep(0.2)", "x = sum(range(10**6))", "print(x)"], assignment="02_demo",
                    limits=BUDGET)
    assert [c.status for c in run.cells] == ["ok", "ok", "ok"] and not run.problems


def test_grade_sets_a_budget_from_its_timeout_and_refuses_a_bad_one(tmp_path):
    limits = GradeConfig(submissions=tmp_path, timeout=60).limits()
    assert (limits.cell_timeout, limits.later_timeout, limits.timeout_budget) == (60, 15, 180)
    assert GradeConfig(submissions=tmp_path, timeout=8).limits().later_timeout == 5
    assert GradeConfig(submissions=tmp_path, timeout=3).limits().later_timeout == 3
    # a short --timeout (CI's 4 s on a loaded machine times out honest cells too) keeps two minutes of budget
    assert GradeConfig(submissions=tmp_path, timeout=4).limits().timeout_budget == 120
    with pytest.raises(ValueError, match="--time-budget must be positive"):
        GradeConfig(submissions=tmp_path, timeout_budget=0).check()


def test_the_nbclient_fallback_keeps_the_same_shorter_limit_and_budget():
    """`grade --engine nbclient` runs a plain kernel: the same Limits bound it (it used to give every later
    cell that met the loop the full timeout)."""
    run = fallback.run_cells([WAITING, "x = 1", "slow(1)", "slow(2)", "slow(3)", "slow(4)", "print('after', x)"],
                             assignment="02_demo", limits=looping(BUDGET, 2, 3, 4, 5))
    status = [c.status for c in run.cells]
    assert status[:5] == ["ok", "ok", "timeout", "timeout", "timeout"], [(c.status, c.detail) for c in run.cells]
    # the limit nbclient was given for each cell, as it says (it once compared the cell's wall time with 3 s)
    assert "interrupted after 3 s" in run.cells[2].detail
    assert "interrupted after 2 s (the shorter limit" in run.cells[3].detail, run.cells[3].detail
    assert [c.status for c in run.cells[5:]] == ["skipped", "skipped"]
    assert all("time budget spent" in c.detail for c in run.cells[5:])
    assert any("whole time budget" in p for p in run.problems)


def watched(monkeypatch, *, spent: float):
    """A watcher of one run reading a hello, a cell's start and its done frame in one read (all already in the
    pipe, as when the cell runner outran the stop); the watcher and the signals it sent."""
    signals: list[tuple[int, int]] = []
    monkeypatch.setattr(supervisor, "_signal", lambda pid, sig: signals.append((pid, sig)))
    msgs_r, msgs_w = os.pipe()
    stat_r, stat_w = os.pipe()
    try:
        for frame in ({"hello": ["test"]}, {"start": 0}, {"done": 0, "status": "ok", "outputs": []}):
            write_frame(msgs_w, frame)
        watch = supervisor.Attempt(pid=12345, msgs=FrameReader(msgs_r), stat=FrameReader(stat_r), timeout=3,
                                   grace=1, setup_deadline=time.monotonic() + 60, budget=5, spent=spent)
        watch.read_messages()
    finally:
        for fd in (msgs_r, msgs_w, stat_r, stat_w):
            os.close(fd)
    return watch, signals


def test_a_cell_that_finishes_before_the_budgets_stop_reaches_it_is_still_not_run(monkeypatch):
    """The race of a loaded machine, held still: the budget is spent when a cell starts, the stop is sent, but
    the cell runner gets that cell's done frame out first. The cell was not to run, so it is "not run" (its done
    frame dropped), as when the stop is quick; it once came out "ok" in one fresh-clone run of six."""
    watch, signals = watched(monkeypatch, spent=5)
    assert watch.budget_spent and signals == [(12345, signal.SIGUSR2)]
    assert watch.done == {} and watch.current is None


def test_a_cell_that_starts_with_budget_left_keeps_its_result(monkeypatch):
    """The control: the same frames with budget left are one finished cell and no stop."""
    watch, signals = watched(monkeypatch, spent=4)
    assert not watch.budget_spent and signals == []
    assert list(watch.done) == [0] and watch.done[0]["status"] == "ok"


def test_a_cut_cell_names_the_limit_it_had_however_long_it_overran():
    """The message once guessed which limit cut a cell from how long it ran: a later cell (2 s) that a loaded
    machine interrupted late, after 2.6 s, was said to have had the full 3 s. The engine now keeps the limit
    each cell started with."""
    limits = Limits(cell_timeout=3, later_timeout=2)
    done = {"done": 4, "status": "error", "outputs": [], "seconds": 2.6}
    late = supervisor._finished(done, limits, interrupted=True, limit=2.0)
    assert late.status == "timeout" and late.detail.startswith("interrupted after 2 s (the shorter limit"), late
    first = supervisor._finished(dict(done, seconds=3.4), limits, interrupted=True, limit=3.0)
    assert first.detail == "interrupted after 3 s", first
    assert watched_limits().cell_limits == {0: 3.0}, "the limit cell 0 started with"


def watched_limits():
    """An Attempt that saw cell 0 start, with a 3 s limit for it."""
    msgs_r, msgs_w = os.pipe()
    stat_r, stat_w = os.pipe()
    try:
        for frame in ({"hello": ["test"]}, {"start": 0}):
            write_frame(msgs_w, frame)
        watch = supervisor.Attempt(pid=12345, msgs=FrameReader(msgs_r), stat=FrameReader(stat_r), timeout=30,
                                   grace=1, setup_deadline=time.monotonic() + 60, limits=Limits(cell_timeout=3))
        watch.read_messages()
    finally:
        for fd in (msgs_r, msgs_w, stat_r, stat_w):
            os.close(fd)
    return watch
