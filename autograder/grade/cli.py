"""``python -m autograder grade SUBMISSIONS ...``: parse arguments, call :func:`.pipeline.grade_class`."""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from ..engine import Limits
from . import UsageError
from .classrun.config import ENGINES, GradeConfig

EXIT_USAGE = 2


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def _positive_float(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError("must be positive")
    return value


def _start_warming(args: argparse.Namespace) -> None:
    """Start the warm interpreters before the pipeline is imported: that import (nbgrader, its server
    extensions, SQLAlchemy) takes a core-second and a half on one core, and the warm-up, as long again on each
    worker, need not wait behind it. Only a guess at what the class needs, from the folder names
    (SUBMISSIONS/<student>/<assignment>/); the pipeline decides what to grade, and the schedule starts any
    interpreter still missing. Nothing is started for nbclient, a cluster, or a folder with nothing of ours."""
    if args.cluster or args.engine == "nbclient" or args.submissions is None:
        return
    from .. import paths  # late, as the pipeline below: the other commands and --help do not need them
    from .. import engine  # late: see above
    from .submission import running  # late: see above

    wanted = set(args.assignment or paths.assignments())
    found: dict[str, int] = {}
    try:
        for student in os.scandir(args.submissions):
            if student.is_dir(follow_symlinks=False) and (not args.student or student.name in args.student):
                for entry in os.scandir(student.path):
                    if entry.name in wanted and entry.is_dir(follow_symlinks=False):
                        found[entry.name] = found.get(entry.name, 0) + 1
    except OSError:
        return  # the pipeline says what is wrong with the folder
    if not found:
        return
    jobs = args.jobs or GradeConfig(submissions=args.submissions).jobs
    pool = engine.default_pool()
    pool.also_preload(running.preload())
    pool.expect(running.notebook_preloads(found))
    pool.start_warming(min(jobs, sum(found.values()) + len(found)), light=running.light_start(found))


def _grade(args: argparse.Namespace) -> int:
    try:
        cfg = GradeConfig(submissions=args.submissions, out=args.out, jobs=args.jobs, timeout=args.timeout,
                          timeout_floor=args.timeout_floor, timeout_factor=args.timeout_factor,
                          later_timeout=args.later_timeout, timeout_budget=args.time_budget,
                          db_url=args.db, force=args.force, engine=args.engine, seed=args.seed, cluster=args.cluster,
                          students=tuple(args.student or ()), assignments=tuple(args.assignment or ()),
                          draw_figures=args.draw_figures, profile=args.profile)
        cfg.check()  # a mistyped folder or option is said at once, before any warm-up or the import below
        _start_warming(args)
        # imported when grading: the pipeline pulls in nbgrader's gradebook and SQLAlchemy (about a second),
        # which `--help` and the other commands do not need
        from .classrun.pipeline import grade_class

        result = grade_class(cfg)
    except UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    print(result.summary, file=sys.stderr if result.exit_code == EXIT_USAGE else sys.stdout)
    return result.exit_code


def _doctor(args: argparse.Namespace) -> int:
    from .classrun.doctor import doctor  # imported when used, as the pipeline above

    return doctor()


def add_grade_parser(subparsers) -> argparse.ArgumentParser:
    defaults = GradeConfig(submissions=Path("SUBMISSIONS"))
    p = subparsers.add_parser("grade", help="grade a class of submissions in nbgrader's layout",
                              description="Grade SUBMISSIONS/<student_id>/<assignment_id>/<assignment_id>.ipynb "
                                          "in parallel; write scores, grades, problems, feedback and the gradebook.")
    p.add_argument("submissions", type=Path, metavar="SUBMISSIONS")
    p.add_argument("--out", type=Path, help="output folder for the CSVs, results and feedback pages "
                                            "(default: SUBMISSIONS-graded beside SUBMISSIONS)")
    p.add_argument("--jobs", type=_positive_int, help="parallel workers (default: the number of cores)")
    p.add_argument("--timeout", type=_positive_float, metavar="SECONDS",
                   help=f"seconds every cell may run before it is interrupted, as stock nbgrader's timeout (default: "
                        f"each cell's own limit from the course's timings, max(--timeout-floor, --timeout-factor x "
                        f"the course's seconds for that cell), at most {Limits.cell_timeout:g})")
    p.add_argument("--timeout-floor", type=_positive_float, default=defaults.timeout_floor, metavar="SECONDS",
                   help=f"the shortest limit a cell gets from the course's timings (default {defaults.timeout_floor:g})")
    p.add_argument("--timeout-factor", type=_positive_float, default=defaults.timeout_factor, metavar="N",
                   help=f"a cell may take N times the course's own seconds for it (default {defaults.timeout_factor:g})")
    p.add_argument("--later-timeout", type=_positive_float, metavar="SECONDS",
                   help="once a cell of a submission timed out, the limit for its later cells "
                        "(default: a quarter of --timeout, at least 5)")
    p.add_argument("--time-budget", type=_positive_float, metavar="SECONDS",
                   help="seconds time-outs may cost one submission in all; its remaining cells are then "
                        "not run (default: three times --timeout, at least 120)")
    p.add_argument("--db", metavar="URL", help="gradebook database URL (default: the course's own gradebook, "
                                               "its nbgrader_config.py's db_url, when SUBMISSIONS is a course's "
                                               "submitted/ folder; else sqlite in --out)")
    p.add_argument("--cluster", metavar="ADDRESS",
                   help="grade on a Dask distributed cluster at this scheduler address (e.g. tcp://host:8786); "
                        "every worker needs the course installed; this process still writes the gradebook")
    p.add_argument("--force", action="store_true", help="regrade every submission, even unchanged ones")
    p.add_argument("--student", action="append", metavar="ID",
                   help="grade only this student (repeat for several); the CSVs keep everyone graded before")
    p.add_argument("--assignment", action="append", metavar="ID",
                   help="grade only this assignment, e.g. 04_softmax_and_probability (repeat for several)")
    p.add_argument("--seed", type=int, help="the run seed hidden inputs follow (default: the one saved in --out, "
                                            "else a random one); give the same AUTOGRADER_SEED to compare with "
                                            "stock nbgrader")
    p.add_argument("--engine", choices=ENGINES, default=defaults.engine,
                   help="auto or engine: the warm sandboxed engine (default); nbclient: a fresh Jupyter kernel per "
                        "notebook, as stock nbgrader runs it, with no sandbox")
    p.add_argument("--draw-figures", action="store_true",
                   help="draw the students' matplotlib figures into the autograded notebooks and feedback "
                        "(default: one line of text each; no test reads a figure, and drawing them was most "
                        "of the CPU of grading the early notebooks)")
    p.add_argument("--profile", action="store_true",
                   help="also write profile.json in --out: the CPU seconds of each phase (start-up, warm-up, "
                        "references, forks, sandboxes, cells, evidence, judging, results, the gradebook, "
                        "feedback), per assignment (benchmarks/grading.py --profile prints it as a table)")
    p.set_defaults(run=_grade)

    d = subparsers.add_parser("doctor", help="check that this machine can grade, and how isolated student code is",
                              description="Run a probe notebook and one reference solution in the grading sandbox; "
                                          "say which isolation is in force and what student code could reach. "
                                          "Exit 1 when grading would fail here.")
    d.set_defaults(run=_doctor)
    return p
