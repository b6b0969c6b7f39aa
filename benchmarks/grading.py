"""Grade one generated class twice, with stock ``nbgrader autograde`` and with ``python -m autograder grade``.

The class: for each notebook with a solution and a released student version, some students
hand in the right answers (the student notebook with the solutions filled in), some a partly
wrong one (one exercise replaced by a known mistake from ``tests/checks/test_nbNN.py``) and
some the blank notebook. Every per-cell score must be equal; the script prints both wall times
and the throughput ratio, and exits 1 when a score differs.

    python benchmarks/grading.py [--students 3] [--assignments 01_tokens_and_ids ...] [--keep DIR]
                                 [--profile] [--no-stock]

``--profile`` also says where our run's CPU went: per notebook, the floor (the solution's own cells,
tests included, in one warm interpreter: benchmarks/floor.py, measured right after the class run so
both see the same machine; figures not drawn, as ``grade`` does not draw them; stock nbgrader does), the core-seconds per submission of the class run and their phases (fork,
sandbox, cells, evidence, judging, results, autograded notebooks, feedback, gradebook, and the class's
shared costs: start-up, warm-up, references), from ``grade --profile``'s profile.json. ``--no-stock``
skips stock nbgrader (then there is no score comparison, only the breakdown).

nbgrader needs the virtualenv's ``bin`` on ``PATH`` (it calls ``alembic``).
"""
from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script: the repository's tests/ holds the class builders
    sys.path.insert(0, str(ROOT))

# The class and stock nbgrader's run are the tests' own (tests/builders.py), so both grade the same kind of class.
from benchmarks.common import (compare_scores, floor_runs, load, shared_per_submission,  # noqa: E402
                               work_folder)
from tests.builders import (gradable_assignments, grade_command, make_class, our_scores,  # noqa: E402
                            stock_autograde, stock_course, stock_scores, venv_env)

# the table's columns: phases of one submission, then what the class shares (see autograder/grade/output/costs.py)
SUBMISSION_PHASES = ("read", "fork", "sandbox", "cells", "evidence", "judge", "autograded", "results", "gradebook",
                     "feedback")
SHARED = "shared"  # a notebook's reference run and its share of the class's costs, per submission


def breakdown(profile: dict, floor: dict[str, float]) -> list[str]:
    """The table: per notebook the floor, the class run's core-seconds per submission and where they went."""
    subs = profile["submissions"]
    n = sum(subs.values())
    shared = profile["phases"].get("", {})
    per_class = shared_per_submission(profile)  # start-up, warm-up, report...: per submission
    head = f"{'notebook':28} {'subs':>4} {'floor':>6} {'core-s':>6} {'ratio':>6} " + \
        " ".join(f"{p[:9]:>9}" for p in (*SUBMISSION_PHASES, SHARED))
    lines = ["core-seconds per submission (CPU of the whole process tree, by phase):", head]
    total = floor_total = 0.0
    for a in sorted(subs):
        phases = profile["phases"].get(a, {})
        k = subs[a]
        own = {p: phases.get(p, 0.0) / k for p in SUBMISSION_PHASES}
        own[SHARED] = phases.get("reference", 0.0) / k + per_class
        spent = sum(own.values())
        total += spent * k
        floor_total += floor.get(a, 0.0) * k
        ratio = f"{spent / floor[a]:6.2f}" if floor.get(a) else f"{'-':>6}"
        lines.append(f"{a:28} {k:4d} {floor.get(a, 0.0):6.3f} {spent:6.3f} {ratio} " +
                     " ".join(f"{own[p]:9.4f}" for p in (*SUBMISSION_PHASES, SHARED)))
    lines.append("shared by the class (core-seconds in all): " + ", ".join(
        f"{p} {v:.2f}" for p, v in sorted(shared.items(), key=lambda kv: -kv[1])) +
        f", unattributed {profile['unattributed']:.2f}")
    lines.append(f"timeline (wall seconds since the grade process started): " +
                 ", ".join(f"{k} {v:.1f}" for k, v in profile.get("timeline", {}).items()) +
                 f", exit {profile['wall']:.1f}")
    lines.append(f"class: {total / n:.3f} core-s per submission against a floor of {floor_total / n:.3f}: "
                 f"{total / floor_total:.2f}x the floor" if floor_total else f"class: {total / n:.3f} core-s per submission")
    lines.append(f"cores x wall per submission: {profile['wall'] * (os.cpu_count() or 1) / n:.3f} s "
                 f"(total CPU {profile['total_cpu']:.1f} core-s in {profile['wall']:.1f} s on {os.cpu_count()} cores)")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=3, help="students per kind (right, wrong, blank)")
    parser.add_argument("--assignments", nargs="*", help="default: every notebook with a solution and a release")
    parser.add_argument("--jobs", type=int, default=None)
    parser.add_argument("--engine", default="auto")
    parser.add_argument("--keep", type=Path, help="work in this folder and keep it")
    parser.add_argument("--seed", type=int, help="the run seed (default: a random one); give the same seed to "
                                                 "compare two versions of the grader on the same hidden inputs")
    parser.add_argument("--profile", action="store_true", help="say where our run's CPU went, against the floor")
    parser.add_argument("--no-stock", action="store_true", help="skip stock nbgrader (no score comparison)")
    args = parser.parse_args(argv)
    assignments = args.assignments or gradable_assignments()
    with work_folder(args.keep, "grading-bench-") as work:
        submissions = work / "submitted"
        kinds = make_class(submissions, assignments=assignments, students=args.students)
        n = len(kinds)
        print(f"class: {n} submissions ({args.students} right, wrong and blank students x {len(assignments)} "
              f"notebooks: {', '.join(assignments)})", flush=True)
        # The same hidden inputs for both: a wrong answer at the edge of a tolerance must meet the same cases.
        seed = args.seed if args.seed is not None else random.randrange(1, 2**31)
        print(f"seed: {seed}", flush=True)

        course = work / "course"
        if not args.no_stock:
            stock_course(course, assignments=assignments, submissions=submissions)
            print(f"stock nbgrader autograde starts ({load()})", flush=True)
            t0 = time.perf_counter()
            stock_autograde(course, assignments=assignments, seed=seed)
            stock_seconds = time.perf_counter() - t0
            print(f"stock nbgrader autograde: {stock_seconds:.1f} s ({n / stock_seconds:.2f} submissions/s; {load()})",
                  flush=True)

        out = work / "graded"
        cmd = grade_command(submissions, "--out", str(out), "--force", "--seed", str(seed), "--engine", args.engine,
                            *(["--jobs", str(args.jobs)] if args.jobs else []), *(["--profile"] if args.profile else []))
        print(f"python -m autograder grade starts ({load()})", flush=True)
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, env=venv_env(), capture_output=True, text=True)
        ours_seconds = time.perf_counter() - t0
        print(proc.stdout.strip())
        if proc.returncode not in (0,):
            print(proc.stderr[-2000:], file=sys.stderr)
            print(f"autograder grade exited {proc.returncode}", file=sys.stderr)
            return 1
        print(f"python -m autograder grade: {ours_seconds:.1f} s ({n / ours_seconds:.2f} submissions/s; {load()})",
              flush=True)
        if args.profile:
            floor = floor_runs(assignments)
            print(f"floor measured ({load()})")
            print("\n".join(breakdown(json.loads((out / "profile.json").read_text()), floor)))

        if args.no_stock:
            return 0
        compared = compare_scores(stock_scores(course), our_scores(out))
        print("\n".join(compared.lines(kinds)))
        print(f"throughput ratio (stock time / our time): {stock_seconds / ours_seconds:.2f}x "
              f"on {os.cpu_count()} cores")
        return 0 if compared.equal else 1


if __name__ == "__main__":
    sys.exit(main())
