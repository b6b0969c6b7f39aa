"""Are predictions graded for completion, and is right or wrong still said, at the reveal and to the instructor?

A question's points are for a well-formed answer; whether it was right travels beside the score
(``TestScore.prediction``) to validate, the feedback page and report.html, none of which says "passed" for one.
These run one question of 01 in-process (tests/harness.py, no kernel) and build the pages from made-up records.
"""
from __future__ import annotations

import contextlib
import io
import json
import re

import pytest

from autograder.checks import core
from autograder.checks.questions import Question, is_question
from autograder.grade.output import classreport, feedback
from autograder import paths, validate
from autograder.grade.submission import manual
from autograder.nbio import exercise_of, is_test_cell, nbgrader_meta, read_notebook
from autograder.grade.submission import judge
from autograder.grade.submission.results import Exercise, SubmissionResult, GradedTest
from tests.harness import answer, reveal_text, run_exercise

A = "01_tokens_and_ids"
Q = "predict_param_counts"  # (parameters of a 1000 x 16 table, activations of a 5-token lookup) = (16000, 80)
WHY_80_80 = "holds all V rows"  # the start of the known mistake (80, 80)'s explanation in nb01.py


def test_the_question_is_known_as_one_and_an_exercise_is_not():
    assert is_question(A, Q) and not is_question(A, "encode") and not is_question("no_such_notebook", Q)


def test_a_wrong_prediction_of_the_right_form_earns_every_point_and_is_recorded_wrong_with_its_reason():
    verdicts = run_exercise(A, Q, answer(Q, "(80, 80)"))
    assert len(verdicts) == 2  # the visible check and the hidden one
    for v in verdicts:
        assert v.local is None and v.graded, f"{v.grade_id} took a point from a well-formed answer: {v.grader_message}"
        assert [(p.answer, p.right) for p in v.predictions] == [("(80, 80)", False)]
        assert WHY_80_80 in v.predictions[0].why


def test_a_right_prediction_is_recorded_right_without_a_reason():
    verdicts = run_exercise(A, Q, answer(Q, "(16_000, 80)"))
    assert verdicts, f"no check of {Q} ran: nothing was recorded"
    for v in verdicts:
        assert v.graded and [(p.answer, p.right, p.why) for p in v.predictions] == [("(16000, 80)", True, "")]


@pytest.mark.parametrize("value", ["(80,)", "'16000, 80'", "(16000.5, 80)", "None"])
def test_a_malformed_prediction_earns_nothing(value):
    verdicts = run_exercise(A, Q, answer(Q, value))
    assert verdicts, f"no check of {Q} ran: nothing was refused"
    for v in verdicts:
        assert isinstance(v.local, core.CheckFailure) and not v.graded and not v.predictions
        assert "expected a tuple of two ints" in str(v.local)


def test_the_reveal_says_right_or_wrong_and_why_and_never_raises():
    assert reveal_text(A, Q, answer(Q, "(16000, 80)")).startswith("✔ Your prediction (16000, 80) is right.")
    wrong = reveal_text(A, Q, answer(Q, "(80, 80)"))
    assert "is wrong; the answer is (16000, 80)." in wrong and WHY_80_80 in wrong
    assert "cannot be compared: expected a tuple of two ints" in reveal_text(A, Q, answer(Q, "(80,)"))
    stub = "def predict_param_counts():\n    raise NotImplementedError()\n"
    assert "No prediction yet" in reveal_text(A, Q, stub)
    broken = "def predict_param_counts():\n    return 1 / 0\n"
    assert "raised ZeroDivisionError" in reveal_text(A, Q, broken)


def test_a_question_check_says_recorded_and_never_passed():
    q = core.REGISTRY[f"{A}:{Q}"]
    assert isinstance(q, Question)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        q(lambda: (80, 80))
        q(lambda: (80, 80), hidden=True)
    assert out.getvalue().count("Prediction recorded") == 2 and "passed" not in out.getvalue()
    assert "recorded for grading" in out.getvalue().splitlines()[1]
    with pytest.raises(core.CheckFailure, match="expected a tuple of two ints"):
        q(lambda: [80])


def test_the_grader_records_no_prediction_for_an_answer_that_raised():
    q = core.REGISTRY[f"{A}:{Q}"]
    right = core.Outcome(value=core.encode((16000, 80)))
    assert q.recorded([core.Outcome(raised=("ValueError",), message="x")], [right]) is None
    assert q.recorded([right], [right]) == core.Prediction("(16000, 80)", True)


# --------------------------------------------------------------------------- where the record travels

def prediction_score(right: bool, answer_text: str = "(80, 80)", why: str = "the whole table") -> judge.TestScore:
    return judge.TestScore(f"test_{Q}", 1.0, 1.0, "passed", "recorded",
                     prediction=core.Prediction(answer_text, right, "" if right else why))


def test_a_prediction_survives_the_saved_result_and_an_old_result_still_reads():
    result = SubmissionResult(assignment_id=A, source_hash="h", seed=0, student_id="s",
                              tests=tuple(map(GradedTest.of, [prediction_score(False), judge.TestScore("test_encode", 1.0, 1.0, "passed")])))
    saved = json.loads(json.dumps(result.to_json()))
    assert saved["scores"][0]["prediction"] == {"answer": "(80, 80)", "right": False, "why": "the whole table"}
    assert "prediction" not in saved["scores"][1]  # only a question's score carries one
    assert SubmissionResult.from_json(saved) == result
    old = {"version": 1, "assignment_id": A, "source_hash": "h", "seed": 0,
           "scores": [{"grade_id": f"test_{Q}", "points": 0.0, "max_points": 1.0, "status": "failed"}]}
    assert SubmissionResult.from_json(old).scores[0].prediction is None


def printed_report(tests: list[GradedTest]) -> str:
    lines: list[str] = []
    validate._print_report(type("P", (), {"name": f"{A}.ipynb"})(), [Exercise(name=Q, tests=tuple(tests))], 0, None,
                           0.0, lines.append)
    return "\n".join(lines)


def test_validate_says_recorded_and_right_or_wrong_never_passed():
    wrong = validate.test(f"test_{Q}", 1.0, "passed", "", core.Prediction("(80, 80)", False, "the whole table"))
    text = printed_report([wrong])
    assert "recorded" in text and "your prediction (80, 80): wrong. the whole table" in text
    assert "passed" not in text and "1 of 1 points" in text
    right = validate.test(f"test_{Q}", 1.0, "passed", "", core.Prediction("(16000, 80)", True))
    assert "your prediction (16000, 80): right." in printed_report([right])
    assert "passed" not in printed_report([validate.test(f"test_{Q}", 1.0, "passed")])  # run locally: no verdict


# --------------------------------------------------------------------------- a visible test worth 0 points

def full_marks_scores(assignment: str) -> list[judge.TestScore]:
    """What ``grade`` gives a fully right submission of ``assignment``: every test cell passed with its points (0 for
    notebook 10's visible prediction tests), each prediction recorded right; its written answers not written yet."""
    source = read_notebook(paths.solutions_dir() / f"{assignment}.ipynb")
    scores = []
    for cell in source.cells:
        meta = nbgrader_meta(cell)
        if manual.is_manual_cell(cell):
            scores.append(judge.TestScore(meta["grade_id"], 0.0, float(meta["points"]), "not attempted"))
        elif is_test_cell(cell):
            question = is_question(assignment, exercise_of(meta["grade_id"]))
            scores.append(judge.TestScore(meta["grade_id"], float(meta["points"]), float(meta["points"]), "passed",
                                          prediction=core.Prediction("1", True) if question else None))
    return scores


def validated(assignment: str, scores: list[judge.TestScore]) -> tuple[int, str]:
    """validate's exit status and words for these grader's scores of ``assignment`` (its visible tests and answers)."""
    written = {s.grade_id for s in scores if manual.is_manual_id(s.grade_id)}
    visible = {s.grade_id for s in scores if not s.grade_id.endswith("_hidden")} - written
    seen = validate.as_validated(scores, visible=visible, written=written)
    lines: list[str] = []
    exercises = validate.group(seen)
    status = validate._print_report(type("P", (), {"name": f"{assignment}.ipynb"})(), list(exercises), 0, None, 0.0,
                                    lines.append)
    return status, "\n".join(lines)


@pytest.mark.parametrize("assignment", paths.assignments())
def test_validate_passes_every_notebook_the_grader_gives_full_marks(assignment):
    """Issue 53 item 6: validate's exit status agrees with the grade. A notebook whose every test the grader passed
    (notebook 10's four visible prediction tests are worth 0 points) validates with status 0, and no line says
    "failed"."""
    status, text = validated(assignment, full_marks_scores(assignment))
    assert status == 0 and "failed" not in text, text


def test_a_passing_visible_test_worth_0_points_is_never_failed_anywhere():
    """A prediction whose visible check is worth 0 (its point is in the hidden test, as in notebook 10): passed,
    right or wrong, it reads "recorded" in validate, on the feedback page and in the report, never "failed"."""
    zero = judge.TestScore(f"test_{Q}", 0.0, 0.0, "passed", "", prediction=core.Prediction("(80, 80)", False, "wrong"))
    hidden = judge.TestScore(f"test_{Q}_hidden", 1.0, 1.0, "passed", "", prediction=zero.prediction)
    status, text = validated(A, [zero, hidden])
    assert status == 0 and "recorded" in text and "failed" not in text, text
    assert "0 of 0 points" in text
    result = SubmissionResult.from_json({"assignment_id": A, "student_id": "s",
                                         "scores": [zero.to_json(), hidden.to_json()]})
    section = re.search(rf'<section aria-label="{Q}">.*?</section>', feedback.page(result), re.S).group(0)
    assert "failed" not in section and ">recorded<" in section
    report = classreport.page([result])
    assert f'data-exercise="{Q}"' in report and "1 of 1 failed" not in report


def test_a_visible_test_that_failed_is_still_failed_and_validate_exits_1():
    """The rule reads the grader's status: a malformed answer's visible test failed, whatever its points."""
    for points in (0.0, 1.0):
        bad = judge.TestScore(f"test_{Q}", 0.0, points, "failed", "expected a tuple of two ints")
        status, text = validated(A, [bad])
        assert status == 1 and f"failed        {Q}" in text, text


def feedback_page(scores: list[dict]) -> str:
    return feedback.page(SubmissionResult.from_json({"assignment_id": A, "student_id": "s", "scores": scores}))


def test_the_feedback_page_says_recorded_and_right_or_wrong_never_passed():
    wrong = {**prediction_score(False).to_json(), "points": 1.0}
    page = feedback_page([wrong, {**wrong, "grade_id": f"test_{Q}_hidden"}])
    section = re.search(rf'<section aria-label="{Q}">.*?</section>', page, re.S).group(0)
    assert "passed" not in section and ">recorded<" in section
    assert 'data-right="false"' in section and "<code>(80, 80)</code> was <b class=\"wrong\">wrong</b>." in section
    assert "the whole table" in section
    right = feedback_page([prediction_score(True, "(16000, 80)").to_json()])
    assert 'data-right="true"' in right and "passed" not in re.search(r"<section.*</section>", right, re.S).group(0)
    old = feedback_page([{"grade_id": f"test_{Q}", "points": 1.0, "max_points": 1.0, "status": "passed"}])
    assert "passed" not in re.search(r"<section.*</section>", old, re.S).group(0)  # saved before: still not "passed"


def test_report_shows_the_share_that_predicted_right_and_the_most_common_wrong_answer():
    answers = {"ann": ("(16000, 80)", True), "bob": ("(80, 80)", False), "cy": ("(80, 80)", False),
               "dee": ("(80, 16000)", False), "eve": ("(16000, 80)", True), "fay": None}  # fay left it blank
    finals = []
    for student, given in answers.items():
        tests = [{"grade_id": f"test_{Q}", "points": 0.0, "max_points": 1.0, "status": "not attempted"}]
        if given:
            tests = [{**prediction_score(given[1], given[0], "why " + given[0]).to_json(), "grade_id": gid}
                     for gid in (f"test_{Q}", f"test_{Q}_hidden")]  # two tests, one answer: counted once
        finals.append(SubmissionResult.from_json({"student_id": student, "assignment_id": A, "scores": tests,
                                             "problems": []}))
    page = classreport.page(finals)
    row = re.search(rf'<tr data-question="{Q}">.*?</tr>', page, re.S).group(0)
    assert 'data-right="2" data-of="6"' in row and "2 of 6 (33%)" in row
    assert 'data-wrong-answer="(80, 80)" data-wrong-count="2"' in row and "why (80, 80)" in row
    tally = classreport.summarise(finals)[A].predictions[Q]
    assert tally.answered == 5 and tally.most_common_wrong() == ("(80, 80)", 2)


def test_the_most_common_wrong_answer_breaks_ties_by_its_text_and_is_none_when_all_were_right():
    tally = classreport.Predictions(Q, right=1)
    assert tally.most_common_wrong() is None
    tally.wrong.update({"(9, 9)": 1, "(1, 1)": 1})
    assert tally.most_common_wrong() == ("(1, 1)", 1)


# --------------------------------------------------------------------------- end to end

@pytest.mark.slow
def test_validate_through_the_grader_says_recorded_and_wrong_with_the_reason(tmp_path):
    """The student's notebook with one wrong prediction, checked the way `grade` would check it."""
    import subprocess
    import sys

    import nbformat

    from autograder import paths
    from autograder.nbio import grade_id, is_solution_cell

    nb = nbformat.read(paths.notebooks_dir() / f"{A}.ipynb", as_version=4)
    for cell in nb.cells:
        if is_solution_cell(cell) and grade_id(cell) == Q:
            cell.source = answer(Q, "(80, 80)")
    path = tmp_path / f"{A}.ipynb"
    nbformat.write(nb, path)
    r = subprocess.run([sys.executable, "-m", "autograder", "validate", str(path)], capture_output=True, text=True,
                       timeout=600)
    lines = r.stdout.splitlines()
    at = next(i for i, line in enumerate(lines) if line.split()[:2] == ["recorded", Q])
    assert "your prediction (80, 80): wrong." in lines[at + 1] and WHY_80_80 in lines[at + 1], r.stdout
    assert not any("passed" in line and "predict_" in line for line in lines), r.stdout


# --------------------------------------------------------------------------- a one-line reason

@pytest.fixture
def why_question():
    """A question that asks for a reason, registered for this test only."""
    from autograder.checks.questions import NB01, as_tuple, described, int_tuple, question

    name = "predict_pair_for_a_test"
    q = question("01_tokens_and_ids", name, form=described("a tuple of two ints", int_tuple(2)), wording=NB01,
                 mistakes=[((2, 1), "Swapped.")], normalize=as_tuple, reason=True)
    yield q
    core.REGISTRY.pop(f"01_tokens_and_ids:{name}")


def printed(fn) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        fn()
    return out.getvalue()


def test_with_reason_splits_an_answer_and_its_reason_and_leaves_a_bare_answer_alone():
    from autograder.checks.questions import Answer, with_reason

    assert with_reason(((1, 2), "  rows times columns ")) == Answer((1, 2), "rows times columns")
    assert with_reason([3, "why"]) == Answer(3, "why")
    assert with_reason((1, 2)) == Answer((1, 2)) and with_reason("a") == Answer("a")
    assert with_reason((1, 2, "three")) == Answer((1, 2, "three"))  # only a pair carries a reason


def test_a_reason_earns_nothing_more_and_its_absence_costs_nothing(why_question):
    for given in [lambda: ((1, 2), "because"), lambda: (1, 2), lambda: [[1, 2], "a list works too"]]:
        assert "Prediction recorded" in printed(lambda: why_question(given))
    with pytest.raises(core.CheckFailure, match="expected a tuple of two ints"):
        why_question(lambda: ((1,), "a reason does not mend a malformed answer"))


def test_the_grader_keeps_the_reason_beside_right_or_wrong(why_question):
    def outcome(value):
        return core.Outcome(value=core.encode(why_question.evidence(value)))

    truth = outcome(((1, 2), "the reference's own reason"))
    assert why_question.recorded([outcome(((2, 1), "rows first"))], [truth]) == core.Prediction(
        "(2, 1)", False, "Swapped.", reason="rows first")
    assert why_question.recorded([outcome((1, 2))], [truth]) == core.Prediction("(1, 2)", True)


def test_the_reveal_prints_the_reason_or_asks_for_it(why_question):
    said = printed(lambda: why_question.reveal(lambda: ((2, 1), "rows first"), (1, 2)))
    assert said.startswith("✘ Your prediction (2, 1) is wrong; the answer is (1, 2). Swapped.")
    assert "Your reason: “rows first”" in said
    bare = printed(lambda: why_question.reveal(lambda: (1, 2), (1, 2)))
    assert bare.startswith("✔ Your prediction (1, 2) is right.") and "You gave no reason" in bare


def test_a_question_that_asks_no_reason_reads_a_pair_as_its_answer():
    from autograder.checks.questions import NB01, described, question

    q = question(A, "predict_without_reason_for_a_test", form=described("a pair", lambda v: isinstance(v, tuple)),
                 wording=NB01)
    core.REGISTRY.pop(f"{A}:predict_without_reason_for_a_test")
    assert not q.asks_reason and q.answer_of((12, "x")).value == (12, "x")
    assert "Prediction recorded" in printed(lambda: q(lambda: (12, "x")))  # the pair is the answer, well formed
    said = printed(lambda: q.reveal(lambda: (12, "x"), (12, "x")))
    assert said.startswith("✔ Your prediction (12, 'x') is right.") and "reason" not in said


def test_a_reason_survives_the_saved_result_and_reaches_the_feedback_page():
    p = core.Prediction("(80, 80)", False, "the whole table", reason="only <5> rows")
    assert core.Prediction.from_json(json.loads(json.dumps(p.to_json()))) == p
    assert "reason" not in core.Prediction("(1, 2)", True).to_json()  # the shape saved before reasons
    score = judge.TestScore(f"test_{Q}", 1.0, 1.0, "passed", "recorded", prediction=p)
    page = feedback_page([score.to_json()])
    assert 'Your reason: <q class="reason">only &lt;5&gt; rows</q>' in page


@pytest.mark.parametrize("blank", ["", "   ", "\t\n"])
def test_an_empty_reason_earns_nothing_and_the_check_asks_for_the_reason(why_question, blank):
    from autograder.checks.questions import EMPTY_REASON

    with pytest.raises(core.CheckFailure) as failed:
        why_question(lambda: ((1, 2), blank))
    assert EMPTY_REASON in str(failed.value) and "expected a tuple" not in str(failed.value)
    with pytest.raises(core.CheckFailure, match="Your reason is empty"):
        why_question(lambda: ((1, 2), blank), hidden=True)
    # the same pair with a reason is recorded; a malformed answer is still told about its form first
    assert "Prediction recorded" in printed(lambda: why_question(lambda: ((1, 2), " rows first ")))
    with pytest.raises(core.CheckFailure, match="expected a tuple of two ints"):
        why_question(lambda: ((1,), blank))
    # the grader's record of it reads "no reason", and the reveal asks for one
    assert why_question.answer_of(why_question.evidence(((1, 2), blank))).reason == ""
    assert "You gave no reason" in printed(lambda: why_question.reveal(lambda: ((1, 2), blank), (1, 2)))


def test_an_empty_reason_earns_no_point_in_the_learners_notebook():
    verdicts = run_exercise(A, Q, answer(Q, "(16000, 80), '  '"))
    assert verdicts, f"no check of {Q} ran: nothing was refused"
    for v in verdicts:
        assert not v.graded and "Your reason is empty" in str(v.local), v.grader_message
    kept = run_exercise(A, Q, answer(Q, "(16000, 80), 'one row per token'"))
    assert kept and all(v.graded for v in kept)
