"""Does a student whose code keeps timing out stop costing time? After a first time-out, later cells of
the submission get the shorter limit; once time-outs have cost the budget, the rest is not run, said so.
An honest notebook, and the engine's own defaults, are untouched."""
from __future__ import annotations

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
BUDGET = Limits(cell_timeout=3, interrupt_grace=1, later_timeout=1, timeout_budget=5, memory_bytes=2 * 2**30)


@pytest.fixture(scope="module", autouse=True)
def warm():
    default_pool().warm(1)


def test_later_time_outs_are_shorter_and_the_rest_is_not_run_once_the_budget_is_spent():
    start = time.monotonic()
    run = run_cells([LOOP, "x = 1", "slow(1)", "slow(2)", "slow(3)", "slow(4)", "print('after', x)"],
                    assignment="02_demo", limits=BUDGET)
    seconds = time.monotonic() - start
    status = [c.status for c in run.cells]
    assert status[:2] == ["ok", "ok"]
    # 3 s, then 1 s each: 3 + 1 + 1 = 5 s spent, so slow(4) and what follows never start
    assert status[2:5] == ["timeout"] * 3, [(c.status, c.detail) for c in run.cells]
    assert "interrupted after 3 s" in run.cells[2].detail and "shorter limit" in run.cells[3].detail
    assert [c.status for c in run.cells[5:]] == ["skipped", "skipped"]
    assert all("time budget spent" in c.detail for c in run.cells[5:])
    assert any("whole time budget" in p for p in run.problems)
    assert seconds < 3 + 1 + 1 + 6, seconds  # the unbounded run costs at least 3 * 4 = 12 s of time-outs


def test_a_loop_that_ignores_the_interrupt_counts_against_the_budget_too():
    run = run_cells([DEAF, "deaf()", "deaf()", "print('never')"], assignment="02_demo", limits=BUDGET,
                    max_restarts=6)
    assert [c.status for c in run.cells[1:3]] == ["timeout", "timeout"], [(c.status, c.detail) for c in run.cells]
    assert run.cells[3].status == "skipped" and "time budget spent" in run.cells[3].detail


def test_without_a_budget_every_cell_still_runs_to_its_own_limit():
    """The engine's defaults (no budget): the control that shows the budget above is what stopped the cells."""
    limits = Limits(cell_timeout=2, interrupt_grace=1, memory_bytes=2 * 2**30)
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
                             assignment="02_demo", limits=BUDGET)
    status = [c.status for c in run.cells]
    assert status[:5] == ["ok", "ok", "timeout", "timeout", "timeout"], [(c.status, c.detail) for c in run.cells]
    assert "interrupted after 3 s" in run.cells[2].detail and "shorter limit" in run.cells[3].detail
    assert run.cells[3].seconds < 3, "the later cell ran to the shorter limit"
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
