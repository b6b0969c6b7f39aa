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
import datetime
import warnings
from contextlib import contextmanager
from pathlib import Path

from nbgrader import utils as nbgrader_utils
from nbgrader.api import Comment, Course, Grade, Gradebook, MissingEntry, Student, SubmittedAssignment, SubmittedNotebook
from sqlalchemy import create_engine, text
from sqlalchemy.exc import IntegrityError, OperationalError
from nbgrader.preprocessors import CheckCellMetadata, ClearOutput, ClearSolutions, ComputeChecksums, LockCells, SaveCells

from ..nbio import read_notebook
from ..release import STUB


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


class GradebookWriter:
    def __init__(self, db_url: str, *, course_id: str = ""):
        self.db_url = db_url = normalize_url(db_url)
        with shared_lock(db_url):  # two graders creating the same new database would both create its tables
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
            for pre in (LockCells(), ClearSolutions(code_stub={"python": STUB}), ClearOutput(), CheckCellMetadata(),
                        ComputeChecksums(), SaveCells()):
                nb, resources = pre.preprocess(nb, resources)
        except RuntimeError as exc:  # nbgrader refuses to add or remove cells once there are submissions
            self.gb.db.rollback()
            self.warnings.append(f"the gradebook keeps its old cells for {assignment} ({exc}); "
                                 "the CSVs have the new grades")
            return
        self.gb.db.expire_all()
        notebook = self.gb.find_notebook(assignment, assignment)
        self.known[assignment] = {c.name for c in notebook.grade_cells}

    def save_result(self, result: dict) -> None:
        """Record one graded submission (a result record of the pipeline), replacing its earlier scores,
        in one transaction."""
        for attempt in range(RETRIES):
            try:
                self._save_result(result)
                self.gb.db.commit()
                return
            except (IntegrityError, OperationalError):  # another grader added this student at the same moment
                self.gb.db.rollback()
                if attempt == RETRIES - 1:
                    raise

    def _save_result(self, result: dict) -> None:
        """The rows of one submission, flushed but not committed (nbgrader's own helpers commit each step)."""
        db = self.gb.db
        student, assignment = result["student_id"], result["assignment_id"]
        try:
            self.gb.find_student(student)
        except MissingEntry:
            db.add(Student(id=student))
            db.flush()
        if assignment not in self.known or not result.get("scores"):
            return
        try:
            self.gb.find_submission(assignment, student)
        except MissingEntry:
            with warnings.catch_warnings():  # building the rows as add_submission does trips autoflush warnings
                warnings.simplefilter("ignore")
                self._add_submission(assignment, student)
        for score in result["scores"]:
            if score["grade_id"] not in self.known[assignment]:
                continue
            grade = self.gb.find_grade(score["grade_id"], assignment, assignment, student)
            grade.auto_score = float(score["points"])
            # SaveAutoGrades' rule: a manual score or no auto score needs a person
            grade.needs_manual_grade = grade.manual_score is not None or grade.auto_score is None

    def _add_submission(self, assignment: str, student: str) -> None:
        """nbgrader's ``Gradebook.add_submission`` without its commit: the submission mirrors the assignment."""
        submission = SubmittedAssignment(
            assignment=self.gb.find_assignment(assignment), student=self.gb.find_student(student),
            timestamp=nbgrader_utils.parse_utc(datetime.datetime.now(datetime.timezone.utc)))
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

    def close(self) -> None:
        self.gb.close()
