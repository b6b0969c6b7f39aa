"""How the grader runs a notebook's cells on the engine: what the course adds to a run request.

The engine (:mod:`autograder.engine`) is a generic cell runner. The grader tells it, in each
:class:`~autograder.engine.RunRequest`, what the checks need (:func:`harness`: evidence mode, the run seed, the MIME
type of their evidence, the modules to import once in the warm parent) and which earlier notebooks' solutions a
run may import (:func:`earlier_solutions`). :func:`run_cells` is the one call that builds such a request.
"""
from __future__ import annotations

import functools
import importlib.util
import json
import os
import pkgutil
from pathlib import Path
from typing import Iterable

from ... import paths
from ...engine import Harness, Limits, RunRequest, RunResult, WarmPool
from ...engine import fallback
from ...engine import pool as warm_engine
from ...engine.contract import MAX_RESTARTS, seeded_environment
from ...engine.measure import merge, thread_timer

ENGINES = ("auto", "engine", "nbclient")  # "auto" and "engine": the warm sandboxed engine; "nbclient": a plain kernel
DEFAULT_ENGINE = "auto"

# The checks' mode under the grader (checks.core reads it from AUTOGRADER_MODE): record evidence, compare nothing.
EVIDENCE_MODE = "evidence"

# What a notebook's graded run imports beyond the warm parent's usual list (engine.warm.WARM_IMPORTS; sys.modules
# before and after its solution runs), which every submission's fresh process would import again: 05's and 10's
# optimisers import torch._dynamo (and sympy) on their first step, 1.2 core-seconds a submission, as much as 05's
# own cells; 10 builds GPT-2 and Llama modules with transformers, another 1.2. A class that grades one of these
# notebooks has its warm parents import them once (:func:`notebook_preloads`, given to the pool's
# ``expect``); a class without them does not pay for them. None of them starts a thread.
# torch itself is one of them: 01 and 06 never import it, and a class of only those would pay its import
# (1.5-2 core-seconds) in every warm parent for nothing. A pool not told which notebooks it grades preloads
# the engine's pool.UNKNOWN_PRELOAD.
NOTEBOOK_IMPORTS = {
    "02": ("torch",), "03": ("torch",), "04": ("torch",),
    "05": ("torch", "torch._dynamo"),
    "07": ("torch",), "08": ("torch",), "09": ("torch",),
    # autograder.offline_models: transformers' GPT-2 and Llama with the model hub switched off first
    "10": ("torch", "torch._dynamo", "autograder.offline_models"),
}


def notebook_preloads(assignments) -> tuple[str, ...]:
    """The modules the warm parents of a class grading ``assignments`` import besides the usual ones and the
    checks' (:func:`preload`): what those notebooks' runs would each import again (:data:`NOTEBOOK_IMPORTS`)."""
    return tuple(sorted({m for a in assignments for m in NOTEBOOK_IMPORTS.get(str(a)[:2], ())}))


def light_start(assignments) -> bool:
    """Whether a class grading ``assignments`` should also start a light warm parent (the pool's
    ``start_warming(light=True)``): some of its notebooks need none of :data:`NOTEBOOK_IMPORTS`' modules, which
    the others' parents spend seconds importing (in a term, 01 is graded first and needs no torch)."""
    return any(not NOTEBOOK_IMPORTS.get(str(a)[:2]) for a in assignments)


@functools.lru_cache(maxsize=1)
def preload() -> tuple[str, ...]:
    """The modules a warm parent imports for the checks: their core, what their set-up cells read, and every
    checks module. Found without importing the checks (numpy and all): ``grade`` asks before it starts the warm
    parents, which should not wait for that."""
    found = importlib.util.find_spec("autograder.checks")
    return ("autograder.checks.core", "autograder.reference", "autograder.paths",
            *(f"autograder.checks.{info.name}" for info in pkgutil.iter_modules(found.submodule_search_locations)))


@functools.lru_cache(maxsize=None)
def harness(assignment: str = "") -> Harness:
    """What the checks need of every graded run of ``assignment``: evidence mode and the run seed in the
    environment (read once, before any student code, by :func:`autograder.checks.core.configure_from_environment`),
    their evidence kept past the output cut, and the modules the warm parent imports once: the checks'
    (:func:`preload`), then what that notebook's runs would each import again (:data:`NOTEBOOK_IMPORTS`). The pool
    hands the run to a warm parent that holds those already when it can (a class of 01 and 10 grades 01 on a light
    parent while the others still import torch and transformers)."""
    from ...checks import core  # late: numpy and the checks, which grade's start need not wait for (see preload)

    return Harness(environment={core.MODE_ENV: EVIDENCE_MODE, "NBGRADER_EXECUTION": "autograde"},
                   seed_variable=core.SEED_ENV, configure="autograder.checks.core:configure_from_environment",
                   kept_mime=core.EVIDENCE_MIME, preload=preload() + notebook_preloads([assignment]))


def earlier_solutions(assignment: str) -> dict[str, bytes]:
    """The reference notebooks a run of ``assignment`` may read: those numbered before it, without their
    outputs (a run imports their code cells, :func:`autograder.reference.load_cells`; the outputs, figures
    included, were most of the bytes every submission's request carried and its run parsed)."""
    if not paths.ASSIGNMENT_RE.match(assignment or ""):
        return {}
    number = int(assignment[:2])
    out = {}
    for path in sorted(paths.solutions_dir().glob("*.ipynb")):
        if paths.ASSIGNMENT_RE.match(path.stem) and int(path.stem[:2]) < number:
            st = path.stat()
            out[path.name] = _without_outputs(str(path), st.st_mtime_ns, st.st_size)
    return out


@functools.lru_cache(maxsize=64)
def _without_outputs(path: str, mtime_ns: int, size: int) -> bytes:
    """The notebook at ``path`` with every code cell's outputs and execution count cleared (cached while the
    file is unchanged: one parse per notebook and grader, not one per submission)."""
    with open(path, "rb") as f:
        nb = json.loads(f.read())
    for cell in nb.get("cells", []):
        if cell.get("cell_type") == "code":
            cell["outputs"], cell["execution_count"] = [], None
    return json.dumps(nb, ensure_ascii=False).encode("utf-8")


def request(sources: list[str], *, assignment: str, files: dict[str, bytes] | None = None, seed: int = 0,
            limits: Limits | None = None, hide: Iterable[str | os.PathLike] = (), max_restarts: int = MAX_RESTARTS,
            namespaces: bool | None = None) -> RunRequest:
    """A graded run of ``sources`` for ``assignment``: the checks' harness, the earlier solutions, the seed."""
    return RunRequest(sources=[str(s) for s in sources], files=dict(files or {}),
                      solutions=earlier_solutions(assignment), seed=int(seed), limits=limits or Limits(),
                      hide=[str(Path(h)) for h in hide], max_restarts=max_restarts, namespaces=namespaces,
                      harness=harness(assignment))


def run_cells(sources: list[str], *, assignment: str, files: dict[str, bytes] | None = None, seed: int = 0,
              limits: Limits | None = None, hide: Iterable[str | os.PathLike] = (), max_restarts: int = MAX_RESTARTS,
              pool: WarmPool | None = None, namespaces: bool | None = None, engine: str = "engine") -> RunResult:
    """Execute ``sources`` in order in one fresh interpreter, as the grader runs a submission of ``assignment``
    (:func:`autograder.engine.run`; with ``engine="nbclient"`` a plain Jupyter kernel, :func:`autograder.engine.fallback.run`). The
    checks run in evidence mode with ``seed`` as the run seed; ``hide`` names more folders the code must not
    see; the notebooks before ``assignment`` are there to import."""
    costs: dict[str, float] = {}
    with thread_timer(costs, "sandbox"):  # staging the earlier solutions, as the engine stages the run's files
        run = request(sources, assignment=assignment, files=files, seed=seed, limits=limits, hide=hide,
                      max_restarts=max_restarts, namespaces=namespaces)
    if engine == "nbclient":
        return fallback.run(run, label=assignment)
    result = warm_engine.run(run, pool=pool)
    result.costs = merge(costs, result.costs)
    return result


def grading_environment(seed: int) -> dict[str, str]:
    """What a graded run's environment says for the checks (evidence mode, the run ``seed``), for code that runs
    the notebooks without the engine (the benchmarks' floor)."""
    return seeded_environment(RunRequest(sources=[], seed=seed, harness=harness()))
