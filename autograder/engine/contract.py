"""The engine's contract: what a run is asked (:class:`RunRequest`, bounded by :class:`Limits`) and what it
answers (:class:`RunResult`, one :class:`CellResult` per cell).

Each record has one JSON form (``to_json``/``from_json``): the pool encodes the request with it and the warm
parent decodes it; the warm parent encodes the result and the pool decodes it. A field added here reaches
the other side of the pipe with nothing else to change. :func:`child_environment` is the one place that says
what environment the student's code runs in, and :func:`seeded_environment` the one place the run seed enters
it (both engines use it). The engine knows nothing of the code that runs beside the student's (the checks): what
it needs of it travels in the request's :class:`Harness`, which the grader fills in. What was in force around a
run is :class:`Isolation`, a record of facts; the words for people are the grader's.
"""
from __future__ import annotations

import base64
import math
import os
import sys
from dataclasses import asdict, dataclass, field, fields

# One thread per numerical library in a student's run: a class is graded one run per core, and
# threads would only fight over the cores (and count against the process limit).
THREAD_VARS = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
               "NUMEXPR_NUM_THREADS": "1", "VECLIB_MAXIMUM_THREADS": "1"}
# How many times a notebook is run again without a cell that hung or killed its process before the rest is given up.
MAX_RESTARTS = 10


@dataclass
class Limits:
    """Bounds on one submission's run. Each default is generous for honest work on 2 cores."""

    # seconds of wall time per cell before it is interrupted: stock nbgrader's default (ExecutePreprocessor.timeout),
    # so a loop times out where stock's would; the slowest test cell of the course takes 2.5 s
    cell_timeout: float = 30.0
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
    # Cell position -> its own limit in seconds, in place of cell_timeout: `grade` sets them from the course's
    # own timings (grade/submission/timelimits.py), so a loop is stopped in seconds where the course's cell
    # takes milliseconds. A cell not listed gets cell_timeout.
    cell_timeouts: dict[int, float] = field(default_factory=dict)

    # Every time limit of a run, decided here alone: the engines, the grader's options and nbgrader's config
    # all ask these.
    def first_timeout(self) -> float:
        """Seconds a cell may run before it is interrupted, until a cell of the run has timed out (the longest
        any cell gets: a cell's own limit is never above it)."""
        return float(self.cell_timeout)

    def timeout_for(self, index: int, *, after_timeout: bool = False) -> float:
        """Seconds cell ``index`` may run before it is interrupted: its own limit when it has one, else the first
        limit; once a cell of the run has timed out (``after_timeout``), no more than the later limit."""
        limit = min(float(self.cell_timeouts.get(index, self.cell_timeout)), self.first_timeout())
        return min(limit, self.later_timeout) if after_timeout and self.later_timeout else limit

    def later_cell_timeout(self) -> float:
        """Seconds a cell may run once a cell of the run has timed out (the first limit when there is no shorter
        one)."""
        return min(self.first_timeout(), self.later_timeout) if self.later_timeout else self.first_timeout()

    def budget(self) -> float:
        """Seconds time-outs may cost one run in all before the rest is not run (inf: no budget)."""
        return self.timeout_budget or float("inf")

    def whole_run(self, cells: int, max_restarts: int) -> float:
        """How long the pool waits for a warm parent's answer to a run of ``cells`` cells before giving it up."""
        return 120 + (cells * (self.first_timeout() + self.interrupt_grace) + 30) * (max_restarts + 1)

    def kernel_timeout(self, *, later: bool = False, index: int | None = None) -> int:
        """The nbclient fallback's per-cell timeout (whole seconds, at least 1, as nbclient counts): the first
        limit, or with ``later`` the one after a time-out; with ``index``, that cell's own."""
        if index is not None:
            return int(max(1, math.ceil(self.timeout_for(index, after_timeout=later))))
        return int(max(1, self.later_cell_timeout() if later else self.first_timeout()))

    @classmethod
    def for_grading(cls, cell_timeout: float | None = None, *, later_timeout: float | None = None,
                    timeout_budget: float | None = None, **others) -> "Limits":
        """The limits of a graded run: ``later_timeout`` by default a quarter of the cell timeout (at least 5 s,
        at most the cell timeout), ``timeout_budget`` by default three times it (at least 2 minutes)."""
        cell = cls.cell_timeout if cell_timeout is None else float(cell_timeout)
        return cls(cell_timeout=cell,
                   later_timeout=later_timeout if later_timeout is not None else min(cell, max(5.0, cell / 4)),
                   timeout_budget=timeout_budget if timeout_budget is not None else max(3 * cell, 120.0), **others)

    def to_json(self) -> dict:
        data = asdict(self)
        data["cell_timeouts"] = {str(i): s for i, s in self.cell_timeouts.items()}  # JSON keys are strings
        return data

    @classmethod
    def from_json(cls, data: dict) -> "Limits":
        scalars = {f.name: type(getattr(cls, f.name))(data[f.name]) for f in fields(cls)
                   if f.name in data and f.name != "cell_timeouts"}
        own = {int(i): float(s) for i, s in (data.get("cell_timeouts") or {}).items()}
        return cls(**scalars, cell_timeouts=own)


@dataclass(frozen=True)
class Harness:
    """What the code that runs beside the student's (the grader's checks) needs of a run. The engine obeys it
    without knowing what it is for; the grader fills it in."""

    environment: dict[str, str] = field(default_factory=dict)  # set in the run's environment
    seed_variable: str = ""  # the environment variable that carries the run seed ("": none)
    configure: str = ""  # "module:function", called with the run's environment before the first cell
    kept_mime: str = ""  # outputs of this MIME type are kept past the output cut (within their own budget)
    preload: tuple[str, ...] = ()  # modules the warm parent imports once, so that no run imports them again

    def to_json(self) -> dict:
        return {"environment": dict(self.environment), "seed_variable": self.seed_variable,
                "configure": self.configure, "kept_mime": self.kept_mime, "preload": list(self.preload)}

    @classmethod
    def from_json(cls, data: dict) -> "Harness":
        return cls(environment={str(k): str(v) for k, v in data["environment"].items()},
                   seed_variable=str(data["seed_variable"]), configure=str(data["configure"]),
                   kept_mime=str(data["kept_mime"]), preload=tuple(str(m) for m in data["preload"]))


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
    harness: Harness = field(default_factory=Harness)

    def to_json(self) -> dict:
        return {"sources": list(self.sources), "files": _encode(self.files), "solutions": _encode(self.solutions),
                "seed": self.seed, "limits": self.limits.to_json(), "hide": list(self.hide), "keep": list(self.keep),
                "max_restarts": self.max_restarts, "namespaces": self.namespaces, "harness": self.harness.to_json()}

    @classmethod
    def from_json(cls, data: dict) -> "RunRequest":
        return cls(sources=[str(s) for s in data["sources"]], files=_decode(data["files"]),
                   solutions=_decode(data["solutions"]), seed=int(data["seed"]),
                   limits=Limits.from_json(data["limits"]), hide=[str(h) for h in data["hide"]],
                   keep=[str(k) for k in data["keep"]], max_restarts=int(data["max_restarts"]),
                   namespaces=bool(data["namespaces"]), harness=Harness.from_json(data["harness"]))


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


@dataclass(frozen=True)
class Isolation:
    """What confined a run, as facts (the grader words them for people). ``kind`` "sandbox": the warm engine's,
    with the facts below; "none": the nbclient fallback (a scratch folder, nothing else); "unknown": the run
    never said."""

    kind: str = "sandbox"
    bubblewrap: bool = False  # the warm parent runs inside bubblewrap (private filesystem, no network)
    user_namespace: bool = False
    no_network: bool = False
    private_tmp: bool = False
    course_hidden: bool = False  # the course's folders are covered in the private filesystem
    runs_as_root: bool = False  # root, because user nobody could not read the interpreter's files
    user_nobody: bool = False
    no_capabilities: bool = False
    rlimits: bool = False  # memory, CPU, processes, file size

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> "Isolation":
        return cls(**{f.name: type(getattr(cls, f.name))(data[f.name]) for f in fields(cls) if f.name in data})


@dataclass
class RunResult:
    cells: list[CellResult]
    isolation: Isolation | None  # what was in force (None only where nothing ran)
    problems: list[str] = field(default_factory=list)  # run-level trouble a person should read
    costs: dict[str, float] = field(default_factory=dict)  # CPU seconds by phase (see ..costs), for --profile
    # what the sandbox reported in force, from which the pool words ``isolation`` (it alone knows whether the
    # warm parent is inside bubblewrap)
    facts: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"cells": [c.to_json() for c in self.cells],
                "isolation": self.isolation.to_json() if self.isolation is not None else None,
                "problems": list(self.problems), "costs": dict(self.costs), "facts": list(self.facts)}

    @classmethod
    def from_json(cls, data: dict) -> "RunResult":
        return cls(cells=[CellResult.from_json(c) for c in data["cells"]], isolation=Isolation.from_json(data["isolation"])
                   if data["isolation"] is not None else None,
                   problems=[str(p) for p in data["problems"]],
                   costs={str(k): float(v) for k, v in data["costs"].items()}, facts=[str(f) for f in data["facts"]])


def _encode(files: dict[str, bytes]) -> dict[str, str]:
    return {str(name): base64.b64encode(bytes(data)).decode("ascii") for name, data in files.items()}


def _decode(files: dict[str, str]) -> dict[str, bytes]:
    return {str(name): base64.b64decode(data) for name, data in files.items()}


def seeded_environment(request: RunRequest) -> dict[str, str]:
    """What the harness sets in a run's environment, the run seed included: the one route of the seed into a
    run, in both engines."""
    seed = {request.harness.seed_variable: str(request.seed)} if request.harness.seed_variable else {}
    return {**request.harness.environment, **seed}


def child_environment(request: RunRequest, *, scratch: str, course_root: str) -> dict[str, str]:
    """The whole environment of the process that runs the cells: nothing of the grader's own."""
    path = os.pathsep.join([os.path.dirname(sys.executable), "/usr/local/bin", "/usr/bin", "/bin"])
    return {"PATH": path, "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "HOME": scratch, "TMPDIR": scratch,
            "MPLCONFIGDIR": scratch, "MPLBACKEND": "module://matplotlib_inline.backend_inline",
            "AUTOGRADER_ROOT": course_root, "PYTHONHASHSEED": "0",
            "TORCHINDUCTOR_CACHE_DIR": os.path.join(scratch, ".torchinductor"), **THREAD_VARS,
            **seeded_environment(request)}
