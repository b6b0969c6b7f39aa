"""The class of issue 25, graded once per test process by the real `python -m autograder grade`.

Ten submissions of 04: three right, three with the global-max softmax, two with cross-entropy as the
log of a softmax, one blank, and one with a syntax error in one cell and an endless loop in another.
tests/grade/test_broken_class.py reads its report and feedback pages as files and
tests/browser/test_report_and_site.py opens them in Chromium: both modules share one xdist group, so one
worker runs both and :func:`graded` grades the class once for the two of them.
"""
from __future__ import annotations

from pathlib import Path

from tests import builders

A = "04_softmax_and_probability"
GROUP = "broken_class"  # the xdist group of every module that reads this class
# The least a cell of the course gets: each one's limit is this or 100 times what the course's own run of it took
# on this machine, under the same load (grade's own limits; a --timeout would give every cell 6 s, however slow a
# busy machine made the honest ones). The endless loop meets the floor, or its cell's own larger limit.
TIMEOUT_FLOOR = "6"
SYNTAX_EXERCISE, LOOP_EXERCISE = "expectation", "greedy_token"
# the line a learner forgets the colon on: line 1 of the cell, so the page must say "line 1"
SYNTAX_ERROR = "def expectation(values, probs)\n    return float((values * probs).sum())\n"
# It waits rather than spins: it meets two cells (the visible and the hidden test), and spinning it burned some 12
# core-seconds of the test command for what this class proves (its time-out, reported and explained); the interrupt
# reaches a sleeping loop the same way. Busy loops are interrupted in tests/grade/test_engine.py and
# tests/grade/test_time_budget.py.
ENDLESS_LOOP = "def greedy_token(logits):\n    import time\n    while True:\n        time.sleep(0.05)\n"

STUDENTS = {  # student -> what they handed in, in words (each test asserts on the outcome it names)
    "right_1": "right", "right_2": "right", "right_3": "right",
    "global_max_1": "global-max softmax", "global_max_2": "global-max softmax", "global_max_3": "global-max softmax",
    "log_softmax_1": "log of softmax", "log_softmax_2": "log of softmax",
    "blank": "blank", "syntax_and_loop": "syntax error and endless loop",
}

_graded: dict[str, builders.Graded] = {}


def notebook_of(student: str):
    kind = STUDENTS[student]
    if kind == "right":
        return builders.right_notebook(A, markers=False)
    if kind == "blank":
        return builders.blank_notebook(A)
    if kind == "global-max softmax":
        return builders.wrong_notebook(A, mistake=builders.known_mistake(A, "softmax", "global_max"))
    if kind == "log of softmax":
        return builders.wrong_notebook(A, mistake=builders.known_mistake(A, "cross_entropy", "log_of_softmax"))
    nb = builders.with_solution(builders.right_notebook(A, markers=False), SYNTAX_EXERCISE, SYNTAX_ERROR)
    return builders.solve(nb, LOOP_EXERCISE, ENDLESS_LOOP)


def graded(base: Path) -> builders.Graded:
    """The class graded under ``base`` (a fresh folder) the first time; the same run every time after."""
    if "run" not in _graded:
        submissions = base / "submitted"
        for student in STUDENTS:
            builders.write_submission(submissions, student, notebook_of(student), A)
        run = builders.run_grade(submissions, "--jobs", "2", "--timeout-floor", TIMEOUT_FLOOR, out=base / "graded",
                                 timeout=900)
        assert run.proc.returncode == 0, (f"grade exited {run.proc.returncode}:\n{run.proc.stdout[-2000:]}\n"
                                          f"{run.proc.stderr[-3000:]}")
        _graded["run"] = run
    return _graded["run"]
