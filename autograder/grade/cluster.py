"""``grade --cluster ADDRESS``: grade on a Dask distributed cluster instead of local workers.

What travels is data: each job carries the submission's notebook bytes and its folder's other
files; the result record comes back as a dict. Workers need no shared filesystem, only this
course installed (the same checkout or package, so the same ``solutions/`` and checks): a worker
resolves the solution notebook from its own installation and refuses a job whose source hash
differs from the main process's, so a stale worker cannot grade against another version.

On the worker the same one-submission function as the local path runs
(:func:`.pipeline.grade_submission`), with the same engine and therefore the same sandbox.
The reference evidence is computed once (on one worker) and shipped back as data; the main
process caches it and puts it in every job. The main process stays the only gradebook writer.
"""
from __future__ import annotations

import concurrent.futures as cf
import dataclasses
from pathlib import Path

from .. import paths

CONNECT_TIMEOUT = "30s"


class StaleWorker(RuntimeError):
    """A worker's installed course differs from the grading machine's."""


def with_data(job):
    """The job with its notebook bytes and other files in it, ready to leave this machine."""
    from .pipeline import _files_beside

    if job.path is None:
        return job
    notebook = Path(job.path)
    try:
        return dataclasses.replace(job, notebook=notebook.read_bytes(), files=_files_beside(notebook))
    except OSError:
        return job  # the worker reports it as the local path would (it cannot read the path either)


def _local_source(assignment: str, expected_hash: str) -> str:
    from .pipeline import source_hash

    source = paths.solutions_dir() / f"{assignment}.ipynb"
    if expected_hash and source.exists() and source_hash(assignment) != expected_hash:
        raise StaleWorker(f"this worker's copy of {assignment} (solution or checks) differs from the grading "
                          "machine's; install the same version of the course on every worker")
    return str(source)


def grade_remote(job) -> dict:
    """Run on a worker: :func:`.pipeline.grade_submission` with the worker's own solution path."""
    from .pipeline import _init_worker, grade_submission

    _init_worker(job.seed)
    source = _local_source(job.assignment_id, job.source_hash) if job.source_hash else job.source_path
    return grade_submission(dataclasses.replace(job, source_path=source))


def reference_remote(assignment: str, source_hash: str, seed: int, timeout: float, engine: str,
                     hide: tuple[str, ...] = ()) -> dict:
    """Run on a worker: :func:`.pipeline.run_reference` on the worker's own copy of the solution."""
    from .pipeline import _init_worker, run_reference

    _init_worker(seed)
    return run_reference(assignment, _local_source(assignment, source_hash), seed, timeout, engine, hide)


class ClusterExecutor(cf.Executor):
    """A concurrent.futures executor on a Dask scheduler: the pipeline's pool when ``--cluster`` is given."""

    def __init__(self, address: str):
        try:
            from distributed import Client
        except ImportError as exc:  # pragma: no cover - distributed is in requirements.txt
            raise RuntimeError("--cluster needs the 'distributed' package") from exc
        from .pipeline import UsageError

        self.address = address
        try:
            self.client = Client(address, timeout=CONNECT_TIMEOUT, set_as_default=False)
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

