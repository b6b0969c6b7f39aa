"""The standard stub test, aware of bug hunts: a bug hunt's released cell holds the bug, not the stub.

The harness's ``test_reference_passes_and_stub_is_not_attempted`` expects every released exercise to raise
NotImplementedError. A bug hunt's student cell runs (autograder/bug_hunt.py), so for it the question is
instead: does the check reject the bug as released, with a message, and does the grader give it nothing?
"""
from __future__ import annotations

from typing import Callable

import pytest

from autograder.bug_hunt import is_bug_hunt
from autograder.nbio import grade_id, is_solution_cell, read_notebook
from autograder import paths
from tests.harness import assert_accepted, assert_stub_not_attempted, notebook, run_exercise, stub_of


def bug_hunts(assignment: str) -> set[str]:
    """The exercises of ``assignment`` whose solution cell holds a bug region."""
    nb = read_notebook(paths.solutions_dir() / f"{assignment}.ipynb")
    return {grade_id(c) for c in nb.cells if is_solution_cell(c) and is_bug_hunt(c.source)}


def assert_released_bug_rejected(assignment: str, exercise: str) -> None:
    released = stub_of(assignment, exercise)
    assert "NotImplementedError" not in released, f"{exercise} is released as a stub, not as its bug:\n{released}"
    for v in run_exercise(assignment, exercise, released):
        assert v.local is not None and str(v.local).strip(), f"the released bug of {exercise} passed {v.grade_id}"
        assert not v.graded, f"the released bug of {exercise} earned points from the grader in {v.grade_id}"


def stub_test(assignment: str) -> dict[str, Callable]:
    """``test_reference_passes_and_stub_is_not_attempted``, with a bug hunt's released bug proven rejected."""
    hunts = bug_hunts(assignment)

    @pytest.mark.parametrize("exercise", notebook(assignment).exercises)
    def test_reference_passes_and_stub_is_not_attempted(exercise):
        assert_accepted(assignment, exercise)
        if exercise in hunts:
            assert_released_bug_rejected(assignment, exercise)
        else:
            assert_stub_not_attempted(assignment, exercise)

    return {test_reference_passes_and_stub_is_not_attempted.__name__: test_reference_passes_and_stub_is_not_attempted}
