"""Every knob of ``python -m autograder grade`` and its default, in one place."""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path


@dataclass
class GradeConfig:
    submissions: Path
    out: Path | None = None  # None: a folder beside SUBMISSIONS named "<SUBMISSIONS>-graded"
    jobs: int | None = None  # None: one worker per core; the work is CPU-bound student code
    timeout: float = 60.0  # seconds of wall time per cell before it is interrupted (nbgrader's default too)
    db_url: str | None = None  # None: an SQLite gradebook in --out, as nbgrader keeps one in the course folder
    force: bool = False  # regrade every submission, even those whose saved result is still current
    engine: str = "auto"  # "auto": the warm sandboxed engine, or nbclient while it is unavailable; "nbclient" forces it
    seed: int | None = None  # None: reuse the seed saved in --out, or draw one on the first run
    course_id: str = ""  # nbgrader's CourseDirectory.course_id default, so its `export` finds our rows
    progress: bool = True  # the progress line and summary on stderr/stdout
    cluster: str | None = None  # a Dask scheduler address (tcp://host:8786): grade there instead of local workers

    def __post_init__(self) -> None:
        self.submissions = Path(self.submissions)
        if self.out is None:
            self.out = self.submissions.resolve().parent / f"{self.submissions.resolve().name}-graded"
        self.out = Path(self.out)
        if self.jobs is None:
            self.jobs = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
        if self.db_url is None:
            self.db_url = f"sqlite:///{self.out.resolve() / 'gradebook.db'}"
