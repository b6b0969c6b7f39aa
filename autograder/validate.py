"""The student's self-check: run a notebook and say, per exercise, where it stands."""
from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from pathlib import Path

from nbclient import NotebookClient
from nbclient.exceptions import CellTimeoutError, DeadKernelError

from .nbio import exercise_of, grade_id, is_solution_cell, is_test_cell, nbgrader_meta, read_notebook

ANSI = re.compile(r"\x1b\[[0-9;]*m")


@dataclass
class TestResult:
    grade_id: str
    points: float
    status: str  # passed, failed, not attempted, error
    message: str = ""


@dataclass
class ExerciseReport:
    name: str
    tests: list[TestResult] = field(default_factory=list)

    @property
    def status(self) -> str:
        statuses = {t.status for t in self.tests}
        if statuses == {"passed"}:
            return "passed"
        if "not attempted" in statuses:
            return "not attempted"
        return "failed"


def is_hidden_only(cell) -> bool:
    """A released hidden-test cell: its tests were removed, only comments are left."""
    code = [line for line in cell.source.splitlines() if line.strip() and not line.strip().startswith("#")]
    return not code


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
        client.execute()
    except CellTimeoutError as exc:  # nbclient stops the notebook at the first timeout
        return nb, f"a cell ran longer than {timeout:.0f} s and was stopped: {exc}".splitlines()[0]
    except DeadKernelError as exc:
        return nb, f"the kernel died: {exc}"
    return nb, None


def report(nb) -> list[ExerciseReport]:
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
                ex.tests.append(TestResult(gid, points, "passed"))
            elif not ran:
                ex.tests.append(TestResult(gid, points, "error", "this cell did not run"))
            elif err[0] == "NotAttempted" or (name in stubbed and err[0] == "NotImplementedError"):
                ex.tests.append(TestResult(gid, points, "not attempted", err[1]))
            else:
                ex.tests.append(TestResult(gid, points, "failed", f"{err[0]}: {err[1]}" if err[0] not in ("CheckFailure",) else err[1]))
    return [e for e in exercises.values() if e.tests]


def validate(*, notebooks: list[Path], timeout: float = 120, out=print) -> int:
    """Print one line per exercise; return 0 when every check passed, 1 otherwise."""
    worst = 0
    for path in notebooks:
        start = time.perf_counter()
        nb, problem = run_notebook(path, timeout=timeout)
        exercises = report(nb)
        earned = sum(t.points for e in exercises for t in e.tests if t.status == "passed")
        total = sum(t.points for e in exercises for t in e.tests)
        out(f"{path.name}  ({time.perf_counter() - start:.1f} s)")
        for ex in exercises:
            pts = sum(t.points for t in ex.tests)
            out(f"  {ex.status:<13} {ex.name}  [{pts:g} pt{'s' if pts != 1 else ''}]")
            for t in ex.tests:
                if t.status not in ("passed", "not attempted"):
                    out(f"      {t.grade_id}: {t.message}")
        hidden = sum(float(nbgrader_meta(c).get("points", 0)) for c in nb.cells if is_test_cell(c) and is_hidden_only(c))
        out(f"  visible checks: {earned:g} of {total:g} points"
            + (f"; hidden tests worth {hidden:g} more run when your work is graded" if hidden else ""))
        if problem:
            out(f"  problem: {problem}")
        if problem or earned < total or not exercises:
            worst = 1
    return worst
