"""Time limits from the course's own timings: a loop costs seconds, slow but right code is never cut.

Each cell the course also runs gets max(floor, factor x the reference run's seconds for it), capped at stock
nbgrader's 30 s (autograder/grade/submission/timelimits.py). Proven here on the engine (a cell's own limit
is the one enforced, on both engines) and on a notebook graded end to end: the course's answers written
slowly (tests/slow_answers.py) keep every point, a loop in one exercise is stopped within the floor and
says what the course's version takes.
"""
from __future__ import annotations

import dataclasses
import time

import nbformat
import pytest

from autograder.engine import Limits, default_pool
from autograder.grade.submission import sanitize, timelimits
from autograder.grade.submission.grade_one import grade_one, run_reference, source_path, source_tests
from autograder.grade.submission.running import run_cells
from autograder.grade.submission.timelimits import TimePolicy
from autograder.nbio import is_solution_cell, is_test_cell
from tests.builders import blank_notebook, gradable_assignments, right_notebook, solve, source_notebook
from tests.slow_answers import FACTOR, KINDS, slow_notebook, slowed, written_slowly

pytestmark = [pytest.mark.grading, pytest.mark.xdist_group("test_time_limits")]

POLICY = TimePolicy()
A = "03_dot_and_outer_products"  # written slowly two ways (loops), and cheap to grade


def test_a_cells_limit_is_the_floor_or_a_multiple_of_the_courses_time_never_above_the_cap():
    policy = TimePolicy(floor=2.0, factor=20.0)
    assert policy.limit(0.001, cap=30) == 2.0  # a test the course runs in a millisecond: the floor
    assert policy.limit(0.5, cap=30) == 10.0
    assert policy.limit(5.0, cap=30) == 30  # never above stock nbgrader's limit
    assert TimePolicy.from_json(policy.to_json()) == policy and TimePolicy.from_json(None) is None


def test_a_cells_own_limit_applies_and_the_later_limit_still_shortens_it():
    limits = Limits(cell_timeout=30, later_timeout=7.5, cell_timeouts={1: 2.0, 2: 12.0})
    assert [limits.timeout_for(i) for i in range(3)] == [30.0, 2.0, 12.0]
    assert [limits.timeout_for(i, after_timeout=True) for i in range(3)] == [7.5, 2.0, 7.5]
    assert Limits(cell_timeout=5, cell_timeouts={0: 9.0}).timeout_for(0) == 5.0  # --timeout caps every cell
    assert limits.kernel_timeout(index=1) == 2 and limits.kernel_timeout(index=0, later=True) == 8
    assert Limits.from_json(limits.to_json()) == limits  # it travels to the warm parent and to Dask workers


@pytest.mark.parametrize("assignment", gradable_assignments())
def test_every_course_cell_of_a_released_notebook_finds_its_time_in_the_reference(assignment):
    """The keys that join a submission's cells to the reference's times: every test cell, every exercise cell
    and every given cell left as released has one; a cell the learner added has none (it keeps the cap)."""
    source = source_notebook(assignment)
    course = timelimits.reference_seconds(source, [0.01] * sum(c.cell_type == "code" for c in source.cells))
    nb = blank_notebook(assignment)
    nb.cells.append(type(nb.cells[-1])(cell_type="code", source="print('my own cell')", metadata={},
                                       outputs=[], execution_count=None))
    _, tests = source_tests(str(source_path(assignment)))
    given = frozenset(c.source for c in source.cells if c.cell_type == "code" and not is_solution_cell(c)
                      and not is_test_cell(c))
    plan = sanitize.plan(nb, tests, given)
    keys = timelimits.plan_keys(plan.items)
    assert len(keys) == len(plan.sources)
    limits = timelimits.cell_limits(keys, course, POLICY, 30.0)
    for i, key in enumerate(keys):
        if i in plan.tests or key.startswith("exercise:"):
            assert i in limits, f"{assignment}: {key} has no course time"
    assert sum(k.startswith("given:") and i in limits for i, k in enumerate(keys)) >= 1  # the set-up cell
    own = plan.sources.index("print('my own cell')")
    assert own not in limits, "the learner's own cell must keep the cap"


# Cell 1 has a limit of its own, 1 s; later cells get the 3 s limit that follows a time-out. A cell that must
# beat that limit prints one line: 3 s leaves a loaded machine room (it once was 1 s), and a cell meant to be cut
# sleeps ten times as long, so neither way round depends on the machine's speed.
LOOP_AT_CELL_1 = Limits(cell_timeout=30, later_timeout=3.0, cell_timeouts={1: 1.0})


@pytest.mark.parametrize("engine", ["engine", "nbclient"])
def test_the_engines_stop_a_cell_at_its_own_limit(engine):
    if engine == "engine":
        default_pool().warm(1)
    limits = LOOP_AT_CELL_1
    run = run_cells(["import time\ntime.sleep(1.5)\nprint('no own limit: the cap')",
                     "while True:\n    pass",
                     "import time\ntime.sleep(30)"],
                    assignment="02_demo", limits=limits, engine=engine)
    assert [c.status for c in run.cells[:2]] == ["ok", "timeout"]  # 1.5 s is past cell 1's limit, not the cap's
    assert "interrupted after 1 s" in run.cells[1].detail
    assert run.cells[2].status == "timeout" and "shorter limit" in run.cells[2].detail  # after a time-out
    # the loop was not left to the cap: a bound of the property (30 s), not of this machine's speed
    assert run.cells[1].seconds < limits.first_timeout(), "the loop ran to the cap"


@pytest.mark.parametrize("engine", ["engine", "nbclient"])
def test_every_cell_after_a_time_out_runs_and_keeps_its_output(engine):
    """The fallback once ran the notebook's last cell as `pass` after a time-out, empty and "ok": its check
    whether the kernel still answered was stored in the last cell's place."""
    if engine == "engine":
        default_pool().warm(1)
    limits = LOOP_AT_CELL_1
    run = run_cells(["print('zero')", "while True:\n    pass", "print('two')",
                     "import time\ntime.sleep(30)\nprint('three')", "print('four')"],
                    assignment="02_demo", limits=limits, engine=engine)
    assert [c.status for c in run.cells] == ["ok", "timeout", "ok", "timeout", "ok"]
    said = ["".join(o.get("text", "") for o in c.outputs if o.get("output_type") == "stream") for c in run.cells]
    assert said[0] == "zero\n" and said[2] == "two\n" and said[4] == "four\n", said
    assert "three" not in said[3], said


# ------------------------------------------------------------------------------ a notebook graded end to end

@pytest.fixture(scope="module")
def reference():
    default_pool().warm(1)
    return run_reference(A, seed=3, limits=Limits.for_grading())


def written_answers() -> set[str]:
    """The answers a person grades (03's why_batch_weight_grad): "not attempted" until then, the course's too."""
    return {c.metadata["nbgrader"]["grade_id"] for c in source_notebook(A).cells
            if c.metadata.get("nbgrader", {}).get("solution") and c.metadata["nbgrader"].get("grade")}


def graded(nb, reference, tmp_path, name: str):
    path = tmp_path / name / f"{A}.ipynb"
    path.parent.mkdir()
    nbformat.write(nb, path)
    return grade_one(path, assignment=A, seed=3, reference=reference, limits=Limits.for_grading(), time_policy=POLICY)


def test_the_reference_times_every_code_cell(reference):
    source = source_notebook(A)
    assert {k.split(":")[0] for k in reference.seconds} == {"test", "exercise", "given"}
    assert sum(k.startswith("test:") for k in reference.seconds) == sum(is_test_cell(c) for c in source.cells)
    assert all(s >= 0 for s in reference.seconds.values())


def test_a_slowed_answer_takes_factor_times_as_long_and_gives_the_same_result():
    """The slowed corpus's spin, on a call long enough to time: the grading test below cannot show it, since
    the checks' small inputs make each call a few microseconds."""
    # The answer times itself, inside the same call the spin slows: two separate runs of it (as this test once
    # compared) differ by whatever else the machine was doing in between.
    work = ("def work(n):\n    start = time.perf_counter()\n    total = sum(i * i for i in range(n))\n"
            "    took.append(time.perf_counter() - start)\n    return total\n")
    plain: dict = {"time": time, "took": []}
    exec(work, plain)
    space: dict = {"time": time, "took": []}
    exec(slowed(work, "work"), space)
    start = time.perf_counter()
    result = space["work"](200_000)
    slow = time.perf_counter() - start
    assert result == plain["work"](200_000)
    assert space["took"][0] > 0 and slow >= FACTOR * space["took"][0], (slow, space["took"])


@pytest.mark.parametrize("kind", KINDS)
def test_right_answers_written_slowly_keep_every_point(reference, tmp_path, kind):
    """Loops where the course uses NumPy ("written"), or every answer ten times slower ("slowed")."""
    slow = slow_notebook(A, kind)
    assert set(written_slowly(A)) >= {"outer", "score_table"}
    result = graded(slow, reference, tmp_path, "slow")
    right = graded(right_notebook(A), reference, tmp_path, "right")
    assert [s.status for s in result.scores if s.status != "passed" and s.grade_id not in written_answers()] == []
    assert [(s.grade_id, s.points) for s in result.scores] == [(s.grade_id, s.points) for s in right.scores]
    if kind == "slowed":  # and it was slower: the spin really ran (an answer that is not slow proves nothing).
        # Measured as the cells' own CPU: the whole grading's wall time once came out the other way round
        # (0.21 s slowed, 0.455 s right, 0.33 s of it writing the right one's autograded notebook). Loops on
        # the checks' small inputs ("written") cost less than the grading's own noise.
        assert result.costs["cells"] > right.costs["cells"], (result.costs, right.costs)


def test_a_loop_costs_the_floor_and_says_what_the_course_takes(reference, tmp_path):
    nb = solve(right_notebook(A), "outer",
               "def outer(a, b):\n    result = None\n    while result is None:\n        pass\n    return result\n")
    result = graded(nb, reference, tmp_path, "loop")
    timed_out = [s for s in result.scores if s.status == "timeout"]
    assert {s.grade_id for s in timed_out} >= {"test_outer", "test_outer_hidden"}
    # The limit is max(floor, factor x the course's time for the cell), and the course's time is measured on
    # this machine under its load (2.23 s once, not the 2 s floor): the words must name the limit computed from
    # the reference's own timing, whatever it came out as.
    cap = Limits.for_grading().first_timeout()
    course = reference.seconds["test:test_outer"]
    words = next(p.detail for p in result.problems if p.problem == "timeout" and "test_outer" in p.detail)
    assert f"interrupted after {POLICY.limit(course, cap):g} s" in words, words
    assert f"the course's own version of this cell takes {course:.2g} s here" in words, words
    # every test cell that calls the loop (outer's, and those of exercises built on it) stops at its own limit,
    # where stock nbgrader would have spent 30 s on the first: the loop's CPU (the cells' own, which a busy
    # machine does not inflate as it does wall time) stays within the cells' limits
    limits = [POLICY.limit(reference.seconds[f"test:{s.grade_id}"], cap) for s in timed_out]
    assert result.costs["cells"] < sum(limits) + 5, (result.costs, limits)
    assert all(s.status == "passed" for s in result.scores
               if s.status != "timeout" and "outer" not in s.grade_id and s.grade_id not in written_answers())


def test_with_timeout_given_every_cell_gets_it(reference, tmp_path):
    """--timeout is stock's one limit for all: no course timings (time_policy None)."""
    # The first call (in test_outer's cell) sleeps past that cell's course limit, one test cell, not every cell
    # that calls outer: this test stays short. The limit is max(floor, factor x the course's time for the cell),
    # and the course's time is this machine's under its load, so the sleep is read from it, not written as 2.5 s.
    nap = POLICY.limit(reference.seconds["test:test_outer"], Limits.for_grading().first_timeout()) + 1.5
    nb = solve(right_notebook(A), "outer", "def outer(a, b):\n    import time\n"
                                          "    if not globals().get('_slept'):\n        globals()['_slept'] = True\n"
                                          f"        time.sleep({nap:.2f})\n"
                                          "    return a[:, None] * b[None, :]\n")
    path = tmp_path / "given" / f"{A}.ipynb"
    path.parent.mkdir()
    nbformat.write(nb, path)
    result = grade_one(path, assignment=A, seed=3, reference=reference, limits=Limits.for_grading(nap + 30))
    assert not [s for s in result.scores if s.status == "timeout"]
    slow_with_course_limits = graded(nb, reference, tmp_path, "course")
    # sleeping past the limit of a millisecond test (the 2 s floor, or a little more): the course's limits cut it
    assert [s for s in slow_with_course_limits.scores if s.status == "timeout"]


def test_the_spin_makes_an_answer_slower_and_keeps_its_result():
    from tests.slow_answers import slowed

    namespace: dict = {}
    exec(slowed("def square(x):\n    import time\n    time.sleep(0.01)\n    return x * x\n", "square", 5), namespace)
    start = time.perf_counter()
    assert namespace["square"](7) == 49
    assert time.perf_counter() - start >= 0.04
    assert FACTOR >= 5
    assert dataclasses.is_dataclass(POLICY)
