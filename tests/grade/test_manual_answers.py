"""Is a bug hunt's written "why" an nbgrader manually graded answer, from the source to the learner's feedback?

The answer cell (markdown, nbgrader ``solution`` and ``grade``, grade id ``why_<hunt>``, 1 point) is released as
``YOUR ANSWER HERE``, both by ``python -m autograder release`` and by nbgrader's own steps. ``grade`` counts it as
nbgrader's ``determine_grade`` does: left as released, 0 points and an automatic 0; written, status ``manual``,
no automatic score (the gradebook's ``needs_manual_grade``), its point in the maximum. A person's score and
comment, entered through nbgrader's Gradebook API as formgrader enters them, reach grades.csv, scores.csv, the
report and the feedback page, and survive grading again.

Fast tests read the records; the whole path grades a class of notebook 02 (two students, twice). That stock
``nbgrader autograde`` gives a written answer no automatic score and a blank one 0, as ``grade`` does, is proven
by tests/grade/test_pipeline.py's comparison with stock nbgrader (its right student writes the "why"), which
grades a class under stock nbgrader anyway.
"""
from __future__ import annotations

import copy
import html
import json
import re
import subprocess
import sys

import nbformat
import pytest
from nbgrader import utils as nbgrader_utils
from nbgrader.api import Gradebook

from autograder import paths
from autograder.bug_hunt import is_bug_hunt
from autograder.grade.output import feedback
from autograder.grade.output.gradebook import Recorded
from autograder.grade.submission import manual
from autograder.grade.submission.judge import exercise_status
from autograder.grade.submission.results import SubmissionResult
from autograder.nbio import exercise_of, grade_id, is_solution_cell, is_test_cell, nbgrader_meta, read_notebook
from autograder.release import student_notebook
from tests import builders

A = "02_shapes_and_matmul"
WHY = "why_split_heads"
ANSWER = ("A plain reshape keeps the flat order, so head 0 got token 0's features and half of token 1's: the shape "
          "was right and the values <wrong>, head 0 was not [[0, 1], [4, 5], [8, 9]].")
COMMENT = "Both the cause and the symptom: full marks."


def with_manual() -> list[str]:
    return [a for a in paths.assignments()
            if any(manual.is_manual_cell(c) for c in read_notebook(paths.solutions_dir() / f"{a}.ipynb").cells)]


def why_cell(nb) -> nbformat.NotebookNode:
    return next(c for c in nb.cells if grade_id(c) == WHY)


def released(assignment: str = A):
    return student_notebook(read_notebook(paths.solutions_dir() / f"{assignment}.ipynb"), f"{assignment}.ipynb")


# --------------------------------------------------------------------------- the source and its release

@pytest.mark.parametrize("assignment", with_manual())
def test_every_written_answer_follows_its_bug_hunt_and_is_released_without_its_mark_scheme(assignment):
    source = read_notebook(paths.solutions_dir() / f"{assignment}.ipynb")
    hunts = [grade_id(c) for c in source.cells if is_solution_cell(c) and is_bug_hunt(c.source)]
    answers = [(i, c) for i, c in enumerate(source.cells) if manual.is_manual_cell(c)]
    assert [grade_id(c) for _, c in answers] == [manual.PREFIX + h for h in hunts], "one why_<hunt> per bug hunt"
    for i, cell in answers:
        meta = nbgrader_meta(cell)
        assert cell.cell_type == "markdown" and meta["points"] == 1 and meta["locked"] is False
        hunt = grade_id(cell).removeprefix(manual.PREFIX)
        graded = [j for j, c in enumerate(source.cells) if (is_solution_cell(c) or is_test_cell(c))
                  and exercise_of(grade_id(c)) == hunt]
        between = source.cells[max(graded) + 1:i]
        assert all(c.cell_type == "markdown" and not nbgrader_meta(c) for c in between), \
            f"{grade_id(cell)} must follow the bug hunt's last test cell (a question cell may stand between)"
        scheme = manual.mark_scheme(cell.source)
        assert "Model answer" in scheme and "Mark scheme" in scheme, f"{grade_id(cell)}: model answer and mark scheme"
        assert cell.source.strip().startswith("### BEGIN SOLUTION") and cell.source.strip().endswith("### END SOLUTION")
    student = released(assignment)
    text = "\n".join(c.source for c in student.cells)
    assert "Model answer" not in text and "Mark scheme" not in text, "the mark scheme reached the student"
    given = [c for c in student.cells if manual.is_manual_cell(c)]
    assert [c.source for c in given] == [manual.TEXT_STUB] * len(answers)
    assert all(nbgrader_meta(c)["checksum"] == nbgrader_utils.compute_checksum(c) for c in given)


def test_every_notebook_s_bug_hunt_has_its_written_why():
    """Issue 53 item 3: every notebook has a bug hunt, and every bug hunt a why a person reads."""
    missing = [a for a in paths.assignments() if a not in with_manual()]
    assert not missing, f"notebooks whose bug hunt has no why_<hunt> answer cell: {missing}"


def test_stock_nbgrader_releases_the_written_answer_as_we_do():
    """nbgrader_config.py's GenerateAssignment steps (all but SaveCells, which needs a gradebook and changes no
    cell) give notebook 02's answer cell as ``python -m autograder release`` gives it."""
    from nbgrader.converters import GenerateAssignment
    from nbgrader.preprocessors import SaveCells
    from traitlets.config.loader import PyFileConfigLoader

    config = PyFileConfigLoader("nbgrader_config.py", path=str(paths.root())).load_config()
    nb, resources = read_notebook(paths.solutions_dir() / f"{A}.ipynb"), {}
    for step in GenerateAssignment(config=config).preprocessors:
        if step is not SaveCells:
            nb, resources = step(config=config).preprocess(nb, resources)
    ours = why_cell(released())
    assert (why_cell(nb).source, why_cell(nb).metadata) == (ours.source, ours.metadata)


# --------------------------------------------------------------------------- counted as nbgrader counts it

def test_an_answer_is_not_attempted_when_left_or_emptied_manual_when_written_and_missing_when_deleted():
    answers = manual.source_answers(read_notebook(paths.solutions_dir() / f"{A}.ipynb"), released())
    assert [a.grade_id for a in answers] == [WHY] and answers[0].points == 1

    def scored(text: str | None):
        nb = released()
        if text is None:
            nb.cells.remove(why_cell(nb))
        else:
            why_cell(nb).source = text
        (s,), texts = manual.score_answers(nb.cells, answers)
        return s.status, s.points, s.max_points, texts.get(WHY, "")

    assert scored(manual.TEXT_STUB) == ("not attempted", 0.0, 1.0, "")
    assert scored("  YOUR ANSWER HERE\n\n") == ("not attempted", 0.0, 1.0, "")  # whitespace only changed
    assert scored("") == ("not attempted", 0.0, 1.0, "")
    assert scored(f"YOUR ANSWER HERE\n{ANSWER}") == ("manual", 0.0, 1.0, f"YOUR ANSWER HERE\n{ANSWER}")
    assert scored(ANSWER) == ("manual", 0.0, 1.0, ANSWER)
    assert scored(None)[:3] == ("missing", 0.0, 1.0)
    # nbgrader's own rule on the same cells: released -> automatic 0; written -> no automatic score (a person's)
    cell = why_cell(released())
    assert nbgrader_utils.determine_grade(cell) == (0, 1.0)
    cell.source = ANSWER
    assert nbgrader_utils.determine_grade(cell) == (None, 1.0)


def test_a_written_answer_waits_for_a_person_until_the_gradebook_has_a_score():
    assert exercise_status(["manual"]) == "manual"
    assert exercise_status(["not attempted"]) == "not attempted"
    saved = SubmissionResult.from_json({"student_id": "ada", "assignment_id": A, "answers": {WHY: ANSWER}, "scores": [
        {"grade_id": "test_split_heads", "points": 1.0, "max_points": 1.0, "status": "passed"},
        {"grade_id": WHY, "points": 0.0, "max_points": 1.0, "status": "manual"}]})
    assert SubmissionResult.from_json(saved.to_json()).answers == {WHY: ANSWER}  # saved with the result
    (hunt, why) = saved.exercises
    assert why.manual and why.waiting and not hunt.manual and saved.needs_manual_grade
    assert (saved.score, saved.max_score) == (1.0, 2.0)
    graded = saved.with_gradebook(Recorded(scores={"test_split_heads": 1.0, WHY: 0.5}, overridden={WHY: None},
                                           comments={WHY: COMMENT}, submitted_at="", seconds_late=0.0,
                                           late_penalty=0.0))
    (_, why) = graded.exercises
    assert why.status == "manual" and not why.waiting and not graded.needs_manual_grade
    assert (graded.score, graded.max_score) == (1.5, 2.0)
    page = feedback.page(graded)
    assert "scored by your instructor" in page and COMMENT in page and "0.5 / 1 points" in page
    assert "waiting for a person" not in page
    waiting = feedback.page(saved)
    assert "waiting for a person" in waiting and html.escape(ANSWER) in waiting
    assert "points lost" not in waiting, "a point that waits for a person is not lost"


# --------------------------------------------------------------------------- the whole path

def rows(graded, name: str, student: str) -> list[dict]:
    return [r for r in graded.rows(name) if r["student_id"] == student and r["assignment_id"] == A]


def why_row(graded, student: str) -> dict:
    return next(r for r in rows(graded, "scores.csv", student) if r["grade_id"] == WHY)


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """Two students of 02, every exercise right: ``blank_why`` left the answer as released, ``wrote_why`` wrote one."""
    root = tmp_path_factory.mktemp("manual") / "submitted"
    builders.write_submission(root, "blank_why", builders.right_notebook(A), A)
    nb = builders.right_notebook(A)
    why_cell(nb).source = ANSWER
    builders.write_submission(root, "wrote_why", nb, A)
    coded = builders.right_notebook(A)  # the learner pressed Y on the answer cell, then wrote in it
    at = coded.cells.index(why_cell(coded))
    coded.cells[at] = nbformat.v4.new_code_cell(ANSWER, metadata=copy.deepcopy(why_cell(coded).metadata))
    builders.write_submission(root, "code_why", coded, A)
    gone = builders.right_notebook(A)
    gone.cells.remove(why_cell(gone))
    builders.write_submission(root, "deleted_why", gone, A)
    first = builders.run_grade(root, "--seed", "0", "--timeout", "60", "--jobs", "1")
    assert first.proc.returncode == 0, first.proc.stdout + first.proc.stderr
    return root, first


def test_grade_counts_a_blank_why_as_0_and_a_written_one_as_waiting_for_a_person(course):
    root, graded = course
    full = builders.full_marks(A)  # the tests' points
    blank, wrote = why_row(graded, "blank_why"), why_row(graded, "wrote_why")
    assert (blank["points"], blank["max_points"], blank["status"], blank["auto_points"]) == \
        ("0", "1", "not attempted", "0")
    assert (wrote["points"], wrote["max_points"], wrote["status"], wrote["auto_points"]) == ("0", "1", "manual", "")
    for student, waits in (("blank_why", ""), ("wrote_why", "yes")):
        (g,) = rows(graded, "grades.csv", student)
        assert (float(g["score"]), float(g["max_score"]), g["needs_manual_grade"]) == (full, full + 1, waits)
    assert "Written answers waiting for a person: 2" in graded.proc.stdout  # wrote_why's and code_why's
    with Gradebook(f"sqlite:///{graded.out / 'gradebook.db'}") as gb:
        assert gb.find_graded_cell(WHY, A, A).max_score == 1
        b, w = gb.find_grade(WHY, A, A, "blank_why"), gb.find_grade(WHY, A, A, "wrote_why")
        assert (b.auto_score, b.needs_manual_grade) == (0, False)  # as nbgrader's SaveAutoGrades: nothing to read
        assert (w.auto_score, w.needs_manual_grade, w.score) == (None, True, 0)
        assert gb.find_submission(A, "wrote_why").max_score == full + 1
    report = (graded.out / "report.html").read_text(encoding="utf-8")
    assert re.search(rf'data-written-answer="{WHY}".*?data-waiting="2" data-scored="0"', report, re.S)
    page = (graded.out / "feedback" / "wrote_why" / f"{A}.html").read_text(encoding="utf-8")
    section = re.search(rf'<section aria-label="{WHY}".*?</section>', page, re.S).group(0)
    assert html.escape(ANSWER) in section and "waiting for a person" in section and "Mark scheme (1 point)" in section
    assert "failed" not in section and "points lost" not in page
    blank_page = (graded.out / "feedback" / "blank_why" / f"{A}.html").read_text(encoding="utf-8")
    assert "YOUR ANSWER HERE" in blank_page and "1 point(s) lost" in blank_page
    autograded = read_notebook(graded.out / "autograded" / "wrote_why" / A / f"{A}.ipynb")
    at = next(i for i, c in enumerate(autograded.cells) if grade_id(c) == WHY)
    assert autograded.cells[at].source == ANSWER and nbgrader_meta(autograded.cells[at])["points"] == 1
    assert "Mark scheme (1 point)" in autograded.cells[at + 1].source  # for the person in formgrader


def test_an_answer_turned_into_code_is_read_and_a_deleted_one_says_how_to_restore_it(course):
    _, graded = course
    coded = why_row(graded, "code_why")
    assert (coded["status"], coded["max_points"]) == ("manual", "1")
    assert any(p == "cell type changed" and WHY in d and "Markdown" in d for p, d in graded.problems("code_why", A))
    autograded = read_notebook(graded.out / "autograded" / "code_why" / A / f"{A}.ipynb")
    cell = why_cell(autograded)
    assert cell.cell_type == "markdown" and cell.source == ANSWER and nbgrader_meta(cell)["points"] == 1
    gone = why_row(graded, "deleted_why")
    assert (gone["status"], gone["points"], gone["max_points"]) == ("missing", "0", "1")
    saved = SubmissionResult.from_json(json.loads((graded.out / "results" / "deleted_why" / f"{A}.json").read_text()))
    assert "restore it from the released notebook" in next(t.message for t in saved.tests if t.grade_id == WHY)
    for student in ("wrote_why", "code_why", "deleted_why"):  # the learner's to write: never "tampered"
        assert not any(p == "tampered" for p, _ in graded.problems(student, A)), graded.problems(student, A)


def test_a_person_s_score_and_comment_reach_every_output_and_survive_grading_again(course):
    root, first = course
    full = builders.full_marks(A)
    with Gradebook(f"sqlite:///{first.out / 'gradebook.db'}") as gb:  # what formgrader's API does on "save"
        grade = gb.find_grade(WHY, A, A, "wrote_why")
        grade.manual_score = 1.0
        grade.needs_manual_grade = False
        gb.find_comment(WHY, A, A, "wrote_why").manual_comment = COMMENT
        gb.db.commit()
    again = builders.run_grade(root, "--seed", "0", "--timeout", "60", "--jobs", "1", "--force")
    assert again.proc.returncode == 0, again.proc.stdout + again.proc.stderr
    wrote = why_row(again, "wrote_why")
    assert (wrote["points"], wrote["status"], wrote["overridden"], wrote["comment"]) == ("1", "manual", "yes", COMMENT)
    (g,) = rows(again, "grades.csv", "wrote_why")
    assert (float(g["score"]), float(g["max_score"]), g["overridden"], g["needs_manual_grade"]) == (full + 1, full + 1,
                                                                                                    "yes", "")
    with Gradebook(f"sqlite:///{again.out / 'gradebook.db'}") as gb:
        assert gb.find_grade(WHY, A, A, "wrote_why").manual_score == 1.0  # regrading kept the person's score
    page = (again.out / "feedback" / "wrote_why" / f"{A}.html").read_text(encoding="utf-8")
    section = re.search(rf'<section aria-label="{WHY}".*?</section>', page, re.S).group(0)
    assert "scored by your instructor" in section and "1 / 1 points" in section and html.escape(COMMENT) in section
    assert "Written answers waiting for a person: 1 " in again.proc.stdout  # code_why's, still unread
    report = (again.out / "report.html").read_text(encoding="utf-8")
    assert re.search(rf'data-written-answer="{WHY}".*?data-waiting="1" data-scored="1"', report, re.S)


def test_validate_says_a_written_answer_is_read_by_the_instructor_and_passes(course):
    root, _ = course
    r = subprocess.run([sys.executable, "-m", "autograder", "validate", str(root / "wrote_why" / A / f"{A}.ipynb")],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    line = next(line for line in r.stdout.splitlines() if WHY in line)
    assert line.split()[:4] == ["read", "by", "your", "instructor"] and "failed" not in r.stdout
    assert "written answers worth 1 more are read by your instructor" in r.stdout


def test_validate_in_a_students_image_reads_the_answer_cell_without_the_course():
    """Without solutions/ validate reads the notebook alone: the answer cell as released is not attempted yet, a
    written one is read by the instructor, and neither makes the exit status 1."""
    from autograder import validate

    nb = released()
    for cell in nb.cells:  # as if run: every visible check passed (no kernel needed to read the cells)
        if is_test_cell(cell):
            cell.execution_count = 1
    lines: list[str] = []
    exercises = validate.report(nb, A)
    blank = next(ex for ex in exercises if ex.name == WHY)
    assert blank.status == "not attempted" and blank.points == (0.0, 1.0)
    why_cell(nb).source = ANSWER
    exercises = validate.report(nb, A)
    assert next(ex for ex in exercises if ex.name == WHY).status == "manual"
    assert [ex.name for ex in exercises].index(WHY) == [ex.name for ex in exercises].index("split_heads") + 1
    status = validate._print_report(type("P", (), {"name": f"{A}.ipynb"})(), exercises, 0, None, 0.0, lines.append)
    assert status == 0, lines
    line = next(line for line in lines if WHY in line)
    assert line.split()[:4] == ["read", "by", "your", "instructor"], lines


DRAFT = '''# %% tags=["setup"]
import math

# %% solution=true
def mean_of(values):
    """The mean of a non-empty list of numbers."""
    ### BEGIN SOLUTION
    return sum(values) / len(values)
    ### END SOLUTION
    ### BEGIN BUG
    # return sum(values) / (len(values) - 1)
    ### END BUG

# %% [markdown]
# **Why was it wrong?** In a sentence or two: what the code did, and the symptom.

# %% [markdown] manual=1
# ### BEGIN SOLUTION
# **Model answer.** It divided by n - 1, so every mean came out too large.
#
# **Mark scheme (1 point).** 1: names the divisor and the too-large means. 0: blank.
# ### END SOLUTION
'''


def build_solution():
    import importlib.util

    spec = importlib.util.spec_from_file_location("build_solution", paths.root() / "tools" / "build_solution.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_draft_s_manual_marker_makes_the_answer_cell_of_the_bug_hunt_above_it(tmp_path):
    draft = tmp_path / "draft.py"
    draft.write_text(DRAFT, encoding="utf-8")
    nb = build_solution().build(draft)
    (answer,) = [c for c in nb.cells if manual.is_manual_cell(c)]
    assert answer.cell_type == "markdown" and answer.id == "why-mean-of"
    assert nbgrader_meta(answer) == {"grade": True, "grade_id": "why_mean_of", "locked": False, "points": 1,
                                     "schema_version": 3, "solution": True, "task": False}
    student = student_notebook(nb, "draft.ipynb")
    assert [c.source for c in student.cells if manual.is_manual_cell(c)] == [manual.TEXT_STUB]
    assert "Model answer" not in "".join(c.source for c in student.cells)
    draft.write_text(DRAFT.replace("# ### BEGIN SOLUTION\n# **Model", "# **Model"), encoding="utf-8")
    with pytest.raises(SystemExit, match="BEGIN SOLUTION"):  # the region is where the mark scheme is read from
        build_solution().build(draft)


@pytest.mark.parametrize("name", ["02_shapes_and_matmul", "07_complex_rotations_and_rope"])
def test_a_draft_made_from_a_notebook_keeps_every_graded_cell(tmp_path, name):
    """Does a solution reviewed as text (jupytext's py:percent) and rebuilt keep its written answer's metadata?
    (build_solution cleared every markdown cell's metadata, so the why cells came back as plain text.)"""
    import jupytext

    source = jupytext.read(paths.root() / "solutions" / f"{name}.ipynb")
    draft = tmp_path / "draft.py"
    jupytext.write(source, draft, fmt="py:percent")
    rebuilt = build_solution().build(draft)

    def graded(nb):
        return [(c.cell_type, c.metadata["nbgrader"]) for c in nb.cells if "nbgrader" in c.metadata]

    assert any(manual.is_manual_cell(c) for c in rebuilt.cells), "the written answer lost its metadata"
    assert graded(rebuilt) == graded(source)
