"""benchmarks/term.py's measuring: grading the term (CPU of the whole process tree, wall time, the first result),
what each submission's result says, the floor, and stock nbgrader on a sample of the term.

CPU of the whole process tree: as root where cgroup v1's cpuacct is mounted (as tests/conftest.py does for the
test command), each run goes in a cgroup of its own and its ``cpuacct.usage`` is read, which counts the
processes inside bubblewrap's PID namespace; ``getrusage(RUSAGE_CHILDREN)`` is kept beside it and misses those
(a warm parent's tree is never reaped into ours). Elsewhere profile.json's total is the figure.
"""
from __future__ import annotations

import contextlib
import json
import os
import resource
import shutil
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from benchmarks.common import compare_scores, floor_runs
from benchmarks.term_class import TROUBLE
from benchmarks.term_figures import Spread, per_notebook, submissions_cpu
from tests.builders import grade_command, our_scores, stock_autograde, stock_course, stock_scores, venv_env


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

    @property
    def submissions_cpu(self) -> float:
        """The CPU its submissions themselves took (profile.json's share of them, of the measured total): what
        they would add to a run grading the others too."""
        total = self.profile["total_cpu"]
        return submissions_cpu(self.profile) * (self.cpu / total if total else 1.0)


def grade_term(submissions: Path, out: Path, *, seed: int, options: list[str], force: bool = True) -> Graded:
    """``grade --profile`` of ``submissions`` into ``out`` with grade's ``options``; without ``force`` it grades only
    what ``out`` does not hold yet."""
    cmd = grade_command(submissions, "--out", str(out), "--seed", str(seed), "--profile", *options,
                        *(["--force"] if force else []))
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




@dataclass
class TermRun:
    """One grading of the term: the ordinary submissions in one ``grade`` run, then each kind of :data:`TROUBLE`
    added into the same --out in a run of its own (a re-run grades only what is new), so that profile.json counts
    each kind apart."""

    main: Graded
    added: dict[str, Graded]  # kind -> the run that added its submissions

    @property
    def runs(self) -> list[Graded]:
        return [self.main, *self.added.values()]

    @property
    def wall(self) -> float:
        return sum(g.wall for g in self.runs)

    @property
    def cpu(self) -> float:
        """Every run's CPU, as measured (each added run pays its own start-up too)."""
        return sum(g.cpu for g in self.runs)

    def added_cpu(self, kind: str) -> float:
        return self.added[kind].submissions_cpu if kind in self.added else 0.0

    @property
    def term_cpu(self) -> float:
        """The term's CPU as one run would spend it: the ordinary run's, and what each added kind's submissions
        took themselves."""
        return self.main.cpu + sum(self.added_cpu(k) for k in self.added)

    def per_notebook(self) -> dict[str, float]:
        """Core-seconds per submission of each notebook, every kind, every run's shared costs spread evenly."""
        profiles = [g.profile for g in self.runs]
        merged = {"submissions": {}, "unattributed": sum(p["unattributed"] for p in profiles), "phases": {}}
        for p in profiles:
            for a, k in p["submissions"].items():
                merged["submissions"][a] = merged["submissions"].get(a, 0) + k
            for a, phases in p["phases"].items():
                into = merged["phases"].setdefault(a, {})
                for phase, v in phases.items():
                    into[phase] = into.get(phase, 0.0) + v
        return per_notebook(merged)


def grade_runs(submissions: Path, aside: Path, out: Path, kinds: dict[tuple[str, str], str], *, seed: int,
               options: list[str]) -> TermRun:
    """The term graded (:class:`TermRun`): ``submissions``, then each kind's submissions from ``aside/KIND``
    copied in and graded, and taken out again afterwards."""
    main_run = grade_term(submissions, out, seed=seed, options=options)
    added = {}
    for kind in TROUBLE:
        keys = [k for k, v in kinds.items() if v == kind]
        if not keys:
            continue
        for s, a in keys:
            shutil.copytree(aside / kind / s / a, submissions / s / a)
        try:
            added[kind] = grade_term(submissions, out, seed=seed, options=options, force=False)
        finally:
            for s, a in keys:
                shutil.rmtree(submissions / s / a)
        graded = sum(added[kind].profile["submissions"].values())
        if graded != len(keys):  # its CPU would be theirs and others': every figure of the kind would be wrong
            raise RuntimeError(f"the run adding the {len(keys)} {kind} submissions graded {graded}: the grader or a "
                               "solution changed since the first run (a saved result is graded again when its "
                               "notebook's solution or the grader's result version differs); run the benchmark "
                               "again on a tree nobody is editing")
    return TermRun(main_run, added)


def floors_measured(assignments: list[str], runs: int) -> dict[str, Spread]:
    """benchmarks/floor.py (a median of 3 runs) in ``runs`` processes of its own: per assignment."""
    out: dict[str, Spread] = {a: Spread([]) for a in assignments}
    for _ in range(runs):
        for a, seconds in floor_runs(assignments, median_of=3).items():
            out[a].values.append(seconds)
    return out


@dataclass
class Outcome:
    """What a submission's saved result (results/*.json) says of its run."""

    seconds: float  # wall seconds in its worker
    timed_out: bool  # a cell of it was stopped at its time limit (a problem "timeout", or a test's status)


def outcomes(out: Path) -> dict[tuple[str, str], Outcome]:
    """(student, assignment) -> :class:`Outcome`, for every result under ``out``."""
    found = {}
    for path in (out / "results").glob("*/*.json"):
        r = json.loads(path.read_text())
        stopped = any(p.get("problem") == "timeout" for p in r.get("problems", [])) or \
            any(t.get("status") == "timeout" for t in r.get("scores", []))
        found[r["student_id"], r["assignment_id"]] = Outcome(float(r.get("seconds") or 0.0), stopped)
    return found


def worker_seconds(out: Path) -> dict[tuple[str, str], float]:
    """(student, assignment) -> the wall seconds the submission took in its worker."""
    return {k: o.seconds for k, o in outcomes(out).items()}


def kind_walls(out: Path, kinds: dict[tuple[str, str], str]) -> dict[str, dict[str, list[float]]]:
    """assignment -> kind -> the wall seconds each submission took in its worker (results/*.json)."""
    walls: dict[str, dict[str, list[float]]] = {}
    for (s, a), seconds in worker_seconds(out).items():
        walls.setdefault(a, {}).setdefault(kinds.get((s, a), "?"), []).append(seconds)
    return walls


def stock_students(kinds: dict, students: list[str], assignments: list[str], n: int) -> list[str]:
    """``n`` students with no looping or crashing submission among ``assignments`` (stock nbgrader fails a
    whole notebook on a time-out or a dead kernel where we keep the rest: a documented difference), the ones
    with the most kinds of submission first."""
    calm = [s for s in students if not any(kinds[s, a] in TROUBLE for a in assignments)]
    return sorted(calm, key=lambda s: (-len({kinds[s, a] for a in assignments}), students.index(s)))[:n]


@dataclass
class Stock:
    """Stock nbgrader on a sample of the term: per submission, and whether every per-cell score equals ours."""

    wall: float  # seconds a submission (one sequential process)
    cpu: float  # core-seconds a submission
    equal: bool
    lines: list[str]


def stock_sample(work: Path, submissions: Path, kinds: dict, students: list[str], assignments: list[str],
                 seed: int, ours: Path) -> Stock:
    """Stock ``nbgrader autograde`` on ``students`` x ``assignments`` of the term, its per-cell scores compared
    with those of the term's run in ``ours`` (graded with the same seed) on every submission that did not time out
    there (stock nbgrader fails a whole notebook on a time-out: a documented difference)."""
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
    cut = {k for k, o in outcomes(ours).items() if o.timed_out}
    stock = {k: v for k, v in stock_scores(course).items() if k[:2] not in cut}
    mine = {k: v for k, v in our_scores(ours).items()
            if k[0] in students and k[1] in assignments and k[:2] not in cut}
    compared = compare_scores(stock, mine)
    skipped = sorted(k for k in cut if k[0] in students and k[1] in assignments)
    lines = [f"stock nbgrader autograde, {len(students)} students x {len(assignments)} notebooks "
             f"({', '.join(sorted({kinds[s, a] for s in students for a in assignments}))}): {n} submissions "
             f"in {wall:.1f} s wall, {spent:.1f} core-s ({'cgroup' if used is not None else 'RUSAGE_CHILDREN'}; "
             f"RUSAGE_CHILDREN {rusage:.1f}): {wall / n:.2f} s and {spent / n:.2f} core-s a submission"]
    if skipped:
        lines.append(f"not compared, timed out in ours: {', '.join(f'{s} {a}' for s, a in skipped)}")
    lines += compared.lines(kinds)
    return Stock(wall / n, spent / n, compared.equal, lines)
