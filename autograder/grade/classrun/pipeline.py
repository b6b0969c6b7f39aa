"""Grade a class: discover -> sanitize -> execute -> judge -> record, one submission per worker.

:func:`grade_class` finds the submissions, reuses every saved result that is still current and
hands the rest to :mod:`.schedule`, whose workers grade one submission each
(:func:`.grade_one.grade_one`). This module is the only writer: each result is saved atomically
as it arrives (so an interrupted run keeps what it finished), the gradebook is updated, and at the
end the CSVs and the feedback are rebuilt from every saved result.
"""
from __future__ import annotations

import contextlib
import dataclasses
import os
import random
import stat
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from ... import paths
from ...nbio import write_atomic, write_atomic_bytes
from ... import engine as engine_module
from ..output import report
from .. import UsageError
from .config import GradeConfig
from ..output.course import Course, find_course, read_timestamp
from ..submission.discover import Submission, discover, files_beside
from .doctor import explain_reference_failure, exposures_here
from ..output.costs import CLASS, Costs, process_age, timed, tree_seconds, write_profile
from ..output.gradebook import GradebookWriter
from ..submission.isolation import describe_isolation, not_isolated
from .progress import Progress
from ..submission.records import RESULT_VERSION
from ..submission.results import SubmissionResult
from .schedule import Graded, ReferenceFailed, grade_all
from ..submission.grade_one import source_hash, submission_hash

__all__ = ["ClassResult", "GradeConfig", "ReferenceFailed", "UsageError", "grade_class"]


# --------------------------------------------------------------------------- the class

@dataclass
class ClassResult:
    exit_code: int
    graded: int = 0  # submissions graded this run
    reused: int = 0  # submissions whose saved result was still current
    failed: int = 0  # submissions that could not be graded (in problems.csv)
    out: Path | None = None
    results: list[SubmissionResult] = field(default_factory=list)  # as the gradebook has them
    summary: str = ""


def _seed(out: Path, wanted: int | None, *, force: bool = False) -> int:
    """The run seed: given, or saved in --out by an earlier run, or drawn now and saved. A run.json that
    cannot be read stops the run (:class:`.report.RunFileError`), unless --seed or --force says what to
    do instead; it is then replaced."""
    try:
        saved = report.read_run(out)
    except report.RunFileError:
        if wanted is None and not force:
            raise
        saved = None
    if wanted is None and saved is not None:
        return saved.seed
    seed = wanted if wanted is not None else random.SystemRandom().randrange(1, 2**31)
    report.write_run(out, report.RunRecord(seed=seed))
    return seed


@contextlib.contextmanager
def private_files(shared: bool):
    """While grading, everything created is closed to other users (umask o-rwx): results, CSVs, feedback,
    autograded notebooks, the SQLite gradebook, the reference evidence. In a course folder shared by a
    staff group (setgid, see docs/grading.md) the group may also write, so a TA and the instructor can
    both grade and use formgrader; otherwise the group keeps what the user's umask gives it."""
    old = os.umask(0o077)
    os.umask(0o007 if shared else old | 0o007)
    try:
        yield
    finally:
        os.umask(old)


def _close_to_others(folder: Path) -> None:
    """A folder of ours made by an earlier run (or by hand) open to everyone: closed, as new ones are."""
    with contextlib.suppress(OSError):
        mode = folder.stat().st_mode
        if folder.is_dir() and not folder.is_symlink() and mode & 0o007 and folder.stat().st_uid == os.geteuid():
            folder.chmod(stat.S_IMODE(mode) & ~0o007)


def _gradebook_file(url: str) -> Path | None:
    return Path(url.removeprefix("sqlite:///")) if url.startswith("sqlite:///") else None


def warnings_for(cfg: GradeConfig, course: Course | None = None) -> str:
    """The lines every ``grade`` summary ends with when the course is open to other users, each with its fix."""
    found = exposures_here(course=course.root if course else None, submitted=cfg.submissions,
                           gradebook=_gradebook_file(cfg.gradebook_url), outputs=(cfg.out,))
    return "".join(f"\nwarning: {e}" for e in found)


def grade_class(cfg: GradeConfig, *, stream: TextIO | None = None) -> ClassResult:
    """Grade every submission under ``cfg.submissions`` (or those of ``cfg.students`` /
    ``cfg.assignments`` only; the CSVs keep everyone graded before); see docs/grading.md for what
    lands in ``cfg.out``. Everything written is closed to other users (:func:`private_files`), and the
    summary ends with a warning, and its fix, for whatever of the course is still open to them.

    When ``submissions`` is an nbgrader course's ``submitted/`` folder, the course's gradebook, course id,
    ``autograded/`` folder and late-submission plugin are used (see :mod:`.course`)."""
    costs = Costs() if cfg.profile else None
    if costs is not None:  # everything this process did before the class: the interpreter, imports, options
        costs.add(CLASS, {"start-up": tree_seconds()})
        costs.mark("class started")
    course = find_course(cfg.submissions) if cfg.submissions.is_dir() else None
    root = course.root if course is not None else cfg.submissions.resolve().parent
    try:
        shared = bool(os.stat(root).st_mode & stat.S_ISGID)
    except OSError:
        shared = False  # no such folder: cfg.check() below says so
    with private_files(shared=shared):
        result = _grade_class(cfg, course, shared=shared, stream=stream, costs=costs)
    result.summary += warnings_for(dataclasses.replace(cfg, db_url=cfg.db_url or (course.db_url if course else None)),
                                   course)
    return result


def _grade_class(cfg: GradeConfig, course: Course | None, *, shared: bool = False,
                 stream: TextIO | None = None, costs: Costs | None = None) -> ClassResult:
    """The class run itself, inside :func:`grade_class`'s private umask."""
    discovering = time.thread_time()
    if course is not None:  # the course's own gradebook and id, unless the options name others
        cfg = dataclasses.replace(cfg, db_url=cfg.db_url or course.db_url,
                                  course_id=cfg.course_id or course.course_id)
    stream = stream or sys.stderr
    started = time.monotonic()
    cfg.check()
    known = paths.assignments()
    if not known:
        raise UsageError(f"no solutions/*.ipynb under {paths.root()}: nothing to grade against")
    cfg.out.mkdir(parents=True, exist_ok=True)
    for folder in (cfg.out, *((course.autograded, course.root / "feedback") if course else ())):
        _close_to_others(folder)
    run_seed = _seed(cfg.out, cfg.seed, force=cfg.force)
    unknown = [a for a in cfg.assignments if a not in known]
    if unknown:
        raise UsageError(f"--assignment {unknown[0]!r} is not an assignment of this course; known: {', '.join(known)}")
    found = [s for s in discover(cfg.submissions, known, exclude=cfg.out)
             if (not cfg.students or s.student_id in cfg.students)
             and (not cfg.assignments or s.assignment_id in cfg.assignments)]
    if (cfg.students or cfg.assignments) and not found:
        raise UsageError(f"no submission of {', '.join(cfg.students) or 'any student'} for "
                         f"{', '.join(cfg.assignments) or 'any assignment'} under {cfg.submissions}")
    hashes = {a: source_hash(a) for a in {s.assignment_id for s in found} if a in known}

    todo: list[tuple[Submission, str]] = []
    reused: list[SubmissionResult] = []
    previous: dict[tuple[str, str], str] = {}  # the hash a saved result was graded from
    submitted_at = {s.key: _submitted_at(cfg.submissions, s) for s in found}
    for sub in found:
        shash = submission_hash(sub)
        saved = report.load_result(cfg.out, sub.student_id, sub.assignment_id)
        if saved is not None and saved.submission_hash:
            previous[sub.key] = saved.submission_hash
        current = (saved is not None and saved.submission_hash == shash and saved.seed == run_seed
                   and saved.source_hash == hashes.get(sub.assignment_id, "") and saved.version == RESULT_VERSION)
        if current and not cfg.force:
            if saved.submitted_at != submitted_at[sub.key]:  # resubmitted the same notebook
                saved = dataclasses.replace(saved, submitted_at=submitted_at[sub.key])
                report.save_result(cfg.out, saved)
            reused.append(saved)
        else:
            todo.append((sub, shash))
    if costs is not None:
        costs.add(CLASS, {"discover": time.thread_time() - discovering})

    progress_line = Progress(stream, enabled=cfg.progress)
    run = _Run(cfg, course, previous, submitted_at, shared=shared, costs=costs)
    try:
        graded = run.grade(todo, reused, hashes, run_seed, progress_line)
    except ReferenceFailed as failure:
        return ClassResult(2, out=cfg.out, summary=explain_reference_failure(failure.assignment, str(failure)))
    finally:
        progress_line.close()

    with timed(costs, "results"):
        results = report.read_results(cfg.out)  # everyone graded into --out, not only this run's subset
    results = report.write_outputs(cfg.out, results, run.recorded, costs=costs,  # now as the gradebook has them
                                   autograded=run.autograded_dir())
    if course is not None:
        with timed(costs, "feedback"):
            course_feedback(course, cfg.out, results)
    failed = sum(1 for r in results if r.fatal)
    isolation = sorted({describe_isolation(r.isolation) for r in results if r.isolation is not None})
    gaps = sorted({g for r in results if r.isolation is not None for g in not_isolated(r.isolation)})
    if isolation:  # what this run's student code could and could not reach, for the record
        report.write_run(cfg.out, report.RunRecord(seed=run_seed, isolation=tuple(isolation), not_isolated=tuple(gaps)))
    # with --student/--assignment the others' results are kept, not regraded: they count as unchanged,
    # so "graded now" and "unchanged" add up to the submissions the summary names
    summary = report.summary(results, graded=graded.count, reused=len(results) - graded.count, failed=failed,
                             seconds=time.monotonic() - started, out=cfg.out, isolation=isolation,
                             not_isolated=gaps, jobs=graded.workers)
    if costs is not None:
        costs.mark("outputs written")
        warm, workers = engine_module.default_pool().cpu()
        costs.add(CLASS, {"warm-up": warm})
        write_profile(cfg.out / "profile.json", costs, grader=tree_seconds(), workers=workers, wall=process_age())
    return ClassResult(1 if failed else 0, graded.count, len(reused), failed, cfg.out, results, summary)


def course_feedback(course: Course, out: Path, results: list[SubmissionResult]) -> None:
    """Each learner's page, also in the course's ``feedback/<student>/<assignment>/``, beside the files
    ``nbgrader release_feedback`` reads (timestamp.txt, submission_secret.txt), so it can hand them out."""
    for r in results:
        s, a = r.key
        page, graded = out / "feedback" / s / f"{a}.html", course.autograded / s / a
        if not (page.is_file() and graded.is_dir()):
            continue
        folder = course.root / "feedback" / s / a
        write_atomic_bytes(folder / f"{a}.html", page.read_bytes())
        # release_feedback copies the page with its mode into the exchange: 0644, as nbgrader's own
        # generate_feedback writes it, or the student's fetch_feedback cannot read it. The folders
        # above it stay closed, so here in the course only staff reach it.
        (folder / f"{a}.html").chmod(0o644)
        for name in ("timestamp.txt", "submission_secret.txt"):
            if (graded / name).is_file():
                write_atomic_bytes(folder / name, (graded / name).read_bytes())


def _submitted_at(submissions: Path, sub: Submission) -> str:
    """When nbgrader says the work was submitted (its timestamp.txt), ISO 8601 in UTC; "" when unknown."""
    when = read_timestamp(submissions / sub.student_id / sub.assignment_id)
    return when.isoformat() + "Z" if when else ""


@dataclass
class _Run:
    """The writing side of a class run: where results go, what they replace, the gradebook."""

    cfg: GradeConfig
    course: Course | None
    previous: dict[tuple[str, str], str]  # (student, assignment) -> the submission hash graded before
    submitted_at: dict[tuple[str, str], str]
    shared: bool = False  # a staff group's course (setgid): the group may replace what this run writes
    costs: Costs | None = None  # with --profile: where the CPU goes
    writer: GradebookWriter | None = None
    recorded: dict = field(default_factory=dict)  # what the gradebook holds for every submission
    # set once the gradebook is open (or failed to open); the results that came before wait in `unrecorded`
    gradebook_open: threading.Event = field(default_factory=threading.Event)
    gradebook_ok: bool = False  # it opened, and holds the assignments
    unrecorded: list[SubmissionResult] = field(default_factory=list)

    def autograded_dir(self) -> Path:
        return self.course.autograded if self.course else self.cfg.out / "autograded"

    def grade(self, todo: list[tuple[Submission, str]], reused: list[SubmissionResult], hashes: dict[str, str],
              seed: int, progress_line: Progress) -> Graded:
        """Grade ``todo`` on the pool, keeping each result as it arrives; returns how many were graded, on how
        many workers."""

        def open_gradebook() -> None:
            # Opening a new gradebook costs seconds (nbgrader asks alembic for its version): the schedule
            # calls this on a thread of its own beside the warm-up and the references; a result that comes
            # before it is open is saved at once and given to the gradebook once it is (keep).
            try:
                opening()
                self.gradebook_ok = True
            finally:
                self.gradebook_open.set()

        def opening() -> None:
            with timed(self.costs, "gradebook"):
                self.writer = GradebookWriter(self.cfg.gradebook_url, course_id=self.cfg.course_id,
                                              late_plugin=self.course.late_plugin if self.course else None)
                db = _gradebook_file(self.cfg.gradebook_url)
                if self.shared and db is not None:  # SQLite makes its file 0644 & ~umask: never group-writable
                    with contextlib.suppress(OSError):
                        if db.stat().st_uid == os.geteuid():
                            db.chmod(stat.S_IMODE(db.stat().st_mode) | 0o060)
                for a in sorted(hashes):
                    self.writer.save_assignment(a, paths.solutions_dir() / f"{a}.ipynb")
                for result in reused:
                    self.writer.save_result(result)  # idempotent (a person's grades stay); a new --db gets every grade

        try:
            graded = grade_all(todo, cfg=self.cfg, seed=seed, hashes=hashes,
                               on_start=open_gradebook,
                               on_result=self.keep, progress=progress_line, costs=self.costs)
            self._record_waiting()
            with timed(self.costs, "gradebook"):
                self.recorded = self.writer.recorded()
        finally:
            if self.writer is not None:
                self.writer.close()
                for warning in self.writer.warnings:
                    print(f"warning: {warning}", file=progress_line.stream)
        return graded

    def _record_waiting(self) -> None:
        """Give the gradebook the results that were saved before it was open (nothing to drop: see keep)."""
        if not self.gradebook_ok:  # it failed to open: the schedule raises why
            return
        while self.unrecorded:
            result = self.unrecorded.pop(0)
            with timed(self.costs, "gradebook", result.assignment_id):
                self.writer.save_result(SubmissionResult.from_json(result.to_json()))

    def keep(self, result: SubmissionResult) -> None:
        """Save one fresh result: its autograded notebook, the gradebook (which may drop a person's
        grades of an older version) and the saved record (the CSVs and feedback are rebuilt at the end)."""
        key = result.key
        if self.costs is not None:
            self.costs.add(result.assignment_id, result.costs, submission=True)
            self.costs.mark("first result", first=True)
            self.costs.mark("last result")
        result.submitted_at = self.submitted_at.get(key, "")
        if result.autograded is not None:
            with timed(self.costs, "autograded", result.assignment_id):
                folder = self.autograded_dir() / key[0] / key[1]
                write_atomic(folder / f"{key[1]}.ipynb", result.autograded)
                # as nbgrader's autograde does: the submission's other files come along (timestamp.txt and
                # submission_secret.txt are what release_feedback needs), never another notebook
                # (by the one rule that decided what the notebook saw: no link is followed here either)
                for rel, data in files_beside(self.cfg.submissions / key[0] / key[1] / f"{key[1]}.ipynb").files.items():
                    write_atomic_bytes(folder / rel, data)
        changed = key in self.previous and self.previous[key] != result.submission_hash
        if changed:  # its grades may drop a person's, which its saved record says: it waits for the gradebook
            self.gradebook_open.wait()
        if not self.gradebook_ok:
            # The gradebook is still opening (or failed to, which the schedule raises): the result is saved now
            # (the first result need not wait a second for nbgrader), its grades once the gradebook is open. Its
            # grades cannot drop a person's (the submission did not change), so the saved record is final. A run
            # stopped before then leaves the result saved and the gradebook without it; the next run reuses the
            # result and records it then.
            with timed(self.costs, "results", result.assignment_id):
                report.save_result(self.cfg.out, SubmissionResult.from_json(result.to_json()))
            self.unrecorded.append(result)
            return
        self._record_waiting()
        with timed(self.costs, "gradebook", result.assignment_id):
            record = SubmissionResult.from_json(result.to_json())  # as saved: without what travels beside it
            dropped = self.writer.save_result(record, submission_changed=changed)
        if dropped:
            result.add_problem("manual grade dropped", "the submission changed after it was graded by hand, so these "
                               "were removed: " + "; ".join(dropped) + ". Grade it again in formgrader.")
            record = SubmissionResult.from_json(result.to_json())  # as saved: without what travels beside it
        with timed(self.costs, "results", result.assignment_id):
            report.save_result(self.cfg.out, record)
