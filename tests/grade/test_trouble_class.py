"""One class with every kind of trouble, graded once by ``python -m autograder grade``: each test
reads one promise of docs/grading.md off its outputs (test_pipeline.py has the runs that need a
class of their own: resuming, --force, stock nbgrader, the fallback runner).
"""
from __future__ import annotations

import csv
import dataclasses
import subprocess
import sys
import time

import nbformat
import pytest

from autograder import paths
from autograder.grade.output import feedback, report
from autograder.grade.submission.results import SubmissionResult
from autograder.nbio import exercise_points, read_notebook
from tests import builders

# one worker runs this module, so the class is graded once (loadgroup splits modules otherwise)
pytestmark = [pytest.mark.grading, pytest.mark.xdist_group("trouble_class")]
A = "01_tokens_and_ids"
POINTS = exercise_points(read_notebook(paths.solutions_dir() / f"{A}.ipynb"))  # notebook 01 grows
FULL = sum(POINTS.values())
WRITTEN = builders.written_points(A)  # the bug hunt's why: in the maximum, a person's to give (0 until then)
# The least a cell of the course gets: each one's limit is this or 100 times what the course's own run of it took
# on this machine, under the same load (grade's own limits; a --timeout would give every cell 10 s, however slow a
# busy machine made the honest ones). Honest cells take well under one second.
TIMEOUT_FLOOR = 10


@pytest.fixture(scope="module")
def trouble(tmp_path_factory, g):
    """A class with honest, wrong, broken and tampered submissions, graded once with --jobs 2."""
    root = tmp_path_factory.mktemp("trouble") / "submitted"
    g.write_submission(root, "passes_all", g.right_notebook())
    g.write_submission(root, "blank", g.blank_notebook())
    g.write_submission(root, "fails_encode", g.with_solution(g.right_notebook(), "encode", g.WRONG_ENCODE))
    g.write_submission(root, "invalid_json", '{"cells": [ oops')
    g.write_submission(root, "misnamed", g.right_notebook(), name="my homework.ipynb")
    (root / "missing" / A).mkdir(parents=True)
    g.write_submission(root, "unknown_assignment", g.right_notebook(), assignment="99_not_a_notebook")
    g.write_submission(root, "older_nbformat", nbformat.writes(nbformat.convert(g.right_notebook(), 3)))

    nb = g.right_notebook()
    del nb.cells[g.cell_index(nb, "test_encode_hidden")]
    g.write_submission(root, "deleted_test", nb)

    nb = g.right_notebook()
    nb.cells.insert(g.cell_index(nb, "test_decode") + 1, g.copy_cell(nb, "test_decode", id="student-copy"))
    g.write_submission(root, "duplicated_test", nb)

    nb = g.with_solution(g.right_notebook(), "encode", g.WRONG_ENCODE)
    nb.cells[g.cell_index(nb, "test_encode")].source = "pass"
    nb.cells[g.cell_index(nb, "test_encode_hidden")].source = "print('all hidden tests passed')"
    g.write_submission(root, "edited_tests_fails_encode", nb)

    nb = g.right_notebook()
    cell = nb.cells.pop(g.cell_index(nb, "test_one_hot"))
    nb.cells.insert(1, cell)
    g.write_submission(root, "reordered_test", nb)

    nb = g.right_notebook()
    nb.cells[g.cell_index(nb, "test_build_vocab")].metadata.nbgrader["points"] = 100
    g.write_submission(root, "changed_points", nb)

    g.write_submission(root, "timeout_decode", g.with_solution(g.right_notebook(), "decode", g.WAITING_DECODE))

    before = g.file_hashes(root)
    graded = g.run_grade(root, "--jobs", "2", "--timeout-floor", str(TIMEOUT_FLOOR))
    graded.before, graded.after = before, g.file_hashes(root)
    print(graded.proc.stdout, graded.proc.stderr[-3000:])
    return graded


def test_exit_status_is_1_when_some_submissions_could_not_be_graded(trouble):
    assert trouble.proc.returncode == 1, trouble.proc.stderr[-2000:]


def test_honest_answers_get_full_marks_and_blank_gets_none(trouble):
    assert trouble.total("passes_all") == FULL
    assert {s for gid, (_, s) in trouble.scores("passes_all").items() if not gid.startswith("why_")} == {"passed"}
    assert trouble.total("blank") == 0
    assert {s for _, s in trouble.scores("blank").values()} == {"not attempted"}
    assert not trouble.problems("passes_all") and not trouble.problems("blank")


def test_a_wrong_exercise_costs_only_its_tests(trouble):
    scores = trouble.scores("fails_encode")
    assert scores["test_encode"] == (0, "failed") and scores["test_encode_hidden"] == (0, "failed")
    assert trouble.total("fails_encode") == FULL - POINTS["encode"]


def test_invalid_json_is_a_problem_and_the_class_goes_on(trouble):
    assert trouble.problems("invalid_json")[0][0] == "not valid JSON"
    assert "line 1" in trouble.problems("invalid_json")[0][1]
    assert {s for _, s in trouble.scores("invalid_json").values()} == {"missing"}
    assert trouble.total("invalid_json") == 0


def test_a_misnamed_notebook_is_graded_and_reported(trouble):
    assert trouble.total("misnamed") == FULL
    assert trouble.problems("misnamed")[0][0] == "wrong file name"


def test_a_missing_notebook_and_an_unknown_assignment_are_reported(trouble):
    assert trouble.problems("missing")[0][0] == "missing notebook"
    assert trouble.problems("unknown_assignment", "99_not_a_notebook")[0][0] == "unknown assignment"


def test_an_older_nbformat_is_upgraded_and_graded(trouble):
    assert trouble.total("older_nbformat") == FULL
    assert [p for p, _ in trouble.problems("older_nbformat")] == ["older nbformat"]


@pytest.mark.parametrize("student, grade_id", [("deleted_test", "test_encode_hidden"),
                                               ("duplicated_test", "test_decode"),
                                               ("reordered_test", "test_one_hot"),
                                               ("changed_points", "test_build_vocab")])
def test_tampered_test_cells_are_restored_graded_and_flagged(trouble, student, grade_id):
    scores = trouble.scores(student)
    assert scores[grade_id][1] == "tampered"
    assert trouble.total(student) == FULL, "restored from the source, the right answers keep their points"
    assert any(p == "tampered" and grade_id in d for p, d in trouble.problems(student))
    max_points = {r["grade_id"]: float(r["max_points"]) for r in trouble.rows("scores.csv")
                  if r["student_id"] == student}
    assert sum(max_points.values()) == FULL + WRITTEN, "points come from the source"


def test_emptied_test_cells_do_not_pass_a_wrong_answer(trouble):
    scores = trouble.scores("edited_tests_fails_encode")
    assert scores["test_encode"] == (0, "tampered") and scores["test_encode_hidden"] == (0, "tampered")
    assert trouble.total("edited_tests_fails_encode") == FULL - POINTS["encode"]


def test_an_infinite_loop_costs_its_exercise_not_the_notebook(trouble):
    scores = trouble.scores("timeout_decode")
    assert scores["test_decode"] == (0, "timeout") and scores["test_decode_hidden"] == (0, "timeout")
    assert trouble.total("timeout_decode") == FULL - POINTS["decode"]
    tests_timed_out = [d for p, d in trouble.problems("timeout_decode") if p == "timeout" and d.startswith("test cell")]
    # the limit is the one grade computed from the course's own time for test_decode, measured on this machine
    # under its load (the floor, or more): the words are read against it, not against a number written here
    limit, course = trouble.course_limit("timeout_decode", "test_decode", TIMEOUT_FLOOR)
    assert tests_timed_out == [f"test cells test_decode, test_decode_hidden: interrupted after {limit:g} s; "
                               f"the course's own version of this cell takes {course:.2g} s here"], (
        "one problem for the exercise, naming its timed-out tests and its limit, not one per test", tests_timed_out)


def test_submission_files_are_never_modified(trouble):
    assert trouble.after == trouble.before


def test_submissions_run_in_parallel(trouble):
    spans = sorted((r.started_at, r.finished_at) for r in report.read_results(trouble.out) if r.engine)
    assert any(b[0] < a[1] for a, b in zip(spans, spans[1:])), "with --jobs 2 two submissions overlap in time"


def test_terminal_shows_progress_and_a_summary_with_pass_rates_and_isolation(trouble):
    assert "grading 0/" in trouble.proc.stderr and "/14" in trouble.proc.stderr
    out = trouble.proc.stdout
    assert "could not be graded" in out and "Pass rate per exercise" in out and "Isolation in force:" in out
    lines = [line for line in out.splitlines() if A in line and "%" in line]
    rates = [int(line.split("%")[0]) for line in lines]
    assert len(lines) == len(POINTS) and rates == sorted(rates), "every exercise, hardest first"


def test_feedback_groups_by_exercise_and_never_shows_hidden_test_source(trouble):
    page = (trouble.out / "feedback" / "fails_encode" / f"{A}.html").read_text()
    assert '<section aria-label="encode">' in page and "hidden test" in page and "0 / 2 points" in page
    assert "Your code" in page and "vocab.get(t, 0) + 1" in page, "the learner's own code for a failed exercise"
    blank = (trouble.out / "feedback" / "blank" / f"{A}.html").read_text()
    assert "not attempted" in blank and ">failed<" not in blank, "a stub is 'not attempted', never 'failed'"
    for student in ("passes_all", "fails_encode", "deleted_test", "edited_tests_fails_encode"):
        page = (trouble.out / "feedback" / student / f"{A}.html").read_text()
        assert "BEGIN HIDDEN TESTS" not in page and "hidden=True" not in page


def test_feedback_escapes_everything():
    saved = SubmissionResult.from_json({"student_id": "<b>eve</b>", "assignment_id": A, "problems": [
        {"problem": "tampered", "detail": "<script>alert(1)</script>"}], "scores": [
        {"grade_id": "test_x", "points": 0, "max_points": 1, "status": "failed", "message": "got <img src=x>"}],
        "code": {"x": "def x(): return '<script>'"}})
    page = feedback.page(dataclasses.replace(saved, comments={"x": "<i>well</i>"}))  # a person's, from the gradebook
    assert "&lt;i&gt;well" in page
    assert "<script>" not in page and "<img" not in page and "<b>eve" not in page and "<i>well" not in page
    assert "&lt;script&gt;" in page


def test_nbgrader_export_reads_the_gradebook(trouble, tmp_path):
    (tmp_path / "nbgrader_config.py").write_text(
        f"c = get_config()\nc.CourseDirectory.db_url = {'sqlite:///' + str(trouble.out / 'gradebook.db')!r}\n")
    subprocess.run([sys.executable, "-m", "nbgrader", "export", "--to", "export.csv"], cwd=tmp_path, check=True,
                   capture_output=True)
    with open(tmp_path / "export.csv", newline="") as fh:
        exported = {(r["student_id"], r["assignment"]): (float(r["raw_score"]), float(r["max_score"]))
                    for r in csv.DictReader(fh)}
    ours = {(r["student_id"], r["assignment_id"]): (float(r["score"]), float(r["max_score"]))
            for r in trouble.rows("grades.csv")}
    assert exported[("passes_all", A)] == (FULL, FULL + WRITTEN)
    assert exported[("fails_encode", A)] == (FULL - POINTS["encode"], FULL + WRITTEN)
    assert {k: v for k, v in exported.items() if k in ours} == ours


def test_a_rerun_grades_only_what_changed(trouble, g):
    # One run, not a run with nothing changed first (some 4 core-seconds): the 13 left as they were are the
    # unchanged case, and tests/grade/test_postgres.py and test_pipeline.py's interrupted run rerun too.
    root = trouble.out.parent / "submitted"
    g.write_submission(root, "blank", g.right_notebook())  # the blank student hands in again
    again = g.run_grade(root, "--jobs", "2", "--timeout-floor", str(TIMEOUT_FLOOR), out=trouble.out)
    assert again.proc.returncode == 1  # the ungradable ones are still there
    assert "(1 graded now, 13 unchanged" in again.proc.stdout
    assert again.total("blank") == FULL and again.total("passes_all") == FULL
