"""Do the test builders (tests/builders.py) choose a kind of student or a known mistake from a closed set?

A misspelled name must raise and name the choices, never quietly hand a class another mistake, the right
answer or nothing: a test would then check the wrong thing and pass.
"""
from __future__ import annotations

import pytest

from tests import builders
from tests.harness import ExerciseSuite, exercise_suite

A = "04_softmax_and_probability"


def test_a_known_mistake_is_chosen_by_exercise_and_label():
    m = builders.known_mistake(A, "softmax", "global_max")
    assert (m.exercise, m.label) == ("softmax", "global_max")
    nb = builders.wrong_notebook(A, mistake=m)
    assert nb.cells[builders.solution_index(nb, "softmax")].source == builders.typed(m.source)


@pytest.mark.parametrize("exercise, label, says", [
    ("softmax", "global_maxx", "softmax of 04_softmax_and_probability has no variant 'global_maxx'; "
                               "the choices are .*global_max"),
    ("softmax", "", "name one of .*global_max"),
    ("sofmax", "global_max", "test_nb04.py's MISTAKES has no variant 'sofmax'; the choices are .*softmax"),
])
def test_a_misspelled_mistake_raises_naming_the_choices(exercise, label, says):
    with pytest.raises(ValueError, match=says):
        builders.known_mistake(A, exercise, label)


def test_a_misspelled_kind_of_student_raises_naming_the_kinds(tmp_path):
    assert builders.notebook_of("blank", A).cells == builders.blank_notebook(A).cells
    with pytest.raises(ValueError, match="has no variant 'rigth'; the choices are blank, right, wrong"):
        builders.notebook_of("rigth", A)
    with pytest.raises(ValueError, match="name one of blank, right, wrong"):
        builders.notebook_of(None, A)


def test_a_misspelled_grade_id_or_exercise_raises_naming_what_is_there():
    nb = builders.right_notebook()
    with pytest.raises(ValueError, match="no cell has grade_id 'test_encod'; .*test_encode"):
        builders.cell_index(nb, "test_encod")
    with pytest.raises(ValueError, match="no solution cell answers 'encod'; .*encode"):
        builders.solve(nb, "encod", "def encod():\n    pass\n")


def test_each_notebooks_mistakes_are_named_once():
    """A (exercise, label) names one mistake: two alike would make a choice by name ambiguous."""
    for assignment in builders.gradable_assignments():
        names = [(m.exercise, m.label) for m in builders.mistakes(assignment)]
        assert names, f"{assignment} has no known mistakes"
        twice = {n for n in names if names.count(n) > 1}
        assert not twice, f"{assignment}: mistakes named more than once: {twice}"


def test_the_exercise_suite_is_one_object_with_the_four_standard_tests():
    suite = exercise_suite(A, [], {})
    assert isinstance(suite, ExerciseSuite) and suite.assignment == A
    assert list(suite.tests()) == [
        "test_mistake_is_rejected_with_a_message_naming_it", "test_differently_written_correct_answer_is_accepted",
        "test_reference_passes_and_stub_is_not_attempted", "test_every_exercise_has_three_mistakes_and_an_alternative"]
    assert suite.thin() == {e: 0 for e in suite.exercises}
