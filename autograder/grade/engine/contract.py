"""The engine's contract: what a run is asked (:class:`RunRequest`, bounded by :class:`Limits`) and what it
answers (:class:`RunResult`, one :class:`CellResult` per cell).

Each record has one JSON form (``to_json``/``from_json``): the pool encodes the request with it and the warm
parent decodes it; the warm parent encodes the result and the pool decodes it. A field added here reaches
the other side of the pipe with nothing else to change. :func:`child_environment` is the one place that says
what environment the student's code runs in. Expected values never enter a run: checks there only record
evidence (:data:`EVIDENCE_MODE`).
"""
from __future__ import annotations

import base64
import os
import sys
from dataclasses import asdict, dataclass, field, fields

from ...checks import core

# The checks' mode under the grader (checks.core reads it from AUTOGRADER_MODE): record evidence, compare nothing.
EVIDENCE_MODE = "evidence"
# One thread per numerical library in a student's run: a class is graded one run per core, and
# threads would only fight over the cores (and count against the process limit).
THREAD_VARS = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
               "NUMEXPR_NUM_THREADS": "1", "VECLIB_MAXIMUM_THREADS": "1"}
# How many times a notebook is run again without a cell that hung or killed its process before the rest is given up.
MAX_RESTARTS = 10


@dataclass
class Limits:
    """Bounds on one submission's run. Each default is generous for honest work on 2 cores."""

    cell_timeout: float = 60.0  # seconds of wall time per cell before it is interrupted
    memory_bytes: int = 2 * 2**30  # address space beyond what the warm interpreter maps (torch: 1 GiB, 3 with CUDA)
    cpu_seconds: int = 600  # CPU time for the whole notebook, a backstop behind the per-cell timeout
    processes: int = 64  # threads count as processes for RLIMIT_NPROC
    output_bytes: int = 2 * 2**20  # per cell, across streams and displays; the rest is cut and noted
    file_bytes: int = 64 * 2**20  # largest file the student code may write in its scratch folder
    interrupt_grace: float = 5.0  # seconds a cell gets to stop after the interrupt before its process is killed
    # A loop in one function is met again by every later cell that calls it. Once a cell of a submission
    # has timed out, later cells get later_timeout seconds; once time-outs have cost the submission
    # timeout_budget seconds in all, the rest is "not run: time budget spent". 0 turns either off
    # (the engine's own default); `grade` sets both (config.GradeConfig.limits).
    later_timeout: float = 0.0
    timeout_budget: float = 0.0
    # False: a matplotlib figure shows as one line of text instead of a PNG. No test reads a figure, and
    # drawing one (text layout, then PNG) was most of the CPU of notebooks 01-04's cells; `grade` says False
    # unless --draw-figures (config.GradeConfig.draw_figures). The student's own notebook keeps its figures.
    draw_figures: bool = True

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> "Limits":
        return cls(**{f.name: type(getattr(cls, f.name))(data[f.name]) for f in fields(cls) if f.name in data})


@dataclass
class RunRequest:
    """One run: the cells, what the run may read, how it is bounded and confined."""

    sources: list[str]
    files: dict[str, bytes] = field(default_factory=dict)  # written into the run's scratch folder
    solutions: dict[str, bytes] = field(default_factory=dict)  # the earlier notebooks' solutions a run may import
    seed: int = 0  # the grader's run seed: the checks' hidden inputs follow it
    limits: Limits = field(default_factory=Limits)
    hide: list[str] = field(default_factory=list)  # folders to cover with an empty tmpfs (no bubblewrap)
    keep: list[str] = field(default_factory=list)  # folders under a hidden one to show again, read-only
    max_restarts: int = MAX_RESTARTS
    namespaces: bool = True  # False: resource limits and a private folder only

    def to_json(self) -> dict:
        return {"sources": list(self.sources), "files": _encode(self.files), "solutions": _encode(self.solutions),
                "seed": self.seed, "limits": self.limits.to_json(), "hide": list(self.hide), "keep": list(self.keep),
                "max_restarts": self.max_restarts, "namespaces": self.namespaces}

    @classmethod
    def from_json(cls, data: dict) -> "RunRequest":
        return cls(sources=[str(s) for s in data["sources"]], files=_decode(data["files"]),
                   solutions=_decode(data["solutions"]), seed=int(data["seed"]),
                   limits=Limits.from_json(data["limits"]), hide=[str(h) for h in data["hide"]],
                   keep=[str(k) for k in data["keep"]], max_restarts=int(data["max_restarts"]),
                   namespaces=bool(data["namespaces"]))


@dataclass
class CellResult:
    index: int  # position in the list given to run_cells
    status: str  # "ok", "error", "timeout", "crashed" (the process died in it), "skipped"
    outputs: list[dict] = field(default_factory=list)  # nbformat v4 output dicts, in order
    seconds: float = 0.0
    detail: str = ""  # for people: "interrupted after 60 s", "killed: out of memory", ...

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> "CellResult":
        return cls(index=int(data["index"]), status=str(data["status"]), outputs=list(data["outputs"]),
                   seconds=float(data["seconds"]), detail=str(data["detail"]))


@dataclass
class RunResult:
    cells: list[CellResult]
    isolation: str  # what was in force, e.g. "bubblewrap (no network, private filesystem) + nobody + rlimits"
    problems: list[str] = field(default_factory=list)  # run-level trouble a person should read
    costs: dict[str, float] = field(default_factory=dict)  # CPU seconds by phase (see ..costs), for --profile
    # what the sandbox reported in force, from which the pool words ``isolation`` (it alone knows whether the
    # warm parent is inside bubblewrap)
    facts: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"cells": [c.to_json() for c in self.cells], "isolation": self.isolation,
                "problems": list(self.problems), "costs": dict(self.costs), "facts": list(self.facts)}

    @classmethod
    def from_json(cls, data: dict) -> "RunResult":
        return cls(cells=[CellResult.from_json(c) for c in data["cells"]], isolation=str(data["isolation"]),
                   problems=[str(p) for p in data["problems"]],
                   costs={str(k): float(v) for k, v in data["costs"].items()}, facts=[str(f) for f in data["facts"]])


def _encode(files: dict[str, bytes]) -> dict[str, str]:
    return {str(name): base64.b64encode(bytes(data)).decode("ascii") for name, data in files.items()}


def _decode(files: dict[str, str]) -> dict[str, bytes]:
    return {str(name): base64.b64decode(data) for name, data in files.items()}


def grading_environment(seed: int) -> dict[str, str]:
    """What tells the checks (:func:`autograder.checks.core.configure_from_environment`) and nbgrader-aware code
    that they run under the grader: evidence mode, the run seed."""
    return {core.MODE_ENV: EVIDENCE_MODE, core.SEED_ENV: str(seed), "NBGRADER_EXECUTION": "autograde"}


def child_environment(request: RunRequest, *, scratch: str, course_root: str) -> dict[str, str]:
    """The whole environment of the process that runs the cells: nothing of the grader's own."""
    path = os.pathsep.join([os.path.dirname(sys.executable), "/usr/local/bin", "/usr/bin", "/bin"])
    return {"PATH": path, "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "HOME": scratch, "TMPDIR": scratch,
            "MPLCONFIGDIR": scratch, "MPLBACKEND": "module://matplotlib_inline.backend_inline",
            "AUTOGRADER_ROOT": course_root, "PYTHONHASHSEED": "0",
            "TORCHINDUCTOR_CACHE_DIR": os.path.join(scratch, ".torchinductor"), **THREAD_VARS,
            **grading_environment(request.seed)}
