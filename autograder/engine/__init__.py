"""The execution engine: run a notebook's cells in a fresh, confined interpreter and report each cell's outputs.

A generic cell runner: it knows nothing of the checks, the course or the grader. Its front is :func:`run` (and
:func:`.fallback.run`, a plain Jupyter kernel) and the records of :mod:`.contract`; what the code beside the
student's needs travels in the request's :class:`Harness`. Importing it starts nothing. Inside, in the order a run meets them:
:mod:`.pool` (warm parents kept per grader process), :mod:`.warm` (the warm parent: imports once, forks per
run), :mod:`.supervisor` (each attempt and its restarts), :mod:`.child` (the warden, which confines a run, and
the cell runner, which runs the cells), :mod:`.sandbox` (bubblewrap, namespaces, rlimits), :mod:`.shell` (the
IPython shell the cells run in) and :mod:`.frames` (how the processes talk). :mod:`.fallback` is a plain
Jupyter kernel with the same contract.
"""
from .contract import CellResult, Harness, Isolation, Limits, RunRequest, RunResult
from .pool import WarmPool, default_pool, run, shutdown_pool

__all__ = ["CellResult", "Harness", "Isolation", "Limits", "RunRequest", "RunResult", "WarmPool", "default_pool",
           "run", "shutdown_pool"]
