"""A synthetic term graded end to end: all ten notebooks, a class of students who write their code differently.

    python benchmarks/term.py [--students 50 | --quick] [--repeat 1] [--runs 2] [--jobs N] [--seed S]
                              [--assignments 01_tokens_and_ids ...] [--timeout SECONDS] [--keep DIR]
                              [--stock-students 4] [--stock-assignments 01_... 02_...] [--no-stock]

The term: every student hands in every notebook. Per hundred submissions of a notebook, 70 are right, 16 partly
wrong (one or two exercises hold a known mistake of tests/checks/test_nbNN.py), 8 half done (the later half of
the exercises left as released) and 4 blank; and per hundred submissions of the term one loops (a busy
``while`` in its last exercise that is not a prediction question) and one crashes its process (``os._exit`` in
its middle one), at least one of each in any term. The right code is written in four ways (as given, typed
without the solution markers, without comments, with a print after each answer and a scratch cell), and each
student's first answer names them, so no two submissions are the same file. The class is built from
tests/builders.py by composition.

It grades the term with ``python -m autograder grade --profile`` (a subprocess, as benchmarks/grading.py does), in
two runs into one --out: the ordinary submissions, then the looping and crashing ones added (a re-run grades only
what is new), so that profile.json counts those apart (a notebook's phases are summed over its submissions). It
prints:

* per notebook, core-seconds per submission (the grader's own account of its whole process tree, profile.json,
  with the class's shared costs spread over every submission, as benchmarks/grading.py does): every kind, the
  ordinary ones, the right ones (estimated: the notebook's CPU shared by each submission's wall seconds in its
  worker); the floor (benchmarks/floor.py: the solution's cells, tests included, in one warm interpreter, figures
  not drawn); the learner's part (the reference solution's own functions on the checks' inputs: every call a check
  makes into a function or class a solution cell defined, timed in-process with the checks in evidence mode); the
  course's part (the rest: hidden-test inputs, models built for comparison, demo cells, the grader itself); their
  ratios; where the course's part of the floor goes (cell by cell and check by check, the largest named, and the
  same cells in a child forked from the warm interpreter, as a submission's run starts); ``grade --profile``'s
  phases;
* the whole term: wall time, CPU, the first result's latency (the first file under --out/results, polled, and
  profile.json's timeline), and the time for 500 students, extrapolated as
  ``T(N) = S + (F + c * N * A) / k``: S the wall time to the first result, F the class's once-only CPU
  (references, discovery), c the core-seconds per submission (both runs, the looping and crashing ones at their
  rate), A the notebooks, k the cores; checked against the grading it came from;
* stock ``nbgrader autograde`` on a sample of the same submissions (default 4 students x 01-04), with every
  per-cell score asserted equal to ours (exit 1 when one differs).

CPU of the whole process tree: as root where cgroup v1's cpuacct is mounted (as tests/conftest.py does for the
test command), each run goes in a cgroup of its own and its ``cpuacct.usage`` is read, which counts the
processes inside bubblewrap's PID namespace; ``getrusage(RUSAGE_CHILDREN)`` is shown beside it and misses those
(a warm parent's tree is never reaped into ours). Elsewhere profile.json's total is the figure.

Timings on a shared machine are noisy: the floor and the split are measured ``--runs`` times (at least 2; min and
spread), the term ``--repeat`` times.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import tokenize
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script: the repository's tests/ holds the class builders
    sys.path.insert(0, str(ROOT))

# --------------------------------------------------------------------------- the students

# Per hundred submissions of a notebook; "looping" and "crashing" are per hundred submissions of the term.
PER_HUNDRED = {"right": 70, "wrong": 16, "partial": 8, "blank": 4}
TROUBLE = ("looping", "crashing")  # one each per hundred submissions, at least one each in a term
KINDS = (*PER_HUNDRED, *TROUBLE)
STYLES = ("as given", "typed without markers", "without comments", "with prints and a scratch cell")
QUICK_STUDENTS = 4
TERM_STUDENTS = 500  # the term the extrapolation is for
CORES = 2  # the machine the goals are stated for


def allocate(n: int, weights: dict[str, int], at_least_one: bool = False) -> dict[str, int]:
    """``n`` split in proportion to ``weights`` (largest remainder, ties in the weights' order); with
    ``at_least_one`` every kind gets one when ``n`` is at least the number of kinds, taken from the largest."""
    if n < 0:
        raise ValueError(f"cannot allocate {n} submissions")
    total = sum(weights.values())
    exact = {k: n * w / total for k, w in weights.items()}
    counts = {k: int(math.floor(v)) for k, v in exact.items()}
    order = sorted(weights, key=lambda k: (-(exact[k] - counts[k]), list(weights).index(k)))
    for k in order[:n - sum(counts.values())]:
        counts[k] += 1
    if at_least_one and n >= len(weights):
        for k in weights:
            if counts[k] == 0:
                counts[max(counts, key=counts.get)] -= 1
                counts[k] = 1
    return counts


def term_kinds(students: list[str], assignments: list[str]) -> dict[tuple[str, str], str]:
    """(student, assignment) -> kind. Each notebook gets the per-hundred mix (shuffled, the same for any run);
    the looping and crashing submissions, ``ceil(submissions / 100)`` of each, replace right ones, spread over
    the notebooks in turn (looping on the even turns, crashing on the odd ones)."""
    if not students or not assignments:
        raise ValueError("a term needs at least one student and one notebook")
    kinds: dict[tuple[str, str], str] = {}
    rights: dict[str, list[str]] = {}
    for a in assignments:
        counts = allocate(len(students), PER_HUNDRED, at_least_one=True)
        mix = [k for k, c in counts.items() for _ in range(c)]
        random.Random(a).shuffle(mix)
        for s, k in zip(students, mix):
            kinds[s, a] = k
        rights[a] = [s for s in students if kinds[s, a] == "right"]
    each = math.ceil(len(students) * len(assignments) / 100)
    turn = 0
    for i in range(each * len(TROUBLE)):
        kind = TROUBLE[i % len(TROUBLE)]
        for _ in range(len(assignments)):  # the next notebook with a right submission left
            a = assignments[turn % len(assignments)]
            turn += 1
            if rights[a]:
                kinds[rights[a].pop(), a] = kind
                break
    return kinds


def strip_comments(source: str) -> str:
    """``source`` without its comments (a line that held only a comment goes); unchanged when it does not
    tokenize (a magic, say)."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError):
        return source
    cut = {t.start[0] - 1: t.start[1] for t in tokens if t.type == tokenize.COMMENT}
    out = []
    for i, line in enumerate(source.splitlines(keepends=True)):
        if i in cut:
            kept = line[:cut[i]].rstrip()
            if not kept:
                continue
            line = kept + "\n"
        out.append(line)
    return "".join(out)


def restyle(source: str, style: int, exercise: str) -> str:
    """A right answer as one of :data:`STYLES` writes it."""
    from tests.builders import SOLUTION_MARKER

    if style == 0:
        return source
    typed = "".join(line for line in source.splitlines(keepends=True) if not SOLUTION_MARKER.match(line))
    if style == 1:
        return typed
    if style == 2:
        return strip_comments(typed)
    return typed.rstrip("\n") + f"\n\nprint({exercise + ' written'!r})\n"


def looping(exercise: str) -> str:
    return (f"def {exercise}(*args, **kwargs):\n    result = None\n    while result is None:  # never set\n"
            "        pass\n    return result\n")


def crashing(exercise: str) -> str:
    return (f"def {exercise}(*args, **kwargs):\n    import os\n"
            "    os._exit(70)  # the process dies, as a crash in C code\n")


def term_notebook(kind: str, assignment: str, student: str, index: int):
    """The notebook ``student`` (the ``index``-th) of ``kind`` hands in for ``assignment``."""
    from autograder.checks.questions import is_question
    from autograder.nbio import grade_id, is_solution_cell
    from tests.builders import add_cell, blank_notebook, mistake_for, one_of, solutions, solve

    one_of(kind, KINDS, "a term's submission")
    answers = solutions(assignment)
    exercises = list(answers)
    style = index % len(STYLES)
    answered = exercises if kind != "partial" else exercises[:(len(exercises) + 1) // 2]
    nb = blank_notebook(assignment)
    if kind == "blank":
        return nb
    first = True
    for cell in nb.cells:
        if is_solution_cell(cell) and grade_id(cell) in answered:
            source = restyle(answers[grade_id(cell)], style, grade_id(cell))
            cell.source = (f"# {student}'s answers\n" if first else "") + source
            first = False
    if style == 3:
        add_cell(nb, "scratch = [n * n for n in range(5)]  # trying things out\nscratch\n")
    if kind == "wrong":
        exercise, source = mistake_for(assignment, index)
        solve(nb, exercise, source)
        if index % 2:  # every other one makes a second mistake, elsewhere
            other, source = mistake_for(assignment, index + 7)
            if other != exercise:
                solve(nb, other, source)
    functions = [e for e in exercises if not is_question(assignment, e)] or exercises
    if kind == "looping":
        solve(nb, functions[-1], looping(functions[-1]))
    elif kind == "crashing":
        solve(nb, functions[len(functions) // 2], crashing(functions[len(functions) // 2]))
    return nb


def build_term(root: Path, trouble: Path, students: list[str], assignments: list[str]) -> dict[tuple[str, str], str]:
    """Every student's notebooks in nbgrader's layout, under ``root``, the looping and crashing ones under
    ``trouble``; returns (student, assignment) -> kind."""
    from tests.builders import write_submission

    kinds = term_kinds(students, assignments)
    # the known mistakes come from tests/checks/test_nbNN.py, whose imports print the pieces they take
    with contextlib.redirect_stdout(io.StringIO()):
        for i, s in enumerate(students):
            for a in assignments:
                write_submission(trouble if kinds[s, a] in TROUBLE else root, s,
                                 term_notebook(kinds[s, a], a, s, i), a)
    return kinds


# --------------------------------------------------------------------------- the learner's part of the floor

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
    import functools

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
    import inspect
    import types

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
    from tests.builders import SETUP

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
    timed and split}; call it in a process of its own (``term.py --split-only``)."""
    from autograder.grade.submission.running import grading_environment, notebook_preloads

    os.environ.update(grading_environment(seed))
    from autograder import paths, reference
    from autograder.checks import core
    from autograder.engine.shell import figures_as_text, prepare_child, run_cell
    from autograder.engine.warm import warm_up
    from autograder.nbio import read_notebook

    import gc

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


# --------------------------------------------------------------------------- measuring

@dataclass
class Spread:
    """Repeated measurements of one number: reported as the least and the spread (max - min)."""

    values: list[float]

    @property
    def min(self) -> float:
        return min(self.values) if self.values else 0.0

    @property
    def spread(self) -> float:
        return max(self.values) - min(self.values) if self.values else 0.0

    def __str__(self) -> str:
        return f"{self.min:.3f}±{self.spread:.3f}"


@contextlib.contextmanager
def cpu_meter():
    """The CPU of everything started inside the block, this process included while in it: a cgroup v1
    ``cpuacct`` of its own (root only), which also counts processes in a PID namespace of their own; yields a
    function reading it (None where there is no such cgroup). RUSAGE_CHILDREN is the caller's business."""
    base = Path("/sys/fs/cgroup/cpuacct")
    group = None
    home = None
    if os.geteuid() == 0 and (base / "cgroup.procs").exists():
        try:
            for line in Path("/proc/self/cgroup").read_text().splitlines():
                _, controllers, where = line.split(":", 2)
                if "cpuacct" in controllers.split(","):
                    home = base / where.lstrip("/")
            group = base / f"autograder-term-{os.getpid()}-{time.monotonic_ns()}"
            group.mkdir()
            (group / "cgroup.procs").write_text(str(os.getpid()))
        except OSError:
            group = None
    try:
        yield (lambda: int((group / "cpuacct.usage").read_text()) / 1e9) if group else (lambda: None)
    finally:
        if group is not None:
            with contextlib.suppress(OSError):
                ((home or base) / "cgroup.procs").write_text(str(os.getpid()))
            for _ in range(50):  # the grader's last processes may take a moment to go
                try:
                    group.rmdir()
                    break
                except OSError:
                    time.sleep(0.1)


def children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def first_file(folder: Path, t0: float, found: list, stop: threading.Event) -> None:
    """Note in ``found`` the seconds from ``t0`` to the first file anywhere under ``folder``."""
    while not stop.is_set():
        try:
            for sub in os.scandir(folder):
                if sub.is_file() or (sub.is_dir() and any(True for _ in os.scandir(sub.path))):
                    found.append(time.perf_counter() - t0)
                    return
        except OSError:
            pass
        stop.wait(0.02)


@dataclass
class Graded:
    """One ``grade --profile`` of the term."""

    wall: float
    cgroup_cpu: float | None
    rusage_cpu: float
    first_polled: float | None
    profile: dict
    out: Path
    stdout: str

    @property
    def cpu(self) -> float:
        return self.cgroup_cpu if self.cgroup_cpu is not None else self.profile["total_cpu"]


def grade_term(submissions: Path, out: Path, *, seed: int, jobs: int | None, timeout: float | None,
               force: bool = True) -> Graded:
    from tests.builders import venv_env

    cmd = [sys.executable, "-m", "autograder", "grade", str(submissions), "--out", str(out), "--seed", str(seed),
           "--profile"] + (["--force"] if force else []) + (["--jobs", str(jobs)] if jobs else []) + \
        (["--timeout", str(timeout)] if timeout else [])
    found: list[float] = []
    stop = threading.Event()
    if not force:  # results/ already holds the earlier run's: no first file to watch for
        stop.set()
    with cpu_meter() as cpu:
        before = children_cpu()
        t0 = time.perf_counter()
        watcher = threading.Thread(target=first_file, args=(out / "results", t0, found, stop), daemon=True)
        watcher.start()
        proc = subprocess.run(cmd, env=venv_env(), capture_output=True, text=True)
        wall = time.perf_counter() - t0
        stop.set()
        watcher.join()
        rusage = children_cpu() - before
        used = cpu()
    if proc.returncode not in (0, 1):  # 1: some submissions could not be graded fully (the crashing ones)
        raise RuntimeError(f"grade exited {proc.returncode}:\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}")
    return Graded(wall, used, rusage, found[0] if found else None,
                  json.loads((out / "profile.json").read_text()), out, proc.stdout)


def floors_measured(assignments: list[str], runs: int) -> dict[str, Spread]:
    """benchmarks/floor.py (a median of 3 runs) in ``runs`` processes of its own: per assignment."""
    from tests.builders import venv_env

    out: dict[str, Spread] = {a: Spread([]) for a in assignments}
    for _ in range(runs):
        proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "floor.py"), "--runs", "3", *assignments],
                              env=venv_env(), capture_output=True, text=True, check=True)
        for line in proc.stdout.splitlines():
            if line.strip():
                a, s = line.split()
                out[a].values.append(float(s))
    return out


def splits_measured(assignments: list[str], runs: int, seed: int) -> dict[str, list[dict]]:
    """:func:`split_runs` in a process of its own."""
    from tests.builders import venv_env

    proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--split-only", "--runs", str(runs),
                           "--seed", str(seed), "--assignments", *assignments],
                          env=venv_env(), capture_output=True, text=True)
    if proc.returncode:
        raise RuntimeError(f"the split failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout)


# --------------------------------------------------------------------------- arithmetic

@dataclass
class Extrapolation:
    """T(n submissions) = S + (F + c n) / k."""

    startup: float  # S: wall seconds to the first result
    once: float  # F: the class's once-only CPU (references, discovery)
    per_submission: float  # c: core-seconds per submission
    cores: float  # k

    def wall(self, submissions: int) -> float:
        return self.startup + (self.once + self.per_submission * submissions) / self.cores

    @classmethod
    def of_run(cls, *, total_cpu: float, once: float, submissions: int, startup: float,
               cores: float = CORES) -> "Extrapolation":
        if submissions <= 0:
            raise ValueError("a run with no submission says nothing per submission")
        return cls(startup, once, (total_cpu - once) / submissions, cores)

    def effective_cores(self, wall: float, submissions: int) -> float:
        """The k that reproduces a measured ``wall``: the parallelism the run actually had."""
        busy = wall - self.startup
        return (self.once + self.per_submission * submissions) / busy if busy > 0 else float("nan")


ONCE_PHASES = ("reference", "discover")  # the class's once-only CPU in profile.json (F)


def once_cpu(profile: dict) -> float:
    return sum(p.get(k, 0.0) for p in profile["phases"].values() for k in ONCE_PHASES)


def per_notebook(profile: dict) -> dict[str, float]:
    """Core-seconds per submission of each notebook: its phases, plus the class's shared costs (and what no timer
    saw) spread evenly over every submission (benchmarks/grading.py's breakdown)."""
    subs = profile["submissions"]
    n = sum(subs.values())
    shared = (sum(profile["phases"].get("", {}).values()) + profile["unattributed"]) / n
    return {a: sum(profile["phases"].get(a, {}).values()) / k + shared for a, k in subs.items()}


def fmt_seconds(s: float) -> str:
    return f"{s / 60:.1f} min" if s >= 120 else f"{s:.1f} s"


def worker_seconds(out: Path) -> dict[tuple[str, str], float]:
    """(student, assignment) -> the wall seconds the submission took in its worker (results/*.json)."""
    walls = {}
    for path in (out / "results").glob("*/*.json"):
        r = json.loads(path.read_text())
        walls[r["student_id"], r["assignment_id"]] = float(r.get("seconds") or 0.0)
    return walls


def submission_cpu(profile: dict, walls: dict[tuple[str, str], float]) -> dict[tuple[str, str], float]:
    """(student, assignment) -> core-seconds, estimated: profile.json counts a notebook's phases for all its
    submissions together, shared here in proportion to each one's wall seconds in its worker, plus an even share of
    the class's costs (as :func:`per_notebook`). Exact for a notebook's mean; for one submission it assumes
    the load was even over the run."""
    n = sum(profile["submissions"].values())
    shared = (sum(profile["phases"].get("", {}).values()) + profile["unattributed"]) / n
    out = {}
    for a in profile["submissions"]:
        mine = {k: w for k, w in walls.items() if k[1] == a}
        total, wall = sum(profile["phases"].get(a, {}).values()), sum(mine.values())
        for k, w in mine.items():
            out[k] = total * (w / wall if wall else 1 / len(mine)) + shared
    return out


def mean_of(cpu: dict[tuple[str, str], float], keys) -> float:
    values = [cpu[k] for k in keys if k in cpu]
    return statistics.mean(values) if values else float("nan")


@dataclass
class Row:
    """One notebook's line of the table (core-seconds per submission)."""

    notebook: str
    subs: int
    graded: Spread  # grade's core-s per submission, all kinds, one value per --repeat
    ordinary: Spread  # the same without the looping and crashing submissions
    right: Spread  # the same for its right submissions (estimated: see submission_cpu)
    floor: Spread
    learner: Spread

    @property
    def course(self) -> float:
        return self.right.min - self.learner.min


def notebook_table(rows: list[Row]) -> list[str]:
    head = (f"{'notebook':30} {'subs':>4} {'all':>13} {'ordinary':>13} {'right':>13} {'floor':>13} {'learner':>13} "
            f"{'course':>7} {'right/floor':>11} {'learner%':>8} {'course%':>7} {'course/learner':>14}")
    lines = [head]

    def line(name, subs, g, o, r, f, l, cells):
        c = r - l
        return (f"{name:30} {subs:4d} " + " ".join(f"{x:>13}" for x in cells) +
                f" {c:7.3f} {r / f if f else float('nan'):11.2f} {100 * l / r if r else 0:8.1f} "
                f"{100 * c / r if r else 0:7.1f} {c / l if l else float('inf'):14.1f}")

    for r in rows:
        lines.append(line(r.notebook, r.subs, r.graded.min, r.ordinary.min, r.right.min, r.floor.min, r.learner.min,
                          [str(r.graded), str(r.ordinary), str(r.right), str(r.floor), str(r.learner)]))
    subs = sum(r.subs for r in rows)
    if subs:
        avg = [sum(getattr(r, k).min * r.subs for r in rows) / subs
               for k in ("graded", "ordinary", "right", "floor", "learner")]
        lines.append(line("term (per submission)", subs, *avg, [f"{x:.3f}" for x in avg]))
    return lines


SPLIT_COLUMNS = ("total", "learner", "inputs", "harness", "evidence", "tests_other", "demo", "demo_alone", "setup",
                 "library", "solutions")


def split_table(splits: dict[str, list[Split]], forked: dict[str, Spread]) -> list[str]:
    """The floor split, min±spread over the warm runs, and the solution's cells in forked children."""
    head = f"{'notebook':30} " + " ".join(f"{c:>13}" for c in SPLIT_COLUMNS) + f" {'forked':>13}"
    lines = [head]
    for a, runs in splits.items():
        cells = [str(Spread([getattr(s, c) for s in runs])) for c in SPLIT_COLUMNS]
        lines.append(f"{a:30} " + " ".join(f"{c:>13}" for c in cells) +
                     (f" {str(forked[a]):>13}" if a in forked else ""))
    return lines


def kind_walls(out: Path, kinds: dict[tuple[str, str], str]) -> dict[str, dict[str, list[float]]]:
    """assignment -> kind -> the wall seconds each submission took in its worker (results/*.json)."""
    walls: dict[str, dict[str, list[float]]] = {}
    for (s, a), seconds in worker_seconds(out).items():
        walls.setdefault(a, {}).setdefault(kinds.get((s, a), "?"), []).append(seconds)
    return walls


def kind_table(walls: dict[str, dict[str, list[float]]]) -> list[str]:
    lines = [f"{'notebook':30} " + " ".join(f"{k:>12}" for k in KINDS)]
    for a in sorted(walls):
        cells = []
        for k in KINDS:
            v = walls[a].get(k, [])
            cells.append(f"{statistics.mean(v):7.2f} x{len(v):<3d}" if v else f"{'-':>12}")
        lines.append(f"{a:30} " + " ".join(cells))
    return lines


# --------------------------------------------------------------------------- stock nbgrader on a sample

@dataclass
class Stock:
    """Stock nbgrader on a sample of the term: per submission, and whether every per-cell score equals ours."""

    wall: float  # seconds a submission (one sequential process)
    cpu: float  # core-seconds a submission
    equal: bool
    lines: list[str]


def stock_sample(work: Path, submissions: Path, kinds: dict, students: list[str], assignments: list[str],
                 seed: int, ours: Path) -> Stock:
    """Stock ``nbgrader autograde`` on ``students`` x ``assignments`` of the term, its scores compared with those
    of the term's run in ``ours`` (graded with the same seed)."""
    from tests.builders import our_scores, stock_autograde, stock_course, stock_scores

    sample = work / "stock-submitted"
    for s in students:
        for a in assignments:
            shutil.copytree(submissions / s / a, sample / s / a)
    course = work / "stock-course"
    stock_course(course, assignments=assignments, submissions=sample)
    with cpu_meter() as cpu:
        before = children_cpu()
        t0 = time.perf_counter()
        stock_autograde(course, assignments=assignments, seed=seed)
        wall = time.perf_counter() - t0
        rusage = children_cpu() - before
        used = cpu()
    n = len(students) * len(assignments)
    spent = used if used is not None else rusage
    lines: list[str] = []
    stock = stock_scores(course)
    mine = {k: v for k, v in our_scores(ours).items() if k[0] in students and k[1] in assignments}
    diffs = [(k, stock.get(k), mine.get(k)) for k in sorted(set(stock) | set(mine)) if stock.get(k) != mine.get(k)]
    lines.append(f"stock nbgrader autograde, {len(students)} students x {len(assignments)} notebooks "
                 f"({', '.join(sorted({kinds[s, a] for s in students for a in assignments}))}): {n} submissions "
                 f"in {wall:.1f} s wall, {spent:.1f} core-s ({'cgroup' if used is not None else 'RUSAGE_CHILDREN'}; "
                 f"RUSAGE_CHILDREN {rusage:.1f}): {wall / n:.2f} s and {spent / n:.2f} core-s a submission")
    for k, s, o in diffs[:20]:
        lines.append(f"  DIFFERENT {k}: stock {s}, ours {o} ({kinds.get(k[:2])})")
    lines.append(f"per-cell scores compared: {len(stock)}; equal: {len(stock) - len(diffs)}; different: {len(diffs)}")
    return Stock(wall / n, spent / n, not diffs and bool(stock), lines)


# --------------------------------------------------------------------------- the run

def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    from tests.builders import gradable_assignments

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=None, help="students in the term (default 50)")
    parser.add_argument("--quick", action="store_true", help=f"{QUICK_STUDENTS} students, for development")
    parser.add_argument("--assignments", nargs="+", help="default: all ten notebooks")
    parser.add_argument("--repeat", type=int, default=1, help="grade the term this many times (min and spread)")
    parser.add_argument("--runs", type=int, default=2, help="measurements of the floor and the split (at least 2)")
    parser.add_argument("--jobs", type=int, default=None, help="grade's --jobs (default: its own, the cores)")
    parser.add_argument("--timeout", type=float, default=None, help="grade's --timeout (default: its own)")
    parser.add_argument("--seed", type=int, default=None, help="the run seed (default: a random one)")
    parser.add_argument("--keep", type=Path, help="work in this folder and keep it")
    parser.add_argument("--stock-students", type=int, default=4)
    parser.add_argument("--stock-assignments", nargs="+", default=None, help="default: 01-04 of the term")
    parser.add_argument("--no-stock", action="store_true", help="skip stock nbgrader (no score comparison)")
    parser.add_argument("--split-only", action="store_true", help=argparse.SUPPRESS)  # the split's own process
    args = parser.parse_args(argv)
    if args.quick and args.students is not None:
        parser.error("--quick sets the students: give --quick or --students, not both")
    args.students = QUICK_STUDENTS if args.quick else (50 if args.students is None else args.students)
    if args.students < 1:
        parser.error("--students must be at least 1")
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    if args.runs < (1 if args.split_only else 2):
        parser.error("--runs must be at least 2: every number is measured twice at least")
    known = gradable_assignments()
    args.assignments = args.assignments or known
    unknown = [a for a in args.assignments if a not in known]
    if unknown:
        parser.error(f"unknown assignment {unknown[0]!r}; known: {', '.join(known)}")
    if args.stock_assignments is None:
        args.stock_assignments = [a for a in args.assignments if a[:2] in ("01", "02", "03", "04")]
    elif any(a not in args.assignments for a in args.stock_assignments):
        parser.error("--stock-assignments must be notebooks of the term")
    if args.stock_students < 1:
        parser.error("--stock-students must be at least 1")
    if args.seed is None:
        args.seed = random.randrange(1, 2**31)
    return args


def stock_students(kinds: dict, students: list[str], assignments: list[str], n: int) -> list[str]:
    """``n`` students with no looping or crashing submission among ``assignments`` (stock nbgrader fails a
    whole notebook on a time-out or a dead kernel where we keep the rest: a documented difference), the ones
    with the most kinds of submission first."""
    calm = [s for s in students if not any(kinds[s, a] in TROUBLE for a in assignments)]
    return sorted(calm, key=lambda s: (-len({kinds[s, a] for a in assignments}), students.index(s)))[:n]


def load() -> str:
    return "load average " + " ".join(f"{x:.1f}" for x in os.getloadavg())


@dataclass
class TermRun:
    """One grading of the term, in two ``grade`` runs into one --out: the ordinary submissions, then the looping
    and crashing ones added (a re-run grades only what is new), so that profile.json counts them apart."""

    main: Graded
    trouble: Graded | None

    @property
    def wall(self) -> float:
        return self.main.wall + (self.trouble.wall if self.trouble else 0.0)

    @property
    def cpu(self) -> float:
        return self.main.cpu + (self.trouble.cpu if self.trouble else 0.0)

    def per_notebook(self) -> dict[str, float]:
        """Core-seconds per submission of each notebook, every kind, both runs' shared costs spread evenly."""
        profiles = [g.profile for g in (self.main, self.trouble) if g]
        merged = {"submissions": {}, "unattributed": sum(p["unattributed"] for p in profiles), "phases": {}}
        for p in profiles:
            for a, k in p["submissions"].items():
                merged["submissions"][a] = merged["submissions"].get(a, 0) + k
            for a, phases in p["phases"].items():
                into = merged["phases"].setdefault(a, {})
                for phase, v in phases.items():
                    into[phase] = into.get(phase, 0.0) + v
        return per_notebook(merged)


def grade_twice(submissions: Path, trouble: Path, out: Path, kinds: dict, *, seed: int, jobs: int | None,
                timeout: float | None) -> TermRun:
    main_run = grade_term(submissions, out, seed=seed, jobs=jobs, timeout=timeout)
    added = [k for k, kind in kinds.items() if kind in TROUBLE]
    if not added:
        return TermRun(main_run, None)
    for s, a in added:
        shutil.copytree(trouble / s / a, submissions / s / a)
    try:
        trouble_run = grade_term(submissions, out, seed=seed, jobs=jobs, timeout=timeout, force=False)
    finally:
        for s, a in added:
            shutil.rmtree(submissions / s / a)
    return TermRun(main_run, trouble_run)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.split_only:
        stdout = os.fdopen(os.dup(1), "w")  # the cells' prints go to the recorder
        json.dump(split_runs(args.assignments, args.runs, args.seed), stdout)
        stdout.flush()
        return 0
    from benchmarks.grading import breakdown

    assignments = args.assignments
    students = [f"s{i:03d}" for i in range(args.students)]
    work = args.keep or Path(tempfile.mkdtemp(prefix="term-bench-"))
    ok = True
    try:
        t_build = time.perf_counter()
        submissions, trouble = work / "submitted", work / "trouble"
        kinds = build_term(submissions, trouble, students, assignments)
        n = len(kinds)
        counts = {k: sum(1 for v in kinds.values() if v == k) for k in KINDS}
        n_trouble = counts["looping"] + counts["crashing"]
        print(f"term: {args.students} students x {len(assignments)} notebooks = {n} submissions "
              f"({', '.join(f'{c} {k}' for k, c in counts.items())}); styles of right code: {', '.join(STYLES)}; "
              f"built in {time.perf_counter() - t_build:.1f} s", flush=True)
        print(f"seed: {args.seed}; {os.cpu_count()} cores; {load()}", flush=True)

        runs: list[TermRun] = []
        for r in range(args.repeat):
            print(f"grade run {r + 1}/{args.repeat} starts: {n - n_trouble} submissions, then the {n_trouble} "
                  f"looping and crashing ones added ({load()})", flush=True)
            t = grade_twice(submissions, trouble, work / f"graded-{r}", kinds, seed=args.seed, jobs=args.jobs,
                            timeout=args.timeout)
            runs.append(t)
            print(f"grade run {r + 1}: {t.main.wall:.1f} + {t.trouble.wall if t.trouble else 0:.1f} s wall, "
                  f"{t.main.cpu:.1f} + {t.trouble.cpu if t.trouble else 0:.1f} core-s ({load()})", flush=True)
        print(runs[-1].main.stdout.strip().splitlines()[0])

        print(f"floor: benchmarks/floor.py x {args.runs} ({load()})", flush=True)
        floors = floors_measured(assignments, args.runs)
        print(f"split: the solutions in {args.runs} forked children, then {args.runs} + 1 runs with the learner's "
              f"calls timed ({load()})", flush=True)
        measured = splits_measured(assignments, args.runs, args.seed)
        raw = measured["runs"]
        splits = {a: [Split.of(r) for r in raw[a][1:]] for a in assignments}  # the first run warmed up
        forked = {a: Spread(measured["forked"][a]) for a in assignments}
        print(f"measured ({load()})", flush=True)

        out = runs[0].main.out
        stock = None
        sample = [] if args.no_stock else stock_students(kinds, students, args.stock_assignments, args.stock_students)
        if sample:
            print(f"stock nbgrader on {', '.join(sample)} x {', '.join(args.stock_assignments)} ({load()})", flush=True)
            stock = stock_sample(work, submissions, kinds, sample, args.stock_assignments, args.seed, out)
            ok = stock.equal

        # ---------------------------------------------------------------- the report
        honest = [per_notebook(t.main.profile) for t in runs]
        every = [t.per_notebook() for t in runs]
        estimated = [submission_cpu(t.main.profile, {k: v for k, v in worker_seconds(t.main.out).items()
                                                     if kinds.get(k) not in TROUBLE}) for t in runs]
        rights = {a: [k for k in kinds if k[1] == a and kinds[k] == "right"]  # else the ordinary ones
                  or [k for k in kinds if k[1] == a and kinds[k] not in TROUBLE] for a in assignments}
        per_a = {a: sum(1 for k in kinds if k[1] == a) for a in assignments}
        rows = [Row(a, per_a[a], Spread([p[a] for p in every if a in p]),
                    Spread([p[a] for p in honest if a in p]), Spread([mean_of(e, rights[a]) for e in estimated]),
                    floors[a], Spread([s.learner for s in splits[a]])) for a in assignments]
        print()
        print("== per notebook: core-seconds per submission (min±spread over "
              f"{args.repeat} grading(s) of the term, {args.runs} floor and split measurements) ==")
        print("all: grade's own account of its process tree (profile.json), every kind, the looping and crashing "
              "ones too, the class's shared costs spread evenly; ordinary: without the looping and crashing ones "
              "(exact: they are graded in a run of their own); right: the right ones alone (the ordinary run's "
              "CPU of the notebook shared by each submission's wall seconds in its worker: an estimate); "
              "floor: benchmarks/floor.py (median of 3 runs, each measurement); learner: the solution's functions "
              "called by the checks; course = right - learner")
        print("\n".join(notebook_table(rows)))
        print()
        print("== the floor split (CPU seconds of one run of the solution, min±spread over the warm runs; "
              "forked: the same cells, uninstrumented, in a child forked from the warm interpreter, as a graded "
              "submission's cells run but without the sandbox) ==")
        print("inputs: the checks' cases built (hidden ones too); harness: course code inside a check's call; "
              "evidence: encoding and emitting the results; tests_other: the rest of the test cells; "
              "demo: the other cells (the learner's functions in them included); demo_alone: the demo cells that "
              "call none of the learner's functions")
        print("\n".join(split_table(splits, forked)))
        print()
        print("== the largest course-side costs of one run of each solution (warm run with the least total) ==")
        for a in assignments:
            best = min(range(1, len(raw[a])), key=lambda i: Split.of(raw[a][i]).total)
            items = course_items(raw[a][best])
            print(f"{a}: course side {Split.of(raw[a][best]).course:.3f} s of {Split.of(raw[a][best]).total:.3f} s")
            for seconds, what in items[:5]:
                print(f"   {seconds:7.3f} s  {what}")
        print()
        print("== grade --profile's phases (the first grading, ordinary submissions) ==")
        print("\n".join(breakdown(runs[0].main.profile, {a: floors[a].min for a in assignments})))
        if runs[0].trouble:
            print("-- the looping and crashing submissions, graded after them into the same --out --")
            print("\n".join(breakdown(runs[0].trouble.profile, {a: floors[a].min for a in assignments})))
        print()
        print("== wall seconds per submission in its worker, by kind (results/*.json, the first grading) ==")
        print("\n".join(kind_table(kind_walls(out, kinds))))
        print()
        print("== the whole term ==")
        for i, t in enumerate(runs):
            for what, g in (("ordinary", t.main), ("looping and crashing", t.trouble)):
                if g is None:
                    continue
                tl = g.profile.get("timeline", {})
                print(f"grading {i + 1}, {what}: wall {g.wall:.1f} s; CPU {g.cpu:.1f} core-s "
                      f"({'cgroup cpuacct' if g.cgroup_cpu is not None else 'profile.json'}; profile.json "
                      f"{g.profile['total_cpu']:.1f}, RUSAGE_CHILDREN {g.rusage_cpu:.1f}); first result "
                      f"{g.first_polled if g.first_polled is not None else float('nan'):.2f} s (polled), "
                      f"{tl.get('first result', float('nan')):.2f} s (profile timeline; class started "
                      f"{tl.get('class started', float('nan')):.2f} s)")
        print(f"the term: wall {Spread([t.wall for t in runs])} s, CPU {Spread([t.cpu for t in runs])} core-s; "
              f"first result {Spread([t.main.first_polled for t in runs if t.main.first_polled is not None])} s")
        t = min(runs, key=lambda t: t.wall)
        startup = t.main.first_polled if t.main.first_polled is not None else \
            t.main.profile["timeline"].get("first result", 0.0)
        ex = Extrapolation.of_run(total_cpu=t.cpu, once=once_cpu(t.main.profile), submissions=n, startup=startup)
        k_eff = ex.effective_cores(t.wall, n)
        term_n = TERM_STUDENTS * len(assignments)
        print(f"extrapolation: T(N) = S + (F + c * N * A) / k, S = {ex.startup:.2f} s (to the first result), "
              f"F = {ex.once:.1f} core-s (references, discovery), c = {ex.per_submission:.3f} core-s a submission "
              f"(both runs' CPU but F, over {n} submissions: {counts['looping']} looping and {counts['crashing']} "
              f"crashing among them), A = {len(assignments)}, k = {CORES}")
        print(f"  check against this grading ({args.students} students): predicted {ex.wall(n):.1f} s on {CORES} "
              f"idle cores, measured {t.wall:.1f} s (both runs): it had {k_eff:.2f} cores' worth ({load()})")
        print(f"  {TERM_STUDENTS} students ({term_n} submissions): {fmt_seconds(ex.wall(term_n))} on {CORES} cores; "
              f"{fmt_seconds(Extrapolation(ex.startup, ex.once, ex.per_submission, k_eff).wall(term_n))} at this "
              f"grading's {k_eff:.2f} cores (goal: under 30 min)")
        if stock is not None:
            print()
            print("== stock nbgrader on a sample of the term ==")
            print("\n".join(stock.lines))
            keys = [(s, a) for s in sample for a in args.stock_assignments]
            ours = Spread([mean_of(e, keys) for e in estimated])
            print(f"ours on the same submissions: {ours} core-s a submission (estimated as above, min±spread over the "
                  f"gradings): core-s ratio {stock.cpu / ours.min:.1f}x. Stock nbgrader grades one notebook at a "
                  f"time on one core, ours on {CORES}: on {CORES} idle cores the throughput ratio is "
                  f"{CORES * stock.cpu / ours.min:.1f}x (measured here, loaded: stock {stock.wall:.2f} s a "
                  f"submission; ours {t.wall / n:.2f} s a submission over the whole term)")
        elif not args.no_stock:
            print("stock nbgrader: no student without a looping or crashing submission to sample")
        return 0 if ok else 1
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
