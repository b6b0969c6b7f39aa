"""What is compared: each student's answer to each exercise, and what the course itself gave them.

An exercise is a solution cell of a released notebook (``notebooks/NN.ipynb``), named by its grade id. What the
course gave is every line of that cell as released (the ``def`` line, the docstring, ``# YOUR CODE HERE``) and
every line of the solution's cell outside its nbgrader solution markers (BEGIN SOLUTION ... END SOLUTION). A submission is read as ``grade`` finds it
(``SUBMISSIONS/<student>/<assignment>/<assignment>.ipynb``, through :func:`.discover.discover`), its solution cells
matched by grade id wherever they moved; a notebook that cannot be read is named, never a reason to stop.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from .. import paths
from ..grade.submission.discover import Refused, discover, read_regular
from ..grade.output.alike import Unread


@dataclass(frozen=True)
class Exercise:
    """One solution cell of the course: where it is, and what of it the course gave."""
    assignment: str
    grade_id: str
    given: frozenset[str]  # stripped lines the course gave in this cell (never counted)


@dataclass(frozen=True)
class Answer:
    student: str
    assignment: str
    grade_id: str
    code: str  # the cell's whole text as the student saved it


class CourseError(ValueError):
    """The course's own notebooks cannot say what was given: the message names the file and what to do."""


def _cells(path: Path) -> list[dict]:
    try:
        data = json.loads(path.read_bytes().decode("utf-8-sig"))
        return [c for c in data["cells"] if isinstance(c, dict)]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise CourseError(f"{path}: cannot read the course notebook ({exc}); run `python -m autograder release`") from None


def _source(cell: dict) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else str(src)


def _solution_ids(cells: list[dict]) -> dict[str, str]:
    """grade id -> source of each code solution cell (the first, should a grade id repeat)."""
    found: dict[str, str] = {}
    for cell in cells:
        meta = (cell.get("metadata") or {}).get("nbgrader") or {}
        if cell.get("cell_type") == "code" and meta.get("solution") and isinstance(meta.get("grade_id"), str):
            found.setdefault(meta["grade_id"], _source(cell))
    return found


def _outside_solution(source: str) -> list[str]:
    """The lines of a solution cell outside its solution regions. A marker line holds nbgrader's delimiter
    anywhere in it, as nbgrader's ClearSolutions reads it (the delimiters are written without their comment
    hashes: the installed package must not hold a solution's marker lines, tests/course/test_learner_pieces.py)."""
    kept, inside = [], False
    for line in source.split("\n"):
        marker = line.strip()
        if "BEGIN SOLUTION" in marker:
            inside = True
        elif "END SOLUTION" in marker:
            inside = False
        elif not inside:
            kept.append(line)
    return kept


def course_exercises(assignment: str, *, released: Path | None = None, solution: Path | None = None) -> tuple[Exercise, ...]:
    """The exercises of one assignment in notebook order, from its released notebook and its solution."""
    released = released or paths.notebooks_dir() / f"{assignment}.ipynb"
    solution = solution or paths.solutions_dir() / f"{assignment}.ipynb"
    if not released.is_file():
        raise CourseError(f"{released}: no released notebook for {assignment}; run `python -m autograder release`")
    cells = _cells(released)
    stubs = _solution_ids(cells)
    solved = _solution_ids(_cells(solution)) if solution.is_file() else {}
    return tuple(Exercise(assignment, gid, frozenset(line.strip() for line in
                                                     stub.split("\n") + _outside_solution(solved.get(gid, ""))))
                 for gid, stub in stubs.items())


def read_answers(submissions: Path, assignment: str, grade_ids: set[str], *,
                 students: tuple[str, ...] = ()) -> tuple[list[Answer], list[Unread]]:
    """Every answer of ``assignment`` in the class (only ``students`` when named), and what could not be read."""
    answers, unread = [], []
    for sub in discover(submissions, [assignment]):
        if sub.assignment_id != assignment or (students and sub.student_id not in students):
            continue
        if sub.path is None:
            fatal = [p.detail for p in sub.problems if p.fatal]
            unread.append(Unread(sub.student_id, assignment, fatal[0] if fatal else "no notebook"))
            continue
        try:
            data = json.loads(read_regular(sub.path).decode("utf-8-sig"))
            cells = [c for c in data["cells"] if isinstance(c, dict)]
        except (OSError, Refused, ValueError, KeyError, TypeError) as exc:
            why = "not valid JSON" if isinstance(exc, ValueError) else str(exc) or type(exc).__name__
            unread.append(Unread(sub.student_id, assignment, f"{sub.path.name}: {why}"))
            continue
        for gid, code in _solution_ids(cells).items():
            if gid in grade_ids:
                answers.append(Answer(sub.student_id, assignment, gid, code))
    return answers, unread
