"""Grade one generated class twice, with stock ``nbgrader autograde`` and with ``python -m autograder grade``.

The class: for each notebook with a solution and a released student version, some students
hand in the right answers (the student notebook with the solutions filled in), some a partly
wrong one (one exercise replaced by a known mistake from ``tests/checks/test_nbNN.py``) and
some the blank notebook. Every per-cell score must be equal; the script prints both wall times
and the throughput ratio, and exits 1 when a score differs.

    python benchmarks/grading.py [--students 3] [--assignments 01_tokens_and_ids ...] [--keep DIR]

nbgrader needs the virtualenv's ``bin`` on ``PATH`` (it calls ``alembic``).
"""
from __future__ import annotations

import argparse
import copy
import csv
import importlib
import os
import random
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import nbformat

from autograder import paths
from autograder.nbio import grade_id, is_solution_cell, read_notebook

KINDS = ("right", "wrong", "blank")


# --------------------------------------------------------------------------- the class

def gradable_assignments() -> list[str]:
    """Assignments with both a reference solution and a released student notebook."""
    return [a for a in paths.assignments() if (paths.notebooks_dir() / f"{a}.ipynb").exists()]


def _solutions(assignment: str) -> dict[str, str]:
    nb = read_notebook(paths.solutions_dir() / f"{assignment}.ipynb")
    return {grade_id(c): c.source for c in nb.cells if is_solution_cell(c)}


def blank_notebook(assignment: str) -> nbformat.NotebookNode:
    return read_notebook(paths.notebooks_dir() / f"{assignment}.ipynb")


def right_notebook(assignment: str) -> nbformat.NotebookNode:
    """The released notebook with every exercise answered by the reference solution's code."""
    nb = blank_notebook(assignment)
    solutions = _solutions(assignment)
    for cell in nb.cells:
        if is_solution_cell(cell) and grade_id(cell) in solutions:
            cell.source = solutions[grade_id(cell)]
    return nb


def mistake_for(assignment: str, index: int = 0) -> tuple[str, str]:
    """(exercise, source) of a known-wrong implementation, from the notebook's checks tests."""
    root = str(paths.root())
    if root not in sys.path:  # tests/ is a package of the repository, not of the installed autograder
        sys.path.insert(0, root)
    try:
        mistakes = importlib.import_module(f"tests.checks.test_nb{assignment[:2]}").MISTAKES
    except (ImportError, AttributeError):
        mistakes = []
    if mistakes:
        m = mistakes[index % len(mistakes)]
        return m.exercise, textwrap.dedent(m.source).strip() + "\n"
    exercise = next(iter(_solutions(assignment)))
    return exercise, f"def {exercise}(*args, **kwargs):\n    return None\n"


def wrong_notebook(assignment: str, index: int = 0) -> nbformat.NotebookNode:
    """Right everywhere except one exercise, which holds a realistic mistake."""
    nb = right_notebook(assignment)
    exercise, source = mistake_for(assignment, index)
    for cell in nb.cells:
        if is_solution_cell(cell) and grade_id(cell) == exercise:
            cell.source = source
    return nb


def make_class(root: Path, *, assignments: list[str], students: int = 1) -> dict[tuple[str, str], str]:
    """Write ``root/<student>/<assignment>/<assignment>.ipynb``; returns (student, assignment) -> kind."""
    kinds = {}
    for kind in KINDS:
        for i in range(students):
            student = f"{kind}{i:03d}"
            for a in assignments:
                nb = {"right": lambda: right_notebook(a), "blank": lambda: blank_notebook(a),
                      "wrong": lambda: wrong_notebook(a, i)}[kind]()
                write_submission(root, student, a, nb)
                kinds[student, a] = kind
    return kinds


def write_submission(root: Path, student: str, assignment: str, nb, name: str | None = None) -> Path:
    path = root / student / assignment / (name or f"{assignment}.ipynb")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(nbformat.writes(nb) if not isinstance(nb, str) else nb, encoding="utf-8")
    return path


# --------------------------------------------------------------------------- stock nbgrader

def _env() -> dict[str, str]:
    venv_bin = str(Path(sys.executable).parent)
    return {**os.environ, "PATH": venv_bin + os.pathsep + os.environ.get("PATH", "")}


def stock_course(course: Path, *, assignments: list[str], submissions: Path, timeout: float = 60) -> None:
    """An nbgrader course folder: source/ from solutions/, generate_assignment, submitted/ from ``submissions``."""
    course.mkdir(parents=True, exist_ok=True)
    (course / "nbgrader_config.py").write_text(
        "c = get_config()\n"
        f"c.CourseDirectory.root = {str(course)!r}\n"
        f"c.ExecutePreprocessor.timeout = {int(timeout)}\n")
    for a in assignments:
        target = course / "source" / a / f"{a}.ipynb"
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(paths.solutions_dir() / f"{a}.ipynb", target)
        subprocess.run([sys.executable, "-m", "nbgrader", "generate_assignment", a, "--force"], cwd=course,
                       env=_env(), check=True, capture_output=True)
    shutil.copytree(submissions, course / "submitted", dirs_exist_ok=True)


def stock_autograde(course: Path, *, assignments: list[str], seed: int = 0) -> None:
    """``nbgrader autograde`` each assignment; hidden inputs follow ``seed``, as ours follow ``grade --seed``."""
    env = {**_env(), "AUTOGRADER_SEED": str(seed)}
    for a in assignments:
        subprocess.run([sys.executable, "-m", "nbgrader", "autograde", a, "--force"], cwd=course, env=env,
                       check=True, capture_output=True)


def stock_scores(course: Path) -> dict[tuple[str, str, str], float]:
    """(student, assignment, grade_id) -> auto_score, from the course's gradebook."""
    from nbgrader.api import Gradebook

    scores = {}
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", "") as gb:
        for assignment in gb.assignments:
            for sub in assignment.submissions:
                for nb in sub.notebooks:
                    for grade in nb.grades:
                        scores[sub.student.id, assignment.name, grade.name] = grade.auto_score
    return scores


def our_scores(out: Path) -> dict[tuple[str, str, str], float]:
    with open(out / "scores.csv", newline="") as fh:
        return {(r["student_id"], r["assignment_id"], r["grade_id"]): float(r["points"]) for r in csv.DictReader(fh)}


# --------------------------------------------------------------------------- main

def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=3, help="students per kind (right, wrong, blank)")
    parser.add_argument("--assignments", nargs="*", help="default: every notebook with a solution and a release")
    parser.add_argument("--jobs", type=int, default=None)
    parser.add_argument("--engine", default="auto")
    parser.add_argument("--keep", type=Path, help="work in this folder and keep it")
    parser.add_argument("--seed", type=int, help="the run seed (default: a random one); give the same seed to "
                                                 "compare two versions of the grader on the same hidden inputs")
    args = parser.parse_args(argv)
    assignments = args.assignments or gradable_assignments()
    work = args.keep or Path(tempfile.mkdtemp(prefix="grading-bench-"))
    try:
        submissions = work / "submitted"
        kinds = make_class(submissions, assignments=assignments, students=args.students)
        n = len(kinds)
        print(f"class: {n} submissions ({args.students} right, wrong and blank students x {len(assignments)} "
              f"notebooks: {', '.join(assignments)})", flush=True)

        course = work / "course"
        stock_course(course, assignments=assignments, submissions=submissions)
        # The same hidden inputs for both: a wrong answer at the edge of a tolerance must meet the same cases.
        seed = args.seed if args.seed is not None else random.randrange(1, 2**31)
        print(f"seed: {seed}", flush=True)
        t0 = time.perf_counter()
        stock_autograde(course, assignments=assignments, seed=seed)
        stock_seconds = time.perf_counter() - t0
        print(f"stock nbgrader autograde: {stock_seconds:.1f} s ({n / stock_seconds:.2f} submissions/s)", flush=True)

        out = work / "graded"
        cmd = [sys.executable, "-m", "autograder", "grade", str(submissions), "--out", str(out), "--force",
               "--seed", str(seed), "--engine", args.engine] + (["--jobs", str(args.jobs)] if args.jobs else [])
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, env=_env(), capture_output=True, text=True)
        ours_seconds = time.perf_counter() - t0
        print(proc.stdout.strip())
        if proc.returncode not in (0,):
            print(proc.stderr[-2000:], file=sys.stderr)
            print(f"autograder grade exited {proc.returncode}", file=sys.stderr)
            return 1
        print(f"python -m autograder grade: {ours_seconds:.1f} s ({n / ours_seconds:.2f} submissions/s)")

        stock, ours = stock_scores(course), our_scores(out)
        diffs = [(k, stock.get(k), ours.get(k)) for k in sorted(set(stock) | set(ours)) if stock.get(k) != ours.get(k)]
        for k, s, o in diffs[:20]:
            print(f"  DIFFERENT {k}: stock {s}, ours {o}  ({kinds.get(k[:2])})")
        print(f"per-cell scores compared: {len(stock)}; equal: {len(stock) - len(diffs)}; different: {len(diffs)}")
        print(f"throughput ratio (stock time / our time): {stock_seconds / ours_seconds:.2f}x "
              f"on {os.cpu_count()} cores")
        return 1 if diffs or not stock else 0
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
