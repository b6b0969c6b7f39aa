"""The floor of grading a notebook: its solution's cells, tests included, in one warm interpreter.

    python benchmarks/floor.py [--runs 5] [ASSIGNMENT ...]

What no grader can go below: the reference solution's code and test cells run in evidence mode (as
graded) in an interpreter that has already imported what the notebooks use (the warm parent's own
warm-up, so the two pay for the same imports), with no sandbox, no fork and nothing written. Each run
gets a fresh namespace and imports the earlier notebooks it uses again, as every submission does; the
figure is the median CPU time of the runs (the first run warms caches a forked child would also find
warm in its parent). Prints one line per assignment, "ASSIGNMENT SECONDS" (CPU seconds), for
benchmarks/grading.py --profile.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def floor(assignments: list[str], runs: int = 5, seed: int = 1, draw_figures: bool = False) -> dict[str, float]:
    """CPU seconds of each assignment's solution cells (median of ``runs``), in this process: call it in
    a process of its own (``python benchmarks/floor.py``), since it imports and runs everything.
    Figures are drawn only with ``draw_figures``, as `grade` draws them only with --draw-figures."""
    from autograder.grade.submission.running import grading_environment

    os.environ.update(grading_environment(seed))  # what a graded run's environment says (evidence mode, seed)
    from autograder import paths, reference
    from autograder.checks import core
    from autograder.grade.submission import sanitize
    from autograder.engine.shell import figures_as_text, prepare_child, run_cell
    from autograder.engine.warm import warm_up
    from autograder.nbio import read_notebook

    shell = warm_up()
    core.configure_from_environment()
    prepare_child(shell, 2 * 2**20)  # outputs to the recorder, as in a graded run, not to this terminal
    if not draw_figures:
        figures_as_text(shell)
    os.chdir(tempfile.mkdtemp(prefix="floor-"))
    out = {}
    for a in assignments:
        sources = sanitize.reference_plan(read_notebook(paths.solutions_dir() / f"{a}.ipynb")).sources
        seconds = []
        for _ in range(runs):
            shell.reset(new_session=False)
            reference.import_notebook.cache_clear()  # a submission imports the earlier notebooks itself
            t0 = time.process_time()
            failed = [i for i, s in enumerate(sources) if run_cell(shell, s)[0] != "ok"]
            seconds.append(time.process_time() - t0)
            if failed:
                raise RuntimeError(f"{a}: the solution's cells {failed} failed; no floor can be measured")
        out[a] = statistics.median(seconds)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("assignments", nargs="*", help="default: every notebook with a solution")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--draw-figures", action="store_true", help="draw the figures, as grade --draw-figures")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    from autograder import paths

    stdout = os.fdopen(os.dup(1), "w")  # the cells' prints go to the recorder; the figures come here
    for a, seconds in floor(args.assignments or paths.assignments(), args.runs, args.seed,
                           args.draw_figures).items():
        print(f"{a} {seconds:.4f}", file=stdout, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
