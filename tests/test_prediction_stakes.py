"""Do the predictions of notebooks 07-09 have stakes: a one-line reason asked for, and no hint that gives the answer?

Round 5 of the contract: a prediction asks the learner for a one-line reason (kept beside the reveal, never
graded), and no hint computes its answer. Both can be read off the solution notebook without a kernel: the
question's check says whether it asks a reason, the markdown before its solution cell must ask for one, and
the answer the course returns (a literal in the solution cell) must not stand in any of its hints.
"""
from __future__ import annotations

import ast
import re

import pytest

from autograder import paths
from autograder.checks.core import checks_module
from autograder.checks.questions import Question
from autograder.checks.registry import REGISTRY
from autograder.nbio import read_notebook
from tests.test_exercise_texts import SOLUTION, ExerciseText, exercise_texts

NOTEBOOKS = ["07_complex_rotations_and_rope", "08_causality_and_masking", "09_attention"]
DETAILS = re.compile(r"<details>\s*<summary>\s*Hint\b.*?</summary>(.*?)</details>", re.S | re.I)


def questions(assignment: str) -> list[ExerciseText]:
    checks_module(assignment)  # registers its checks
    nb = read_notebook(paths.solutions_dir() / f"{assignment}.ipynb")
    return [e for e in exercise_texts(nb, assignment) if isinstance(REGISTRY.get(f"{assignment}:{e.name}"), Question)]


def course_answer(solution: str) -> object:
    """The literal the solution cell returns, without its reason: ``return 21, "why"`` -> 21."""
    block = SOLUTION.search(solution).group(1)  # indented as the function's body
    tree = ast.parse("def _():\n" + block)
    value = ast.literal_eval(next(node.value for node in ast.walk(tree) if isinstance(node, ast.Return)))
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[1], str):
        return value[0]
    return value


def spelled(answer: object) -> list[str]:
    """How a hint could write the answer: a number in its usual roundings, a choice word, a tuple as printed.
    One-character spellings ("5", "3") are every text's vocabulary, never a give-away."""
    if isinstance(answer, bool):
        return []
    if isinstance(answer, (int, float)):
        forms = {str(answer), f"{answer:.4f}", f"{answer:.3f}", f"{answer:.2f}"}
        forms = {f.rstrip("0").rstrip(".") if "." in f else f for f in forms}
    elif isinstance(answer, tuple):
        forms = {"(" + ", ".join(map(str, answer)) + ")"}
    else:
        forms = {str(answer)}
    return sorted(f for f in forms if len(f) > 1)


@pytest.mark.parametrize("assignment", NOTEBOOKS)
def test_every_prediction_asks_a_reason_in_its_check_and_its_text(assignment):
    found = questions(assignment)
    assert found, f"{assignment}: no prediction found"
    for q in found:
        assert REGISTRY[f"{assignment}:{q.name}"].asks_reason, f"{assignment}:{q.name} does not ask for a reason"
        text = DETAILS.sub("", q.markdown)  # the question itself, not its hints
        assert "in one line" in text, f"{assignment}:{q.name}: the question does not ask for a one-line reason"


@pytest.mark.parametrize("assignment", NOTEBOOKS)
def test_no_hint_of_a_prediction_holds_its_answer(assignment):
    for q in questions(assignment):
        hints = " ".join(DETAILS.findall(q.markdown))
        assert hints, f"{assignment}:{q.name} has no hint"
        given = [form for form in spelled(course_answer(q.solution)) if form in hints]
        assert not given, f"{assignment}:{q.name}: a hint gives the answer away ({given})"


def test_the_answer_reader_and_the_spellings_catch_a_hint_that_computes_the_answer():
    solution = '    ### BEGIN SOLUTION\n    return 0.9999, "the gaps grow"\n    ### END SOLUTION\n'
    assert course_answer(solution) == 0.9999
    assert "0.9999" in spelled(0.9999) and "0.035" in spelled(0.035) and "(9, 3)" in spelled((9, 3))
    assert spelled(5.0) == [] and spelled(21) == ["21"]  # "5" is every text's vocabulary
    assert course_answer('    ### BEGIN SOLUTION\n    return "different"\n    ### END SOLUTION\n') == "different"
