"""The one writer of nbgrader's gradebook, so nbgrader's own export, formgrader and feedback read our grades.

Assignments, notebooks, grade and solution cells are saved by nbgrader's ``SaveCells`` on the
source, exactly as ``nbgrader generate_assignment`` saves them; each submission's ``auto_score``
per grade cell is set as ``nbgrader autograde``'s ``SaveAutoGrades`` sets it.

One transaction per submission: its student, submission and every grade are committed together
or not at all, so several graders can share one database (``--db postgresql://...``). On
PostgreSQL the steps that create shared rows (the tables, the course, an assignment's cells) run
under an advisory lock, one grader at a time; a student added by another grader at the same
moment makes the transaction start again.
"""
from __future__ import annotations

import copy
import warnings
from contextlib import contextmanager
from pathlib import Path

import nbgrader
from alembic.script import ScriptDirectory
from nbgrader import utils as nbgrader_utils
from nbgrader.api import (Base, BaseCell, Comment, Course, Grade, Gradebook, MissingEntry, Student,
                         SubmittedAssignment, SubmittedNotebook)
from sqlalchemy import create_engine, inspect, text
from sqlalchemy.exc import IntegrityError, OperationalError
from nbgrader.preprocessors import SaveCells

from ...nbio import read_notebook
from ...release import generate_steps
from .course import late_penalty
from .course import late_plugin as course_late_plugin
from ..submission.results import SubmissionResult, Recorded


def _parse_time(text: str | None):
    """The submission time the pipeline recorded (ISO 8601, UTC) as nbgrader stores it (naive UTC)."""
    if not text:
        return None
    try:
        return nbgrader_utils.parse_utc(text)
    except (ValueError, OverflowError):
        return None


def _score(grade) -> float:
    """nbgrader's ``Grade.score`` from the row's values now (the column is SQL, read back only after a flush):
    the manual score if set, else the automatic one, plus any extra credit; 0 when neither is set."""
    base = grade.manual_score if grade.manual_score is not None else grade.auto_score
    return 0.0 if base is None else float(base) + float(grade.extra_credit or 0.0)


LOCK_KEY = 0x6E626772  # the advisory lock every grader of one PostgreSQL gradebook takes for shared rows
RETRIES = 3


def normalize_url(db_url: str) -> str:
    """A plain ``postgresql://`` (or libpq's ``postgres://``) URL names the driver the course installs,
    psycopg2: SQLAlchemy 2.1 would otherwise look for psycopg 3. nbgrader's own commands read the
    URL as written, so instructors give them ``postgresql+psycopg2://`` (see the README)."""
    for scheme in ("postgres://", "postgresql://"):
        if db_url.startswith(scheme):
            return "postgresql+psycopg2://" + db_url[len(scheme):]
    return db_url


@contextmanager
def shared_lock(db_url: str):
    """On PostgreSQL, one grader at a time in this block (a session advisory lock); elsewhere a no-op."""
    if not db_url.startswith("postgresql"):
        yield
        return
    engine = create_engine(db_url, future=True)
    try:
        with engine.connect() as conn:
            conn.execute(text("SELECT pg_advisory_lock(:key)"), {"key": LOCK_KEY})
            conn.commit()
            try:
                yield
            finally:
                conn.execute(text("SELECT pg_advisory_unlock(:key)"), {"key": LOCK_KEY})
                conn.commit()
    finally:
        engine.dispose()


def create_new(db_url: str) -> None:
    """For a database with no tables, what nbgrader's ``Gradebook`` does for one (its tables, and the
    ``alembic_version`` table holding the newest migration), with that migration read in this process by
    alembic's own ScriptDirectory instead of nbgrader's way, running the ``alembic heads`` command: a new
    interpreter that imports alembic and nbgrader, some 2 to 3 core-seconds at the start of every class run
    into a new gradebook. ``Gradebook`` then finds the tables and leaves them as they are."""
    engine = create_engine(db_url, future=True)
    try:
        if inspect(engine).get_table_names():
            return
        Base.metadata.create_all(bind=engine)
        head = ScriptDirectory(str(Path(nbgrader.__file__).parent / "alembic")).get_current_head()
        with engine.begin() as conn:
            conn.execute(text("CREATE TABLE alembic_version (version_num VARCHAR(32) NOT NULL)"))
            conn.execute(text("INSERT INTO alembic_version (version_num) VALUES (:head)"), {"head": head})
    finally:
        engine.dispose()


class GradebookWriter:
    def __init__(self, db_url: str, *, course_id: str = "", late_plugin=None):
        self.late_plugin = late_plugin or course_late_plugin()
        self.db_url = db_url = normalize_url(db_url)
        with shared_lock(db_url):  # two graders creating the same new database would both create its tables
            create_new(db_url)
            self.gb = Gradebook(db_url, course_id)
            self._ensure_course(course_id)
        self.known: dict[str, set[str]] = {}  # assignment -> grade cell names
        self.warnings: list[str] = []

    def _ensure_course(self, course_id: str) -> None:
        """nbgrader adds no course row for its default course id "", and SQLite does not mind; PostgreSQL
        enforces the assignment's foreign key to it, so nbgrader's ``add_assignment`` fails there without it."""
        if self.db_url.startswith("sqlite"):
            return
        if self.gb.db.query(Course).filter(Course.id == course_id).one_or_none() is None:
            self.gb.db.add(Course(id=course_id))
            self.gb.db.commit()

    def save_assignment(self, assignment: str, source_path: Path) -> None:
        """generate_assignment's database step: the assignment, its notebook and its cells."""
        with shared_lock(self.db_url):
            self._save_assignment(assignment, source_path)

    def _save_assignment(self, assignment: str, source_path: Path) -> None:
        self.gb.update_or_create_assignment(assignment)
        self.gb.db.commit()
        nb = copy.deepcopy(read_notebook(source_path))
        resources = {"nbgrader": {"db_url": self.db_url, "assignment": assignment, "notebook": assignment}}
        try:
            for pre in (*generate_steps(), SaveCells()):
                nb, resources = pre.preprocess(nb, resources)
        except RuntimeError as exc:  # nbgrader refuses to add or remove cells once there are submissions
            self.gb.db.rollback()
            self.warnings.append(f"the gradebook keeps its old cells for {assignment} ({exc}); "
                                 "the CSVs have the new grades")
            return
        self.gb.db.expire_all()
        notebook = self.gb.find_notebook(assignment, assignment)
        self.known[assignment] = {c.name for c in notebook.grade_cells}

    def save_result(self, result: SubmissionResult, *, submission_changed: bool = False) -> list[str]:
        """Record one graded submission (its grader's scores), replacing its earlier automatic
        scores, in one transaction. A person's scores and comments stay, unless ``submission_changed``:
        then they were given to another version of the work and are dropped; the returned lines say which."""
        for attempt in range(RETRIES):
            try:
                dropped = self._save_result(result, submission_changed)
                self.gb.db.commit()
                return dropped
            except (IntegrityError, OperationalError):  # another grader added this student at the same moment
                self.gb.db.rollback()
                if attempt == RETRIES - 1:
                    raise
        return []

    def _save_result(self, result: SubmissionResult, submission_changed: bool) -> list[str]:
        """The rows of one submission, flushed but not committed (nbgrader's own helpers commit each step).

        A handful of queries, not one per test: the submission's grades are loaded together with their
        cells' names (nbgrader's ``find_grade`` per test cell, each query flushing the one before, cost
        some 80 queries and a tenth of a core-second a submission), under no autoflush until the end."""
        db = self.gb.db
        student, assignment = result.key
        with db.no_autoflush:
            if db.get(Student, student) is None:
                db.add(Student(id=student))
                db.flush()
            if assignment not in self.known or not result.tests:
                return []
            timestamp = _parse_time(result.submitted_at)
            try:
                submission = self.gb.find_submission(assignment, student)
            except MissingEntry:
                with warnings.catch_warnings():  # building the rows as add_submission does trips autoflush warnings
                    warnings.simplefilter("ignore")
                    submission = self._add_submission(assignment, student, timestamp)
            submission.timestamp = timestamp  # a resubmission's new time; None when timestamp.txt is missing
            notebook = self.gb.find_submission_notebook(assignment, assignment, student)
            dropped = self._drop_manual(notebook) if submission_changed else []
            grades = self._grades(notebook)
            for test in result.tests:
                grade = grades.get(test.grade_id) if test.grade_id in self.known[assignment] else None
                if grade is None:
                    continue
                # a written answer has no automatic score, as nbgrader's determine_grade gives none (a person's)
                grade.auto_score = None if test.status == "manual" else float(test.auto_points)
                # SaveAutoGrades' rule: a manual score or no auto score needs a person
                grade.needs_manual_grade = grade.manual_score is not None or grade.auto_score is None
            self._assign_late_penalty(submission, notebook, student, grades.values())
        db.flush()
        return dropped

    def _grades(self, notebook) -> dict:
        """grade cell name -> the submitted notebook's Grade row, in one query (a grade cell's name is unique
        in its notebook; ``find_grade`` looks a grade cell up by that name, then a task cell)."""
        rows = self.gb.db.query(Grade, BaseCell.name).join(BaseCell, BaseCell.id == Grade.cell_id)\
            .filter(Grade.notebook_id == notebook.id).all()
        return {name: grade for grade, name in rows}

    @staticmethod
    def _drop_manual(notebook) -> list[str]:
        dropped = []
        for grade in notebook.grades:
            if grade.manual_score is not None or grade.extra_credit:
                dropped.append(f"{grade.name} (a person gave {grade.manual_score:g})" if grade.manual_score
                               is not None else f"{grade.name} (extra credit {grade.extra_credit:g})")
                grade.manual_score, grade.extra_credit = None, None
        for comment in notebook.comments:
            if comment.manual_comment:
                dropped.append(f"the comment on {comment.name}")
                comment.manual_comment = None
        return dropped

    def _assign_late_penalty(self, submission, notebook, student: str, grades) -> None:
        """nbgrader's AssignLatePenalties, from the due date in the gradebook and the submission time."""
        duedate = submission.assignment.duedate
        late = (submission.timestamp - duedate).total_seconds() if submission.timestamp and duedate else 0.0
        if late <= 0:  # on time: no penalty, whatever the score (late_penalty says None)
            notebook.late_submission_penalty = None
            return
        score = sum(_score(g) for g in grades)
        notebook.late_submission_penalty = late_penalty(self.late_plugin, student, score, late)

    def _add_submission(self, assignment: str, student: str, timestamp):
        """nbgrader's ``Gradebook.add_submission`` without its commit: the submission mirrors the assignment."""
        submission = SubmittedAssignment(
            assignment=self.gb.find_assignment(assignment), student=self.gb.find_student(student),
            timestamp=timestamp)
        for notebook in submission.assignment.notebooks:
            nb = SubmittedNotebook(notebook=notebook, assignment=submission)
            for grade_cell in notebook.grade_cells:
                Grade(cell_id=grade_cell.id, notebook=nb)
            for solution_cell in notebook.solution_cells:
                Comment(cell_id=solution_cell.id, notebook=nb)
            for task_cell in notebook.task_cells:
                Comment(cell_id=task_cell.id, notebook=nb)
                Grade(cell_id=task_cell.id, notebook=nb)
        self.gb.db.add(submission)
        self.gb.db.flush()
        return submission

    def recorded(self) -> dict[tuple[str, str], Recorded]:
        """Every submission as the gradebook has it now (our scores, a person's changes, lateness)."""
        self.gb.db.expire_all()
        out = {}
        for submission in self.gb.db.query(SubmittedAssignment).all():
            scores, overridden, comments, penalty = {}, {}, {}, 0.0
            for notebook in submission.notebooks:
                penalty += float(notebook.late_submission_penalty or 0.0)
                for grade in notebook.grades:
                    scores[grade.name] = float(grade.score or 0.0)
                    if grade.manual_score is not None or grade.extra_credit:
                        overridden[grade.name] = grade.auto_score
                for comment in notebook.comments:
                    if comment.manual_comment:
                        comments[comment.name] = comment.manual_comment
            when = submission.timestamp
            due = submission.assignment.duedate
            late = max(0.0, (when - due).total_seconds()) if when and due else 0.0
            out[(submission.student.id, submission.assignment.name)] = Recorded(
                scores=scores, overridden=overridden, comments=comments,
                submitted_at=when.isoformat() + "Z" if when else "", seconds_late=late, late_penalty=penalty)
        return out

    def close(self) -> None:
        self.gb.close()
