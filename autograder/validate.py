"""The student's self-check: run a notebook and say, per exercise, where it stands."""
from __future__ import annotations

import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from nbclient import NotebookClient
from nbclient.exceptions import CellTimeoutError, DeadKernelError

from . import paths
from .checks.core import Prediction
from .checks.questions import is_question
from .grade import submission
from .grade.discover import read_regular
from .grade.engine import Limits
from .grade.judge import exercise_status
from .nbio import ANSI, exercise_of, grade_id, is_solution_cell, is_test_cell, nbgrader_meta, parse_notebook, read_notebook

SHOWN_PROBLEMS = ("tampered", "run", "file skipped", "link skipped")  # what a learner can act on; the rest shows in
# each test's message


@dataclass
class TestResult:
    grade_id: str
    points: float
    status: str  # passed, recorded (a prediction of the right form), failed, not attempted, error
    message: str = ""
    prediction: Prediction | None = None  # a recorded prediction, right or wrong, when the grader could judge it


@dataclass
class ExerciseReport:
    name: str
    tests: list[TestResult] = field(default_factory=list)

    @property
    def status(self) -> str:
        # A prediction's test is "recorded", never "passed": its point is for the form, not for being right.
        status = exercise_status("passed" if t.status == "recorded" else t.status for t in self.tests)
        return "recorded" if status == "passed" and any(t.status == "recorded" for t in self.tests) else status

    def prediction_line(self) -> str:
        """Right or wrong, and why, for a recorded prediction the grader judged; "" otherwise."""
        p = next((t.prediction for t in self.tests if t.prediction), None)
        if p is None:
            return ""
        return f"your prediction {p.answer}: " + ("right." if p.right else "wrong." + (f" {p.why}" if p.why else ""))


def recorded(status: str, assignment: str, exercise: str) -> str:
    """A passing test of a prediction question is "recorded"; every other status stays as it is."""
    return "recorded" if status == "passed" and is_question(assignment, exercise) else status


def is_hidden_only(cell) -> bool:
    """A released hidden-test cell: its tests were removed, only comments are left."""
    return not has_code(cell.source)


def has_code(source: str) -> bool:
    return any(line.strip() and not line.strip().startswith("#") for line in source.splitlines())


def error_of(cell) -> tuple[str, str] | None:
    for out in cell.get("outputs", []):
        if out.get("output_type") == "error":
            return out.get("ename", ""), ANSI.sub("", out.get("evalue", ""))
    return None


def run_notebook(path: Path, *, timeout: float = 120) -> tuple[object, str | None]:
    """Execute a copy of the notebook in its folder; the file itself is never written."""
    nb = read_notebook(path)
    client = NotebookClient(nb, timeout=timeout, allow_errors=True, kernel_name="python3",
                            resources={"metadata": {"path": str(path.resolve().parent)}})
    try:
        # the kernel's own stderr (its "running over TCP without encryption" warning) is not the learner's
        # business: their cells' output reaches the notebook through the kernel's channels, not this stream
        client.execute(stderr=subprocess.DEVNULL)
    except CellTimeoutError as exc:  # nbclient stops the notebook at the first timeout
        return nb, f"a cell ran longer than {timeout:.0f} s and was stopped: {exc}".splitlines()[0]
    except DeadKernelError as exc:
        return nb, f"the kernel died: {exc}"
    return nb, None


def report(nb, nb_name: str = "") -> list[ExerciseReport]:
    """Per exercise, its visible tests' outcomes in the executed notebook ``nb`` (named ``nb_name``, the assignment)."""
    exercises: dict[str, ExerciseReport] = {}
    stubbed: set[str] = set()
    for cell in nb.cells:
        if is_solution_cell(cell):
            exercises.setdefault(grade_id(cell), ExerciseReport(grade_id(cell)))
            if "raise NotImplementedError()" in cell.source:
                stubbed.add(grade_id(cell))
        elif is_test_cell(cell) and not is_hidden_only(cell):
            gid = grade_id(cell)
            name = exercise_of(gid)
            ex = exercises.setdefault(name, ExerciseReport(name))
            points = float(nbgrader_meta(cell).get("points", 0))
            err = error_of(cell)
            ran = cell.get("execution_count") is not None
            if err is None and ran:
                ex.tests.append(TestResult(gid, points, recorded("passed", nb_name, name)))
            elif not ran:
                ex.tests.append(TestResult(gid, points, "error", "this cell did not run"))
            elif err[0] == "NotAttempted" or (name in stubbed and err[0] == "NotImplementedError"):
                ex.tests.append(TestResult(gid, points, "not attempted", err[1]))
            else:
                ex.tests.append(TestResult(gid, points, "failed", f"{err[0]}: {err[1]}" if err[0] not in ("CheckFailure",) else err[1]))
    return [e for e in exercises.values() if e.tests]


class LocalOnly(Exception):
    """The grader's pipeline cannot check this notebook here; the message says why, for the student."""


def through_pipeline(path: Path, *, timeout: float = 120) -> tuple[float, list[ExerciseReport], list[str]]:
    """What ``grade`` would see: :func:`~.grade.submission.grade_one` on this notebook (sanitized against
    the source, run on the grading engine in evidence mode), its visible tests judged against the
    reference run. Raises :class:`LocalOnly` when that cannot be done here (no solutions/, an unknown
    notebook, the instructor's own reference, a machine where the engine or the reference fails): the
    caller runs the notebook locally instead."""
    assignment = path.stem
    source = submission.source_path(assignment)
    if assignment not in paths.assignments() or not source.exists():
        raise LocalOnly("this copy of the course has no solution for it to grade against")
    if path.resolve() == source.resolve():
        raise LocalOnly("it is the reference solution itself")
    seed = 0  # the visible checks' own inputs, as the student sees them in the notebook
    try:
        nb = parse_notebook(read_regular(path).decode("utf-8"), path.name)
    except Exception as exc:  # noqa: BLE001 - the local run reports an unreadable notebook its own way
        raise LocalOnly(f"the notebook could not be read ({exc})") from exc
    limits = Limits(cell_timeout=timeout, draw_figures=False)  # Validate shows messages, never figures
    try:
        reference = submission.run_reference(assignment, seed=seed, limits=limits, engine="engine")
    except Exception as exc:  # noqa: BLE001 - said, then the local run still tells the student something
        raise LocalOnly(f"the grader's sandbox could not run the reference here ({exc}); "
                        "`python -m autograder doctor` says why") from exc
    result = submission.grade_one(path, assignment=assignment, seed=seed, reference=reference, limits=limits,
                                  engine="engine")
    not_run = [p.detail for p in result.problems if p.problem == "not run"]
    if not_run:
        raise LocalOnly(f"the grader's sandbox could not run it here ({not_run[0]})")
    _, tests = submission.source_tests(reference.source_path, reference.source_hash)
    visible = {t.grade_id for t in tests if has_code(t.released)}
    stubbed = {grade_id(c) for c in nb.cells if is_solution_cell(c) and "raise NotImplementedError()" in c.source}
    exercises: dict[str, ExerciseReport] = {}
    for c in nb.cells:
        if is_solution_cell(c):
            exercises.setdefault(grade_id(c), ExerciseReport(grade_id(c)))
    for s in result.scores:
        if s.grade_id not in visible:
            continue
        name = exercise_of(s.grade_id)
        if s.points > 0:
            status = "recorded" if s.prediction else recorded("passed", assignment, name)
        elif name in stubbed or s.status == "not attempted":
            status = "not attempted"
        else:
            status = "failed"
        exercises.setdefault(name, ExerciseReport(name)).tests.append(TestResult(s.grade_id, s.max_points, status,
                                                                                 s.message, s.prediction))
    problems = [p.detail for p in result.problems if p.problem in SHOWN_PROBLEMS]
    hidden = sum(t.points for t in tests if t.grade_id not in visible)
    return hidden, [e for e in exercises.values() if e.tests], problems


def validate(*, notebooks: list[Path], timeout: float = 120, out=print) -> int:
    """Print one line per exercise; return 0 when every check passed, 1 otherwise.

    Where the grader could run (this course's solutions/ and the grading engine are here), the
    notebook goes through the grader's own pipeline; otherwise it runs locally with nbclient."""
    worst = 0
    for path in notebooks:
        start = time.perf_counter()
        try:
            hidden, exercises, problems = through_pipeline(path, timeout=timeout)
            worst = max(worst, _print_report(path, exercises, hidden, "; ".join(problems) or None, start, out))
            continue
        except LocalOnly as why:
            out(f"{path.name}: checked in a local Jupyter kernel, not in the grader's sandbox: {why}")
        nb, problem = run_notebook(path, timeout=timeout)
        exercises = report(nb, path.stem)
        hidden = sum(float(nbgrader_meta(c).get("points", 0)) for c in nb.cells if is_test_cell(c) and is_hidden_only(c))
        worst = max(worst, _print_report(path, exercises, hidden, problem, start, out))
    return worst


def _print_report(path: Path, exercises: list[ExerciseReport], hidden: float, problem: str | None, start: float,
                  out) -> int:
    earned = sum(t.points for e in exercises for t in e.tests if t.status in ("passed", "recorded"))
    total = sum(t.points for e in exercises for t in e.tests)
    out(f"{path.name}  ({time.perf_counter() - start:.1f} s)")
    for ex in exercises:
        pts = sum(t.points for t in ex.tests)
        out(f"  {ex.status:<13} {ex.name}  [{pts:g} pt{'s' if pts != 1 else ''}]")
        if ex.status == "recorded" and ex.prediction_line():
            out(f"      {ex.prediction_line()}")
        for t in ex.tests:
            if t.status not in ("passed", "recorded", "not attempted"):
                out(f"      {t.grade_id}: {t.message}")
    out(f"  visible checks: {earned:g} of {total:g} points"
        + (f"; hidden tests worth {hidden:g} more run when your work is graded" if hidden else ""))
    if problem:
        out(f"  problem: {problem}")
    return 1 if problem or earned < total or not exercises else 0
