"""Grade a class: discover -> sanitize -> execute -> judge -> record, one submission per worker.

:func:`grade_submission` grades one submission (inputs in, a result record out, nothing
written). :func:`grade_class` runs many of them on ``jobs`` worker processes and streams each
result to the main process, the only writer: it saves the result atomically at once (so an
interrupted run keeps what it finished), updates the gradebook, and at the end rebuilds the CSVs
and the feedback from every saved result.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import random
import sys
import time
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TextIO

from .. import paths
from ..checks import core
import nbformat

from ..nbio import NotebookError, exercise_of, grade_id, is_solution_cell, parse_notebook, read_notebook, write_atomic, write_atomic_bytes
from ..release import student_notebook
from . import engine as engine_module
from . import fallback, judge, report, sanitize
from .autograded import autograded_notebook
from .course import Course, find_course, read_timestamp
from .config import GradeConfig
from .discover import Problem, Submission, discover
from .engine import Limits, RunResult

RESULT_VERSION = 1  # bump when a change to grading makes saved results stale
MAX_FILES_BYTES = 20 * 2**20  # other files of a submission folder handed to the run, in total


class UsageError(ValueError):
    """Bad arguments or a missing SUBMISSIONS folder: a one-line message, exit status 2."""


class ReferenceFailed(RuntimeError):
    """A solution could not be run as a reference here: the run stops before anyone is graded (exit 2)."""

    def __init__(self, assignment: str, message: str):
        super().__init__(message)
        self.assignment = assignment


# --------------------------------------------------------------------------- one submission

@dataclass(frozen=True)
class Job:
    student_id: str
    assignment_id: str
    path: str | None
    problems: tuple[Problem, ...]
    source_path: str
    source_hash: str
    submission_hash: str
    seed: int
    timeout: float
    engine: str
    hide: tuple[str, ...]  # folders the student's code must not see: the submissions, the output
    reference: dict | None  # grade_id -> payloads; None when the reference could not be run
    reference_problem: str = ""
    notebook: bytes | None = None  # the notebook's bytes when the job travels (--cluster); else read from path
    files: dict[str, bytes] | None = None  # the folder's other files when the job travels; else read beside path


def file_hash(*parts: bytes) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(hashlib.sha256(part).digest())
    return h.hexdigest()


def source_hash(assignment: str) -> str:
    """The solution notebook and its checks module: a change to either makes old grades stale."""
    source = (paths.solutions_dir() / f"{assignment}.ipynb").read_bytes()
    checks = Path(core.__file__).with_name(f"nb{assignment[:2]}.py")
    return file_hash(source, checks.read_bytes() if checks.exists() else b"",
                     Path(core.__file__).read_bytes(), str(RESULT_VERSION).encode())


def submission_hash(sub: Submission) -> str:
    if sub.path is None:
        return file_hash(b"no notebook", *(f"{p.problem}:{p.detail}".encode() for p in sub.problems))
    return file_hash(sub.path.name.encode(), sub.path.read_bytes())


def engine_available() -> bool:
    """Whether the warm sandboxed engine is built (its run_cells raised NotImplementedError before)."""
    return hasattr(engine_module, "default_pool")


def execute(sources: list[str], *, assignment: str, seed: int, timeout: float, engine: str,
            files: dict[str, bytes] | None = None, hide: tuple[str, ...] = ()) -> tuple[RunResult, str]:
    """Run cells on the warm engine, or on nbclient while the engine is not available."""
    env = {core.SEED_ENV: str(seed), core.MODE_ENV: "evidence", "NBGRADER_EXECUTION": "autograde"}
    limits = Limits(cell_timeout=timeout)
    if engine in ("auto", "engine") and (engine == "engine" or engine_available()):
        try:
            return engine_module.run_cells(sources, assignment=assignment, files=files, env=env,
                                           limits=limits, hide=hide), "engine"
        except NotImplementedError:
            if engine == "engine":
                raise
    return fallback.run_cells(sources, assignment=assignment, files=files, env=env, limits=limits), "nbclient"


@lru_cache(maxsize=32)
def _source_tests(source_path: str, source_hash: str = "") -> tuple[object, list[sanitize.SourceTest]]:
    """The source's graded test cells (cached per worker, keyed by the file's hash)."""
    source = read_notebook(source_path)
    released = student_notebook(source, Path(source_path).name)
    return source, sanitize.source_tests(source, released)


def _files_beside(notebook: Path) -> dict[str, bytes]:
    """The submission folder's other files (data the student saved), never other notebooks."""
    files, total = {}, 0
    for p in sorted(notebook.parent.rglob("*")):
        rel = p.relative_to(notebook.parent)
        if not p.is_file() or p.suffix == ".ipynb" or any(part.startswith(".") for part in rel.parts):
            continue
        total += p.stat().st_size
        if total > MAX_FILES_BYTES:
            break
        files[str(rel)] = p.read_bytes()
    return files


def grade_submission(job: Job) -> dict:
    """Grade one submission; returns its result record (see :func:`report.read_results`)."""
    start, started_at = time.monotonic(), time.time()
    problems = list(job.problems)
    record = {"version": RESULT_VERSION, "student_id": job.student_id, "assignment_id": job.assignment_id,
              "notebook": Path(job.path).name if job.path else None, "submission_hash": job.submission_hash,
              "source_hash": job.source_hash, "seed": job.seed, "engine": "", "isolation": "", "scores": []}

    def finish(scores: list[judge.TestScore]) -> dict:
        record["scores"] = [s.to_json() for s in scores]
        record["problems"] = [dataclasses.asdict(p) for p in problems]
        record["seconds"] = round(time.monotonic() - start, 3)
        record["started_at"], record["finished_at"] = round(started_at, 3), round(time.time(), 3)
        return record

    def problem(kind: str, detail: str, fatal: bool = False) -> None:
        problems.append(Problem(job.student_id, job.assignment_id, kind, detail, fatal))

    if not Path(job.source_path).exists():  # an unknown assignment: nothing to score against
        return finish([])
    source, tests = _source_tests(job.source_path, job.source_hash)

    def all_missing(why: str) -> list[judge.TestScore]:
        return [judge.TestScore(t.grade_id, 0.0, t.points, "missing", why) for t in tests]

    if job.reference is None:
        problem("reference failed", job.reference_problem, fatal=True)
        return finish(all_missing("the course's solution could not be run; ask your instructor"))
    if job.path is None or any(p.fatal for p in problems):
        return finish(all_missing("no notebook could be graded"))
    try:
        text = (job.notebook if job.notebook is not None else Path(job.path).read_bytes()).decode("utf-8")
        nb = parse_notebook(text, Path(job.path).name)
    except UnicodeDecodeError:
        problem("unreadable notebook", f"{Path(job.path).name}: not a text file (a notebook is JSON in UTF-8)", True)
        return finish(all_missing("the notebook could not be read"))
    except NotebookError as exc:
        kind = "not valid JSON" if "not valid JSON" in str(exc) else "unreadable notebook"
        problem(kind, str(exc), fatal=True)
        return finish(all_missing("the notebook could not be read"))
    version = _nbformat_of(text)
    if version is not None and version < 4:
        problem("older nbformat", f"nbformat {version} notebook upgraded to nbformat 4 before grading")

    plan = sanitize.plan(nb, tests)
    for kind, detail in plan.notes:
        problem(kind, detail)
    try:
        run, record["engine"] = execute(plan.sources, assignment=job.assignment_id, seed=job.seed,
                                        timeout=job.timeout, engine=job.engine, hide=job.hide,
                                        files=job.files if job.files is not None else _files_beside(Path(job.path)))
    except Exception as exc:  # the engine itself failed; the class goes on
        problem("not run", f"the grader could not run this notebook ({type(exc).__name__}: {exc})", fatal=True)
        return finish(all_missing("the notebook could not be run"))
    record["isolation"] = run.isolation
    for text_ in run.problems:
        problem("run", text_)
    scores = judge.score(run, plan, tests, job.reference, seed=job.seed)
    solution_ids = {grade_id(c) for c in source.cells if is_solution_cell(c)}
    # for formgrader and generate_feedback; the main process writes it and keeps it out of the saved record
    record["_autograded"] = nbformat.writes(autograded_notebook(nb, plan, run, tests, scores, solution_ids))
    unfinished = {exercise_of(s.grade_id) for s in scores if s.status not in ("passed", "not attempted")}
    record["code"] = {grade_id(c): c.source for c in nb.cells  # the learner's own code, for their feedback
                      if is_solution_cell(c) and grade_id(c) in unfinished}
    for s in scores:
        if s.status == "timeout":
            problem("timeout", f"test cell {s.grade_id}: {s.message}")
    for cell in run.cells:  # contained, but said: a cell that killed its process, or a student cell that hung
        where = (f"test cell {plan.tests[cell.index]}" if cell.index in plan.tests else
                 f"the cell starting {(plan.sources[cell.index].strip().splitlines() or [''])[0][:60]!r}")
        if cell.status == "crashed" or (cell.status == "timeout" and cell.index not in plan.tests):
            problem(cell.status, f"{where}: {cell.detail}")
        elif "output cut" in cell.detail:
            problem("output cut", f"{where}: {cell.detail}")
        elif any(o.get("ename") == "MemoryError" for o in cell.outputs if isinstance(o, dict)):
            problem("out of memory", f"{where}: it ran out of memory (MemoryError) and was stopped")
    return finish(scores)


def _nbformat_of(text: str) -> int | None:
    try:
        value = json.loads(text).get("nbformat")
    except (ValueError, AttributeError):
        return None
    return value if isinstance(value, int) else None


def run_reference(assignment: str, source_path: str, seed: int, timeout: float, engine: str,
                  hide: tuple[str, ...] = ()) -> dict:
    """Run the solution notebook itself in evidence mode: the payloads every student is judged against."""
    source = read_notebook(source_path)
    plan = sanitize.reference_plan(source)
    run, used = execute(plan.sources, assignment=assignment, seed=seed, timeout=timeout, engine=engine, hide=hide)
    return {"evidence": judge.reference_evidence(run, plan, seed=seed), "isolation": run.isolation, "engine": used}


def _executor(cfg: GradeConfig, seed: int):
    """Threads over the warm engine (its children do the work, and it keeps one warm parent per
    concurrent run); processes over nbclient, whose kernels are driven by one event loop each."""
    _init_worker(seed)  # judging also happens in this process when threads are used
    if cfg.cluster:
        from .cluster import ClusterExecutor

        return ClusterExecutor(cfg.cluster)
    if cfg.engine != "nbclient" and engine_available():
        return ThreadPoolExecutor(max_workers=cfg.jobs)
    return ProcessPoolExecutor(max_workers=cfg.jobs, initializer=_init_worker, initargs=(seed,))


def _init_worker(seed: int) -> None:
    os.environ.setdefault("MPLBACKEND", "Agg")


# --------------------------------------------------------------------------- the class

@dataclass
class ClassResult:
    exit_code: int
    graded: int = 0  # submissions graded this run
    reused: int = 0  # submissions whose saved result was still current
    failed: int = 0  # submissions that could not be graded (in problems.csv)
    out: Path | None = None
    results: list[dict] = field(default_factory=list)
    summary: str = ""


def _seed(out: Path, wanted: int | None) -> int:
    """The run seed: given, or saved in --out by an earlier run, or drawn now and saved."""
    saved = out / "run.json"
    if wanted is None and saved.exists():
        try:
            return int(json.loads(saved.read_text())["seed"])
        except (ValueError, KeyError, TypeError):
            pass
    seed = wanted if wanted is not None else random.SystemRandom().randrange(1, 2**31)
    write_atomic(saved, json.dumps({"seed": seed}, indent=1) + "\n")
    return seed


def _reference_cached(out: Path, assignment: str, shash: str, seed: int) -> Path:
    return out / "reference" / f"{assignment}-{shash[:16]}-{seed}.json"


def grade_class(*, submissions: Path, out: Path | None = None, jobs: int | None = None, timeout: float = 60.0,
                db_url: str | None = None, force: bool = False, engine: str = "auto", seed: int | None = None,
                course_id: str | None = None, progress: bool = True, stream: TextIO | None = None,
                cluster: str | None = None, students: tuple[str, ...] = (),
                assignments: tuple[str, ...] = ()) -> ClassResult:
    """Grade every submission under ``submissions`` (or those of ``students`` / ``assignments`` only; the
    CSVs keep everyone graded before); see docs/grading.md for what lands in ``out``.

    When ``submissions`` is an nbgrader course's ``submitted/`` folder, the course's gradebook, course id,
    ``autograded/`` folder and late-submission plugin are used (see :mod:`.course`)."""
    course = find_course(Path(submissions)) if Path(submissions).is_dir() else None
    if course is not None:
        db_url = db_url or course.db_url
        course_id = course.course_id if course_id is None else course_id
    cfg = GradeConfig(Path(submissions), out, jobs, timeout, db_url, force, engine, seed, course_id or "",
                      progress, cluster)
    stream = stream or sys.stderr
    started = time.monotonic()
    if not cfg.submissions.is_dir():
        raise UsageError(f"{cfg.submissions}: {'not a folder' if cfg.submissions.exists() else 'no such folder'}")
    if cfg.jobs < 1 or cfg.timeout <= 0:
        raise UsageError("--jobs must be at least 1 and --timeout positive")
    if cfg.engine not in ("auto", "engine", "nbclient"):
        raise UsageError(f"unknown engine {cfg.engine!r}; use auto, engine or nbclient")
    known = paths.assignments()
    if not known:
        raise UsageError(f"no solutions/*.ipynb under {paths.root()}: nothing to grade against")
    cfg.out.mkdir(parents=True, exist_ok=True)
    run_seed = _seed(cfg.out, cfg.seed)
    unknown = [a for a in assignments if a not in known]
    if unknown:
        raise UsageError(f"--assignment {unknown[0]!r} is not an assignment of this course; known: {', '.join(known)}")
    found = [s for s in discover(cfg.submissions, known, exclude=cfg.out)
             if (not students or s.student_id in students) and (not assignments or s.assignment_id in assignments)]
    if (students or assignments) and not found:
        raise UsageError(f"no submission of {', '.join(students) or 'any student'} for "
                         f"{', '.join(assignments) or 'any assignment'} under {cfg.submissions}")
    hashes = {a: source_hash(a) for a in {s.assignment_id for s in found} if a in known}

    todo: list[tuple[Submission, str]] = []
    reused: list[dict] = []
    previous: dict[tuple[str, str], str] = {}  # the hash a saved result was graded from
    submitted_at = {s.key: _submitted_at(cfg.submissions, s) for s in found}
    for sub in found:
        shash = submission_hash(sub)
        saved = report.load_result(cfg.out, sub.student_id, sub.assignment_id)
        if saved is not None and saved.get("submission_hash"):
            previous[sub.key] = saved["submission_hash"]
        current = (saved is not None and saved.get("submission_hash") == shash and saved.get("seed") == run_seed
                   and saved.get("source_hash") == hashes.get(sub.assignment_id, "")
                   and saved.get("version") == RESULT_VERSION)
        if current and not cfg.force:
            if saved.get("submitted_at", "") != submitted_at[sub.key]:  # resubmitted the same notebook
                saved["submitted_at"] = submitted_at[sub.key]
                report.save_result(cfg.out, saved)
            reused.append(saved)
        else:
            todo.append((sub, shash))

    progress_line = report.Progress(stream, enabled=cfg.progress)
    run = _Run(cfg, course, previous, submitted_at)
    try:
        graded, recorded = _run_jobs(run, todo, reused, hashes, run_seed, progress_line)
    except ReferenceFailed as failure:
        from .doctor import explain_reference_failure

        return ClassResult(2, out=cfg.out, summary=explain_reference_failure(failure.assignment, str(failure)))
    finally:
        progress_line.close()

    results = report.read_results(cfg.out)  # everyone graded into --out, not only this run's subset
    report.write_outputs(cfg.out, results, recorded)
    if course is not None:
        course_feedback(course, cfg.out, results)
    failed = sum(1 for r in results if any(p.get("fatal") for p in r.get("problems", [])))
    fresh = [r for r in results if r.get("isolation")]
    isolation = sorted({r["isolation"] for r in fresh})
    if isolation:  # what this run's student code could and could not reach, for the record
        write_atomic(cfg.out / "run.json", json.dumps({
            "seed": run_seed, "isolation": isolation,
            "not_isolated": sorted({g for i in isolation for g in engine_module.not_isolated(i)})}, indent=1) + "\n")
    summary = report.summary(results, graded=graded, reused=len(reused), failed=failed,
                             seconds=time.monotonic() - started, out=cfg.out,
                             isolation=sorted({r["isolation"] for r in fresh}), jobs=cfg.jobs)
    return ClassResult(1 if failed else 0, graded, len(reused), failed, cfg.out, results, summary)


def _beside(folder: Path) -> list[Path]:
    """The plain files of a submission folder other than notebooks (top level only, up to 20 MiB each)."""
    if not folder.is_dir():
        return []
    return [p for p in sorted(folder.iterdir()) if p.is_file() and not p.is_symlink() and p.suffix != ".ipynb"
            and p.stat().st_size <= MAX_FILES_BYTES]


def course_feedback(course: Course, out: Path, results: list[dict]) -> None:
    """Each learner's page, also in the course's ``feedback/<student>/<assignment>/``, beside the files
    ``nbgrader release_feedback`` reads (timestamp.txt, submission_secret.txt), so it can hand them out."""
    for r in results:
        s, a = r["student_id"], r["assignment_id"]
        page, graded = out / "feedback" / s / f"{a}.html", course.autograded / s / a
        if not (page.is_file() and graded.is_dir()):
            continue
        folder = course.root / "feedback" / s / a
        write_atomic_bytes(folder / f"{a}.html", page.read_bytes())
        for name in ("timestamp.txt", "submission_secret.txt"):
            if (graded / name).is_file():
                write_atomic_bytes(folder / name, (graded / name).read_bytes())


def _submitted_at(submissions: Path, sub: Submission) -> str:
    """When nbgrader says the work was submitted (its timestamp.txt), ISO 8601 in UTC; "" when unknown."""
    when = read_timestamp(submissions / sub.student_id / sub.assignment_id)
    return when.isoformat() + "Z" if when else ""


@dataclass
class _Run:
    """What the main thread needs besides the jobs: where results go and what they replace."""

    cfg: GradeConfig
    course: Course | None
    previous: dict[tuple[str, str], str]  # (student, assignment) -> the submission hash graded before
    submitted_at: dict[tuple[str, str], str]

    def autograded_dir(self) -> Path:
        return self.course.autograded if self.course else self.cfg.out / "autograded"

    def keep(self, result: dict, writer) -> None:
        """Save one fresh result: its autograded notebook, the gradebook (which may drop a person's
        grades of an older version) and the saved record (the CSVs and feedback are rebuilt at the end)."""
        key = (result["student_id"], result["assignment_id"])
        result["submitted_at"] = self.submitted_at.get(key, "")
        notebook = result.pop("_autograded", None)
        if notebook is not None:
            folder = self.autograded_dir() / key[0] / key[1]
            write_atomic(folder / f"{key[1]}.ipynb", notebook)
            # as nbgrader's autograde does: the submission's other files come along (timestamp.txt and
            # submission_secret.txt are what release_feedback needs), never another notebook
            for path in _beside(self.cfg.submissions / key[0] / key[1]):
                write_atomic_bytes(folder / path.name, path.read_bytes())
        changed = key in self.previous and self.previous[key] != result.get("submission_hash")
        dropped = writer.save_result(result, submission_changed=changed)
        if dropped:
            result.setdefault("problems", []).append(dataclasses.asdict(Problem(
                key[0], key[1], "manual grade dropped",
                "the submission changed after it was graded by hand, so these were removed: " + "; ".join(dropped)
                + ". Grade it again in formgrader.")))
        report.save_result(self.cfg.out, result)


def _run_jobs(run: _Run, todo: list[tuple[Submission, str]], reused: list[dict], hashes: dict[str, str],
              seed: int, progress_line: "report.Progress") -> tuple[int, dict]:
    """Run the references, then the submissions, on a pool; save each result as it arrives.

    The main thread is the only writer: results, autograded notebooks and the gradebook are written
    here. Returns how many were graded and what the gradebook records for every submission.
    """
    from .gradebook import GradebookWriter

    cfg = run.cfg

    needed = sorted({s.assignment_id for s, _ in todo if s.assignment_id in hashes})
    references: dict[str, tuple[dict | None, str]] = {}
    pending_refs: dict[Future, str] = {}
    waiting: dict[str, list[tuple[Submission, str]]] = {}
    for sub, shash in todo:
        waiting.setdefault(sub.assignment_id, []).append((sub, shash))
    graded = 0
    hide = tuple(str(p.resolve()) for p in (cfg.submissions, cfg.out))
    pool = _executor(cfg, seed) if todo else None
    running: dict[Future, Submission] = {}
    grade_fn, reference_fn = grade_submission, run_reference
    if cfg.cluster and pool is not None:  # jobs travel as data; workers resolve the solution from their own install
        from . import cluster

        grade_fn, reference_fn = cluster.grade_remote, cluster.reference_remote
        cfg.jobs = pool.threads()

    def submit(sub: Submission, shash: str) -> None:
        ref, why = references.get(sub.assignment_id, (None, "unknown assignment"))
        source = paths.solutions_dir() / f"{sub.assignment_id}.ipynb"
        job = Job(sub.student_id, sub.assignment_id, str(sub.path) if sub.path else None, tuple(sub.problems),
                  str(source), hashes.get(sub.assignment_id, ""), shash, seed, cfg.timeout, cfg.engine, hide, ref, why)
        if cfg.cluster:
            job = cluster.with_data(job)
        running[pool.submit(grade_fn, job)] = sub

    writer = None
    try:
        for a in needed:
            cached = _reference_cached(cfg.out, a, hashes[a], seed)
            if cached.exists():
                references[a] = (json.loads(cached.read_text())["evidence"], "")
            else:
                where = hashes[a] if cfg.cluster else str(paths.solutions_dir() / f"{a}.ipynb")  # cluster: by hash
                pending_refs[pool.submit(reference_fn, a, where, seed, cfg.timeout, cfg.engine, hide)] = a
        if isinstance(pool, ThreadPoolExecutor):  # start the other warm interpreters while the references run
            for _ in range(max(0, min(cfg.jobs, len(todo)) - len(pending_refs))):
                pool.submit(engine_module.default_pool().warm, 1)
        # Opening a new gradebook costs seconds (nbgrader asks alembic for its version): overlap it with the runs.
        writer = GradebookWriter(cfg.db_url, course_id=cfg.course_id,
                                 late_plugin=run.course.late_plugin if run.course else None)
        for a in sorted(hashes):
            writer.save_assignment(a, paths.solutions_dir() / f"{a}.ipynb")
        for result in reused:
            writer.save_result(result)  # idempotent (a person's grades stay); a new --db gets every grade
        if not todo:
            return 0, writer.recorded()
        progress_line.start(len(todo))
        for a in list(waiting):
            if a not in hashes or a in references:
                for sub, shash in waiting.pop(a):
                    submit(sub, shash)
        while pending_refs or running:
            done, _ = wait([*pending_refs, *running], return_when=FIRST_COMPLETED)
            for fut in done:
                if fut in pending_refs:
                    a = pending_refs.pop(fut)
                    try:
                        ref = fut.result()
                        write_atomic(_reference_cached(cfg.out, a, hashes[a], seed), json.dumps(ref) + "\n")
                        references[a] = (ref["evidence"], "")
                    except Exception as exc:  # the machine or the course is broken, not the students' work
                        raise ReferenceFailed(a, str(exc)) from exc
                    for sub, shash in waiting.pop(a, []):
                        submit(sub, shash)
                    continue
                sub = running.pop(fut)
                try:
                    result = fut.result()
                except Exception as exc:  # a grader worker died: this submission is reported, the class goes on
                    result = _failed_record(sub, seed, hashes, f"{type(exc).__name__}: {exc}")
                run.keep(result, writer)
                graded += 1
                progress_line.advance()
        recorded = writer.recorded()
    except BaseException:
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)
        raise
    finally:
        if writer is not None:
            writer.close()
            for warning in writer.warnings:
                print(f"warning: {warning}", file=progress_line.stream)
    pool.shutdown(wait=True)
    return graded, recorded


def _failed_record(sub: Submission, seed: int, hashes: dict[str, str], why: str) -> dict:
    problems = [dataclasses.asdict(p) for p in sub.problems]
    problems.append(dataclasses.asdict(Problem(sub.student_id, sub.assignment_id, "grader error",
                                               f"grading this submission failed ({why})", fatal=True)))
    # An empty hash: the next run tries again.
    return {"version": RESULT_VERSION, "student_id": sub.student_id, "assignment_id": sub.assignment_id,
            "notebook": sub.path.name if sub.path else None, "submission_hash": "", "source_hash":
            hashes.get(sub.assignment_id, ""), "seed": seed, "engine": "", "isolation": "", "scores": [],
            "problems": problems, "seconds": 0.0}
