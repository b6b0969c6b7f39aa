"""The one writer of nbgrader's gradebook, so nbgrader's own export, formgrader and feedback read our grades.

Assignments, notebooks, grade and solution cells are saved by nbgrader's ``SaveCells`` on the
source, exactly as ``nbgrader generate_assignment`` saves them; each submission's ``auto_score``
per grade cell is set as ``nbgrader autograde``'s ``SaveAutoGrades`` sets it.
"""
from __future__ import annotations

import copy
import datetime
import warnings
from pathlib import Path

from nbgrader.api import Gradebook, MissingEntry
from nbgrader.preprocessors import CheckCellMetadata, ClearOutput, ClearSolutions, ComputeChecksums, LockCells, SaveCells

from ..nbio import read_notebook
from ..release import STUB


class GradebookWriter:
    def __init__(self, db_url: str, *, course_id: str = ""):
        self.db_url = db_url
        self.gb = Gradebook(db_url, course_id)
        self.known: dict[str, set[str]] = {}  # assignment -> grade cell names
        self.warnings: list[str] = []

    def save_assignment(self, assignment: str, source_path: Path) -> None:
        """generate_assignment's database step: the assignment, its notebook and its cells."""
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
        """Record one graded submission (a result record of the pipeline), replacing its earlier scores."""
        student, assignment = result["student_id"], result["assignment_id"]
        self.gb.update_or_create_student(student)
        if assignment not in self.known or not result.get("scores"):
            return
        try:
            self.gb.find_submission(assignment, student)
        except MissingEntry:
            with warnings.catch_warnings():  # nbgrader's add_submission trips SQLAlchemy's autoflush warnings
                warnings.simplefilter("ignore")
                self.gb.add_submission(assignment, student, timestamp=datetime.datetime.now(datetime.timezone.utc))
        for score in result["scores"]:
            if score["grade_id"] not in self.known[assignment]:
                continue
            grade = self.gb.find_grade(score["grade_id"], assignment, assignment, student)
            grade.auto_score = float(score["points"])
            # SaveAutoGrades' rule: a manual score or no auto score needs a person
            grade.needs_manual_grade = grade.manual_score is not None or grade.auto_score is None
        self.gb.db.commit()

    def close(self) -> None:
        self.gb.close()
