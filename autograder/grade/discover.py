"""Find the submissions of a class in nbgrader's layout and name what is wrong with the folder itself.

``SUBMISSIONS/<student_id>/<assignment_id>/<assignment_id>.ipynb``; the assignment ids are the
stems of ``solutions/*.ipynb``. A folder with a single, misnamed notebook is still graded.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

IGNORED = (".", "_")  # hidden folders and files (.ipynb_checkpoints, .DS_Store, __MACOSX)


@dataclass(frozen=True)
class Problem:
    student_id: str
    assignment_id: str
    problem: str  # short and fixed: "wrong file name", "missing notebook", "not valid JSON", "tampered", ...
    detail: str  # for a person: what exactly, and what was done about it
    fatal: bool = False  # the submission could not be graded at all


@dataclass
class Submission:
    student_id: str
    assignment_id: str
    path: Path | None  # the notebook to grade; None when there is none
    problems: list[Problem] = field(default_factory=list)

    @property
    def key(self) -> tuple[str, str]:
        return self.student_id, self.assignment_id


def _visible(path: Path) -> bool:
    return not path.name.startswith(IGNORED)


def discover(submissions: Path, assignments: list[str], *, exclude: Path | None = None) -> list[Submission]:
    """Every (student, assignment) folder under ``submissions``, sorted, with its notebook or its problem."""
    known = set(assignments)
    found: list[Submission] = []
    skip = exclude.resolve() if exclude is not None else None
    for student in sorted(p for p in submissions.iterdir() if p.is_dir() and _visible(p)):
        if skip is not None and student.resolve() == skip:
            continue
        for folder in sorted(p for p in student.iterdir() if p.is_dir() and _visible(p)):
            sub = Submission(student.name, folder.name, None)
            found.append(sub)
            if folder.name not in known:
                sub.problems.append(Problem(sub.student_id, sub.assignment_id, "unknown assignment",
                                            f"{folder.name!r} is not an assignment of this course "
                                            f"(expected one of: {', '.join(assignments)})", fatal=True))
                continue
            expected = folder / f"{folder.name}.ipynb"
            if expected.is_file():
                sub.path = expected
                continue
            notebooks = sorted(p for p in folder.iterdir() if p.suffix == ".ipynb" and p.is_file() and _visible(p))
            if len(notebooks) == 1:
                sub.path = notebooks[0]
                sub.problems.append(Problem(sub.student_id, sub.assignment_id, "wrong file name",
                                            f"graded {notebooks[0].name}, but it should be named {expected.name}"))
            elif notebooks:
                sub.problems.append(Problem(sub.student_id, sub.assignment_id, "missing notebook",
                                            f"no {expected.name}, and {len(notebooks)} other notebooks "
                                            f"({', '.join(p.name for p in notebooks)}): which one to grade is unclear",
                                            fatal=True))
            else:
                sub.problems.append(Problem(sub.student_id, sub.assignment_id, "missing notebook",
                                            f"the folder has no {expected.name}", fatal=True))
    return found
