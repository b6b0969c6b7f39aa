"""Every knob of ``python -m autograder grade`` and its default, in one place."""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ...engine import Limits
from .. import UsageError
from ..submission.running import DEFAULT_ENGINE, ENGINES
from ..submission.timelimits import TimePolicy


@dataclass(kw_only=True)
class GradeConfig:
    submissions: Path
    out: Path | None = None  # None: a folder beside SUBMISSIONS named "<SUBMISSIONS>-graded"
    jobs: int | None = None  # None: one worker per core; the work is CPU-bound student code
    # Seconds of wall time a cell may run before it is interrupted. None: each cell its own limit from the
    # course's timings (submission/timelimits.py: max(timeout_floor, timeout_factor x the reference run's
    # seconds for that cell), at most stock nbgrader's 30 s; a cell the course does not run gets 30 s).
    # A number: every cell gets it, as stock nbgrader's ExecutePreprocessor.timeout.
    timeout: float | None = None
    timeout_floor: float = TimePolicy.floor
    timeout_factor: float = TimePolicy.factor
    # After a first time-out, later cells of that submission get a quarter of it (at least 5 s; honest
    # cells take well under a second, notebook 10's short training a few), and time-outs may cost a
    # submission three times the timeout in all, and at least 2 minutes (a loop met by three cells still
    # leaves the rest of the notebook running, and a short --timeout on a loaded machine, where honest
    # cells time out too, does not turn into a lost notebook): a student whose every later cell loops
    # stops costing minutes, and the rest of that notebook is "not run: time budget spent".
    later_timeout: float | None = None  # None: max(5, timeout / 4)
    timeout_budget: float | None = None  # None: max(3 * timeout, 120)
    db_url: str | None = None  # None: an SQLite gradebook in --out, as nbgrader keeps one in the course folder
    force: bool = False  # regrade every submission, even those whose saved result is still current
    engine: str = DEFAULT_ENGINE  # one of ENGINES
    seed: int | None = None  # None: reuse the seed saved in --out, or draw one on the first run
    course_id: str = ""  # nbgrader's CourseDirectory.course_id default, so its `export` finds our rows
    progress: bool = True  # the progress line and summary on stderr/stdout
    cluster: str | None = None  # a Dask scheduler address (tcp://host:8786): grade there instead of local workers
    students: tuple[str, ...] = ()  # grade only these students (the CSVs keep everyone graded before)
    assignments: tuple[str, ...] = ()  # grade only these assignments
    # Figures are not drawn while grading: no test reads them, and drawing was most of the CPU of grading
    # notebooks 01-04. Autograded notebooks and feedback then show "<Figure size 640x480 with 1 Axes (not
    # drawn while grading)>" where the student's notebook has the picture. --draw-figures draws them.
    draw_figures: bool = False
    profile: bool = False  # write profile.json: where the run's CPU went, by phase and assignment (.costs)

    def __post_init__(self) -> None:
        self.submissions = Path(self.submissions)
        if self.out is None:
            self.out = self.submissions.resolve().parent / f"{self.submissions.resolve().name}-graded"
        self.out = Path(self.out)
        if self.jobs is None:
            self.jobs = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
        self.students, self.assignments = tuple(self.students), tuple(self.assignments)

    def check(self) -> None:
        """Raise :class:`UsageError` naming the first option that cannot work."""
        if not self.submissions.is_dir():
            raise UsageError(f"{self.submissions}: {'not a folder' if self.submissions.exists() else 'no such folder'}")
        if self.jobs < 1 or (self.timeout is not None and self.timeout <= 0):
            raise UsageError("--jobs must be at least 1 and --timeout positive")
        if self.timeout_floor <= 0 or self.timeout_factor <= 0:
            raise UsageError("--timeout-floor and --timeout-factor must be positive")
        if (self.later_timeout is not None and self.later_timeout <= 0) or (
                self.timeout_budget is not None and self.timeout_budget <= 0):
            raise UsageError("--later-timeout and --time-budget must be positive")
        if self.engine not in ENGINES:
            raise UsageError(f"unknown engine {self.engine!r}; use one of {', '.join(ENGINES)}")

    @property
    def gradebook_url(self) -> str:
        return self.db_url or f"sqlite:///{self.out.resolve() / 'gradebook.db'}"

    def time_policy(self) -> TimePolicy | None:
        """How each cell's limit follows from the course's timings; None when --timeout sets every cell's."""
        return TimePolicy(floor=self.timeout_floor, factor=self.timeout_factor) if self.timeout is None else None

    def limits(self) -> Limits:
        """The bounds on each submission's run: the engine's defaults with this run's time limits
        (:meth:`autograder.engine.Limits.for_grading` decides the ones not given)."""
        return Limits.for_grading(self.timeout, later_timeout=self.later_timeout, timeout_budget=self.timeout_budget,
                                  draw_figures=self.draw_figures)
