"""Does the gradebook writer record what nbgrader's own autograde would, with a few queries a submission?

No notebook runs: results are written as the pipeline writes them, into a fresh SQLite gradebook, and read
back through nbgrader's own API (``find_grade``), the way formgrader and ``nbgrader export`` read them.
"""
from __future__ import annotations

import datetime
import os
import sys
from pathlib import Path

import pytest
from sqlalchemy import text
from nbgrader.api import Gradebook, get_alembic_version
from nbgrader.plugins import LateSubmissionPlugin

from autograder import paths
from autograder.grade.output.gradebook import GradebookWriter
from autograder.grade.submission.results import SubmissionResult

A = "01_tokens_and_ids"


class HalfOff(LateSubmissionPlugin):
    """A late penalty of half the score, so a test sees the score it was computed from."""

    def late_submission_penalty(self, student_id, score, total_seconds):
        return score / 2


@pytest.fixture
def writer(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""))  # alembic
    url = f"sqlite:///{tmp_path / 'gradebook.db'}"
    w = GradebookWriter(url, late_plugin=HalfOff())
    w.save_assignment(A, paths.solutions_dir() / f"{A}.ipynb")
    yield w, url
    w.close()


def result(student: str, points: dict[str, float], submitted_at: str = "") -> SubmissionResult:
    return SubmissionResult.from_json({"student_id": student, "assignment_id": A, "submitted_at": submitted_at, "scores": [
        {"grade_id": g, "points": p, "max_points": 1.0, "status": "passed" if p else "failed"}
        for g, p in points.items()]})


def test_a_new_gradebook_is_stamped_with_nbgrader_s_newest_migration(writer):
    """The head revision is read in-process; it must be the one ``alembic heads`` names (nbgrader's own way),
    or nbgrader's ``db upgrade`` would later run migrations on tables that already have them."""
    _, url = writer
    with Gradebook(url) as gb:
        stamped = gb.db.execute(text("SELECT version_num FROM alembic_version")).scalars().all()
    assert stamped == [get_alembic_version()]


def test_every_test_cell_gets_its_automatic_score_and_a_manual_one_survives_until_the_work_changes(writer):
    w, url = writer
    with Gradebook(url) as gb:
        cells = [c.name for c in gb.find_notebook(A, A).grade_cells if c.name.startswith("test_")]
    first = {g: float(i % 2) for i, g in enumerate(cells)}
    w.save_result(result("ada", first))
    with Gradebook(url) as gb:
        for g, p in first.items():
            grade = gb.find_grade(g, A, A, "ada")
            assert grade.auto_score == p and grade.needs_manual_grade is False
        gb.find_grade(cells[0], A, A, "ada").manual_score = 0.5  # a person in formgrader
        gb.db.commit()
    again = {g: 1.0 for g in cells}
    assert w.save_result(result("ada", again)) == []  # the same work graded again: the person's score stays
    with Gradebook(url) as gb:
        kept = gb.find_grade(cells[0], A, A, "ada")
        assert (kept.auto_score, kept.manual_score, kept.needs_manual_grade) == (1.0, 0.5, True)
        assert gb.find_grade(cells[1], A, A, "ada").auto_score == 1.0
    dropped = w.save_result(result("ada", again), submission_changed=True)
    assert dropped and cells[0] in dropped[0]
    with Gradebook(url) as gb:
        assert gb.find_grade(cells[0], A, A, "ada").manual_score is None


def test_a_late_submission_is_penalised_from_the_score_it_was_given(writer):
    w, url = writer
    with Gradebook(url) as gb:
        gb.update_or_create_assignment(A, duedate=datetime.datetime(2030, 1, 1))
        cells = [c.name for c in gb.find_notebook(A, A).grade_cells if c.name.startswith("test_")]
    full = {g: (1.0 if i < 2 else 0.0) for i, g in enumerate(cells)}
    w.save_result(result("late", full, "2030-01-02T00:00:00Z"))
    w.save_result(result("early", full, "2029-12-31T00:00:00Z"))
    recorded = w.recorded()
    assert recorded["late", A].seconds_late == 86400 and recorded["late", A].late_penalty == 1.0  # half of 1 + 1
    assert recorded["early", A].seconds_late == 0 and recorded["early", A].late_penalty == 0


def test_a_written_answer_has_no_automatic_score_and_a_person_s_score_stays(tmp_path, monkeypatch):
    """As nbgrader's SaveAutoGrades: a blank answer gets an automatic 0 and needs nobody; a written one gets no
    automatic score and needs a person; the person's score stays when the same work is graded again."""
    monkeypatch.setenv("PATH", str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""))
    nb02, why = "02_shapes_and_matmul", "why_split_heads"
    url = f"sqlite:///{tmp_path / 'gradebook.db'}"
    w = GradebookWriter(url)
    w.save_assignment(nb02, paths.solutions_dir() / f"{nb02}.ipynb")

    def answered(student: str, status: str) -> SubmissionResult:
        return SubmissionResult.from_json({"student_id": student, "assignment_id": nb02, "scores": [
            {"grade_id": "test_split_heads", "points": 1.0, "max_points": 1.0, "status": "passed"},
            {"grade_id": why, "points": 0.0, "max_points": 1.0, "status": status}]})

    try:
        w.save_result(answered("blank", "not attempted"))
        w.save_result(answered("wrote", "manual"))
        with Gradebook(url) as gb:
            assert gb.find_graded_cell(why, nb02, nb02).max_score == 1
            blank, wrote = gb.find_grade(why, nb02, nb02, "blank"), gb.find_grade(why, nb02, nb02, "wrote")
            assert (blank.auto_score, blank.needs_manual_grade) == (0.0, False)
            assert (wrote.auto_score, wrote.needs_manual_grade) == (None, True)
            wrote.manual_score, wrote.needs_manual_grade = 1.0, False  # formgrader's save
            gb.db.commit()
        assert w.save_result(answered("wrote", "manual")) == []
        recorded = w.recorded()[("wrote", nb02)]
        assert recorded.scores[why] == 1.0 and why in recorded.overridden
        assert answered("wrote", "manual").with_gradebook(recorded).score == 2.0
    finally:
        w.close()
