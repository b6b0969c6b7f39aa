"""The execution engine's contract: run a notebook's cells safely and report each cell's outputs.

The grading pipeline (discover -> sanitize -> execute -> judge -> record) only calls
:func:`run_cells`; how cells run (a warm, forked, sandboxed interpreter, or a plain
Jupyter kernel as a fallback) is the engine's business. Expected values never enter
the run: checks there only record evidence (``AUTOGRADER_MODE=evidence``).
"""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Limits:
    """Bounds on one submission's run. Each default is generous for honest work on 2 cores."""

    cell_timeout: float = 60.0  # seconds of wall time per cell before it is interrupted
    memory_bytes: int = 3 * 2**30  # address space; torch alone maps ~1 GiB
    cpu_seconds: int = 600  # CPU time for the whole notebook, a backstop behind the per-cell timeout
    processes: int = 64  # threads count as processes for RLIMIT_NPROC
    output_bytes: int = 2 * 2**20  # per cell, across streams and displays; the rest is cut and noted
    file_bytes: int = 64 * 2**20  # largest file the student code may write in its scratch folder


@dataclass
class CellResult:
    index: int  # position in the list given to run_cells
    status: str  # "ok", "error", "timeout", "crashed" (the process died in it), "skipped"
    outputs: list[dict] = field(default_factory=list)  # nbformat v4 output dicts, in order
    seconds: float = 0.0
    detail: str = ""  # for people: "interrupted after 60 s", "killed: out of memory", ...


@dataclass
class RunResult:
    cells: list[CellResult]
    isolation: str  # what was in force, e.g. "bubblewrap (no network, private filesystem) + nobody + rlimits"
    problems: list[str] = field(default_factory=list)  # run-level trouble a person should read


def run_cells(sources: list[str], *, assignment: str, files: dict[str, bytes] | None = None,
              env: dict[str, str] | None = None, limits: Limits | None = None) -> RunResult:
    """Execute ``sources`` in order in one fresh interpreter and return one CellResult each.

    ``files`` are written into the run's private scratch folder (the current directory of
    the code); nothing else of the grader's machine is visible to it beyond the installed
    packages and, for assignment NN, the reference solutions of notebooks before NN.
    """
    raise NotImplementedError("the engine is being built; see autograder/grade/ for the implementation")
