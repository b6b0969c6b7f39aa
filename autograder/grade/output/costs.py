"""Where a class run's CPU goes: core-seconds per phase and per assignment, for ``grade --profile``.

Every process of a run measures its own phases with cheap timers (``time.thread_time`` in the grader's
threads, ``time.process_time`` in the warm parent and its children, a few calls per cell); the numbers
ride along with what those processes already send (:attr:`autograder.engine.contract.RunResult.costs`,
:attr:`.results.SubmissionResult.costs`). Only with ``--profile`` are they added up, into
``profile.json`` in ``--out``; ``benchmarks/grading.py --profile`` prints them as a table beside the
floor (the solutions' own cells in one warm interpreter).

The total is the CPU of the whole tree: this process (its own time and its reaped children's) and each
warm parent's own count of itself and its children, which it reports with every answer. (A process
inside bubblewrap's PID namespace is not reaped into its grandparent's count, so the operating system's
``RUSAGE_CHILDREN`` of the grader alone misses every submission's run.) Kernel work done outside the
tree (freeing a network namespace happens in a kernel thread) is not counted anywhere.
"""
from __future__ import annotations

import contextlib
import json
import math
import os
import threading
import time
from dataclasses import dataclass, field
from typing import Iterator

from ...engine.measure import Lap, merge, number, thread_timer, tree_seconds

__all__ = ["CLASS", "PHASES", "Costs", "Lap", "merge", "number", "process_age", "thread_timer", "timed",
           "tree_seconds", "write_profile"]

# phase -> what it covers; the order is the table's
PHASES = {
    "start-up": "the grade process: interpreter, imports, options, before the class",
    "warm-up": "starting each worker's warm interpreter (numpy, torch, IPython, the checks), once per worker",
    "reference": "running each solution once for the evidence every submission is judged against",
    "discover": "finding the submissions, hashing them, reading saved results",
    "read": "reading and parsing a submission, planning its cells (test cells from the source)",
    "fork": "forking a submission's processes (the warm parent's side) and their exit",
    "sandbox": "namespaces, the private file system, staging files, limits: before the first cell",
    "cells": "the notebook's own cells, tests included (what the floor measures)",
    "evidence": "outputs and evidence: frames written, read and decoded on their way back",
    "judge": "scoring the evidence against the reference's",
    "autograded": "the autograded notebook: built, written, the submission's files copied beside it",
    "results": "saving each result record; the CSVs at the end",
    "gradebook": "nbgrader's gradebook: opening it, the assignments, each submission's rows",
    "feedback": "the learners' feedback pages",
    "report": "report.html, the class at a glance",
}
CLASS = ""  # the assignment key of costs that belong to the class, not to one assignment


def _reaped() -> float:
    t = os.times()
    return t.children_user + t.children_system


def process_age() -> float:
    """Wall seconds since this process started (Linux's /proc; 0 where it cannot tell)."""
    try:
        with open("/proc/self/stat") as f:
            started = int(f.read().rsplit(")", 1)[1].split()[19])  # field 22, starttime, in ticks since boot
        with open("/proc/uptime") as f:
            up = float(f.read().split()[0])
        return max(0.0, up - started / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError):
        return 0.0


@dataclass
class Costs:
    """A class run's costs: per assignment (or :data:`CLASS`) the core-seconds of each phase."""

    phases: dict[str, dict[str, float]] = field(default_factory=dict)
    submissions: dict[str, int] = field(default_factory=dict)  # assignment -> submissions graded
    # wall-clock moments, in seconds since this process started: where cores may stand idle (start-up,
    # the first result, the last one, the end of the outputs)
    timeline: dict[str, float] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _t0: float = field(default_factory=lambda: time.monotonic() - process_age(), repr=False)

    def mark(self, moment: str, *, first: bool = False) -> None:
        """Note the wall time of ``moment`` (with ``first``, only its first occurrence)."""
        if not (first and moment in self.timeline):
            self.timeline[moment] = round(time.monotonic() - self._t0, 3)

    def add(self, assignment: str, costs: dict[str, float], *, submission: bool = False) -> None:
        with self._lock:
            merge(self.phases.setdefault(assignment, {}), costs)
            if submission:
                self.submissions[assignment] = self.submissions.get(assignment, 0) + 1

    @contextlib.contextmanager
    def timed(self, phase: str, assignment: str = CLASS) -> Iterator[None]:
        """Count the CPU this thread spends in the block as ``phase`` of ``assignment``, and that of the
        processes reaped meanwhile (a new gradebook runs ``alembic`` as a command)."""
        spent: dict[str, float] = {}
        before = _reaped()
        with thread_timer(spent, phase):
            yield
        spent[phase] += _reaped() - before
        self.add(assignment, spent)

    def to_json(self, *, grader: float, workers: float, wall: float) -> dict:
        """``profile.json``: the total CPU of the run's process tree, the wall time since the process started,
        the timeline and every phase.
        ``unattributed`` is what no timer saw (thread switches, the interpreter's own work, bubblewrap)."""
        measured = sum(sum(p.values()) for p in self.phases.values())
        total = grader + workers
        return {"total_cpu": round(total, 3), "grader_cpu": round(grader, 3), "workers_cpu": round(workers, 3),
                "wall": round(wall, 3), "unattributed": round(total - measured, 3),
                "submissions": dict(self.submissions), "timeline": dict(self.timeline),
                "phases": {a: {k: round(v, 4) for k, v in p.items()} for a, p in sorted(self.phases.items())},
                "meaning": PHASES}


def timed(costs: Costs | None, phase: str, assignment: str = CLASS):
    """``costs.timed(...)``, or nothing to do when the run is not profiled."""
    return costs.timed(phase, assignment) if costs is not None else contextlib.nullcontext()


def write_profile(path: os.PathLike, costs: Costs, *, grader: float, workers: float, wall: float) -> None:
    """``profile.json``: ``grader`` the CPU of this process and its reaped children, ``workers`` the warm
    parents' own count of theirs (see the module's docstring)."""
    from ...nbio import write_atomic  # late: only a profiled run writes one

    write_atomic(path, json.dumps(costs.to_json(grader=grader, workers=workers, wall=wall), indent=1) + "\n")
