"""benchmarks/term.py's floor split: one run of each solution, every cell timed and split by who does the work.

The learner's part is the reference solution's own functions on the checks' inputs (every call a check makes
into a function or class a solution cell defined, timed in-process with the checks in evidence mode); the
course's part is the rest (hidden-test inputs, models built for comparison, demo cells, the grader itself).
The same cells are also run, uninstrumented, in children forked from the warm interpreter, as a graded
submission's run starts. It imports and runs every solution, so it runs in a process of its own:

    python benchmarks/term_split.py [--runs 2] [--seed 1] ASSIGNMENT ...

prints the JSON :func:`split_runs` returns; :func:`splits_measured` starts it.
"""
from __future__ import annotations

import argparse
import contextlib
import functools
import gc
import inspect
import json
import os
import subprocess
import sys
import tempfile
import time
import types
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script: the repository's tests/ holds the class builders
    sys.path.insert(0, str(ROOT))

from tests.builders import SETUP, venv_env  # noqa: E402


class Meter:
    """CPU (``time.process_time``) of one notebook run, cell by cell, split by who does the work."""

    def __init__(self):
        self.depth = 0  # > 0 inside a learner's function (its nested calls are its own)
        self.in_check = 0  # > 0 inside a check's call
        self.cell: dict[str, float] = {}
        self.checks: list[dict] = []

    def add(self, key: str, seconds: float) -> None:
        self.cell[key] = self.cell.get(key, 0.0) + seconds


def learner_wrapper(fn, meter: Meter):
    """``fn`` timed: the outermost call into a learner's code adds its CPU to the meter."""
    @functools.wraps(fn)
    def timed(*args, **kwargs):
        if meter.depth:
            return fn(*args, **kwargs)
        meter.depth = 1
        t0 = time.process_time()
        try:
            return fn(*args, **kwargs)
        finally:
            meter.depth = 0
            meter.add("learner" if meter.in_check else "learner outside checks", time.process_time() - t0)

    timed.term_learner = True
    return timed


def wrap_learner_code(namespace: dict, before: dict[str, int], meter: Meter, module: str) -> list[str]:
    """Time every function and class (its methods) that the cell just run defined in ``namespace``."""
    def wrapped(f):
        if getattr(f, "term_learner", False) or inspect.isgeneratorfunction(f):
            return f
        return learner_wrapper(f, meter)

    names = []
    for name, value in list(namespace.items()):
        if before.get(name) == id(value) or getattr(value, "__module__", None) != module:
            continue
        if isinstance(value, types.FunctionType):
            namespace[name] = wrapped(value)
            names.append(name)
        elif isinstance(value, type):
            for attr, member in list(vars(value).items()):
                if isinstance(member, types.FunctionType):
                    setattr(value, attr, wrapped(member))
                elif isinstance(member, (staticmethod, classmethod)):
                    setattr(value, attr, type(member)(wrapped(member.__func__)))
            names.append(name)
    return names


@contextlib.contextmanager
def instrumented_checks(meter: Meter):
    """The checks' calls timed: building the cases (inputs, hidden ones included), each captured call (the
    learner's part of it is timed by :func:`learner_wrapper`), encoding what it returned, and emitting it."""
    from autograder.checks import evidence, registry

    saved = (registry.Check.__call__, registry.Check.cases, registry.capture, registry.emit, evidence.encode)
    call, cases, capture, emit, encode = saved
    depth = [0]

    def timed_call(self, obj, *, hidden=False):
        before = dict(meter.cell)
        meter.in_check += 1
        t0 = time.process_time()
        try:
            return call(self, obj, hidden=hidden)
        finally:
            meter.in_check -= 1
            spent = {k: v - before.get(k, 0.0) for k, v in meter.cell.items()}
            meter.checks.append({"check": self.name + (" (hidden)" if hidden else ""),
                                 "seconds": time.process_time() - t0, **spent})

    def timed(key, fn):
        def run(*args, **kwargs):
            t0 = time.process_time()
            try:
                return fn(*args, **kwargs)
            finally:
                meter.add(key, time.process_time() - t0)
        return run

    def timed_encode(value, _depth=0):
        if depth[0]:
            return encode(value, _depth)
        depth[0] = 1
        t0 = time.process_time()
        try:
            return encode(value, _depth)
        finally:
            depth[0] = 0
            meter.add("encode", time.process_time() - t0)

    registry.Check.__call__ = timed_call
    registry.Check.cases = timed("inputs", cases)
    registry.capture = timed("calls", capture)
    registry.emit = timed("emit", emit)
    evidence.encode = timed_encode
    try:
        yield
    finally:
        registry.Check.__call__, registry.Check.cases, registry.capture, registry.emit, evidence.encode = saved


def cell_kinds(nb) -> list[tuple[str, str, str]]:
    """(kind, label, source) of each code cell: setup, library, solution, test or demo."""
    from autograder.nbio import grade_id, is_solution_cell, is_test_cell

    out = []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        tags = set(cell.metadata.get("tags", []))
        if is_test_cell(cell):
            kind = "test"
        elif is_solution_cell(cell):
            kind = "solution"
        elif "setup" in tags or SETUP.search(cell.source):
            kind = "setup"
        elif "library" in tags:
            kind = "library"
        else:
            kind = "demo"
        first = next((line for line in cell.source.splitlines() if line.strip()), "")
        out.append((kind, grade_id(cell) or f"cell {i}: {first[:60]}", cell.source))
    return out


def forked_run(shell, sources: list[str]) -> float:
    """CPU seconds of ``sources`` run in a child forked from this (warm) process, set up as the grader's cell
    runner sets itself up (one torch thread, outputs to the recorder, figures as text), with no sandbox and nothing
    sent back but the number: what a graded submission's cells cost in a fresh process."""
    from autograder.engine.shell import figures_as_text, prepare_child, run_cell

    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            os.close(r)
            torch = sys.modules.get("torch")
            if torch is not None:
                torch.set_num_threads(1)
            prepare_child(shell, 2 * 2**20)
            figures_as_text(shell)
            t0 = time.process_time()
            failed = sum(run_cell(shell, s)[0] != "ok" for s in sources)
            os.write(w, json.dumps([time.process_time() - t0, failed]).encode())
        finally:
            os._exit(0)
    os.close(w)
    data = b""
    while chunk := os.read(r, 65536):
        data += chunk
    os.close(r)
    os.waitpid(pid, 0)
    seconds, failed = json.loads(data or b"[NaN, 1]")
    if failed:
        raise RuntimeError(f"{failed} of the solution's cells failed in a forked child")
    return seconds


def split_runs(assignments: list[str], runs: int = 2, seed: int = 1) -> dict[str, dict[str, list]]:
    """{"forked": each assignment's solution cells in ``runs`` children forked from the warm interpreter, before
    any notebook ran in it (:func:`forked_run`), "runs": its solution run ``runs`` + 1 times in this process (the
    first warms it up), with floor.py's set-up (evidence mode, a warm interpreter, figures as text), every cell
    timed and split}; call it in a process of its own (:func:`splits_measured`)."""
    from autograder.grade.submission.running import grading_environment, notebook_preloads

    os.environ.update(grading_environment(seed))
    from autograder import paths, reference
    from autograder.checks import core
    from autograder.engine.shell import figures_as_text, prepare_child, run_cell
    from autograder.engine.warm import warm_up
    from autograder.nbio import read_notebook

    shell = warm_up(notebook_preloads(assignments))  # what the class's warm parents import
    core.configure_from_environment()
    os.chdir(tempfile.mkdtemp(prefix="term-split-"))
    notebooks = {a: cell_kinds(read_notebook(paths.solutions_dir() / f"{a}.ipynb")) for a in assignments}
    gc.collect()
    gc.freeze()  # as the warm parent does before it forks
    forked = {a: [forked_run(shell, [c[2] for c in notebooks[a]]) for _ in range(runs)] for a in assignments}
    prepare_child(shell, 2 * 2**20)
    figures_as_text(shell)
    module = shell.user_module.__name__
    out: dict[str, list[dict]] = {}
    for a in assignments:
        cells = notebooks[a]
        out[a] = []
        for _ in range(runs + 1):
            shell.reset(new_session=False)
            reference.import_notebook.cache_clear()  # a submission imports the earlier notebooks itself
            meter = Meter()
            items, failed = [], []
            with instrumented_checks(meter):
                for kind, label, source in cells:
                    before = {k: id(v) for k, v in shell.user_ns.items()} if kind == "solution" else {}
                    meter.cell = {}
                    first_check = len(meter.checks)
                    t0 = time.process_time()
                    status, _ = run_cell(shell, source)
                    seconds = time.process_time() - t0
                    if status != "ok":
                        failed.append(label)
                    if kind == "solution":
                        wrap_learner_code(shell.user_ns, before, meter, module)
                    items.append({"kind": kind, "label": label, "seconds": seconds, **meter.cell,
                                  "checks": meter.checks[first_check:]})
            if failed:
                raise RuntimeError(f"{a}: the solution's cells {failed} failed; no split can be measured")
            out[a].append({"items": items})
    return {"forked": forked, "runs": out}


@dataclass
class Split:
    """One run of a notebook's solution, split (CPU seconds)."""

    total: float
    learner: float  # the solution's functions called by the checks: the learner's part
    inputs: float  # building the checks' cases (inputs, hidden ones too; weights of the models to compare)
    harness: float  # course code inside a check's call (models built, weights copied, copies of the inputs)
    evidence: float  # encoding what the calls returned and emitting it
    tests_other: float  # the rest of the test cells (IPython, the checks' own bookkeeping, the printed line)
    demo: float  # cells that are neither set-up, library, solution nor test (the learner's functions in them too)
    demo_alone: float  # the demo cells that call none of the learner's functions (work the same for everyone)
    setup: float
    library: float
    solutions: float  # running the solution cells themselves (the definitions)

    @property
    def course(self) -> float:
        return self.total - self.learner

    @classmethod
    def of(cls, run: dict) -> "Split":
        by = {k: 0.0 for k in ("test", "demo", "setup", "library", "solution")}
        parts = {k: 0.0 for k in ("learner", "inputs", "calls", "encode", "emit")}
        alone = 0.0
        for item in run["items"]:
            by[item["kind"]] += item["seconds"]
            if item["kind"] == "demo" and item.get("learner outside checks", 0.0) + item.get("learner", 0.0) < 1e-3:
                alone += item["seconds"]
            if item["kind"] == "test":
                for k in parts:
                    parts[k] += item.get(k, 0.0)
        harness = parts["calls"] - parts["learner"] - parts["encode"]
        return cls(total=sum(by.values()), learner=parts["learner"], inputs=parts["inputs"], harness=harness,
                   evidence=parts["encode"] + parts["emit"],
                   tests_other=by["test"] - parts["inputs"] - parts["calls"] - parts["emit"],
                   demo=by["demo"], demo_alone=alone, setup=by["setup"], library=by["library"],
                   solutions=by["solution"])


def course_items(run: dict) -> list[tuple[float, str]]:
    """(course-side CPU, what) of each cell, a test cell per check and part: the work that is not the learner's
    (their functions called by a check); a demo cell is the course's whole, the learner's functions in it too."""
    out = []
    for item in run["items"]:
        if item["kind"] != "test":  # a demo is the course's, also where it runs the learner's functions
            mine = item.get("learner", 0.0) + item.get("learner outside checks", 0.0)
            what = f"{item['kind']} {item['label']}"
            if mine > 0.001:
                what += f" ({mine:.3f} s of it in the learner's functions)"
            out.append((item["seconds"], what))
            continue
        for c in item["checks"] or [{"check": item["label"], "seconds": item["seconds"]}]:
            calls = c.get("calls", 0.0) - c.get("learner", 0.0) - c.get("encode", 0.0)
            out.append((c["seconds"] - c.get("learner", 0.0),
                        f"check {c['check']}: inputs {c.get('inputs', 0.0):.3f}, course code in the calls "
                        f"{calls:.3f}, evidence {c.get('encode', 0.0) + c.get('emit', 0.0):.3f} "
                        f"(learner {c.get('learner', 0.0):.3f})"))
    return sorted(out, reverse=True)


def splits_measured(assignments: list[str], runs: int, seed: int) -> dict[str, dict[str, list]]:
    """:func:`split_runs` in a process of its own (this file as a script)."""
    proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--runs", str(runs), "--seed", str(seed),
                           *assignments], env=venv_env(), capture_output=True, text=True)
    if proc.returncode:
        raise RuntimeError(f"the split failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("assignments", nargs="+")
    parser.add_argument("--runs", type=int, default=2, help="forked children and timed runs (and one to warm up)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    stdout = os.fdopen(os.dup(1), "w")  # the cells' prints go to the recorder
    json.dump(split_runs(args.assignments, args.runs, args.seed), stdout)
    stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
