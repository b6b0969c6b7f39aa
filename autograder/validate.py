"""The student's self-check: run a notebook and say, per exercise, where it stands."""
from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from nbclient.exceptions import CellTimeoutError, DeadKernelError

from . import paths
from .engine.kernel_client import SlicedWaits
from .checks.core import Prediction
from .checks.questions import is_question
from .grade.submission import grade_one as submission
from .grade.submission import manual
from .grade.submission.discover import read_regular
from .grade.submission.repair import Local, local_cells
from .engine import Limits
from .grade.submission.results import Exercise, GradedTest, exercises as group
from .nbio import ANSI, NotebookError, exercise_of, grade_id, is_solution_cell, is_test_cell, nbgrader_meta, parse_notebook, read_notebook

# what a learner can act on; the rest shows in each test's message
SHOWN_PROBLEMS = ("tampered", "run", "file skipped", "link skipped", "cell type changed", "cell split", "missing cell")


def test(grade_id: str, points: float, status: str, message: str = "", prediction: Prediction | None = None
         ) -> GradedTest:
    """One visible test as the self-check saw it, worth ``points`` and earning them when it passed."""
    return GradedTest(grade_id=grade_id, points=points if status == "passed" else 0.0, max_points=points,
                      status=status, message=message, prediction=prediction)


def recorded(t: GradedTest, assignment: str) -> bool:
    """A prediction's passing test is "recorded", never "passed": its point is for the form, not for being right."""
    return t.status == "passed" and (t.prediction is not None or is_question(assignment, t.exercise))


def shown_status(ex: Exercise, assignment: str) -> str:
    """The exercise's status (the one rule), said "recorded" for a prediction that passed and "read by your
    instructor" for a written answer (a person scores it: it neither passed nor failed)."""
    if ex.status == "manual":
        return manual.READ
    return "recorded" if ex.passed and any(recorded(t, assignment) for t in ex.tests) else ex.status


OK = ("passed", "recorded", "not attempted", manual.READ)  # what leaves validate's exit status 0


def prediction_line(ex: Exercise) -> str:
    """Right or wrong, and why, for a recorded prediction the grader judged; "" otherwise."""
    p = ex.prediction
    if p is None:
        return ""
    return f"your prediction {p.answer}: " + ("right." if p.right else "wrong." + (f" {p.why}" if p.why else ""))


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


def run_notebook(path: Path, *, timeout: float = 120, local: Local | None = None) -> tuple[object, str | None]:
    """Execute a copy of the notebook in its folder (its cells as ``local`` puts them back, when given); the file
    itself is never written."""
    nb = read_notebook(path)
    if local is not None:
        nb.cells = local.cells
    # a cell that runs too long is interrupted and the notebook goes on, as grading does (a widget that waits
    # for a click, a forgotten loop): the tests after it still say where the learner stands
    client = SlicedWaits(nb, timeout=timeout, allow_errors=True, kernel_name="python3", interrupt_on_timeout=True,
                         resources={"metadata": {"path": str(path.resolve().parent)}})
    client.log.setLevel("CRITICAL")  # its "Timeout waiting for execute reply" is said below, in the learner's words
    try:
        # the kernel's own stderr (its "running over TCP without encryption" warning) is not the learner's
        # business: their cells' output reaches the notebook through the kernel's channels, not this stream
        client.execute(stderr=subprocess.DEVNULL)
    except CellTimeoutError as exc:  # nbclient stops the notebook at the first timeout
        return nb, f"a cell ran longer than {timeout:.0f} s and was stopped: {exc}".splitlines()[0]
    except DeadKernelError as exc:
        return nb, f"the kernel died: {exc}"
    stopped = [c for c in nb.cells if c.cell_type == "code" and (error_of(c) or ("",))[0] == "KeyboardInterrupt"]
    if stopped:
        start = next((l.strip() for l in stopped[0].source.splitlines() if l.strip()), "")
        return nb, (f"the cell starting {start[:40]!r} ran longer than {timeout:g} s and was interrupted; the "
                    "cells after it ran on, as when your work is graded")
    return nb, None


def in_notebook_order(nb, tests: list[GradedTest]) -> list[Exercise]:
    """The exercises with a visible test, in the order of their solution cells, then of their first tests."""
    answers = (c for c in nb.cells if is_solution_cell(c) or manual.is_manual_cell(c))  # a why under its bug hunt
    order = {grade_id(c): i for i, c in enumerate(answers)}
    found = group(tests)
    return sorted(found, key=lambda ex: order.get(ex.name, len(order)))


def stopped_cells(nb) -> list[str]:
    """What stopped in the notebook's own cells (the set-up, a demo, a solution cell), in order, before any
    test: one line each, the piece or error first. A test that fails after one of these may fail because of it."""
    found = []
    for cell in nb.cells:
        if cell.cell_type != "code" or is_test_cell(cell):
            continue
        err = error_of(cell)
        if err is None:
            continue
        name, value = err
        if name in ("NotImplementedError", "NotAttempted", "KeyboardInterrupt"):  # not written yet, or said as a problem
            continue
        first = (value.strip().splitlines() or [""])[0]
        if is_solution_cell(cell):
            where = f"your {grade_id(cell)} cell"
        elif "setup" in cell.metadata.get("tags", []):
            where = "the set-up cell"
        else:
            start = next((l.strip() for l in cell.source.splitlines() if l.strip() and not l.strip().startswith("#")), "")
            where = f"the cell starting {start[:40]!r}"
        # the message first: nbgrader's toolbar and a narrow terminal keep only the start of a line
        found.append(f"{first} (it stopped {where})" if name == "PieceNotReady" else f"{name}: {first} (it stopped {where})")
    return found


UNAVAILABLE = "CheckUnavailable"  # a check that compares with the reference solution, not installed in a students' image


def unavailable(nb) -> list[str]:
    """The visible test cells of the executed ``nb`` whose check could not run here (it needs the course's
    reference solution, which grading has): neither passed nor failed, counted as tests validate cannot run."""
    return [grade_id(c) for c in nb.cells if is_test_cell(c) and (error_of(c) or ("",))[0] == UNAVAILABLE]


def report(nb, nb_name: str = "") -> list[Exercise]:
    """Per exercise, its visible tests' outcomes in the executed notebook ``nb`` (named ``nb_name``, the assignment);
    a test whose check cannot run here (:func:`unavailable`) is left out."""
    tests: list[GradedTest] = []
    stubbed: set[str] = set()
    for cell in nb.cells:
        if manual.is_manual_cell(cell):  # a written answer: read by a person, never run here
            written = manual.written(cell.source, manual.TEXT_STUB)
            points = float(nbgrader_meta(cell).get("points", 0))
            tests.append(test(grade_id(cell), points, "manual" if written else "not attempted"))
        elif is_solution_cell(cell):
            if "raise NotImplementedError()" in cell.source:
                stubbed.add(grade_id(cell))
        elif is_test_cell(cell) and not is_hidden_only(cell):
            gid = grade_id(cell)
            name = exercise_of(gid)
            points = float(nbgrader_meta(cell).get("points", 0))
            err = error_of(cell)
            ran = cell.get("execution_count") is not None
            if err is not None and err[0] == UNAVAILABLE:
                continue
            if err is None and ran:
                tests.append(test(gid, points, "passed"))
            elif not ran:
                tests.append(test(gid, points, "error", "this cell did not run"))
            elif err[0] == "NotAttempted" or (name in stubbed and err[0] == "NotImplementedError"):
                tests.append(test(gid, points, "not attempted", err[1]))
            else:
                tests.append(test(gid, points, "failed", f"{err[0]}: {err[1]}" if err[0] not in ("CheckFailure",) else err[1]))
    return in_notebook_order(nb, tests)


NO_SOLUTION = "this copy of the course has no solution for it to grade against"  # a students' image: normal


class LocalOnly(Exception):
    """The grader's pipeline cannot check this notebook here; the message says why, for the student."""


def through_pipeline(path: Path, *, timeout: float = 120) -> tuple[float, list[Exercise], list[str]]:
    """What ``grade`` would see: :func:`~.grade.submission.grade_one.grade_one` on this notebook (sanitized against
    the source, run on the grading engine in evidence mode), its visible tests judged against the
    reference run. Raises :class:`LocalOnly` when that cannot be done here (no solutions/, an unknown
    notebook, the instructor's own reference, a machine where the engine or the reference fails): the
    caller runs the notebook locally instead."""
    assignment = path.stem
    source = submission.source_path(assignment)
    if assignment not in paths.assignments() or not source.exists():
        raise LocalOnly(NO_SOLUTION)
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
    written = {a.grade_id for a in submission.source_answers(reference.source_path, reference.source_hash)}
    stubbed = {grade_id(c) for c in nb.cells if is_solution_cell(c) and "raise NotImplementedError()" in c.source}
    seen = as_validated(result.scores, visible=visible, written=written, stubbed=stubbed)
    problems = [p.detail for p in result.problems if p.problem in SHOWN_PROBLEMS]
    hidden = sum(t.points for t in tests if t.grade_id not in visible)
    return hidden, in_notebook_order(nb, seen), problems


def as_validated(scores, *, visible: set[str], written: set[str] = frozenset(), stubbed: set[str] = frozenset()
                 ) -> list[GradedTest]:
    """The grader's scores of a notebook as validate shows them: its visible tests and its written answers.

    The grader's status decides, never the points: a visible test worth 0 points that passed (notebook 10's
    predictions: their point is in the hidden test) passed; a test changed in the notebook that earned its points
    when graded from the original counts as passed (its problem is said apart); a written answer keeps its status
    (``manual``: read by the instructor)."""
    seen: list[GradedTest] = []
    for s in scores:
        if s.grade_id in written:  # a written answer: a person reads it (or it is not written yet, or missing)
            seen.append(test(s.grade_id, s.max_points, s.status, s.message))
            continue
        if s.grade_id not in visible:
            continue
        if s.status == "passed" or (s.status == "tampered" and s.points > 0):
            status = "passed"
        elif exercise_of(s.grade_id) in stubbed or s.status == "not attempted":
            status = "not attempted"
        else:
            status = "failed"
        seen.append(test(s.grade_id, s.max_points, status, s.message, s.prediction))
    return seen


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
            # A students' image has no solutions: that is normal, and not the learner's business. Other reasons
            # (the sandbox failing where the course is installed) are said, after the plain first line.
            out(f"{path.name}: running your notebook to check it (hidden tests run when your work is graded)")
            if why.args and why.args[0] != NO_SOLUTION:
                out(f"  (checked in a local Jupyter kernel, not in the grader's sandbox: {why})")
        try:
            local = local_cells(read_notebook(path).cells)
        except NotebookError as exc:  # said as the command line says an error, and the other notebooks still run
            print(f"error: {exc}", file=sys.stderr)
            worst = 1
            continue
        for _, detail in local.notes:  # what grading will put back, said before the learner hands it in
            out(f"  note: {detail}")
        nb, problem = run_notebook(path, timeout=timeout, local=local)
        exercises = report(nb, path.stem)
        stopped = stopped_cells(nb)
        for line in stopped:  # the cause comes before the exercises it may have cost
            out(f"  first: {line}")
        hidden = sum(float(nbgrader_meta(c).get("points", 0)) for c in nb.cells if is_test_cell(c) and is_hidden_only(c))
        cannot = unavailable(nb)
        if cannot:
            out(f"  note: {', '.join(cannot)} compare{'s' * (len(cannot) == 1)} with the course's reference "
                f"solution, which is not installed here: grading runs {'them' if len(cannot) > 1 else 'it'}")
        worst = max(worst, _print_report(path, exercises, hidden, problem, start, out, local.cannot_run + cannot),
                    1 if stopped else 0)
    return worst


def _print_report(path: Path, exercises: list[Exercise], hidden: float, problem: str | None, start: float,
                  out, cannot_run: list[str] = ()) -> int:
    assignment = Path(path.name).stem
    earned = sum(t.points for e in exercises for t in e.tests if not t.manual)
    total = sum(t.max_points for e in exercises for t in e.tests if not t.manual)
    read = sum(t.max_points for e in exercises for t in e.tests if t.manual)
    out(f"{path.name}  ({time.perf_counter() - start:.1f} s)")
    waiting = []
    for ex in exercises:
        status = shown_status(ex, assignment)
        if status == "not attempted":  # not a failure: said once, in one line, below
            waiting.append(ex.name)
            continue
        pts = ex.points[1]
        out(f"  {status:<13} {ex.name}  [{pts:g} pt{'s' if pts != 1 else ''}]")
        if status == manual.READ:  # neither passed nor failed: a person gives its points after the due date
            out("      your written answer; your instructor reads it and gives its points")
            continue
        if status == "recorded" and prediction_line(ex):
            out(f"      {prediction_line(ex)}")
        for t in ex.tests:
            if t.status not in ("passed", "not attempted"):
                out(f"      {t.grade_id}: {t.message}")
    if waiting:
        out(f"  not attempted yet ({len(waiting)}): {', '.join(waiting)}")
    out(f"  visible checks: {earned:g} of {total:g} points"
        + (f"; hidden tests worth {hidden:g} more run when your work is graded" if hidden else "")
        + (f"; written answers worth {read:g} more are read by your instructor" if read else ""))
    if cannot_run:
        out(f"  cannot run here: {len(cannot_run)} visible test{'s' * (len(cannot_run) > 1)} ({', '.join(cannot_run)}), "
            f"said above; grading runs {'them' if len(cannot_run) > 1 else 'it'}")
    if problem:
        out(f"  problem: {problem}")
    failed = any(shown_status(ex, assignment) not in OK for ex in exercises)
    return 1 if problem or failed or not exercises else 0
