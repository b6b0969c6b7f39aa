"""One class of 04 graded once per test process, for two modules that each graded a class of their own.

tests/grade/test_classreport.py counts its known mistakes (students given the same wrong implementation, a right
one and one that cannot be read); tests/grade/test_lost_points_explained.py reads how three damages are explained
(work in a copy, an answer split in two, a Colab save without nbgrader's metadata) beside an undamaged right one.
A ``grade`` run of 04 costs some 8 core-seconds before its first submission (start, the course's own run, a warm
parent) and about one a submission, so the two share one run: both modules are in the xdist group :data:`GROUP`,
one worker runs them, and :func:`graded` grades the class the first time it is asked.
"""
from __future__ import annotations

from pathlib import Path

import nbformat

from tests import builders, mangled

A = "04_softmax_and_probability"
GROUP = "class04"
GIVEN = {  # (exercise, label) of a Mistake in tests/checks/test_nb04.py -> students given that wrong implementation
    ("softmax", "global_max"): ["fails_softmax_global_max_1", "fails_softmax_global_max_2",
                                "fails_softmax_global_max_3"],
    ("softmax", "wrong_axis"): ["fails_softmax_wrong_axis"],
    ("kl_divergence", "arguments_swapped"): ["fails_kl_swapped_1", "fails_kl_swapped_2"],
}
DAMAGES = ("work_in_a_copy", "solution_split_unmarked", "saved_by_colab_without_nbgrader")
UNREADABLE = "invalid_json"
# every student the run grades (the unreadable one is not graded)
GRADED = (*(s for students in GIVEN.values() for s in students), "passes_all", *DAMAGES, "full")
EVERYONE = (*GRADED, UNREADABLE)  # the class as the report counts it ("k of n")

_graded: dict[str, builders.Graded] = {}


def graded(base: Path) -> builders.Graded:
    """The class graded under ``base`` (a fresh folder) the first time; the same run every time after."""
    if "run" not in _graded:
        submissions = base / "submitted"
        for key, students in GIVEN.items():
            mistake = builders.known_mistake(A, *key)  # a misspelled (exercise, label) raises
            for student in students:
                builders.write_submission(submissions, student, builders.wrong_notebook(A, mistake=mistake), A)
        builders.write_submission(submissions, "passes_all", builders.right_notebook(A), A)
        builders.write_submission(submissions, UNREADABLE, "{ this is not a notebook", A)
        mangled.write_class(submissions, A, tuple(mangled.damage(d) for d in DAMAGES))
        full = submissions / "full" / A  # the right notebook, undamaged: what the damaged ones are held to
        full.mkdir(parents=True)
        (full / f"{A}.ipynb").write_text(nbformat.writes(builders.right_notebook(A, markers=False)), encoding="utf-8")
        run = builders.run_grade(submissions, "--jobs", "2", out=base / "graded", timeout=600)
        assert run.proc.returncode == 1, (f"grade exited {run.proc.returncode} (1: {UNREADABLE} cannot be graded):\n"
                                          f"{run.proc.stdout[-2000:]}\n{run.proc.stderr[-3000:]}")
        graded_now = {r["student_id"] for r in run.rows("grades.csv") if r["assignment_id"] == A}
        assert graded_now >= set(GRADED), f"not graded: {sorted(set(GRADED) - graded_now)}"
        _graded["run"] = run
    return _graded["run"]
