"""Class scheduling: run each assignment's reference once, then every submission, on a pool of workers.

Workers only grade (:func:`.grade_one.grade_job`); results come back to the calling thread, which
hands each to ``on_result`` as it arrives, so the caller stays the only writer and an interrupted
run keeps what it finished. References are cached in ``--out`` by assignment, source hash and seed.
"""
from __future__ import annotations

import dataclasses
import json
import threading
from concurrent.futures import FIRST_COMPLETED, Executor, Future, ProcessPoolExecutor, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ...nbio import write_atomic
from . import cluster
from ... import engine as engine_module
from ..submission.running import light_start, notebook_preloads
from ..submission.running import preload as harness_preload
from .config import GradeConfig
from ..output.costs import Costs
from ..submission.discover import Submission, files_beside, read_regular
from ..submission.records import Job, NotebookFile, Reference
from ..submission.results import SubmissionResult
from .progress import Progress
from ..submission.grade_one import failed_result, grade_job, prepare_worker, run_reference, source_path


class ReferenceFailed(RuntimeError):
    """A solution could not be run as a reference here: the run stops before anyone is graded (exit 2)."""

    def __init__(self, assignment: str, message: str):
        super().__init__(message)
        self.assignment = assignment


@dataclass(frozen=True, kw_only=True)
class Graded:
    """What :func:`grade_all` did: how many submissions it graded, on how many workers."""

    count: int
    workers: int  # --jobs, or with --cluster the threads of the cluster's workers


def executor(cfg: GradeConfig) -> Executor:
    """Threads over the warm engine (its children do the work, and it keeps one warm parent per
    concurrent run); processes over nbclient, whose kernels are driven by one event loop each;
    a Dask cluster's workers with ``--cluster``."""
    prepare_worker()  # judging also happens in this process when threads are used
    if cfg.cluster:
        return cluster.ClusterExecutor(cfg.cluster)
    if cfg.engine != "nbclient":
        return ThreadPoolExecutor(max_workers=cfg.jobs)
    return ProcessPoolExecutor(max_workers=cfg.jobs, initializer=prepare_worker)


def reference_cache(out: Path, assignment: str, source_hash: str, seed: int) -> Path:
    return out / "reference" / f"{assignment}-{source_hash[:16]}-{seed}.json"


def with_data(job: Job) -> Job:
    """The job with its notebook bytes and other files in it, ready to leave this machine."""
    if job.path is None:
        return job
    path = Path(job.path)
    try:
        content = read_regular(path)
    except OSError:
        return job  # the worker reports it as the local path would (it cannot read the path either)
    beside = files_beside(path, student_id=job.student_id, assignment_id=job.assignment_id)
    return dataclasses.replace(job, notebook=NotebookFile(name=path.name, content=content, files=beside.files),
                               problems=job.problems + beside.skipped)


def grade_all(todo: list[tuple[Submission, str]], *, cfg: GradeConfig, seed: int, hashes: dict[str, str],
              on_start: Callable[[], None], on_result: Callable[[SubmissionResult], None],
              progress: Progress, costs: Costs | None = None) -> Graded:
    """Grade ``todo`` ((submission, submission hash) pairs); returns how many were graded and on how many
    workers (``cfg`` is left as it was given).

    ``on_start`` runs on a thread of its own while the warm-up and the references run (the caller opens its
    gradebook then: about a core-second of nbgrader committing each cell of an assignment on its own, which
    in this thread held back the queue, and after the references had the workers' cores to share); results
    do not wait for it (the caller keeps those that come first until its gradebook is open), and what it
    raised is raised here at the next result after it ended, or at the end. ``on_result`` gets every result
    in this thread, as it arrives. Raises :class:`ReferenceFailed`
    when a solution cannot be run, before any submission of that assignment is graded. ``costs``
    (with ``--profile``) gets what each reference run cost."""
    hide = tuple(str(p.resolve()) for p in (cfg.submissions, cfg.out))
    limits = cfg.limits()
    references: dict[str, Reference] = {}
    waiting: dict[str, list[tuple[Submission, str]]] = {}
    for sub, shash in todo:
        waiting.setdefault(sub.assignment_id, []).append((sub, shash))
    pending_refs: dict[Future, str] = {}
    running: dict[Future, Job] = {}
    pool = executor(cfg) if todo else None
    grade_fn, reference_fn = grade_job, _reference
    workers = cfg.jobs
    if isinstance(pool, cluster.ClusterExecutor):  # jobs travel as data; workers use their own install
        grade_fn, reference_fn = cluster.grade_remote, cluster.reference_remote
        workers = pool.threads()

    def submit(sub: Submission, shash: str) -> None:
        a = sub.assignment_id
        reference = references.get(a) or Reference(assignment=a, source_path=str(source_path(a)),
                                                   source_hash=hashes.get(a, ""), problem="unknown assignment")
        job = Job(student_id=sub.student_id, assignment_id=a, path=str(sub.path) if sub.path else None,
                  problems=tuple(sub.problems), reference=reference, submission_hash=shash, seed=seed,
                  limits=limits, engine=cfg.engine, hide=hide, time_policy=cfg.time_policy())
        running[pool.submit(grade_fn, with_data(job) if cfg.cluster else job)] = job

    def found(a: str, evidence: dict, seconds: dict[str, float]) -> None:
        references[a] = Reference(assignment=a, source_path=str(source_path(a)), source_hash=hashes[a],
                                  evidence=evidence, seconds=seconds)

    graded = 0
    opening: _Beside | None = None
    if isinstance(pool, ThreadPoolExecutor):  # the warm parents this class starts import what its notebooks need
        engine_module.default_pool().also_preload(harness_preload())
        engine_module.default_pool().expect(notebook_preloads({s.assignment_id for s, _ in todo}))
    # References start at most one per worker, and the next one when one is done, after its submissions: the
    # pool's queue is first in, first out, so a class of ten notebooks queued ten references ahead of the first
    # submission, and its first result waited for most of them. The work is the same; its order is not.
    unstarted: list[str] = []

    def start_reference() -> None:
        if unstarted:
            a = unstarted.pop(0)
            pending_refs[pool.submit(reference_fn, a, hashes[a], seed, limits, cfg.engine, hide)] = a

    try:
        for a in sorted({s.assignment_id for s, _ in todo if s.assignment_id in hashes}):
            cached = reference_cache(cfg.out, a, hashes[a], seed)
            if cached.exists():
                saved = json.loads(cached.read_text())
                found(a, saved["evidence"], saved.get("seconds", {}))  # a cache from before timings: no course limits
            else:
                unstarted.append(a)
        for _ in range(max(1, workers)):
            start_reference()
        if isinstance(pool, ThreadPoolExecutor):  # one warm interpreter per worker, started side by side
            engine_module.default_pool().start_warming(min(workers, len(todo) + len(pending_refs) + len(unstarted)),
                                                       light=light_start({s.assignment_id for s, _ in todo}))
        if not todo:
            on_start()
            return Graded(count=0, workers=workers)
        # The warm-up is one interpreter's imports on one core, and the references wait for it: the other
        # core is free for the gradebook meanwhile.
        opening = _Beside(on_start)
        progress.start(len(todo))
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
                        ran = fut.result()
                    except Exception as exc:  # the machine or the course is broken, not the students' work
                        raise ReferenceFailed(a, str(exc)) from exc
                    evidence = ran.evidence
                    if costs is not None:
                        costs.add(a, {"reference": ran.cpu})
                    write_atomic(reference_cache(cfg.out, a, hashes[a], seed),
                                 json.dumps({"evidence": evidence, "seconds": ran.seconds}) + "\n")
                    found(a, evidence, ran.seconds)
                    for sub, shash in waiting.pop(a, []):
                        submit(sub, shash)
                    start_reference()
                    continue
                job = running.pop(fut)
                try:
                    result = fut.result()
                except Exception as exc:  # a grader worker died: this submission is reported, the class goes on
                    result = failed_result(job, f"{type(exc).__name__}: {exc}")
                if opening.done():
                    opening.join()  # raises what opening the gradebook raised
                on_result(result)
                graded += 1
                progress.advance()
        opening.join()  # no path leaves with the gradebook still opening
    except BaseException:
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)
        if opening is not None:  # the caller closes what it opened: it must be opened, or not at all, by then
            opening.join(reraise=False)
        raise
    if pool is not None:
        pool.shutdown(wait=True)
    return Graded(count=graded, workers=workers)


def _reference(assignment: str, source_hash: str, seed: int, limits, engine: str, hide: tuple[str, ...]) -> Reference:
    """A local worker's reference run (the signature :func:`.cluster.reference_remote` shares)."""
    return run_reference(assignment, seed=seed, limits=limits, engine=engine, hide=hide)


class _Beside:
    """``fn`` on a thread of its own, started now; :meth:`join` waits for it and raises what it raised."""

    def __init__(self, fn: Callable[[], None]):
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(fn,), name="autograder-beside", daemon=True)
        self._thread.start()

    def _run(self, fn: Callable[[], None]) -> None:
        try:
            fn()
        except BaseException as exc:  # noqa: BLE001 - raised again in the caller's thread by join()
            self._error = exc

    def done(self) -> bool:
        return not self._thread.is_alive()

    def join(self, *, reraise: bool = True) -> None:
        self._thread.join()
        if reraise and self._error is not None:
            error, self._error = self._error, None  # once: the caller's except path joins again
            raise error
