"""Grade one generated class twice, with stock ``nbgrader autograde`` and with ``python -m autograder grade``.

The class: for each notebook with a solution and a released student version, some students
hand in the right answers (the student notebook with the solutions filled in), some a partly
wrong one (one exercise replaced by a known mistake from ``tests/checks/test_nbNN.py``) and
some the blank notebook. Every per-cell score must be equal; the script prints both wall times
and the throughput ratio, and exits 1 when a score differs.

    python benchmarks/grading.py [--students 3] [--assignments 01_tokens_and_ids ...] [--keep DIR]

nbgrader needs the virtualenv's ``bin`` on ``PATH`` (it calls ``alembic``).
"""
from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script: the repository's tests/ holds the class builders
    sys.path.insert(0, str(ROOT))

# The class and stock nbgrader's run are the tests' own (tests/builders.py), so both grade the same kind of class.
from tests.builders import (gradable_assignments, make_class, our_scores, stock_autograde,  # noqa: E402
                            stock_course, stock_scores, venv_env)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=3, help="students per kind (right, wrong, blank)")
    parser.add_argument("--assignments", nargs="*", help="default: every notebook with a solution and a release")
    parser.add_argument("--jobs", type=int, default=None)
    parser.add_argument("--engine", default="auto")
    parser.add_argument("--keep", type=Path, help="work in this folder and keep it")
    parser.add_argument("--seed", type=int, help="the run seed (default: a random one); give the same seed to "
                                                 "compare two versions of the grader on the same hidden inputs")
    args = parser.parse_args(argv)
    assignments = args.assignments or gradable_assignments()
    work = args.keep or Path(tempfile.mkdtemp(prefix="grading-bench-"))
    try:
        submissions = work / "submitted"
        kinds = make_class(submissions, assignments=assignments, students=args.students)
        n = len(kinds)
        print(f"class: {n} submissions ({args.students} right, wrong and blank students x {len(assignments)} "
              f"notebooks: {', '.join(assignments)})", flush=True)

        course = work / "course"
        stock_course(course, assignments=assignments, submissions=submissions)
        # The same hidden inputs for both: a wrong answer at the edge of a tolerance must meet the same cases.
        seed = args.seed if args.seed is not None else random.randrange(1, 2**31)
        print(f"seed: {seed}", flush=True)
        t0 = time.perf_counter()
        stock_autograde(course, assignments=assignments, seed=seed)
        stock_seconds = time.perf_counter() - t0
        print(f"stock nbgrader autograde: {stock_seconds:.1f} s ({n / stock_seconds:.2f} submissions/s)", flush=True)

        out = work / "graded"
        cmd = [sys.executable, "-m", "autograder", "grade", str(submissions), "--out", str(out), "--force",
               "--seed", str(seed), "--engine", args.engine] + (["--jobs", str(args.jobs)] if args.jobs else [])
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, env=venv_env(), capture_output=True, text=True)
        ours_seconds = time.perf_counter() - t0
        print(proc.stdout.strip())
        if proc.returncode not in (0,):
            print(proc.stderr[-2000:], file=sys.stderr)
            print(f"autograder grade exited {proc.returncode}", file=sys.stderr)
            return 1
        print(f"python -m autograder grade: {ours_seconds:.1f} s ({n / ours_seconds:.2f} submissions/s)")

        stock, ours = stock_scores(course), our_scores(out)
        diffs = [(k, stock.get(k), ours.get(k)) for k in sorted(set(stock) | set(ours)) if stock.get(k) != ours.get(k)]
        for k, s, o in diffs[:20]:
            print(f"  DIFFERENT {k}: stock {s}, ours {o}  ({kinds.get(k[:2])})")
        print(f"per-cell scores compared: {len(stock)}; equal: {len(stock) - len(diffs)}; different: {len(diffs)}")
        print(f"throughput ratio (stock time / our time): {stock_seconds / ours_seconds:.2f}x "
              f"on {os.cpu_count()} cores")
        return 1 if diffs or not stock else 0
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
