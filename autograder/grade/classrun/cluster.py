"""``grade --cluster ADDRESS``: grade on a Dask distributed cluster instead of local workers.

What travels is data: each job carries the submission's notebook bytes and its folder's other
files (:func:`.schedule.with_data`); the result comes back as a record. Workers need no shared
filesystem, only this course installed (the same checkout or package, so the same ``solutions/``
and checks): a worker resolves the solution notebook from its own installation and refuses a job
whose source hash differs from the main process's, so a stale worker cannot grade against another
version.

On the worker the same one-submission function as the local path runs
(:func:`.grade_one.grade_job`, which calls :func:`.grade_one.grade_one`), with the same engine
and therefore the same sandbox. The reference evidence is computed once (on one worker) and
shipped back as data; the main process caches it and puts it in every job. The main process stays
the only gradebook writer.
"""
from __future__ import annotations

import concurrent.futures as cf
import dataclasses

from .. import UsageError
from ...engine import Limits
from ..submission.records import Job, Reference
from ..submission.results import SubmissionResult
from ..submission.grade_one import grade_job, prepare_worker, run_reference, source_hash, source_path

class StaleWorker(RuntimeError):
    """A worker's installed course differs from the grading machine's."""


def _local_source(assignment: str, expected_hash: str) -> str:
    source = source_path(assignment)
    if expected_hash and source.exists() and source_hash(assignment) != expected_hash:
        raise StaleWorker(f"this worker's copy of {assignment} (solution or checks) differs from the grading "
                          "machine's; install the same version of the course on every worker")
    return str(source)


def grade_remote(job: Job) -> SubmissionResult:
    """Run on a worker: :func:`.grade_one.grade_job` against the worker's own copy of the solution."""
    prepare_worker()
    if job.reference.source_hash:
        local = _local_source(job.assignment_id, job.reference.source_hash)
        job = dataclasses.replace(job, reference=dataclasses.replace(job.reference, source_path=local))
    return grade_job(job)


def reference_remote(assignment: str, expected_hash: str, seed: int, limits: Limits, engine: str,
                     hide: tuple[str, ...] = ()) -> Reference:
    """Run on a worker: :func:`.grade_one.run_reference` on the worker's own copy of the solution."""
    prepare_worker()
    return run_reference(assignment, seed=seed, limits=limits, engine=engine, hide=hide,
                         source=_local_source(assignment, expected_hash))


class ClusterExecutor(cf.Executor):
    """A concurrent.futures executor on a Dask scheduler: the class's pool when ``--cluster`` is given."""

    def __init__(self, address: str):
        # imported here: distributed takes about a second to import and only --cluster needs it
        from distributed import Client

        self.address = address
        try:
            # how long to try: Dask's own setting (30 s unless DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT says)
            self.client = Client(address, set_as_default=False)
        except (OSError, TimeoutError, ValueError) as exc:
            raise UsageError(f"--cluster {address}: cannot reach the Dask scheduler ({exc})") from exc
        self._executor = self.client.get_executor(pure=False)

    def threads(self) -> int:
        """The cluster's worker threads: how many submissions run at once."""
        return sum(self.client.nthreads().values()) or 1

    def submit(self, fn, /, *args, **kwargs):
        return self._executor.submit(fn, *args, **kwargs)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        try:
            self._executor.shutdown(wait=wait and not cancel_futures)
        finally:
            self.client.close()
