"""Grade one notebook: sanitize -> execute -> judge, inputs in, a :class:`.SubmissionResult` out.

:func:`grade_one` is the one way to grade a notebook; class grading (:func:`grade_job`, on local
workers or Dask workers) and the student's ``validate`` both call it. Nothing here writes a
file: the caller decides what to keep.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import time
from functools import lru_cache
from pathlib import Path

import nbformat

from ... import bug_hunt, paths
from ...checks import core
from ...nbio import NotebookError, exercise_of, grade_id, is_solution_cell, is_test_cell, parse_notebook, read_notebook
from ...release import student_notebook
from . import judge, manual, running, sanitize, timelimits
from .autograded import autograded_notebook
from .discover import Refused, Submission, files_beside, read_regular
from ...engine import Limits, RunResult
from ...engine.measure import Lap, merge, thread_timer
from .running import DEFAULT_ENGINE, ENGINES
from .records import RESULT_VERSION, Job, NotebookFile, Reference
from .results import SubmissionResult

# --------------------------------------------------------------------------- what a grade depends on

def file_hash(*parts: bytes) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(hashlib.sha256(part).digest())
    return h.hexdigest()


def source_path(assignment: str) -> Path:
    return paths.solutions_dir() / f"{assignment}.ipynb"


def source_hash(assignment: str) -> str:
    """The solution notebook and the checks package: a change to either makes old grades stale. Every module
    of the package counts, not only ``nbNN.py``: a notebook's checks import others (questions, core, nb09, models)."""
    source = source_path(assignment).read_bytes()
    package = Path(core.__file__).parent
    checks = sorted(package.rglob("*.py"))  # subpackages too: the reference models (models/), nb10/'s modules
    return file_hash(source, *(p.relative_to(package).as_posix().encode() + p.read_bytes() for p in checks),
                     str(RESULT_VERSION).encode())


def submission_hash(sub: Submission) -> str:
    if sub.path is None:
        return file_hash(b"no notebook", *(f"{p.problem}:{p.detail}".encode() for p in sub.problems))
    try:
        return file_hash(sub.path.name.encode(), read_regular(sub.path))
    except OSError as exc:  # refused (a link swapped in since discovery) or gone: grading says why
        return file_hash(b"unreadable", str(exc).encode())


@lru_cache(maxsize=32)
def _solution_and_release(source: str, hash_: str = "") -> tuple[object, object]:
    """The solution notebook and its student version, read and released once per worker (keyed by the file's
    hash): a class's every submission needs both."""
    notebook = read_notebook(source)
    return notebook, student_notebook(notebook, Path(source).name)


@lru_cache(maxsize=32)
def source_tests(source: str, hash_: str = "") -> tuple[object, list[sanitize.SourceTest]]:
    """The solution notebook and its graded test cells (cached per worker, keyed by the file's hash)."""
    notebook, released = _solution_and_release(source, hash_)
    return notebook, sanitize.source_tests(notebook, released)


@lru_cache(maxsize=32)
def source_answers(source: str, hash_: str = "") -> list[manual.SourceAnswer]:
    """The solution notebook's manually graded answers (the bug hunts' written "why"), cached like its tests."""
    notebook, released = _solution_and_release(source, hash_)
    return manual.source_answers(notebook, released)


@lru_cache(maxsize=32)
def released_bug_hunts(source: str, hash_: str = "") -> dict[str, str]:
    """grade_id -> the code a bug hunt's cell is released with (cached per worker, keyed by the file's hash)."""
    notebook, released = _solution_and_release(source, hash_)
    hunts = {grade_id(c) for c in notebook.cells if is_solution_cell(c) and bug_hunt.is_bug_hunt(c.source)}
    return {grade_id(c): c.source.strip() for c in released.cells if is_solution_cell(c) and grade_id(c) in hunts}


def as_released_is_not_attempted(scores: list[judge.TestScore], nb, released: dict[str, str]) -> None:
    """A bug hunt handed in as released (its buggy code untouched) is "not attempted", as a stub is: its check
    still fails, with the symptom, but nothing of the learner's is wrong, and a notebook nobody has started
    stays one that says so once. Both earn nothing, as under stock nbgrader."""
    untouched = {grade_id(c) for c in nb.cells
                 if is_solution_cell(c) and released.get(grade_id(c)) == c.source.strip()}
    for s in scores:
        if s.status == "failed" and exercise_of(s.grade_id) in untouched:
            s.status = "not attempted"
            s.message = f"this bug hunt is as it was released: find the bug and fix it. {s.message}"


def prepare_worker() -> None:
    """Once per worker process (local or Dask): plots render without a display."""
    os.environ.setdefault("MPLBACKEND", "Agg")


# --------------------------------------------------------------------------- running

def execute(sources: list[str], *, assignment: str, seed: int, limits: Limits, engine: str = DEFAULT_ENGINE,
            files: dict[str, bytes] | None = None, hide: tuple[str, ...] = ()) -> tuple[RunResult, str]:
    """Run cells in evidence mode on the warm sandboxed engine, or on nbclient when asked for."""
    if engine not in ENGINES:
        raise ValueError(f"unknown engine {engine!r}; use one of {', '.join(ENGINES)}")
    return running.run_cells(sources, assignment=assignment, files=files, seed=seed, limits=limits, hide=hide,
                             engine=engine), "nbclient" if engine == "nbclient" else "engine"


def run_reference(assignment: str, *, seed: int, limits: Limits, engine: str = DEFAULT_ENGINE, hide: tuple[str, ...] = (),
                  source: str | None = None) -> Reference:
    """Run the solution notebook itself in evidence mode: the payloads every student is judged against.
    Raises when it cannot run (the machine or the course is broken, not anyone's work)."""
    where = source or str(source_path(assignment))
    costs: dict[str, float] = {}
    with thread_timer(costs, "reference"):
        notebook = read_notebook(where)
        plan = sanitize.reference_plan(notebook)
    run, _ = execute(plan.sources, assignment=assignment, seed=seed, limits=limits, engine=engine, hide=hide)
    with thread_timer(costs, "reference"):
        evidence = judge.reference_evidence(run, plan, seed=seed)
        hash_ = source_hash(assignment)
        seconds = timelimits.reference_seconds(notebook, [c.seconds for c in run.cells])
    return Reference(assignment=assignment, source_path=where, source_hash=hash_, evidence=evidence,
                     seconds=seconds, cpu=costs["reference"] + sum(run.costs.values()))


# --------------------------------------------------------------------------- grading

def grade_one(notebook: Path | NotebookFile, *, assignment: str, seed: int, reference: Reference,
              limits: Limits, engine: str = DEFAULT_ENGINE, hide: tuple[str, ...] = (),
              time_policy: timelimits.TimePolicy | None = None) -> SubmissionResult:
    """Grade one notebook against ``reference``: every test cell of the solution gets a score.

    ``notebook`` is a path (its folder's other files come along) or a :class:`.NotebookFile` that
    travelled. ``seed`` picks the hidden inputs; ``hide`` names folders the student's code must not
    see; ``time_policy`` scales each cell's limit from the reference's own seconds (None: every cell gets
    ``limits``' one). Problems the learner or instructor should read are in the result's ``problems``."""
    start, started_at = time.monotonic(), time.time()
    name = notebook.name
    result = SubmissionResult(assignment_id=assignment, notebook=name, source_hash=reference.source_hash, seed=seed)
    reading = Lap(result.costs, "read")  # until the cells run: reading the file, parsing it, planning the cells

    def finish(scores: list[judge.TestScore]) -> SubmissionResult:
        reading.stop()
        result.scores = scores
        result.seconds = round(time.monotonic() - start, 3)
        result.started_at, result.finished_at = round(started_at, 3), round(time.time(), 3)
        return result

    if _unscorable(reference, result):
        reading.stop()
        return result
    source, tests = source_tests(reference.source_path, reference.source_hash)

    def all_missing(why: str) -> list[judge.TestScore]:
        return _all_missing(reference, why)

    try:
        content = notebook.content if isinstance(notebook, NotebookFile) else read_regular(Path(notebook))
    except Refused as exc:
        result.add_problem("link skipped" if "link" in str(exc) else "unreadable notebook", str(exc), True)
        return finish(all_missing(f"the notebook could not be read: {exc}"))
    try:
        text = content.decode("utf-8")
        nb = parse_notebook(text, name)
    except UnicodeDecodeError:
        why = f"{name}: not a text file (a notebook is JSON in UTF-8)"
        result.add_problem("unreadable notebook", why, True)
        return finish(all_missing(f"the notebook could not be read: {why}"))
    except NotebookError as exc:
        kind = "not valid JSON" if "not valid JSON" in str(exc) else "unreadable notebook"
        result.add_problem(kind, str(exc), fatal=True)
        # each test says it too: the feedback page shows a test's message, and this one says what to do
        return finish(all_missing(f"the notebook could not be read: {exc}"))
    version = _nbformat_of(text)
    if version is not None and version < 4:
        result.add_problem("older nbformat", f"nbformat {version} notebook upgraded to nbformat 4 before grading")

    given = frozenset(c.source for c in source.cells  # the course's own cells, left out when nothing needs them
                      if c.cell_type == "code" and not is_solution_cell(c) and not is_test_cell(c))
    for kind, detail in manual.as_text(nb.cells):  # a written answer turned into code is read, never run
        result.add_problem(kind, detail)
    plan = sanitize.plan(nb, tests, given)
    for kind, detail in plan.notes:
        result.add_problem(kind, detail)
    if isinstance(notebook, NotebookFile):  # what was skipped is already among the job's problems
        files = notebook.files
    else:
        beside = files_beside(Path(notebook))
        files = beside.files
        for p in beside.skipped:
            result.add_problem(p.problem, p.detail)
    keys = timelimits.plan_keys(plan.items)
    if time_policy is not None and reference.seconds:
        limits = dataclasses.replace(limits, cell_timeouts=timelimits.cell_limits(
            keys, reference.seconds, time_policy, limits.first_timeout()))
    reading.stop()
    try:
        run, result.engine = execute(plan.sources, assignment=assignment, seed=seed, limits=limits, engine=engine,
                                     hide=hide, files=files)
    except Exception as exc:  # the engine itself failed; the class goes on
        result.add_problem("not run", f"the grader could not run this notebook ({type(exc).__name__}: {exc})", True)
        return finish(all_missing("the notebook could not be run"))
    merge(result.costs, run.costs)
    for cell in run.cells:  # a limit from the course's timings says so: the learner sees how far off they were
        if cell.status == "timeout" and cell.index in limits.cell_timeouts:
            cell.detail += f"; the course's own version of this cell takes {reference.seconds[keys[cell.index]]:.2g} s here"
    with thread_timer(result.costs, "judge"):
        result.isolation = run.isolation
        for text_ in run.problems:
            result.add_problem("run", text_)
        scores = judge.score(run, plan, tests, reference.evidence, seed=seed)
        as_released_is_not_attempted(scores, nb, released_bug_hunts(reference.source_path, reference.source_hash))
        judge.trace_causes(scores, {grade_id(c): c.source for c in nb.cells if is_solution_cell(c)})
        answers = source_answers(reference.source_path, reference.source_hash)
        written, result.answers = manual.score_answers(nb.cells, answers)  # read by a person, never run
        scores = manual.in_source_order(scores + written, source) if answers else scores
    with thread_timer(result.costs, "autograded"):
        solution_ids = {grade_id(c) for c in source.cells if is_solution_cell(c)}
        # for formgrader and generate_feedback: the class run writes it beside the saved result
        result.autograded = nbformat.writes(manual.with_mark_schemes(
            autograded_notebook(nb, plan, run, tests, scores, solution_ids), answers))
    unfinished = {exercise_of(s.grade_id) for s in scores if s.status not in ("passed", "not attempted")}
    result.code = {grade_id(c): c.source for c in nb.cells  # the learner's own code, for their feedback
                   if is_solution_cell(c) and grade_id(c) in unfinished}
    timed_out: dict[str, list] = {}  # one line per exercise, not per test: its tests time out together
    for s in scores:
        if s.status == "timeout":
            timed_out.setdefault(exercise_of(s.grade_id), []).append(s)
    for tests_ in timed_out.values():
        cells = ", ".join(s.grade_id for s in tests_)
        result.add_problem("timeout", f"test cell{'s' * (len(tests_) > 1)} {cells}: {tests_[0].message}")
    for cell in run.cells:  # contained, but said: a cell that killed its process, or a student cell that hung
        where = (f"test cell {plan.tests[cell.index]}" if cell.index in plan.tests else
                 f"the cell starting {(plan.sources[cell.index].strip().splitlines() or [''])[0][:60]!r}")
        if cell.status == "crashed" or (cell.status == "timeout" and cell.index not in plan.tests):
            result.add_problem(cell.status, f"{where}: {cell.detail}")
        elif "output cut" in cell.detail:
            result.add_problem("output cut", f"{where}: {cell.detail}")
        elif any(o.get("ename") == "MemoryError" for o in cell.outputs if isinstance(o, dict)):
            result.add_problem("out of memory", f"{where}: it ran out of memory (MemoryError) and was stopped")
    return finish(scores)


def _unscorable(reference: Reference, result: SubmissionResult) -> bool:
    """No solution to score against (an unknown assignment: no scores), or one that could not run
    (every test missing): said in ``result``; True when grading cannot go on."""
    if not Path(reference.source_path).exists():
        return True
    if reference.evidence is None:
        result.add_problem("reference failed", reference.problem, fatal=True)
        result.scores = _all_missing(reference, "the course's solution could not be run; ask your instructor")
        return True
    return False


def _all_missing(reference: Reference, why: str) -> list[judge.TestScore]:
    """Every test of the solution at zero, status missing, with the reason the learner reads."""
    source, tests = source_tests(reference.source_path, reference.source_hash)
    answers = source_answers(reference.source_path, reference.source_hash)
    graded = [(t.grade_id, t.points) for t in tests] + [(a.grade_id, a.points) for a in answers]
    return manual.in_source_order([judge.TestScore(gid, 0.0, points, "missing", why) for gid, points in graded], source)


def grade_job(job: Job) -> SubmissionResult:
    """Grade one submission of a class: :func:`grade_one` plus who it is and what discovery found."""
    start, started_at = time.monotonic(), time.time()
    result = SubmissionResult(student_id=job.student_id, assignment_id=job.assignment_id,
                              notebook=Path(job.path).name if job.path else None,
                              submission_hash=job.submission_hash, source_hash=job.reference.source_hash,
                              seed=job.seed, problems=list(job.problems))
    if _unscorable(job.reference, result):
        pass
    elif job.path is None or result.fatal:
        result.scores = _all_missing(job.reference, "no notebook could be graded")
    else:
        one = grade_one(job.notebook or Path(job.path), assignment=job.assignment_id, seed=job.seed,
                        reference=job.reference, limits=job.limits, engine=job.engine, hide=job.hide,
                        time_policy=job.time_policy)
        problems = result.problems + [dataclasses.replace(p, student_id=job.student_id) for p in one.problems]
        result = dataclasses.replace(one, student_id=job.student_id, submission_hash=job.submission_hash,
                                     problems=problems)
    result.seconds = round(time.monotonic() - start, 3)
    result.started_at, result.finished_at = round(started_at, 3), round(time.time(), 3)
    return result


def failed_result(job: Job, why: str) -> SubmissionResult:
    """The record of a submission whose grading itself failed (a worker died): reported, tried again next run."""
    result = SubmissionResult(student_id=job.student_id, assignment_id=job.assignment_id,
                              notebook=Path(job.path).name if job.path else None, submission_hash="",
                              source_hash=job.reference.source_hash, seed=job.seed, problems=list(job.problems))
    result.add_problem("grader error", f"grading this submission failed ({why})", fatal=True)
    return result


def _nbformat_of(text: str) -> int | None:
    try:
        value = json.loads(text).get("nbformat")
    except (ValueError, AttributeError):
        return None
    return value if isinstance(value, int) else None
