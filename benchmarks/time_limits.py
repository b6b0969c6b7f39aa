"""The course's time limits against right answers written slowly and against loops, notebook by notebook.

    python benchmarks/time_limits.py [--assignments 03_dot_and_outer_products ...] [--every-exercise] [--seed S]

For each notebook: its reference run (which times every cell), then four submissions graded with the limits
``grade`` uses by default (each cell max(floor, factor x the course's seconds), at most 30 s): the course's
answers; every answer ten times slower ("slowed", tests/slow_answers.py); the answers a learner writes with
loops ("written"); and a loop in one exercise (the last that is not a prediction, or with --every-exercise
each in turn). It prints, per notebook, each one's wall seconds, the slow answers' tests that did not pass
(goal: none) and the looping exercise's tests that did not time out (goal: none), and a looping
submission's cost (goal: at most 5 s).
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import nbformat

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from autograder import paths  # noqa: E402
from autograder.checks.questions import is_question  # noqa: E402
from autograder.engine import Limits, default_pool  # noqa: E402
from autograder.grade.submission.grade_one import grade_one, run_reference  # noqa: E402
from autograder.grade.submission.results import SubmissionResult  # noqa: E402
from autograder.grade.submission.timelimits import TimePolicy  # noqa: E402
from autograder.nbio import exercise_of  # noqa: E402
from tests.builders import right_notebook, solutions, solve  # noqa: E402
from tests.slow_answers import KINDS, slow_notebook  # noqa: E402
from benchmarks.term_class import looping  # noqa: E402  (the term's looping answer)


@dataclass
class Graded:
    result: SubmissionResult
    seconds: float

    def not_passed(self) -> list[str]:
        return [f"{s.grade_id} ({s.status})" for s in self.result.scores if s.status != "passed"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--assignments", nargs="+", default=paths.assignments())
    parser.add_argument("--every-exercise", action="store_true", help="a loop in each exercise in turn")
    parser.add_argument("--seed", type=int, default=5)
    args = parser.parse_args(argv)
    policy, limits = TimePolicy(), Limits.for_grading()
    default_pool().warm(1)
    root = Path(tempfile.mkdtemp(prefix="time-limits-"))
    failures = 0
    print(f"limits: max({policy.floor:g} s, {policy.factor:g} x the course's seconds), at most {limits.cell_timeout:g} s")
    for a in args.assignments:
        reference = run_reference(a, seed=args.seed, limits=limits)

        def grade(nb, name: str) -> Graded:
            path = root / name / a / f"{a}.ipynb"
            path.parent.mkdir(parents=True)
            nbformat.write(nb, path)
            start = time.monotonic()
            result = grade_one(path, assignment=a, seed=args.seed, reference=reference, limits=limits,
                               time_policy=policy)
            return Graded(result, time.monotonic() - start)

        right = grade(right_notebook(a), "right")
        slow = {kind: grade(slow_notebook(a, kind), kind) for kind in KINDS}
        functions = [e for e in solutions(a) if not is_question(a, e)]
        loops = []
        for exercise in functions if args.every_exercise else functions[-1:]:
            graded = grade(solve(right_notebook(a), exercise, looping(exercise)), f"loop-{exercise}")
            missed = [s.grade_id for s in graded.result.scores
                      if exercise_of(s.grade_id) == exercise and s.status != "timeout"]
            loops.append((exercise, graded, missed))
        cut = {kind: g.not_passed() for kind, g in slow.items()}
        failures += sum(map(len, cut.values())) + sum(len(m) for _, _, m in loops)
        worst = max(loops, key=lambda item: item[1].seconds)
        print(f"{a}: right {right.seconds:.1f} s, slowed {slow['slowed'].seconds:.1f} s, written "
              f"{slow['written'].seconds:.1f} s, a loop {min(g.seconds for _, g, _ in loops):.1f}-{worst[1].seconds:.1f} s "
              f"({len(loops)} exercise{'s' * (len(loops) > 1)}, longest in {worst[0]})")
        for kind, tests in cut.items():
            if tests:
                print(f"   {kind} answers not passed: {', '.join(tests)}")
        for exercise, _, missed in loops:
            if missed:
                print(f"   a loop in {exercise} did not time out in: {', '.join(missed)}")
    print("every slow right answer passed, every loop timed out" if not failures else f"{failures} misses")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
