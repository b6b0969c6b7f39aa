"""benchmarks/term.py's arithmetic: repeated measurements, core-seconds per submission from ``grade --profile``'s
profile.json, the goals on looping and slow submissions, and the extrapolation to a 500-student term."""
from __future__ import annotations

import statistics
from dataclasses import dataclass

from benchmarks.common import shared_per_submission

TERM_STUDENTS = 500  # the term the extrapolation is for
CORES = 2  # the machine the goals are stated for
# The class's once-only CPU in profile.json (F): the grader's start-up and its warm parents' imports happen once a
# run whatever its size, as do each notebook's reference run and finding the submissions.
ONCE_PHASES = ("start-up", "warm-up", "reference", "discover")

# issue 48's goals
LOOPER_GOAL = 5.0  # core-seconds of one looping submission, at most
LOOPERS_SHARE_GOAL = 0.15  # of the term's CPU, at most
TERM_GOAL = 15 * 60.0  # wall seconds for TERM_STUDENTS on CORES, less than


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


@dataclass
class Extrapolation:
    """T(n submissions) = S + (F + c n) / k."""

    startup: float  # S: wall seconds to the first result
    once: float  # F: the class's once-only CPU (start-up, warm-up, references, discovery)
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


def once_cpu(profile: dict) -> float:
    return sum(p.get(k, 0.0) for p in profile["phases"].values() for k in ONCE_PHASES)


def submissions_cpu(profile: dict) -> float:
    """Core-seconds profile.json puts on the submissions themselves: every notebook's phases but the once-only
    ones, without the class's shared costs. What the same submissions add to a run that grades others too."""
    return sum(v for a, phases in profile["phases"].items() if a for k, v in phases.items()
               if k not in ONCE_PHASES)


def per_notebook(profile: dict) -> dict[str, float]:
    """Core-seconds per submission of each notebook: its phases, plus the class's shared costs (and what no timer
    saw) spread evenly over every submission (benchmarks/grading.py's breakdown)."""
    shared = shared_per_submission(profile)
    return {a: sum(profile["phases"].get(a, {}).values()) / k + shared for a, k in profile["submissions"].items()}


def submission_cpu(profile: dict, walls: dict[tuple[str, str], float]) -> dict[tuple[str, str], float]:
    """(student, assignment) -> core-seconds, estimated: profile.json counts a notebook's phases for all its
    submissions together, shared here in proportion to each one's wall seconds in its worker, plus an even share of
    the class's costs (as :func:`per_notebook`). Exact for a notebook's mean; for one submission it assumes
    the load was even over the run."""
    shared = shared_per_submission(profile)
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
class TimeLimits:
    """How the term's time limits did: the goals on looping and on right-but-slow submissions."""

    looping: int  # looping submissions in the term
    looping_cpu: float  # core-seconds they added to the term (their own run's submission phases)
    term_cpu: float  # the term's core-seconds, as one run would spend them
    slow_cut: list[tuple[str, str]]  # right but slow submissions that timed out (goal: none)
    loops_uncut: list[tuple[str, str]]  # looping submissions that did not (goal: none)

    @property
    def per_looper(self) -> float:
        return self.looping_cpu / self.looping if self.looping else float("nan")

    @property
    def loopers_share(self) -> float:
        return self.looping_cpu / self.term_cpu if self.term_cpu else float("nan")
