"""Classes of submissions built from solutions/ and notebooks/, and the real commands that grade them.

Submissions are named for their expected outcome (``passes_all``, ``fails_encode``,
``blank``); problem cases for what is wrong with them (``invalid_json``, ``deleted_test``).
The class generator is benchmarks/grading.py's, so the benchmark and the tests grade the same kind
of class.
"""
from __future__ import annotations

import copy
import csv
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest

from autograder import paths
from benchmarks import grading as bench
from autograder.nbio import exercise_points, grade_id, is_solution_cell

A = "01_tokens_and_ids"
FULL = sum(exercise_points(nbformat.read(paths.solutions_dir() / f"{A}.ipynb", as_version=4)).values())




@dataclass
class Graded:
    """A finished ``grade`` run: its exit status, terminal output and the files in --out."""

    proc: subprocess.CompletedProcess
    out: Path

    def rows(self, name: str) -> list[dict]:
        with open(self.out / name, newline="", encoding="utf-8") as fh:
            return list(csv.DictReader(fh))

    def scores(self, student: str, assignment: str = A) -> dict[str, tuple[float, str]]:
        return {r["grade_id"]: (float(r["points"]), r["status"]) for r in self.rows("scores.csv")
                if r["student_id"] == student and r["assignment_id"] == assignment}

    def total(self, student: str, assignment: str = A) -> float:
        return next(float(r["score"]) for r in self.rows("grades.csv")
                    if r["student_id"] == student and r["assignment_id"] == assignment)

    def problems(self, student: str, assignment: str = A) -> list[tuple[str, str]]:
        return [(r["problem"], r["detail"]) for r in self.rows("problems.csv")
                if r["student_id"] == student and r["assignment_id"] == assignment]


def grade_command(submissions: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "autograder", "grade", str(submissions), *args]


def run_grade(submissions: Path, *args: str, out: Path | None = None, timeout: float = 900) -> Graded:
    out = out or submissions.parent / f"{submissions.name}-graded"
    proc = subprocess.run(grade_command(submissions, "--out", str(out), *args), capture_output=True, text=True,
                          timeout=timeout)
    return Graded(proc, out)


# --------------------------------------------------------------------------- notebooks

def right() -> nbformat.NotebookNode:
    return bench.right_notebook(A)


def blank() -> nbformat.NotebookNode:
    return bench.blank_notebook(A)


def with_solution(nb, exercise: str, source: str):
    nb = copy.deepcopy(nb)
    cell = next(c for c in nb.cells if is_solution_cell(c) and grade_id(c) == exercise)
    cell.source = source
    return nb


def cell_index(nb, gid: str) -> int:
    return next(i for i, c in enumerate(nb.cells) if grade_id(c) == gid)


def write(root: Path, student: str, nb, assignment: str = A, name: str | None = None) -> Path:
    return bench.write_submission(root, student, assignment, nb, name)


WRONG_ENCODE = "def encode(tokens, vocab, unk='<unk>'):\n    return [vocab.get(t, 0) + 1 for t in tokens]\n"
LOOPING_DECODE = "def decode(ids, vocab):\n    while True:\n        pass\n"


@pytest.fixture(scope="session")
def g():
    """These helpers, for the test modules (a conftest is not imported by name)."""
    return sys.modules[__name__]
