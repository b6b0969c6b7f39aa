"""A synthetic term graded end to end: all ten notebooks, a class of students who write their code differently.

    python benchmarks/term.py [--students 50 | --quick] [--repeat 1] [--runs 2] [--jobs N] [--seed S]
                              [--assignments 01_tokens_and_ids ...] [--timeout SECONDS]
                              [--timeout-floor SECONDS] [--timeout-factor N] [--keep DIR]
                              [--stock-students 4] [--stock-assignments 01_... 02_...] [--no-stock]

The term (benchmarks/term_class.py): every student hands in every notebook; per hundred submissions of a notebook
70 right, 16 partly wrong, 8 half done and 4 blank, and per hundred submissions of the term 3 right but slow
(tests/slow_answers.py), 1 looping and 1 crashing its process, taken from the right ones.

It grades the term with ``python -m autograder grade --profile`` (a subprocess, as benchmarks/grading.py does)
into one --out: the ordinary submissions (the slow ones among them), then the looping ones added, then the
crashing ones (a re-run grades only what is new), so that profile.json counts each kind apart
(benchmarks/term_measure.py). It prints (benchmarks/term_tables.py):

* per notebook, core-seconds per submission (the grader's own account of its whole process tree, profile.json,
  with the class's shared costs spread over every submission, as benchmarks/grading.py does): every kind, the
  ordinary ones, the right ones (estimated: the notebook's CPU shared by each submission's wall seconds in its
  worker); the floor (benchmarks/floor.py); the learner's part and the course's part of it
  (benchmarks/term_split.py), their ratios; where the course's part of the floor goes; ``grade --profile``'s
  phases;
* the whole term: wall time, CPU, the first result's latency, and the time for 500 students, extrapolated as
  ``T(N) = S + (F + c * N * A) / k``: S the wall time to the first result, F the class's once-only CPU
  (start-up, warm-up, references, discovery), c the core-seconds per submission (the term's CPU as one run would spend it: the
  ordinary run's and what the looping and crashing submissions took themselves), A the notebooks, k the cores;
  checked against the grading it came from;
* the time limits' goals (issue 48): a looping submission's core-seconds (<= 5), the loopers' share of the term's
  CPU (<= 15%), the right-but-slow submissions that timed out (none) and the looping ones that did not (none),
  500 students on 2 cores (under 15 minutes);
* stock ``nbgrader autograde`` on a sample of the same submissions (default 4 students x 01-04), with every
  per-cell score of a submission that did not time out in ours asserted equal to ours (exit 1 when one differs).

Timings on a shared machine are noisy: the floor and the split are measured ``--runs`` times (at least 2; min and
spread), the term ``--repeat`` times.
"""
from __future__ import annotations

import argparse
import os
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script: the repository's tests/ holds the class builders
    sys.path.insert(0, str(ROOT))

from benchmarks.common import load, work_folder  # noqa: E402
from benchmarks.grading import breakdown  # noqa: E402
from benchmarks.term_class import KINDS, STYLES, TROUBLE, build_term  # noqa: E402
from benchmarks.term_figures import (TERM_STUDENTS, Extrapolation, Spread, TimeLimits, mean_of,  # noqa: E402
                                     once_cpu, per_notebook, submission_cpu)
from benchmarks.term_measure import (TermRun, floors_measured, grade_runs, kind_walls, outcomes,  # noqa: E402
                                     stock_sample, stock_students, worker_seconds)
from benchmarks.term_split import Split, splits_measured  # noqa: E402
from benchmarks.term_tables import (Row, extrapolation_lines, goal_lines, grading_line, kind_table,  # noqa: E402
                                    notebook_table, split_table, stock_ratio_line, worst_course_side)
from tests.builders import gradable_assignments  # noqa: E402

QUICK_STUDENTS = 4


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=None, help="students in the term (default 50)")
    parser.add_argument("--quick", action="store_true", help=f"{QUICK_STUDENTS} students, for development")
    parser.add_argument("--assignments", nargs="+", help="default: all ten notebooks")
    parser.add_argument("--repeat", type=int, default=1, help="grade the term this many times (min and spread)")
    parser.add_argument("--runs", type=int, default=2, help="measurements of the floor and the split (at least 2)")
    parser.add_argument("--jobs", type=int, default=None, help="grade's --jobs (default: its own, the cores)")
    parser.add_argument("--timeout", type=float, default=None,
                        help="grade's --timeout, one limit for every cell (default: each cell's own, from the course's "
                             "timings)")
    parser.add_argument("--timeout-floor", type=float, default=None, help="grade's --timeout-floor (default: its own)")
    parser.add_argument("--timeout-factor", type=float, default=None, help="grade's --timeout-factor (default: its own)")
    parser.add_argument("--seed", type=int, default=None, help="the run seed (default: a random one)")
    parser.add_argument("--keep", type=Path, help="work in this folder and keep it")
    parser.add_argument("--stock-students", type=int, default=4)
    parser.add_argument("--stock-assignments", nargs="+", default=None, help="default: 01-04 of the term")
    parser.add_argument("--no-stock", action="store_true", help="skip stock nbgrader (no score comparison)")
    args = parser.parse_args(argv)
    if args.quick and args.students is not None:
        parser.error("--quick sets the students: give --quick or --students, not both")
    args.students = QUICK_STUDENTS if args.quick else (50 if args.students is None else args.students)
    if args.students < 1:
        parser.error("--students must be at least 1")
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    if args.runs < 2:
        parser.error("--runs must be at least 2: every number is measured twice at least")
    if any(v is not None and v <= 0 for v in (args.timeout, args.timeout_floor, args.timeout_factor)):
        parser.error("--timeout, --timeout-floor and --timeout-factor must be positive")
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


def grade_options(args: argparse.Namespace) -> list[str]:
    """The options of ours that every ``grade`` run of the term gets."""
    given = {"--jobs": args.jobs, "--timeout": args.timeout, "--timeout-floor": args.timeout_floor,
             "--timeout-factor": args.timeout_factor}
    return [item for option, value in given.items() if value is not None for item in (option, str(value))]


def time_limits(t: TermRun, kinds: dict[tuple[str, str], str]) -> TimeLimits:
    """How the time limits did in the grading ``t`` (its --out holds every submission's result)."""
    found = outcomes(t.main.out)
    of = {k: [key for key, v in kinds.items() if v == k] for k in ("slow", "looping")}
    return TimeLimits(looping=len(of["looping"]), looping_cpu=t.added_cpu("looping"), term_cpu=t.term_cpu,
                      slow_cut=sorted(k for k in of["slow"] if k in found and found[k].timed_out),
                      loops_uncut=sorted(k for k in of["looping"] if k not in found or not found[k].timed_out))


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    assignments = args.assignments
    students = [f"s{i:03d}" for i in range(args.students)]
    with work_folder(args.keep, "term-bench-") as work:
        t_build = time.perf_counter()
        submissions, aside = work / "submitted", work / "aside"
        kinds = build_term(submissions, aside, students, assignments)
        n = len(kinds)
        counts = {k: sum(1 for v in kinds.values() if v == k) for k in KINDS}
        print(f"term: {args.students} students x {len(assignments)} notebooks = {n} submissions "
              f"({', '.join(f'{c} {k}' for k, c in counts.items())}); styles of right code: {', '.join(STYLES)}; "
              f"built in {time.perf_counter() - t_build:.1f} s", flush=True)
        print(f"seed: {args.seed}; {os.cpu_count()} cores; {load()}", flush=True)

        runs: list[TermRun] = []
        for r in range(args.repeat):
            print(f"grade run {r + 1}/{args.repeat} starts: {n - sum(counts[k] for k in TROUBLE)} submissions, then "
                  f"the {' and '.join(f'{k} ({counts[k]})' for k in TROUBLE)} ones added ({load()})", flush=True)
            t = grade_runs(submissions, aside, work / f"graded-{r}", kinds, seed=args.seed, options=grade_options(args))
            runs.append(t)
            print(f"grade run {r + 1}: {' + '.join(f'{g.wall:.1f}' for g in t.runs)} s wall, "
                  f"{' + '.join(f'{g.cpu:.1f}' for g in t.runs)} core-s ({load()})", flush=True)
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
              "ones too, every run's shared costs spread evenly; ordinary: without the looping and crashing ones "
              "(exact: they are graded in runs of their own); right: the right ones alone (the ordinary run's "
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
        print("\n".join(worst_course_side(raw)))
        print()
        print("== grade --profile's phases (the first grading, ordinary submissions) ==")
        least = {a: floors[a].min for a in assignments}
        print("\n".join(breakdown(runs[0].main.profile, least)))
        for kind, g in runs[0].added.items():
            print(f"-- the {kind} submissions, graded after them into the same --out --")
            print("\n".join(breakdown(g.profile, least)))
        print()
        print("== wall seconds per submission in its worker, by kind (results/*.json, the first grading) ==")
        print("\n".join(kind_table(kind_walls(out, kinds))))
        print()
        print("== the whole term ==")
        for i, t in enumerate(runs):
            print(grading_line(i + 1, "ordinary", t.main))
            for kind, g in t.added.items():
                print(grading_line(i + 1, kind, g))
        print(f"the term: wall {Spread([t.wall for t in runs])} s, CPU {Spread([t.cpu for t in runs])} core-s "
              f"(all runs), {Spread([t.term_cpu for t in runs])} core-s as one run; first result "
              f"{Spread([t.main.first_polled for t in runs if t.main.first_polled is not None])} s")
        t = min(runs, key=lambda t: t.wall)
        startup = t.main.first_polled if t.main.first_polled is not None else \
            t.main.profile["timeline"].get("first result", 0.0)
        once = once_cpu(t.main.profile)
        ex = Extrapolation.of_run(total_cpu=t.term_cpu, once=once, submissions=n, startup=startup)
        n_ordinary = n - sum(counts[k] for k in TROUBLE)
        ordinary = Extrapolation.of_run(total_cpu=t.main.cpu, once=once, submissions=n_ordinary, startup=startup)
        print("\n".join(extrapolation_lines(ex, ordinary, measured_wall=t.main.wall, ordinary_n=n_ordinary,
                                            submissions=n, assignments=len(assignments), counts=counts, load=load())))
        print()
        print(f"== time limits (issue 48's goals; the fastest grading; "
              f"{'--timeout ' + str(args.timeout) + ' for every cell' if args.timeout else 'each cell its own'}) ==")
        print("\n".join(goal_lines(time_limits(t, kinds), counts["slow"], ex, TERM_STUDENTS * len(assignments))))
        if stock is not None:
            print()
            print("== stock nbgrader on a sample of the term ==")
            print("\n".join(stock.lines))
            keys = [(s, a) for s in sample for a in args.stock_assignments]
            print(stock_ratio_line(stock.cpu, stock.wall, Spread([mean_of(e, keys) for e in estimated]), t.wall / n))
        elif not args.no_stock:
            print("stock nbgrader: no student without a looping or crashing submission to sample")
        return 0 if stock is None or stock.equal else 1


if __name__ == "__main__":
    sys.exit(main())
